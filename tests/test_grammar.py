"""The shared grammar: every element, spans for carets, and every syntax error."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorops._errors import PatternError, TensorOpsError
from tensorops._grammar import (
    Anon,
    Axis,
    Bracket,
    Dots,
    Group,
    Pattern,
    Skip,
    Star,
    check_names,
    is_axis_name,
    is_spaced,
    items_of,
    parse_concat,
    parse_pattern,
)
from tests._reference_grammar import read


def test_names_integers_groups_and_ellipsis() -> None:
    p = parse_pattern("batch c (h 2) ... 1 () -> x")
    assert p.outputs is not None
    assert p.arrow == (23, 25)
    (term,) = p.inputs
    kinds = [type(e) for e in term.elements]
    assert kinds == [Axis, Axis, Group, Dots, Anon, Group]
    group = term.elements[2]
    assert isinstance(group, Group)
    assert group.items == (Axis("h", (9, 10)), Anon(2, (11, 12)))
    assert group.span == (8, 13)
    assert term.elements[5] == Group((), (20, 22))


def test_operands_and_no_arrow() -> None:
    p = parse_pattern("ij , jk")
    assert p.outputs is None
    assert len(p.inputs) == 2
    assert [e.name for e in p.inputs[1].elements if isinstance(e, Axis)] == ["jk"]


def test_empty_output_and_skip_star() -> None:
    p = parse_pattern("b _ * ->")
    assert p.outputs is not None
    assert p.outputs[0].elements == ()
    assert [type(e) for e in p.inputs[0].elements] == [Axis, Skip, Star]


def test_underscore_names_parse_and_the_name_rule_refuses_them() -> None:
    """The parser takes any word; einops' rule (no leading or trailing '_') is checked apart."""
    (term,) = parse_pattern("_x d_in").inputs
    assert [e.name for e in term.elements if isinstance(e, Axis)] == ["_x", "d_in"]
    check_names(parse_pattern("d_in b"))
    for text, name in (("h _w", "_w"), ("h_ w", "h_")):
        with pytest.raises(PatternError, match=f"axis name '{name}' starts or ends with '_'"):
            check_names(parse_pattern(text))
    with pytest.raises(PatternError, match="'\u00d7' is not a valid axis name"):
        check_names(parse_pattern("a \u00d7"))


def test_ellipsis_without_spaces() -> None:
    (term,) = parse_pattern("...ij").inputs
    assert isinstance(term.elements[0], Dots)
    assert term.elements[1] == Axis("ij", (3, 5))


def test_parse_is_cached() -> None:
    assert parse_pattern("a b -> b a") is parse_pattern("a b -> b a")


def test_ast_is_immutable_and_hashable() -> None:
    p = parse_pattern("a (b c) -> c b a")
    hash(p)
    with pytest.raises(AttributeError):
        p.text = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "reason", "span", "hint"),
    [
        ("a -> (a", "unclosed parenthesis", (5, 6), None),
        ("a ) -> a", "unmatched closing parenthesis", (2, 3), None),
        ("(a (b)) -> a", "nested parentheses are not allowed", (3, 4), None),
        ("a -> b -> c", "a pattern has at most one '->'", (7, 9), None),
        ("a .. -> a", "unexpected character '.' in pattern", (2, 3), "exactly three dots"),
        ("a => a", "unexpected character '=' in pattern", (2, 3), "->"),
        ("a {b} -> a", "unexpected character '{' in pattern", (2, 3), "round parentheses"),
        ("a [b -> a", "unclosed bracket", (2, 3), None),
        ("a b] -> a", "unmatched closing bracket", (3, 4), None),
        ("[a [b]] -> a", "nested brackets are not allowed", (3, 4), None),
        ("[a _] -> a", "'_' is not allowed inside brackets", (3, 4), None),
        ("2a -> a", "axis name '2a' starts with a digit", (0, 2), None),
        ("a 0 -> a", "anonymous axis of length 0 is not allowed: lengths are >= 1", (2, 3), None),
        ("(a _) -> a", "'_' is not allowed inside parentheses", (3, 4), None),
        ("(a *) -> a", "'*' is not allowed inside parentheses", (3, 4), None),
        ("a ; b -> a", "unexpected character ';' in pattern", (2, 3), None),
    ],
)
def test_syntax_errors(text: str, reason: str, span: tuple[int, int], hint: str | None) -> None:
    with pytest.raises(PatternError) as info:
        parse_pattern(text)
    error = info.value
    assert error.reason == reason
    assert error.span == span
    assert error.pattern == text
    if hint is not None:
        assert error.hint is not None
        assert hint in error.hint
    assert isinstance(error, ValueError)
    assert isinstance(error, RuntimeError)
    assert isinstance(error, TensorOpsError)


def test_caret_lines_up_under_fault() -> None:
    with pytest.raises(PatternError) as info:
        parse_pattern("a b -> (a b")
    lines = str(info.value).splitlines()
    assert lines[1] == '  pattern: "a b -> (a b"'
    caret = lines[2]
    assert caret.index("^") == lines[1].index('"') + 1 + 7


def test_brackets_hold_the_axes_an_op_works_along() -> None:
    (term,) = parse_pattern("b [h (w 2) ...] c").inputs
    bracket = term.elements[1]
    assert isinstance(bracket, Bracket)
    assert bracket.span == (2, 15)
    assert [type(e) for e in bracket.elements] == [Axis, Group, Dots]
    assert parse_pattern("[]").inputs[0].elements == (Bracket((), (0, 2)),)


def test_unicode_letters_and_symbols_are_words() -> None:
    (term,) = parse_pattern("ÀÁ\u00d7").inputs
    assert term.elements == (Axis("ÀÁ\u00d7", (0, 3)),)
    (term,) = parse_pattern("größe x").inputs
    assert [e.name for e in term.elements if isinstance(e, Axis)] == ["größe", "x"]


@pytest.mark.parametrize(
    ("text", "spaced"),
    [
        ("ij,jk->ik", False),
        ("bij , bjk -> bik", False),
        ("...ij,...jk", False),
        ("b h i d, b h j d -> b h i j", True),
        ("(a b) c -> c", True),
        ("a, b -> a b", True),
        ("index ->", False),
    ],
)
def test_the_notation_rule(text: str, spaced: bool) -> None:
    assert is_spaced(parse_pattern(text)) is spaced


# -- the one-pass reader against a plain one -----------------------------------------------

#: Pieces of pattern text: every token kind, near-misses of each, and whitespace of each kind.
_PIECES = (
    *(
        "a",
        "b",
        "xy",
        "d_in",
        "_",
        "_x",
        "x_",
        "1",
        "2",
        "007",
        "0",
        "2a",
        "\u00d7",
        "\u00e9",
        "\u0661",
    ),
    *("...", "..", ".", "->", "-", ">", "=", "(", ")", "[", "]", ",", "*", "+", ";", "{"),
    *(" ", " ", "  ", "\t", "\n", "\u00a0", "\u2003"),
)
_TEXTS = st.lists(st.sampled_from(_PIECES), max_size=14).map("".join)


def _outcome(read: Callable[[], Pattern]) -> object:
    """The tree, or the error's reason, span, hint and pattern."""
    try:
        return read()
    except PatternError as error:
        return (error.reason, error.span, error.hint, error.pattern)


@settings(max_examples=3000)
@given(_TEXTS, st.booleans())
def test_the_reader_agrees_with_a_plain_reader(text: str, concat: bool) -> None:
    """Every text reads to the same tree, or fails with the same error, as token by token."""
    ours = parse_concat.__wrapped__ if concat else parse_pattern.__wrapped__
    assert _outcome(lambda: ours(text)) == _outcome(lambda: read(text, concat))


def _names_checked_one_by_one(pattern: Pattern) -> object:
    for term in (*pattern.inputs, *(pattern.outputs or ())):
        for _, item in items_of(term):
            if isinstance(item, Axis) and not is_axis_name(item.name):
                return item
    return None


@settings(max_examples=2000)
@given(_TEXTS)
def test_check_names_finds_the_first_bad_name(text: str) -> None:
    """The shortcut for texts with no bad name at a word's edge misses no bad name."""
    try:
        pattern = parse_pattern(text)
    except PatternError:
        return
    bad = _names_checked_one_by_one(pattern)
    if bad is None:
        check_names(pattern)
        return
    with pytest.raises(PatternError) as info:
        check_names(pattern)
    assert info.value.span == bad.span  # type: ignore[attr-defined]
