"""Tests of slicing under a memory limit, against a reference executor written with NumPy.

The executor runs a sliced plan the plain way: for every combination of values of
the sliced axes it indexes the operands that have them, contracts the slice along
the planned path with ``numpy.einsum``, and adds the slice's result into the output
(at the slice's position along sliced output axes). Its result must equal the
unsliced contraction.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorops._einsum.planning._cost import (
    contraction_steps,
    sliced_contraction_steps,
    sliced_network,
    total_flops,
)
from tensorops._einsum.planning._paths import (
    PLANNERS,
    plan_contraction,
    slice_path,
)
from tests.test_paths import Network, find_path, random_network


def letters_of(network: Network) -> dict[str, str]:
    inputs, output, _ = network
    names = dict.fromkeys([a for t in inputs for a in t] + list(output))
    return {axis: chr(ord("a") + i) for i, axis in enumerate(names)}


def einsum_equation(
    inputs: Sequence[tuple[str, ...]], output: tuple[str, ...], letters: dict[str, str]
) -> str:
    terms = ",".join("".join(letters[a] for a in t) for t in inputs)
    return terms + "->" + "".join(letters[a] for a in output)


def arrays_for(network: Network, seed: int) -> list[np.ndarray]:
    inputs, _, sizes = network
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(tuple(sizes[a] for a in t)) for t in inputs]


def run_sliced(
    network: Network,
    arrays: Sequence[np.ndarray],
    path: Sequence[tuple[int, ...]],
    sliced_axes: Sequence[str],
) -> np.ndarray:
    """Contract slice by slice along ``path``, summing or placing the results."""
    inputs, output, sizes = network
    letters = letters_of(network)
    sub_inputs, sub_output = sliced_network(inputs, output, sliced_axes)
    equation = einsum_equation(sub_inputs, sub_output, letters)
    result = np.zeros(tuple(sizes[a] for a in output))
    for values in itertools.product(*(range(sizes[a]) for a in sliced_axes)):
        fixed = dict(zip(sliced_axes, values, strict=True))
        operands = [
            array[tuple(fixed.get(a, slice(None)) for a in axes)]
            for axes, array in zip(inputs, arrays, strict=True)
        ]
        part = np.einsum(equation, *operands, optimize=["einsum_path", *path])
        result[tuple(fixed.get(a, slice(None)) for a in output)] += part
    return result


def check_plan(network: Network, limit: int, strategy: str, seed: int = 0) -> tuple[str, ...]:
    """Plan under ``limit``, check it fits per slice and that its result is right."""
    path, sliced = plan_contraction(*network, strategy, memory_limit=limit)
    plan = sliced_contraction_steps(*network, path, sliced)
    assert all(len(entry) <= 2 for entry in path)
    assert plan.largest_intermediate <= limit
    assert plan.slices == math.prod(network[2][a] for a in sliced)
    arrays = arrays_for(network, seed)
    expected = np.einsum(einsum_equation(network[0], network[1], letters_of(network)), *arrays)
    actual = run_sliced(network, arrays, path, sliced)
    np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-9)
    return sliced


def ring(n: int, size: int) -> Network:
    inputs = [(f"x{i}", f"x{(i + 1) % n}") for i in range(n)]
    return inputs, (), {f"x{i}": size for i in range(n)}


@pytest.mark.parametrize("strategy", PLANNERS)
def test_ring_of_matrices_is_sliced_at_little_cost(strategy: str) -> None:
    # six 256 x 256 matrices, intermediates capped at 4096 elements: no pairwise
    # path fits (each matrix product has 65536), so one axis is sliced
    network = ring(6, 256)
    unsliced = total_flops(contraction_steps(*network, find_path(*network, strategy)))
    path, sliced = plan_contraction(*network, strategy, memory_limit=4096)
    plan = sliced_contraction_steps(*network, path, sliced)
    assert sliced
    assert plan.largest_intermediate <= 4096
    assert plan.flops <= 4 * unsliced


@pytest.mark.parametrize("strategy", PLANNERS)
def test_sliced_ring_gives_the_unsliced_result(strategy: str) -> None:
    assert check_plan(ring(6, 6), 12, strategy)


def test_output_axes_can_be_sliced() -> None:
    # every intermediate holds the output axis i or j; a limit of 3 slices them
    inputs = [("i", "a"), ("a", "b"), ("b", "j"), ("i", "j", "c"), ("c",)]
    network = (inputs, ("i", "j"), {"i": 4, "j": 3, "a": 5, "b": 6, "c": 2})
    sliced = check_plan(network, 3, "auto")
    assert {"i", "j"} & set(sliced)


def test_a_limit_that_fits_slices_nothing() -> None:
    network = random_network(9, 5, n_out=2)
    unlimited = find_path(*network, "auto")
    largest = max(step.size for step in contraction_steps(*network, unlimited)[:-1])
    assert plan_contraction(*network, "auto", memory_limit=largest) == (tuple(unlimited), ())


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(3, 7),
    n_out=st.integers(0, 2),
    seed=st.integers(0, 1000),
    fraction=st.integers(0, 100),
    strategy=st.sampled_from(["auto", "greedy", "dp"]),
)
def test_sliced_plans_match_the_unsliced_contraction(
    n: int, n_out: int, seed: int, fraction: int, strategy: str
) -> None:
    inputs, output, sizes = random_network(n, seed, n_out=n_out)
    small = {axis: 1 + size % 4 for axis, size in sizes.items()}
    network = (inputs, output, small)
    unlimited = contraction_steps(*network, find_path(*network, strategy))
    largest = max(step.size for step in unlimited)
    check_plan(network, max(1, largest * fraction // 100), strategy, seed)


def test_explicit_paths_are_sliced_as_given() -> None:
    network = ring(5, 8)
    path = [(0, 1), (0, 1), (0, 1), (0, 1)]
    planned = slice_path(*network, path, 16)
    assert planned.path == tuple(path)
    assert sliced_contraction_steps(*network, path, planned.sliced_axes).largest_intermediate <= 16
    arrays = arrays_for(network, 3)
    expected = np.einsum(einsum_equation(network[0], (), letters_of(network)), *arrays)
    np.testing.assert_allclose(run_sliced(network, arrays, path, planned.sliced_axes), expected)
    assert slice_path(*network, path, 64).sliced_axes == ()
