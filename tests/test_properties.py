"""Property tests over random patterns and shapes, against plain NumPy and einops."""

from __future__ import annotations

import einops
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorops as tops
from tests.strategies import Case, cases, regroupings

SETTINGS = settings(max_examples=150, deadline=None)


def _lengths(case: Case) -> dict[str, int]:
    # Give every axis length but the first of each group: the rest must be inferred.
    return {name: length for group in case.groups for name, length in group[1:]}


@SETTINGS
@given(st.data())
def test_rearrange_matches_einops(data: st.DataObject) -> None:
    case = data.draw(cases())
    right = data.draw(regroupings(case.axes))
    pattern = f"{case.left()} -> {right}"
    x = np.arange(int(np.prod(case.shape)), dtype=np.int32).reshape(case.shape)
    expected = einops.rearrange(x, pattern, **_lengths(case))
    np.testing.assert_array_equal(tops.rearrange(x, pattern, **_lengths(case)), expected)


@SETTINGS
@given(st.data())
def test_inverse_pattern_gives_identity(data: st.DataObject) -> None:
    case = data.draw(cases())
    right = data.draw(regroupings(case.axes))
    lengths = dict(case.axes)
    x = np.arange(int(np.prod(case.shape)), dtype=np.int32).reshape(case.shape)
    y = tops.rearrange(x, f"{case.left()} -> {right}", **lengths)
    back = tops.rearrange(y, f"{right} -> {case.left()}", **lengths)
    np.testing.assert_array_equal(back, x)


@SETTINGS
@given(st.data(), st.sampled_from(["sum", "max", "min", "prod", "mean", "any", "all"]))
def test_reduce_matches_numpy(data: st.DataObject, reduction: str) -> None:
    case = data.draw(cases())
    kept = data.draw(st.lists(st.sampled_from(case.axes), unique=True))
    order = data.draw(st.permutations(kept))
    pattern = f"{case.left()} -> {' '.join(name for name, _ in order)}"
    rng = np.random.default_rng(0)
    x = rng.integers(0, 3, size=case.shape).astype(np.float64)
    flat_shape = tuple(length for _, length in case.axes)
    names = [name for name, _ in case.axes]
    flat = x.reshape(flat_shape)
    reduced_axes = tuple(i for i, n in enumerate(names) if n not in {n for n, _ in kept})
    # Nothing to reduce leaves the values (and dtype) alone, as in einops.
    reference = getattr(np, reduction)(flat, axis=reduced_axes) if reduced_axes else flat
    remaining = [n for n in names if n in {k for k, _ in kept}]
    reference = np.transpose(reference, [remaining.index(n) for n, _ in order])
    got = tops.reduce(x, pattern, reduction, **_lengths(case))
    np.testing.assert_allclose(got, reference)


@SETTINGS
@given(st.data())
def test_repeat_matches_einops(data: st.DataObject) -> None:
    case = data.draw(cases(max_axes=3))
    new = data.draw(st.lists(st.sampled_from([("r", 2), ("s", 3), ("t", 1)]), unique=True))
    right = data.draw(regroupings(case.axes + new))
    pattern = f"{case.left()} -> {right}"
    lengths = dict(new) | _lengths(case)
    x = np.arange(int(np.prod(case.shape)), dtype=np.int32).reshape(case.shape)
    np.testing.assert_array_equal(
        tops.repeat(x, pattern, **lengths), einops.repeat(x, pattern, **lengths)
    )


@SETTINGS
@given(st.data())
def test_ellipsis_and_explicit_forms_agree(data: st.DataObject) -> None:
    case = data.draw(cases())
    rank = len(case.shape)
    names = [f"e{i}" for i in range(rank)]
    explicit = f"{' '.join(names)} -> {' '.join(reversed(names[1:]))} {names[0]}"
    if rank > 1:
        ellipsis = f"{names[0]} ... -> ... {names[0]}"
        x = np.arange(int(np.prod(case.shape))).reshape(case.shape)
        a = tops.rearrange(x, ellipsis)
        np.testing.assert_array_equal(a, np.moveaxis(x, 0, -1))
    x = np.arange(int(np.prod(case.shape))).reshape(case.shape)
    np.testing.assert_array_equal(tops.rearrange(x, explicit), einops.rearrange(x, explicit))
