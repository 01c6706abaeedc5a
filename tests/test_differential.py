"""Differential tests: random rearrange / reduce / repeat / einsum cases against plain NumPy.

References are built from ``np.reshape``, ``np.transpose``, NumPy reductions,
``np.broadcast_to`` and ``np.einsum`` only, and each case runs on NumPy, PyTorch
and array-api-strict.
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorops as tops

_SETTINGS = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,  # the same cases on every run: CI never flakes
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
_NAMES = ["a", "b", "c", "d", "e", "f"]
_FAMILIES = ["numpy", "torch", "array_api_strict"]


def _family(name: str) -> tuple[Any, Any]:
    """``(asarray, to_numpy)`` for one family, skipping it if not installed."""
    if name == "numpy":
        return (lambda a: np.array(a, copy=True)), np.asarray
    if name == "torch":
        torch = pytest.importorskip("torch")
        return (lambda a: torch.from_numpy(np.array(a, copy=True))), (lambda t: t.numpy())
    xp = pytest.importorskip("array_api_strict")
    return (lambda a: xp.asarray(np.array(a, copy=True))), np.asarray


@st.composite
def _grouped(draw: st.DrawFn) -> tuple[list[str], list[int], list[list[int]], list[int]]:
    """Axis names, lengths, a grouping of the input axes and an output permutation."""
    n = draw(st.integers(1, 5))
    names = _NAMES[:n]
    lengths = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    cuts = sorted(draw(st.sets(st.integers(1, n - 1), max_size=n - 1))) if n > 1 else []
    bounds = [0, *cuts, n]
    groups = [list(range(bounds[i], bounds[i + 1])) for i in range(len(bounds) - 1)]
    perm = draw(st.permutations(range(n)))
    return names, lengths, groups, list(perm)


def _term(names: list[str], groups: list[list[int]]) -> str:
    parts = []
    for group in groups:
        inner = " ".join(names[i] for i in group)
        parts.append(inner if len(group) == 1 else f"({inner})")
    return " ".join(parts)


@pytest.mark.parametrize("family", _FAMILIES)
@_SETTINGS
@given(case=_grouped(), out_groups_seed=st.randoms(use_true_random=False))
def test_rearrange_matches_reshape_transpose(
    family: str, case: tuple[list[str], list[int], list[list[int]], list[int]], out_groups_seed: Any
) -> None:
    asarray, to_numpy = _family(family)
    names, lengths, groups, perm = case
    in_shape = [int(np.prod([lengths[i] for i in g])) for g in groups]
    x = np.arange(int(np.prod(lengths)), dtype=np.float64).reshape(in_shape)
    # Output: the permuted axes, grouped at random.
    n = len(perm)
    cuts = sorted(out_groups_seed.sample(range(1, n), out_groups_seed.randint(0, n - 1)))
    bounds = [0, *cuts, n]
    out_groups = [perm[bounds[i] : bounds[i + 1]] for i in range(len(bounds) - 1)]
    pattern = f"{_term(names, groups)} -> {_term(names, out_groups)}"
    kwargs = {names[i]: lengths[i] for i in range(n)}
    expected = x.reshape(lengths).transpose(perm)
    expected = expected.reshape([int(np.prod([lengths[i] for i in g])) for g in out_groups])
    result = to_numpy(tops.rearrange(asarray(x), pattern, **kwargs))
    np.testing.assert_array_equal(result, expected)


_NP_REDUCTIONS = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod}


@pytest.mark.parametrize("family", _FAMILIES)
@_SETTINGS
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    data=st.data(),
    reduction=st.sampled_from(sorted(_NP_REDUCTIONS)),
)
def test_reduce_matches_numpy(family: str, shape: list[int], data: Any, reduction: str) -> None:
    asarray, to_numpy = _family(family)
    n = len(shape)
    names = _NAMES[:n]
    keep = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    keepdims = data.draw(st.booleans())
    x = np.random.default_rng(n).uniform(0.5, 1.5, size=shape)
    out = [name if k else ("1" if keepdims else "") for name, k in zip(names, keep, strict=True)]
    pattern = f"{' '.join(names)} -> {' '.join(o for o in out if o)}"
    axes = tuple(i for i in range(n) if not keep[i])
    expected = _NP_REDUCTIONS[reduction](x, axis=axes, keepdims=keepdims)
    result = to_numpy(tops.reduce(asarray(x), pattern, reduction))
    np.testing.assert_allclose(result, expected, rtol=1e-10)


@pytest.mark.parametrize("family", _FAMILIES)
@_SETTINGS
@given(
    shape=st.lists(st.integers(1, 3), min_size=0, max_size=3),
    new=st.lists(st.integers(1, 3), min_size=1, max_size=2),
    data=st.data(),
)
def test_repeat_matches_broadcast_to(
    family: str, shape: list[int], new: list[int], data: Any
) -> None:
    asarray, to_numpy = _family(family)
    old_names = _NAMES[: len(shape)]
    new_names = ["p", "q"][: len(new)]
    order = data.draw(st.permutations(old_names + new_names))
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    pattern = f"{' '.join(old_names)} -> {' '.join(order)}"
    kwargs = dict(zip(new_names, new, strict=True))
    full = np.broadcast_to(x.reshape(shape + [1] * len(new)), shape + new)
    expected = full.transpose([(old_names + new_names).index(a) for a in order])
    result = to_numpy(tops.repeat(asarray(x), pattern, **kwargs))
    np.testing.assert_array_equal(result, expected)


@st.composite
def _einsum_case(draw: st.DrawFn) -> tuple[str, list[tuple[int, ...]]]:
    letters = string.ascii_lowercase[:6]
    sizes = {c: draw(st.integers(1, 4)) for c in letters}
    n_ops = draw(st.integers(1, 3))
    terms = ["".join(draw(st.lists(st.sampled_from(letters), max_size=4))) for _ in range(n_ops)]
    used = sorted(set("".join(terms)))
    if draw(st.booleans()):
        out = "".join(draw(st.permutations(draw(st.lists(st.sampled_from(used or ["a"]),
                                                          unique=True)))))  # fmt: skip
        out = "".join(c for c in out if c in used)
        equation = ",".join(terms) + "->" + out
    else:
        equation = ",".join(terms)
    shapes = [tuple(sizes[c] for c in term) for term in terms]
    return equation, shapes


@pytest.mark.parametrize("family", _FAMILIES)
@_SETTINGS
@given(case=_einsum_case(), spaced=st.booleans())
def test_einsum_matches_numpy_einsum(
    family: str, case: tuple[str, list[tuple[int, ...]]], spaced: bool
) -> None:
    asarray, to_numpy = _family(family)
    equation, shapes = case
    rng = np.random.default_rng(len(equation))
    arrays = [rng.uniform(-1, 1, size=s) for s in shapes]
    expected = np.einsum(equation, *arrays)
    text = equation
    if spaced and "->" in equation and all(equation.split("->")[0].split(",")):
        lhs, rhs = equation.split("->")
        text = ", ".join(" ".join(t) for t in lhs.split(",")) + " -> " + " ".join(rhs)
    result = to_numpy(tops.einsum(text, *[asarray(a) for a in arrays]))
    np.testing.assert_allclose(result, expected, rtol=1e-9, atol=1e-12)
