"""Planning large networks: ``auto`` always returns a valid path; ``optimal`` refuses past its cap.

No timing assertions: planning speed is measured in ``benchmarks/``. A hang here is
caught by the suite's timeout.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

import tensorops as tops
from tensorops._einsum.planning._cost import contraction_steps
from tensorops._einsum.planning._paths import OPTIMAL_MAX_OPERANDS

# A hang fails the test instead of stalling the suite.
pytestmark = pytest.mark.timeout(120)

Network = tuple[list[tuple[str, ...]], tuple[str, ...], dict[str, int]]


def _ring(n: int, bond: int = 3) -> Network:
    inputs = [(f"e{i}", f"p{i}", f"e{(i + 1) % n}") for i in range(n)]
    sizes = {f"e{i}": bond for i in range(n)} | {f"p{i}": 2 for i in range(n)}
    return inputs, ("p0", f"p{n // 2}"), sizes


def _grid(rows: int, cols: int, bond: int = 2) -> Network:
    def edge(a: tuple[int, int], b: tuple[int, int]) -> str:
        return f"g{a[0]}_{a[1]}_{b[0]}_{b[1]}"

    inputs = []
    for r in range(rows):
        for c in range(cols):
            axes = []
            if r > 0:
                axes.append(edge((r - 1, c), (r, c)))
            if r < rows - 1:
                axes.append(edge((r, c), (r + 1, c)))
            if c > 0:
                axes.append(edge((r, c - 1), (r, c)))
            if c < cols - 1:
                axes.append(edge((r, c), (r, c + 1)))
            inputs.append(tuple(axes))
    sizes = {axis: bond for term in inputs for axis in term}
    return inputs, (), sizes


def _random(n: int, seed: int) -> Network:
    testing = pytest.importorskip("opt_einsum.testing")
    equation, shapes = testing.rand_equation(n, 3, n_out=2, d_min=2, d_max=3, seed=seed)
    lhs, rhs = equation.split("->")
    names = {ch: f"x{ord(ch)}" for ch in set(equation) - {",", "-", ">"}}
    inputs = [tuple(names[ch] for ch in term) for term in lhs.split(",")]
    sizes = {
        axis: n for term, shape in zip(inputs, shapes, strict=True)
        for axis, n in zip(term, shape, strict=True)
    }  # fmt: skip
    return inputs, tuple(names[ch] for ch in rhs), sizes


def _equation(inputs: Sequence[tuple[str, ...]], output: tuple[str, ...]) -> str:
    return ", ".join(" ".join(term) for term in inputs) + " -> " + " ".join(output)


def _shapes(inputs: Sequence[tuple[str, ...]], sizes: dict[str, int]) -> list[tuple[int, ...]]:
    return [tuple(sizes[axis] for axis in term) for term in inputs]


_NETWORKS = {
    "ring-120": lambda: _ring(120),
    "ring-300": lambda: _ring(300),
    "grid-10x10": lambda: _grid(10, 10),
    "grid-12x12": lambda: _grid(12, 12),
    "random-100": lambda: _random(100, seed=1),
    "random-150": lambda: _random(150, seed=2),
}


def _check_path(network: Network, path: Sequence[Sequence[int]]) -> None:
    inputs, output, sizes = network
    assert path, "empty path"
    steps = contraction_steps(inputs, output, sizes, path)  # raises on an invalid path
    assert len(steps) == len(path)
    remaining = len(inputs)
    for entry in path:
        assert len(set(entry)) == len(entry)
        assert all(0 <= i < remaining for i in entry)
        remaining -= len(entry) - 1
    assert remaining == 1, "the path does not end with a single result"


@pytest.mark.parametrize("name", sorted(_NETWORKS))
def test_auto_plans_large_networks_through_einsum_path(name: str) -> None:
    network = _NETWORKS[name]()
    inputs, output, sizes = network
    plan = tops.einsum_path(_equation(inputs, output), *_shapes(inputs, sizes), strategy="auto")
    _check_path(network, plan.path)
    assert plan.flops > 0


@pytest.mark.parametrize("strategy", ["auto", "greedy"])
@pytest.mark.parametrize("name", sorted(_NETWORKS))
def test_find_path_on_large_networks(name: str, strategy: str) -> None:
    from tests.test_paths import find_path

    network = _NETWORKS[name]()
    inputs, output, sizes = network
    _check_path(network, find_path(inputs, output, sizes, strategy))


def test_auto_with_memory_limit_on_a_large_network() -> None:
    network = _ring(150)
    inputs, output, sizes = network
    plan = tops.einsum_path(
        _equation(inputs, output), *_shapes(inputs, sizes), strategy="auto", memory_limit=10_000
    )
    _check_path(network, plan.path)


def test_optimal_past_its_cap_refuses_with_a_clear_error() -> None:
    inputs, output, sizes = _ring(OPTIMAL_MAX_OPERANDS + 1)
    with pytest.raises(tops.TensorOpsError) as info:
        tops.einsum_path(_equation(inputs, output), *_shapes(inputs, sizes), strategy="optimal")
    message = str(info.value)
    assert "optimal" in message
    assert str(OPTIMAL_MAX_OPERANDS) in message
    assert str(OPTIMAL_MAX_OPERANDS + 1) in message


def test_optimal_refuses_a_100_operand_network_at_once() -> None:
    inputs, output, sizes = _ring(100)
    with pytest.raises(tops.TensorOpsError, match="optimal"):
        tops.einsum_path(_equation(inputs, output), *_shapes(inputs, sizes), strategy="optimal")


def test_optimal_at_its_cap_still_plans() -> None:
    network = _ring(OPTIMAL_MAX_OPERANDS)
    inputs, output, sizes = network
    plan = tops.einsum_path(_equation(inputs, output), *_shapes(inputs, sizes), strategy="optimal")
    _check_path(network, plan.path)


def test_dp_on_a_mid_size_network_plans() -> None:
    network = _grid(5, 6)
    inputs, output, sizes = network
    plan = tops.einsum_path(_equation(inputs, output), *_shapes(inputs, sizes), strategy="dp")
    _check_path(network, plan.path)
