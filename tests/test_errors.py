"""Every kind of bad input to the core ops raises TensorOpsError with a useful message."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import tensorops as tops

X = np.zeros((4, 9))


def _error(fn, *args, **kwargs) -> tops.TensorOpsError:  # type: ignore[no-untyped-def]
    with pytest.raises(tops.TensorOpsError) as info:
        fn(*args, **kwargs)
    error = info.value
    assert isinstance(error, ValueError)
    assert isinstance(error, RuntimeError)
    return error


def test_indivisible_length_message_is_exact() -> None:
    error = _error(tops.rearrange, X, "b (h w) -> b h w", h=2)
    assert str(error) == (
        "rearrange: cannot split axis of length 9 into (h w) with h=2: 9 is not divisible by 2\n"
        '  pattern: "b (h w) -> b h w"\n'
        "              ^^^^^\n"
        "  input:   shape=(4, 9) dtype=float64 backend=numpy\n"
        "  lengths: h=2"
    )
    assert isinstance(error, tops.ShapeError)


@pytest.mark.parametrize(
    ("call", "reason", "caret"),
    [
        (lambda: tops.rearrange(X, "b c d -> b c d"), "has 3 axes but the input has 2", "^^^^^"),
        (lambda: tops.rearrange(X, "b c ... d -> b c d ..."), "at least 3 axes", None),
        (lambda: tops.rearrange(X, "b c -> b"), "axis 'c' is missing on the right", "^"),
        (lambda: tops.rearrange(X, "b -> b c"), "axis 'c' is missing on the left", None),
        (lambda: tops.rearrange(X, "b b -> b"), "axis 'b' appears twice on the left", None),
        (lambda: tops.rearrange(X, "b c -> b c c"), "appears twice on the right", None),
        (
            lambda: tops.rearrange(X, "b (c d) -> b c d"),
            "cannot infer the lengths of c and d",
            None,
        ),
        (lambda: tops.rearrange(X, "b c -> c b", z=3), "z=3 is given but 'z' is not in", None),
        (lambda: tops.rearrange(X, "b c -> c b", c=4), "does not match c = 4", None),
        (lambda: tops.rearrange(X, "b (c d) -> b c d", c=2.5), "c=2.5 is not an integer", None),
        (lambda: tops.rearrange(X, "b (c d) -> b c d", c=-1), "c=-1 is negative", None),
        (lambda: tops.rearrange(X, "b, c -> c b"), "one term a side, got 2", None),
        (lambda: tops.rearrange(X, "b c"), "the pattern has no '->'", None),
        (lambda: tops.rearrange(X, "... b c -> ... ... b c"), "'...' appears twice", None),
        (lambda: tops.rearrange(X, "... c -> c"), "'...' must appear on both sides", None),
        (lambda: tops.rearrange(X, "(...) c -> c ..."), "'...' inside parentheses", None),
        (lambda: tops.rearrange(X, "b (c 3) -> b c 3"), "anonymous axis of length 3", None),
        (lambda: tops.rearrange(X, "b _ -> b _"), "'_' is not allowed in rearrange", None),
        (lambda: tops.rearrange(X, "b * -> b *"), "'*' is not allowed in rearrange", None),
        (
            lambda: tops.rearrange(X, "b 1 -> b"),
            "dimension of length 9 does not match a unit",
            None,
        ),
        (lambda: tops.reduce(X, "b c -> b d", "sum"), "axis 'd' is missing on the left", None),
        (lambda: tops.reduce(X, "b c -> b", "median"), "unknown reduction 'median'", None),
        (lambda: tops.reduce(X, "b c -> b", 3), "unknown reduction 3", None),
        (lambda: tops.reduce(np.zeros((0, 3)), "a b -> b", "max"), "zero-size array", None),
        (lambda: tops.repeat(X, "b c -> b c r"), "the length of new axis 'r' is not given", None),
        (lambda: tops.repeat(X, "b c -> b"), "axis 'c' is missing on the right", None),
        (lambda: tops.rearrange(X, 3), "the pattern must be a str, got int", None),
        (lambda: tops.rearrange("a b", X), "the pattern must be a str", None),
        (lambda: tops.rearrange([], "a b -> b a"), "cannot rearrange an empty list", None),
        (
            lambda: tops.rearrange([np.zeros(2), np.zeros(3)], "n a -> a n"),
            "list elements have different shapes",
            None,
        ),
        (lambda: tops.rearrange([np.zeros(2), 3], "n a -> a n"), "list element 1 is a int", None),
        (lambda: tops.rearrange(object(), "a -> a"), "unsupported input type object", None),
        (lambda: tops.rearrange(X, "b (c -> b c"), "unclosed parenthesis", None),
    ],
)
def test_error_kinds(call, reason: str, caret: str | None) -> None:  # type: ignore[no-untyped-def]
    error = _error(call)
    assert reason in error.reason
    text = str(error)
    assert text.splitlines()[0].split(":")[0] in {"rearrange", "reduce", "repeat"}
    if caret is not None:
        assert text.splitlines()[2].strip() == caret


def test_error_names_the_shape_and_lengths() -> None:
    error = _error(tops.rearrange, X, "b (h w) -> b h w", h=4)
    assert "shape=(4, 9)" in str(error)
    assert "lengths: h=4" in str(error)


def test_hints_teach() -> None:
    assert "spaces, not commas" in str(_error(tops.rearrange, X, "b, c -> c b"))
    assert "reduce to remove an axis" in str(_error(tops.rearrange, X, "b c -> b"))
    assert "array comes first" in str(_error(tops.rearrange, "a -> a", X))


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        (lambda: tops.pack([X], "b c"), "exactly one '*'"),
        (lambda: tops.pack([X], "b * *"), "exactly one '*'"),
        (lambda: tops.pack([X], "b (c) *"), "axis names and one '*' only"),
        (lambda: tops.pack([X], "b b *"), "axis 'b' appears twice"),
        (lambda: tops.pack([X], "b * -> b"), "single term"),
        (lambda: tops.pack([], "b *"), "non-empty list"),
        (
            lambda: tops.pack([np.zeros(3)], "a b *"),
            "has 1 dimensions, the pattern needs at least 2",
        ),
        (lambda: tops.pack([np.zeros((2, 3)), np.zeros((3, 3))], "b *"), "outside '*'"),
        (lambda: tops.unpack(X, [(4,), (4,)], "b *"), "cover 8 elements along '*'"),
        (lambda: tops.unpack(X, [(-1,), (-1,)], "b *"), "more than one -1"),
        (lambda: tops.unpack(X, [(2, -1)], "b *"), "cannot infer the -1"),
        (lambda: tops.unpack(X, [(-3,)], "b *"), "negative length"),
        (lambda: tops.unpack(X, [("x",)], "b *"), "list of shapes"),
        (lambda: tops.unpack(X, [(9,)], "a b *"), "the packed input has 2 dimensions"),
        (lambda: tops.parse_shape(X, "a b c"), "has 3 axes but the input has 2"),
        (lambda: tops.parse_shape(X, "a (b)"), "axis names, '_', '...', integers and '()' only"),
        (lambda: tops.parse_shape(X, "... a ..."), "'...' appears twice"),
        (lambda: tops.parse_shape(X, "a a"), "axis 'a' has lengths 4 and 9"),
        (lambda: tops.parse_shape(X, "a, b"), "single term"),
        (lambda: tops.parse_shape(3, "a"), "unsupported input type int"),
    ],
)
def test_pack_unpack_parse_shape_errors(call, reason: str) -> None:  # type: ignore[no-untyped-def]
    assert reason in _error(call).reason


def test_errors_pickle_with_their_fields() -> None:
    error = _error(tops.rearrange, X, "b (h w) -> b h w", h=2)
    clone = pickle.loads(pickle.dumps(error))
    assert type(clone) is type(error)
    assert str(clone) == str(error)


def test_bad_input_is_not_modified() -> None:
    x = np.arange(6.0).reshape(2, 3)
    before = x.copy()
    lengths = {"h": 4}
    _error(tops.rearrange, x, "b (h w) -> b h w", **lengths)
    np.testing.assert_array_equal(x, before)
    assert lengths == {"h": 4}
