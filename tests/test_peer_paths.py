"""Paths where tensorops' choice differs from numpy's: never more expensive.

numpy's own suite compares exact paths (``TestEinsumPath``); those tests are
deselected from the compatibility run (``tests/compat/deselected.py``) because
tensorops' planner finds other paths. Here each of their equations is planned by
both, and both paths are priced by one independent oracle, opt_einsum's cost of
an explicit path.
"""

from __future__ import annotations

import numpy as np
import pytest

import tensorops as tops

oe = pytest.importorskip("opt_einsum")

# numpy's test sizes: a=2 b=3 c=4 d=5 e=4 f=3 g=2 h=6 i=5 j=4
_SIZES = dict(zip("abcdefghij", (2, 3, 4, 5, 4, 3, 2, 6, 5, 4), strict=True))
_EQUAL_20 = dict.fromkeys("abcd", 20)

NUMPY_PATH_CASES = [
    ("acdf,jbje,gihb,hfac,gfac,gifabc,hfac", _SIZES),
    ("chd,bde,agbc,hiad,bdi,cgh,agdb", _SIZES),
    ("eb,cb,fb->cef", _SIZES),
    ("dd,fb,be,cdb->cef", _SIZES),
    ("bca,cdb,dbf,afc->", _SIZES),
    ("dcc,fce,ea,dbf->ab", _SIZES),
    ("a,ac,ab,ad,cd,bd,bc->", _EQUAL_20),
]


def _operands(equation: str, sizes: dict[str, int]) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    terms = equation.split("->")[0].split(",")
    return [rng.random([sizes[c] for c in term]) for term in terms]


def _cost(equation: str, operands: list[np.ndarray], path: list[tuple[int, ...]]) -> int:
    return int(oe.contract_path(equation, *operands, optimize=[tuple(s) for s in path])[1].opt_cost)


@pytest.mark.parametrize("optimize", ["greedy", "optimal", True])
@pytest.mark.parametrize(("equation", "sizes"), NUMPY_PATH_CASES)
def test_paths_cost_no_more_than_numpys(
    equation: str, sizes: dict[str, int], optimize: object
) -> None:
    operands = _operands(equation, sizes)
    numpy_path = np.einsum_path(equation, *operands, optimize=optimize)[0][1:]
    plan = tops.einsum_path(equation, *operands, optimize=optimize)
    assert _cost(equation, operands, plan.path) <= _cost(equation, operands, numpy_path)
    expected = np.einsum(equation, *operands)
    np.testing.assert_allclose(tops.einsum(equation, *operands, optimize=optimize), expected)
    # numpy runs tensorops' path, too: the path is valid for numpy.einsum
    np.testing.assert_allclose(
        np.einsum(equation, *operands, optimize=["einsum_path", *plan.path]), expected
    )


def test_memory_limit_zero_slices_instead_of_one_naive_step() -> None:
    """numpy answers memory_limit=0 with one step over all operands; tensorops slices."""
    equation = "acdf,jbje,gihb,hfac"
    operands = _operands(equation, _SIZES)
    numpy_path = np.einsum_path(equation, *operands, optimize=("greedy", 0))[0][1:]
    assert numpy_path == [(0, 1, 2, 3)]
    plan = tops.einsum_path(equation, *operands, optimize=("greedy", 0))
    assert plan.flops < _cost(equation, operands, numpy_path)
    assert plan.slices > 1
    assert plan.largest_intermediate == 1  # numpy's 0 is read as the least possible, 1
    np.testing.assert_allclose(
        tops.einsum(equation, *operands, optimize=("greedy", 0)), np.einsum(equation, *operands)
    )
