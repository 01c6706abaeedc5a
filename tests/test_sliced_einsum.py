"""einsum under a memory limit no pairwise path meets: sliced, and equal to the unsliced result."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorops as tops

torch = pytest.importorskip("torch")
da = pytest.importorskip("dask.array")

CASES = [
    # (equation, shapes, limit): each limit is below the unsliced plan's largest intermediate
    ("ab,bc,cd,de,ef,fa->", [(6, 6)] * 6, 8),  # a ring: every axis summed
    ("ab,bc,cd,de,ef,fg->ag", [(6, 6)] * 6, 8),  # output axes may be sliced
    ("aab,bc,cd->ad", [(4, 4, 5), (5, 6), (6, 4)], 6),  # a diagonal in a sliced operand
    ("ij,jk,kl->il", [(8, 3), (3, 9), (9, 8)], 20),
]


def _operands(shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    return [rng.random(shape) for shape in shapes]


@pytest.mark.parametrize(("equation", "shapes", "limit"), CASES)
def test_the_plan_slices_and_meets_the_limit(
    equation: str, shapes: list[tuple[int, ...]], limit: int
) -> None:
    unsliced = tops.einsum_path(equation, *map(tuple, shapes))
    assert unsliced.largest_intermediate > limit
    plan = tops.einsum_path(equation, *map(tuple, shapes), memory_limit=limit)
    assert plan.slices > 1
    assert plan.sliced_axes
    assert plan.largest_intermediate <= limit


@pytest.mark.parametrize("family", ["numpy", "torch", "dask"])
@pytest.mark.parametrize(("equation", "shapes", "limit"), CASES)
def test_sliced_results_equal_unsliced(
    equation: str, shapes: list[tuple[int, ...]], limit: int, family: str
) -> None:
    arrays = _operands(shapes)
    expected = np.einsum(equation, *arrays)
    convert: dict[str, Any] = {
        "numpy": lambda a: a,
        "torch": torch.from_numpy,
        "dask": lambda a: da.from_array(a, chunks=3),
    }
    result = tops.einsum(equation, *map(convert[family], arrays), memory_limit=limit)
    if family == "dask":
        assert isinstance(result, da.Array)  # lazy: the slices are tasks of its graph
        result = result.compute()
    np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-10)


def test_spaced_compositions_are_sliced_too() -> None:
    x, w = _operands([(4, 12), (3, 5)])
    expected = np.einsum("bhd,de->bhe", x.reshape(4, 4, 3), w)
    result = tops.einsum("b (h d), d e -> b h e", x, w, h=4, memory_limit=10)
    np.testing.assert_allclose(result, expected)


def test_memory_limit_in_bytes() -> None:
    shapes = [(6, 6)] * 6
    in_elements = tops.einsum_path("ab,bc,cd,de,ef,fa->", *shapes, memory_limit=8)
    # 64 bytes of float64 operands are 8 elements
    arrays = _operands(shapes)
    in_bytes = tops.einsum_path("ab,bc,cd,de,ef,fa->", *arrays, memory_limit="64B")
    assert in_bytes.largest_intermediate <= 8
    assert in_bytes.slices == in_elements.slices
