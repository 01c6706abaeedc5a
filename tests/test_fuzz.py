"""Fuzz every public op with random patterns, shapes and keyword values.

Whatever the input, an op either returns or raises :class:`TensorOpsError`; no
other exception, hang or crash escapes.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tensorops as tops

# A hang fails the test instead of stalling the suite.
pytestmark = pytest.mark.timeout(120)

_PIECES = [
    "a", "b", "c", "h", "w", "i", "j", "k", "ab", "x1", "_", "1", "2", "3", "0", "10",
    " ", " ", " ", "(", ")", "()", "...", ".", "..", ",", ", ", "->", " -> ", "-", ">",
    "*", "\u00e9", "\u03b1", "\u00a0", "\t", "\n", "🙂", "\x00", "٣", "ǅ",
]  # fmt: skip

_pattern_text = st.one_of(
    st.lists(st.sampled_from(_PIECES), max_size=14).map("".join),
    st.text(max_size=20),
)
_shape = st.lists(st.integers(0, 4), max_size=5).map(tuple)
_kwarg_value = st.one_of(
    st.integers(-3, 6),
    st.integers(2**62, 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3),
    st.none(),
    st.booleans(),
    st.just(np.int64(2)),
)
_kwargs = st.dictionaries(st.sampled_from(["a", "b", "c", "h", "w", "k", "x1"]), _kwarg_value,
                          max_size=3)  # fmt: skip
_reduction = st.one_of(
    st.sampled_from(["sum", "mean", "max", "min", "prod", "any", "all", "median", "", "SUM"]),
    st.just(np.sum),
    st.none(),
    st.integers(),
)

_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _attempt(fn: Any, *args: Any, **kwargs: Any) -> None:
    """Call ``fn``; any exception but TensorOpsError fails the test."""
    with contextlib.suppress(tops.TensorOpsError):
        fn(*args, **kwargs)


def _array(shape: tuple[int, ...]) -> np.ndarray:
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


@_SETTINGS
@given(pattern=_pattern_text, shape=_shape, kwargs=_kwargs)
def test_rearrange_fuzz(pattern: str, shape: tuple[int, ...], kwargs: dict[str, Any]) -> None:
    _attempt(tops.rearrange, _array(shape), pattern, **kwargs)


@_SETTINGS
@given(pattern=_pattern_text, shape=_shape, reduction=_reduction, kwargs=_kwargs)
def test_reduce_fuzz(
    pattern: str, shape: tuple[int, ...], reduction: Any, kwargs: dict[str, Any]
) -> None:
    _attempt(tops.reduce, _array(shape), pattern, reduction, **kwargs)


@_SETTINGS
@given(pattern=_pattern_text, shape=_shape, kwargs=_kwargs)
def test_repeat_fuzz(pattern: str, shape: tuple[int, ...], kwargs: dict[str, Any]) -> None:
    _attempt(tops.repeat, _array(shape), pattern, **kwargs)


@_SETTINGS
@given(pattern=_pattern_text, shapes=st.lists(_shape, min_size=0, max_size=3))
def test_pack_fuzz(pattern: str, shapes: list[tuple[int, ...]]) -> None:
    _attempt(tops.pack, [_array(s) for s in shapes], pattern)


@_SETTINGS
@given(
    pattern=_pattern_text,
    shape=_shape,
    packed_shapes=st.lists(st.lists(st.integers(-2, 4), max_size=3), max_size=3),
)
def test_unpack_fuzz(pattern: str, shape: tuple[int, ...], packed_shapes: list[list[int]]) -> None:
    _attempt(tops.unpack, _array(shape), packed_shapes, pattern)


@_SETTINGS
@given(pattern=_pattern_text, shape=_shape)
def test_parse_shape_fuzz(pattern: str, shape: tuple[int, ...]) -> None:
    _attempt(tops.parse_shape, _array(shape), pattern)


_einsum_text = st.one_of(
    _pattern_text,
    st.lists(st.sampled_from([*list("ijkab.,-> ()"), "...", "->", ","]), max_size=16).map("".join),
)


@_SETTINGS
@given(
    equation=_einsum_text,
    shapes=st.lists(_shape, min_size=1, max_size=3),
    kwargs=_kwargs,
    eq_last=st.booleans(),
)
def test_einsum_fuzz(
    equation: str, shapes: list[tuple[int, ...]], kwargs: dict[str, Any], eq_last: bool
) -> None:
    arrays = [_array(s) for s in shapes]
    args = (*arrays, equation) if eq_last else (equation, *arrays)
    _attempt(tops.einsum, *args, **kwargs)


_strategy = st.one_of(
    st.sampled_from(["auto", "optimal", "dp", "greedy", "nope", ""]),
    st.none(),
    st.integers(-1, 3),
    st.lists(st.tuples(st.integers(-1, 3), st.integers(-1, 3)), max_size=3),
)


@_SETTINGS
@given(
    equation=_einsum_text,
    shapes=st.lists(_shape, min_size=0, max_size=3),
    strategy=_strategy,
    memory_limit=st.one_of(st.none(), st.integers(-2, 100), st.floats(), st.text(max_size=2)),
)
def test_einsum_path_fuzz(
    equation: str, shapes: list[tuple[int, ...]], strategy: Any, memory_limit: Any
) -> None:
    _attempt(tops.einsum_path, equation, *shapes, strategy=strategy, memory_limit=memory_limit)


@_SETTINGS
@given(
    pattern=_einsum_text,
    shape=st.one_of(_shape, st.lists(_shape, max_size=3)),
    reduction=_reduction,
    kwargs=_kwargs,
)
def test_explain_fuzz(pattern: str, shape: Any, reduction: Any, kwargs: dict[str, Any]) -> None:
    _attempt(tops.explain, pattern, shape, reduction=reduction, **kwargs)


@_SETTINGS
@given(
    value=st.one_of(
        st.none(), st.integers(), st.floats(), st.text(max_size=4), st.lists(st.integers())
    )
)
def test_non_arrays_fuzz(value: Any) -> None:
    """Inputs that are not arrays get a TensorOpsError too."""
    _attempt(tops.rearrange, value, "a -> a")
    _attempt(tops.reduce, value, "a -> ", "sum")
    _attempt(tops.repeat, value, "a -> a b", b=2)
    _attempt(tops.einsum, "i->i", value)
    _attempt(tops.parse_shape, value, "a")


_BAD_LENGTHS = [None, "2", 1.5, -1, 2**70]


@pytest.mark.parametrize("value", _BAD_LENGTHS, ids=repr)
def test_einsum_rejects_bad_length_values(value: Any) -> None:
    with pytest.raises(tops.TensorOpsError) as info:
        tops.einsum("(a b) c -> a b c", np.zeros((4, 3)), a=value)
    assert "a=" in info.value.reason or "(a b)" in info.value.reason


@pytest.mark.parametrize("op", ["einsum_path", "explain"])
def test_einsum_path_and_explain_reject_a_length_of_none(op: str) -> None:
    with pytest.raises(tops.TensorOpsError) as info:
        getattr(tops, op)("a b", (2, 3), a=None)
    assert info.value.reason == "axis length a=None is not an integer"
