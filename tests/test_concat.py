"""Concatenation and splitting with '+': the grammar, rearrange and einsum on every family.

Oracles: NumPy's concatenate / split written by hand, and einx (test-only), whose
``einx.id`` reads the same ``(a + b)`` notation.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorops as tops
from tensorops._compile.stand_ins import installed
from tensorops._grammar import Anon, Axis, Group, parse_concat, parse_pattern
from tests._seed import rng, tolerance
from tests.messages import caret

R = rng("test_concat")
SETTINGS = settings(max_examples=60, deadline=None)


def _x(*shape: int) -> np.ndarray:
    return R.standard_normal(shape)


# --- grammar -------------------------------------------------------------------------------------


def test_a_plus_group_has_parts() -> None:
    term = parse_concat("b (h w + c + 1)").inputs[0]
    group = term.elements[1]
    assert isinstance(group, Group)
    assert [[getattr(i, "name", None) or i.length for i in part] for part in group.parts] == [
        ["h", "w"],
        ["c"],
        [1],
    ]
    assert [item.span for item in group.items] == [(3, 4), (5, 6), (9, 10), (13, 14)]
    assert group.plus == ((7, 8), (11, 12))
    assert isinstance(group.parts[2][0], Anon)
    assert isinstance(group.parts[0][0], Axis)


def test_a_plain_group_has_no_parts() -> None:
    group = parse_concat("(h w)").inputs[0].elements[0]
    assert isinstance(group, Group)
    assert group.parts == ()
    assert group.plus == ()
    assert parse_pattern("(h w)") == parse_concat("(h w)")


@pytest.mark.parametrize(
    ("pattern", "fragment", "reason"),
    [
        ("b c1 + c2", "+", "'+' is allowed only inside parentheses"),
        ("b (+ c)", "+", "a part of the concatenation is empty"),
        ("b (a + )", "+", "a part of the concatenation is empty"),
        ("b (a ++ b)", "+", "a part of the concatenation is empty"),
        ("b [a + b]", "+", "'+' is not allowed inside brackets"),
        ("b [(a + b)]", "+", "'+' is not allowed inside brackets"),
    ],
)
def test_grammar_errors_point_at_the_plus(pattern: str, fragment: str, reason: str) -> None:
    occurrence = 1 if "++" in pattern else 0
    with pytest.raises(tops.PatternError) as error:
        parse_concat(pattern)
    assert reason in str(error.value)
    assert caret(pattern, fragment, occurrence) in str(error.value).splitlines()


def _refusal(call: Any, pattern: str) -> None:
    with pytest.raises(tops.PatternError) as error:
        call()
    lines = str(error.value).splitlines()
    assert "concatenation with '+' is supported by rearrange and einsum only" in lines[0]
    assert caret(pattern, "+") in lines


@pytest.mark.parametrize(
    "name", ["reduce", "repeat", "softmax", "pack", "parse_shape", "explain", "einsum_path"]
)
def test_every_other_op_refuses_a_plus_group_at_the_plus(name: str) -> None:
    x = np.zeros((2, 7))
    calls = {
        "reduce": ("b (c1 + c2) -> b", lambda p: tops.reduce(x, p, "sum", c1=3)),
        "repeat": ("b c -> b (c + r)", lambda p: tops.repeat(x, p, r=2)),
        "softmax": ("b [c] -> (b + c)", lambda p: tops.softmax(x, p)),
        "pack": ("(a + b) *", lambda p: tops.pack([x], p)),
        "parse_shape": ("b (c1 + c2)", lambda p: tops.parse_shape(x, p)),
        "explain": ("b (c1 + c2) -> b", lambda p: tops.explain(p, (2, 7), op="reduce", c1=3)),
        "einsum_path": ("b (c + d), (c + d) e -> b e", lambda p: tops.einsum_path(p, x, x)),
    }
    pattern, call = calls[name]
    _refusal(lambda: call(pattern), pattern)


# --- rearrange: concatenation --------------------------------------------------------------------

CONCATS = [
    ("b c1, b c2 -> b (c1 + c2)", [(2, 3), (2, 4)], lambda a, b: np.concatenate([a, b], 1)),
    ("b c1, b c2 -> (c1 + c2) b", [(2, 3), (2, 4)], lambda a, b: np.concatenate([a, b], 1).T),
    (
        "b c1 h w, b c2 h w -> b h w (c1 + c2)",
        [(2, 3, 4, 5), (2, 1, 4, 5)],
        lambda a, b: np.concatenate([a, b], 1).transpose(0, 2, 3, 1),
    ),
    (
        "b h w, b w -> b (h + 1) w",
        [(2, 4, 3), (2, 3)],
        lambda a, b: np.concatenate([a, b[:, None]], 1),
    ),
    (
        "b w, b h w -> b (1 + h) w",
        [(2, 3), (2, 4, 3)],
        lambda a, b: np.concatenate([a[:, None], b], 1),
    ),
    (
        "b c2, b c1 -> b (c1 + c2)",  # matched by names, not by position
        [(2, 3), (2, 4)],
        lambda a, b: np.concatenate([b, a], 1),
    ),
    (
        "b h w c, b k -> b (h w c + k)",
        [(2, 2, 3, 4), (2, 5)],
        lambda a, b: np.concatenate([a.reshape(2, 24), b], 1),
    ),
    (
        "... c1, ... c2, ... c3 -> ... (c1 + c2 + c3)",
        [(2, 3, 1), (2, 3, 2), (2, 3, 3)],
        lambda a, b, c: np.concatenate([a, b, c], -1),
    ),
    (
        "b (i j) c1, b i j c2 -> b i j (c1 + c2)",
        [(2, 6, 3), (2, 2, 3, 4)],
        lambda a, b: np.concatenate([a.reshape(2, 2, 3, 3), b], -1),
    ),
]


@pytest.mark.parametrize(("pattern", "shapes", "expected"), CONCATS, ids=[c[0] for c in CONCATS])
def test_concatenation_matches_numpy(
    backend: Any, pattern: str, shapes: Any, expected: Any
) -> None:
    arrays = [_x(*shape) for shape in shapes]
    got = tops.rearrange([backend.asarray(a) for a in arrays], pattern)
    assert backend.is_own(got, backend.asarray(arrays[0]))
    np.testing.assert_array_equal(backend.to_numpy(got), expected(*arrays))


def test_a_tuple_of_arrays_concatenates_too() -> None:
    a, b = _x(2, 3), _x(2, 4)
    got = tops.rearrange((a, b), "b c1, b c2 -> b (c1 + c2)")
    np.testing.assert_array_equal(got, np.concatenate([a, b], 1))


def test_a_list_with_one_input_term_is_stacked_as_before() -> None:
    a, b = _x(2, 6), _x(2, 6)
    got = tops.rearrange([a, b], "n b (c1 + c2) -> n b c1, n b c2", c1=2)
    np.testing.assert_array_equal(got[0], np.stack([a, b])[..., :2])
    np.testing.assert_array_equal(got[1], np.stack([a, b])[..., 2:])
    np.testing.assert_array_equal(tops.rearrange([a, b], "n b c -> b n c"), np.stack([a, b], 1))


def _einx_id(pattern: str, *arrays: np.ndarray, **lengths: int) -> Any:
    einx = pytest.importorskip("einx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return einx.id(pattern, *arrays, **lengths)


@pytest.mark.parametrize(
    ("pattern", "shapes", "lengths"),
    [
        ("b c1, b c2 -> b (c1 + c2)", [(2, 3), (2, 4)], {}),
        ("b h w, b w -> b (h + 1) w", [(2, 4, 3), (2, 3)], {}),
        ("b c1 h w, b c2 h w -> b h w (c1 + c2)", [(2, 3, 4, 5), (2, 2, 4, 5)], {}),
        ("b (c1 + c2) -> b c1, b c2", [(2, 7)], {"c1": 3}),
        ("b (c1 + c2 + c3) h -> c1 b h, h c2 b, b c3 h", [(2, 9, 3)], {"c1": 2, "c3": 4}),
        ("(h + 1) w -> h w, w", [(5, 3)], {}),
    ],
)
def test_rearrange_matches_einx(pattern: str, shapes: Any, lengths: dict[str, int]) -> None:
    arrays = [_x(*shape) for shape in shapes]
    got = tops.rearrange(arrays if len(arrays) > 1 else arrays[0], pattern, **lengths)
    expected = _einx_id(pattern, *arrays, **lengths)
    got_list = list(got) if isinstance(got, tuple) else [got]
    expected_list = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    assert len(got_list) == len(expected_list)
    for mine, theirs in zip(got_list, expected_list, strict=True):
        np.testing.assert_array_equal(mine, np.asarray(theirs))


# --- rearrange: splitting ------------------------------------------------------------------------


def test_splitting_returns_a_tuple_of_views(backend: Any) -> None:
    z = _x(2, 7)
    got = tops.rearrange(backend.asarray(z), "b (c1 + c2) -> b c1, b c2", c1=3)
    assert isinstance(got, tuple)
    assert len(got) == 2
    np.testing.assert_array_equal(backend.to_numpy(got[0]), z[:, :3])
    np.testing.assert_array_equal(backend.to_numpy(got[1]), z[:, 3:])


def test_numpy_and_torch_pieces_are_views() -> None:
    z = _x(2, 7)
    a, b = tops.rearrange(z, "b (c1 + c2) -> b c1, b c2", c2=4)
    assert np.shares_memory(a, z)
    assert np.shares_memory(b, z)
    h, w = tops.rearrange(z, "b (c1 + c2) -> c1 b, b c2", c1=3)
    assert np.shares_memory(h, z)
    assert np.shares_memory(w, z)
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(z.copy())
    a, b = tops.rearrange(t, "b (c1 + c2) -> b c1, b c2", c1=3)
    assert a._base is t
    assert b._base is t


@pytest.mark.parametrize(
    ("pattern", "lengths", "expected"),
    [
        ("b (x + y) -> b (y + x)", {"x": 3}, lambda z: np.concatenate([z[:, 3:], z[:, :3]], 1)),
        ("b (x + y) -> (y + x) b", {"y": 4}, lambda z: np.concatenate([z[:, 3:], z[:, :3]], 1).T),
        ("b (h + 1) -> b h, b", {}, lambda z: (z[:, :6], z[:, 6])),
        (
            "b (h w + c) -> b h w, c b",
            {"h": 2, "w": 2},
            lambda z: (z[:, :4].reshape(2, 2, 2), z[:, 4:].T),
        ),
    ],
)
def test_split_and_both_sides(backend: Any, pattern: str, lengths: Any, expected: Any) -> None:
    z = _x(2, 7)
    got = tops.rearrange(backend.asarray(z), pattern, **lengths)
    want = expected(z)
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for mine, theirs in zip(got, want, strict=True):
            np.testing.assert_array_equal(backend.to_numpy(mine), theirs)
    else:
        np.testing.assert_array_equal(backend.to_numpy(got), want)


def test_the_user_arrays_are_not_modified() -> None:
    a, b = _x(2, 3), _x(2, 4)
    before = a.copy(), b.copy()
    arrays = [a, b]
    tops.rearrange(arrays, "b c1, b c2 -> b (c1 + c2)")
    assert arrays == [a, b]
    np.testing.assert_array_equal(a, before[0])
    np.testing.assert_array_equal(b, before[1])


@st.composite
def _layouts(draw: st.DrawFn) -> tuple[list[int], int, tuple[int, ...]]:
    parts = draw(st.lists(st.integers(0, 4), min_size=2, max_size=4))
    rank = draw(st.integers(1, 3))
    position = draw(st.integers(0, rank - 1))
    others = tuple(draw(st.lists(st.integers(1, 3), min_size=rank - 1, max_size=rank - 1)))
    return parts, position, others


def _patterns(parts: list[int], position: int, rank: int) -> tuple[str, list[str], str]:
    names = [f"a{i}" for i in range(rank - 1)]
    group = "(" + " + ".join(f"p{i}" for i in range(len(parts))) + ")"
    terms = [" ".join([*names[:position], f"p{i}", *names[position:]]) for i in range(len(parts))]
    joint = " ".join([*names[:position], group, *names[position:]])
    return joint, terms, ", ".join(terms)


@SETTINGS
@given(_layouts())
def test_split_of_concat_is_the_identity(layout: Any) -> None:
    parts, position, others = layout
    rank = len(others) + 1
    joint, _, terms = _patterns(parts, position, rank)
    arrays = [
        np.arange(int(np.prod(shape)), dtype=float).reshape(shape) + 100 * i
        for i, n in enumerate(parts)
        for shape in [(*others[:position], n, *others[position:])]
    ]
    concatenated = tops.rearrange(arrays, f"{terms} -> {joint}")
    np.testing.assert_array_equal(concatenated, np.concatenate(arrays, axis=position))
    lengths = {f"p{i}": n for i, n in enumerate(parts[1:], 1)}
    pieces = tops.rearrange(concatenated, f"{joint} -> {terms}", **lengths)
    assert len(pieces) == len(parts)
    for piece, array in zip(pieces, arrays, strict=True):
        np.testing.assert_array_equal(piece, array)
        assert np.shares_memory(piece, concatenated) or piece.size == 0


@SETTINGS
@given(_layouts(), st.randoms(use_true_random=False))
def test_concatenation_in_any_order_matches_numpy(layout: Any, random: Any) -> None:
    parts, position, others = layout
    rank = len(others) + 1
    joint, terms, _ = _patterns(parts, position, rank)
    arrays = [_x(*others[:position], n, *others[position:]) for n in parts]
    order = list(range(len(parts)))
    random.shuffle(order)
    got = tops.rearrange(
        [arrays[i] for i in order], ", ".join(terms[i] for i in order) + f" -> {joint}"
    )
    np.testing.assert_array_equal(got, np.concatenate(arrays, axis=position))


# --- rearrange: errors ---------------------------------------------------------------------------


def _error(call: Any, kind: type[Exception], reason: str, pattern: str, fragment: Any) -> str:
    """The message of `call`'s error: its first line, its caret under `fragment`, its inputs.

    `fragment` is a str, a (str, occurrence) pair, or None for no caret check.
    """
    with pytest.raises(kind) as error:
        call()
    text = str(error.value)
    assert text.startswith("rearrange: " + reason) or text.startswith("einsum: " + reason), text
    if fragment is not None:
        words, occurrence = fragment if isinstance(fragment, tuple) else (fragment, 0)
        assert caret(pattern, words, occurrence) in text.splitlines(), text
    assert "input" in text
    return text


@pytest.mark.parametrize(
    ("arrays", "pattern", "lengths", "kind", "reason", "fragment"),
    [
        (
            [(2, 3), (2, 4)],
            "b c1, b c2 -> b (c1 + c3)",
            {},
            tops.ShapeError,
            "no input term or part has the axes of 'c3' (b c3)",
            "c3",
        ),
        (
            [(2, 3), (2, 4), (2, 3)],
            "b c1, b c2 -> b (c1 + c2)",
            {},
            tops.ShapeError,
            "the pattern has 2 input term(s) for 3 array(s)",
            "b c1, b c2",
        ),
        (
            [(2, 3), (3, 4)],
            "b c1, b c2 -> b (c1 + c2)",
            {},
            tops.ShapeError,
            "axis 'b' has length 2 in one of the inputs concatenated and 3 in another",
            ("b", 2),
        ),
        (
            [(2, 3, 4), (2, 4)],
            "b c1, b c2 -> b (c1 + c2)",
            {},
            tops.ShapeError,
            "operand 0 has 3 dimension(s) but its term 'b c1' has 2",
            "b c1",
        ),
        (
            [(2, 3), (3, 4)],
            "... c1, ... c2 -> ... (c1 + c2)",
            {},
            tops.ShapeError,
            "axis '...' has length 2 in one of the inputs concatenated and 3 in another",
            ("...", 2),
        ),
        (
            [(2, 3), (5, 2, 4)],
            "... c1, ... c2 -> ... (c1 + c2)",
            {},
            tops.ShapeError,
            "'...' stands for 1 and 2 axes in the arrays concatenated",
            ("...", 2),
        ),
        (
            [(2, 3), (2, 4)],
            "b c1, b c1 -> b (c1 + c1)",
            {},
            tops.PatternError,
            "axis 'c1' appears in two parts of the concatenation",
            ("c1", 3),
        ),
        (
            (2, 7),
            "b (c1 + c2) -> b c1, b c2",
            {},
            tops.ShapeError,
            "cannot split an axis of length 7 into (c1 + c2): 2 parts have no length",
            "(c1 + c2)",
        ),
        (
            (2, 7),
            "b (c1 + c2) -> b c1, b c2",
            {"c1": 9},
            tops.ShapeError,
            "cannot split an axis of length 7 into (c1 + c2): the parts of known length take 9",
            "(c1 + c2)",
        ),
        (
            (2, 7),
            "b (c1 + c2) -> b c1, b c2",
            {"c1": 3, "c2": 3},
            tops.ShapeError,
            "cannot split an axis of length 7 into (c1 + c2): the parts add up to 6",
            "(c1 + c2)",
        ),
        (
            (2, 7),
            "b (c1 + c2) -> b c1",
            {"c1": 3},
            tops.ShapeError,
            "'c2' has no place on the right",
            "c2",
        ),
        (
            (2, 7),
            "(b + c) (c1 + c2) -> b c1",
            {"c1": 3},
            tops.PatternError,
            "a term has at most one concatenation",
            "(c1 + c2)",
        ),
        (
            (2, 7),
            "b (... + c) -> b c",
            {},
            tops.PatternError,
            "'...' cannot be a part of a concatenation",
            "...",
        ),
        (
            [(2, 3), (2, 4)],
            "b c1, b c2 -> b c1 c2",
            {},
            tops.PatternError,
            "rearrange takes one term a side, got 2 on the left",
            ", ",
        ),
        (
            [(2, 3), (2, 4)],
            "b c1, b c2",
            {},
            tops.PatternError,
            "the pattern has no '->'",
            "",
        ),
        (
            (2, 3),
            "b c -> b (c + 1)",
            {},
            tops.ShapeError,
            "no input term or part has the axes of '1' (b)",
            "1",
        ),
        (
            (2, 7),
            "b (h + 2) -> b h, b 2",
            {},
            tops.PatternError,
            "an anonymous axis of length 2 is not allowed on the left of rearrange",
            "2",
        ),
        (
            (2, 9),
            "b (h w + c) -> b h w, b c",
            {"h": 2, "c": 4},
            tops.ShapeError,
            "cannot split axis of length 5 into (h w",
            None,
        ),
    ],
)
def test_rearrange_errors(
    arrays: Any, pattern: str, lengths: Any, kind: Any, reason: str, fragment: Any
) -> None:
    x = [np.zeros(s) for s in arrays] if isinstance(arrays, list) else np.zeros(arrays)
    _error(lambda: tops.rearrange(x, pattern, **lengths), kind, reason, pattern, fragment)


def test_a_stray_length_is_an_error() -> None:
    with pytest.raises(tops.ShapeError, match="axis length q=3 is given but 'q' is not in"):
        tops.rearrange(np.zeros((2, 7)), "b (c1 + c2) -> b c1, b c2", c1=3, q=3)


# --- einsum --------------------------------------------------------------------------------------


def test_einsum_concatenates_a_list_operand(backend: Any) -> None:
    x, w1, w2 = _x(2, 7), _x(3, 5), _x(4, 5)
    got = tops.einsum(
        backend.asarray(x),
        [backend.asarray(w1), backend.asarray(w2)],
        "b (c1 + c2), (c1 + c2) d -> b d",
    )
    expected = x @ np.concatenate([w1, w2])
    np.testing.assert_allclose(backend.to_numpy(got), expected, **tolerance(np.float64, terms=7))


def test_einsum_in_numpy_order_with_lists_on_both_sides() -> None:
    x, w1, w2 = _x(2, 7), _x(3, 5), _x(4, 5)
    got = tops.einsum("b (c1 + c2), (c1 + c2) d -> b d", [x[:, :3], x[:, 3:]], [w1, w2])
    np.testing.assert_allclose(got, x @ np.concatenate([w1, w2]), **tolerance(np.float64, terms=7))
    got = tops.einsum("b (c1 + c2), (c1 + c2) d -> b d", [x, [w1, w2]])  # torch's one list
    np.testing.assert_allclose(got, x @ np.concatenate([w1, w2]), **tolerance(np.float64, terms=7))


def test_einsum_splits_its_output(backend: Any) -> None:
    x, v1, v2 = _x(2, 7), _x(7, 2), _x(7, 3)
    a, b = tops.einsum(
        backend.asarray(x),
        [backend.asarray(v1), backend.asarray(v2)],
        "b c, c (d1 + d2) -> b d1, d2 b",
    )
    np.testing.assert_allclose(backend.to_numpy(a), x @ v1, **tolerance(np.float64, terms=7))
    np.testing.assert_allclose(backend.to_numpy(b), (x @ v2).T, **tolerance(np.float64, terms=7))
    joint = np.concatenate([v1, v2], 1)
    a, b = tops.einsum(x, joint, "b c, c (d1 + d2) -> b d1, b d2", d2=3)
    np.testing.assert_allclose(b, x @ v2, **tolerance(np.float64, terms=7))
    whole = tops.einsum(x, [v1, v2], "b c, c (d1 + d2) -> b (d1 + d2)")
    np.testing.assert_allclose(whole, x @ joint, **tolerance(np.float64, terms=7))


@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=2, max_size=4), st.integers(1, 3))
def test_einsum_of_parts_is_einsum_of_the_concatenation(parts: list[int], batch: int) -> None:
    group = "(" + " + ".join(f"c{i}" for i in range(len(parts))) + ")"
    x = _x(batch, sum(parts))
    ws = [_x(n, 3) for n in parts]
    got = tops.einsum(x, ws, f"b {group}, {group} d -> b d")
    expected = x @ np.concatenate(ws)
    np.testing.assert_allclose(got, expected, **tolerance(np.float64, terms=sum(parts)))
    first, rest = tops.einsum(x, np.concatenate(ws).T, "b c, (d0 + d1) c -> b d0, d1 b", d0=1)
    size = tolerance(np.float64, terms=sum(parts))
    np.testing.assert_allclose(first, expected[:, :1], **size)
    np.testing.assert_allclose(rest, expected[:, 1:].T, **size)


def test_einsum_matches_einx_dot() -> None:
    einx = pytest.importorskip("einx")
    x, w = _x(2, 7), _x(7, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        joint = einx.id("c1 d, c2 d -> (c1 + c2) d", w[:3], w[3:])  # einx.dot takes no '+'
        expected = einx.dot("b c, c d -> b d", x, joint)
    got = tops.einsum(x, [w[:3], w[3:]], "b (c1 + c2), (c1 + c2) d -> b d")
    np.testing.assert_allclose(got, np.asarray(expected), **tolerance(np.float64, terms=7))


@pytest.mark.parametrize(
    ("make", "pattern", "lengths", "kind", "reason", "fragment"),
    [
        (
            lambda: (_x(2, 7), [_x(3, 5), _x(3, 5)]),
            "b (c1 + c2), (c1 + c2) d -> b d",
            {},
            tops.ShapeError,
            "axis '(c1 + c2)' has length 7 in operand 0",
            ("(c1 + c2)", 1),
        ),
        (
            lambda: (_x(2, 7), [_x(3, 5), _x(4, 5)]),
            "b (c1 + c2), (c1 + c2) d -> b d",
            {"c1": 4},
            tops.ShapeError,
            "part 'c1' of (c1 + c2) has length 3, not 4",
            "(c1 + c2) d",
        ),
        (
            lambda: ([_x(2, 4), _x(2, 3)], [_x(3, 5), _x(4, 5)]),
            "b (c1 + c2), (c1 + c2) d -> b d",
            {},
            tops.ShapeError,
            "the parts of (c1 + c2) have lengths (4, 3) in one operand and (3, 4) in another",
            "(c1 + c2) d",
        ),
        (
            lambda: (_x(2, 7), [_x(3, 5), _x(4, 5), _x(4, 5)]),
            "b (c1 + c2), (c1 + c2) d -> b d",
            {},
            tops.ShapeError,
            "operand 1 is a list of 3 arrays for the 2 parts of (c1 + c2)",
            "(c1 + c2) d",
        ),
        (
            lambda: (_x(2, 7), [_x(3, 5), _x(4, 5)]),
            "b c, d (c1 + c2) -> b d",
            {},
            tops.ShapeError,
            "the arrays of operand 1 differ outside their '+' axis (dimension 1): "
            "shapes (3, 5), (4, 5)",
            "d (c1 + c2)",
        ),
        (
            lambda: ([_x(2, 7)], [_x(3, 5), _x(4, 5)]),
            "b c, (c1 + c2) d -> b d",
            {},
            tops.ArgumentError,
            "operand 0 is a list of arrays but its term has no '+' group",
            "b c",
        ),
        (
            lambda: (_x(2, 7), _x(7, 5)),
            "b c, c (d1 + d2) -> b d1, b d2",
            {},
            tops.ShapeError,
            "cannot split an axis of length 5 into (d1 + d2): 2 parts have no length",
            "-> b d1, b d2",
        ),
        (
            lambda: (_x(2, 7), _x(7, 5)),
            "b c, c (d1 + d2) -> b d3, b d4",
            {"d1": 2},
            tops.PatternError,
            "several output terms must split a joint axis of the inputs",
            "b d3, b d4",
        ),
        (
            lambda: (_x(2, 7), _x(7, 5)),
            "b c, c (d1 + d2) -> b (d1 + d2), b d2",
            {"d1": 2},
            tops.PatternError,
            "an output term cannot hold a '+' group when there are several output terms",
            "b (d1 + d2), b d2",
        ),
    ],
)
def test_einsum_errors(
    make: Any, pattern: str, lengths: Any, kind: Any, reason: str, fragment: Any
) -> None:
    operands = make()
    _error(lambda: tops.einsum(*operands, pattern, **lengths), kind, reason, pattern, fragment)


def test_einsum_compact_equations_refuse_a_plus() -> None:
    with pytest.raises(tops.PatternError, match="'\\+' is allowed only inside parentheses"):
        tops.einsum("ij,j+k->i", np.ones((2, 3)), np.ones((3, 4)))


# --- torch: autograd, compile, export; JAX ------------------------------------------------------


def test_torch_gradients_flow_through_concatenation_and_split() -> None:
    torch = pytest.importorskip("torch")
    a = torch.randn(2, 3, requires_grad=True)
    b = torch.randn(2, 4, requires_grad=True)
    z = tops.rearrange([a, b], "b c1, b c2 -> b (c1 + c2)")
    p, q = tops.rearrange(z * torch.arange(7.0), "b (c1 + c2) -> b c1, b c2", c1=3)
    (p.sum() + 2 * q.sum()).backward()
    torch.testing.assert_close(a.grad, torch.arange(3.0).expand(2, 3))
    torch.testing.assert_close(b.grad, 2 * torch.arange(3.0, 7.0).expand(2, 4))


def test_the_rearrange_layer_splits() -> None:
    torch = pytest.importorskip("torch")
    from tensorops.layers.torch import Rearrange

    layer = Rearrange("b (c1 + c2) -> b c1, c2 b", c1=3)
    x = torch.randn(2, 7)
    first, second = layer(x)
    torch.testing.assert_close(first, x[:, :3])
    torch.testing.assert_close(second, x[:, 3:].T)
    with pytest.raises(tops.ShapeError, match="2 parts have no length"):
        Rearrange("b (c1 + c2) -> b c1, b c2")(x)


def _compiled_once(fn: Any, make: Any) -> None:
    torch = pytest.importorskip("torch")
    from torch._dynamo.testing import CompileCounter

    for dynamic in (None, True):
        torch._dynamo.reset()
        counter = CompileCounter()
        compiled = torch.compile(fn, backend=counter, fullgraph=True, dynamic=dynamic)
        for batch in (2, 3, 5):
            inputs = make(batch)
            got, expected = compiled(*inputs), fn(*inputs)
            got = got if isinstance(got, tuple) else (got,)
            expected = expected if isinstance(expected, tuple) else (expected,)
            for mine, theirs in zip(got, expected, strict=True):
                torch.testing.assert_close(mine, theirs)
        assert counter.frame_count == (2 if dynamic is None else 1)


def test_torch_compile_has_no_graph_breaks() -> None:
    torch = pytest.importorskip("torch")
    _compiled_once(
        lambda x, y: tops.rearrange([x, y], "b c1, b c2 -> b (c1 + c2)"),
        lambda b: (torch.randn(b, 3), torch.randn(b, 4)),
    )
    _compiled_once(
        lambda z: tops.rearrange(z, "b (c1 + c2) -> b c1, c2 b", c1=3),
        lambda b: (torch.randn(b, 7),),
    )
    _compiled_once(
        lambda x, w1, w2: tops.einsum(x, [w1, w2], "b (c1 + c2), (c1 + c2) d -> b d"),
        lambda b: (torch.randn(b, 7), torch.randn(3, 5), torch.randn(4, 5)),
    )
    _compiled_once(
        lambda x, v: tops.einsum(x, v, "b c, c (d1 + d2) -> b d1, d2 b", d1=2),
        lambda b: (torch.randn(b, 7), torch.randn(7, 5)),
    )


@pytest.mark.parametrize("op", ["rearrange", "einsum"])
def test_errors_inside_torch_compile_are_the_eager_errors(op: str) -> None:
    torch = pytest.importorskip("torch")

    def fn(x: Any, y: Any) -> Any:
        if op == "einsum":
            return tops.einsum(x, [y, y], "b (c1 + c2), (c1 + c2) d -> b d")
        return tops.rearrange([x, y], "b c1, b c2 -> b (c1 + c2)")

    inputs = (torch.randn(2, 3), torch.randn(3, 4))
    with pytest.raises(tops.TensorOpsError) as eager:
        fn(*inputs)
    for dynamic in (False, True):
        torch._dynamo.reset()
        compiled = torch.compile(fn, backend="eager", fullgraph=True, dynamic=dynamic)
        with pytest.raises(tops.TensorOpsError) as traced:
            compiled(*inputs)
        assert isinstance(traced.value, type(eager.value))
        if op == "einsum" and not installed():
            # The fallback traces einsum's own Python: an error of the contraction is told
            # in the terms of the equation the planner gets, the group as one joint axis.
            joint = "\u1429" + "0"
            assert traced.value.reason == eager.value.reason.replace("(c1 + c2)", joint)
            continue
        assert str(traced.value) == str(eager.value)


def test_torch_export() -> None:
    torch = pytest.importorskip("torch")

    class Model(torch.nn.Module):
        def forward(self, x: Any, y: Any) -> Any:
            z = tops.rearrange([x, y], "b c1, b c2 -> b (c1 + c2)")
            return tops.rearrange(z, "b (c1 + c2) -> b c1, b c2", c1=3)

    batch = torch.export.Dim("batch", min=2, max=64)
    x, y = torch.randn(4, 3), torch.randn(4, 4)
    program = torch.export.export(Model(), (x, y), dynamic_shapes=({0: batch}, {0: batch}))
    p, q = program.module()(torch.randn(6, 3), torch.randn(6, 4))
    assert p.shape == (6, 3)
    assert q.shape == (6, 4)
    p, q = program.module()(x, y)
    torch.testing.assert_close(p, x)
    torch.testing.assert_close(q, y)


def test_jax_jit_and_grad() -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")

    def f(a: Any, b: Any) -> Any:
        z = tops.rearrange([a, b], "b c1, b c2 -> b (c1 + c2)")
        p, q = tops.rearrange(z * jnp.arange(7.0), "b (c1 + c2) -> b c1, b c2", c1=3)
        return p.sum() + 2 * q.sum()

    a, b = jnp.ones((2, 3)), jnp.ones((2, 4))
    np.testing.assert_allclose(jax.jit(f)(a, b), f(a, b))
    grad_a, grad_b = jax.grad(f, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(grad_a, np.broadcast_to(np.arange(3.0), (2, 3)))
    np.testing.assert_allclose(grad_b, 2 * np.broadcast_to(np.arange(3.0, 7.0), (2, 4)))


def test_plain_joins_and_splits_in_any_order_of_the_parts(backend: Any) -> None:
    """The one-call paths: pieces taken in the order of the parts, not of the list."""
    a = np.arange(6.0).reshape(2, 3)
    b = -np.arange(8.0).reshape(2, 4)
    x, y = backend.asarray(a), backend.asarray(b)
    swapped = tops.rearrange([x, y], "n c1, n c2 -> n (c2 + c1)")
    np.testing.assert_array_equal(backend.to_numpy(swapped), np.concatenate([b, a], 1))
    same = tops.rearrange((x, y), "n c1, n c2 -> n (c1 + c2)")
    np.testing.assert_array_equal(backend.to_numpy(same), np.concatenate([a, b], 1))
    z = np.concatenate([a, b, a], 1)
    second, first, third = tops.rearrange(
        backend.asarray(z), "n (p + q + r) -> n q, n p, n r", p=3, q=4
    )
    np.testing.assert_array_equal(backend.to_numpy(first), a)
    np.testing.assert_array_equal(backend.to_numpy(second), b)
    np.testing.assert_array_equal(backend.to_numpy(third), a)
