"""Pattern text -> an immutable tree with source spans, and the rules that read only text.

One parser serves every op::

    pattern   := operands [ "->" operands ]
    operands  := term { "," term }
    term      := { element }
    element   := NAME | INTEGER | "..." | group | "_" | "*"
               | "[" { NAME | INTEGER | "..." | "(" ... ")" } "]"
    group     := "(" part { "+" part } ")"       (a "+" only where the op concatenates)
    part      := { NAME | INTEGER | "..." }      (not empty when there is a "+")

This module knows nothing of tensors or shapes: which elements an op accepts,
and what they mean, is decided by the op. Every node keeps the ``(start, end)``
character span it came from so errors can put a caret under the fault.

Two rules that depend on the text alone live here too, so every op reads a
pattern the same way:

* `check_names`: an axis name is an identifier that neither starts nor ends
  with ``_`` (a lone ``_`` is a skipped axis), as einops has it;
* `parse_concat`: the same parser, where ``+`` joins the parts of a concatenation
  (rearrange and einsum); `parse_pattern` refuses ``+`` with a caret at it, so an
  op that does not concatenate never sees a concatenation;
* `is_spaced`: whether an einsum equation is written with spaced names
  (``"b h i d, b h j d -> b h i j"``) rather than compact letters (``"ij,jk->ik"``).

The nodes are named tuples: immutable, hashable, safe to share between threads,
and cheap to define at import. Being tuples, two nodes of different kinds with
equal fields (``Skip(span)`` and ``Star(span)``) compare equal: tell the kinds
apart with ``isinstance``.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterator
from typing import Any, NamedTuple, NoReturn

from tensorops._errors import PatternError, Span

__all__ = [
    "Anon",
    "Axis",
    "Bracket",
    "Dots",
    "Element",
    "Group",
    "Item",
    "Pattern",
    "Skip",
    "Star",
    "Term",
    "check_names",
    "is_axis_name",
    "is_spaced",
    "items_of",
    "parse_concat",
    "parse_pattern",
]


class Axis(NamedTuple):
    """A named axis such as ``b`` or ``height`` (in compact einsum notation, a run of letters)."""

    name: str
    span: Span


class Anon(NamedTuple):
    """An integer literal: an anonymous axis of that length (``1`` is a unit axis)."""

    length: int
    span: Span


class Dots(NamedTuple):
    """``...``: any number of axes."""

    span: Span


class Skip(NamedTuple):
    """``_``: an axis that is matched but not named (parse_shape)."""

    span: Span


class Star(NamedTuple):
    """``*``: the packed axes of pack / unpack."""

    span: Span


class Group(NamedTuple):
    """``( ... )``: axes composed into one dimension; ``()`` is a unit axis.

    A concatenation ``(a + b c)`` (`parse_concat` only) is a group whose `parts` are
    the items between the ``+`` signs, each part composed, the parts joined end to
    end; `items` are then all of them, left to right, and `plus` the spans of the
    ``+`` signs. Every other group has no parts.
    """

    items: tuple[Axis | Anon | Dots, ...]
    span: Span
    parts: tuple[tuple[Axis | Anon | Dots, ...], ...] = ()
    plus: tuple[Span, ...] = ()


class Bracket(NamedTuple):
    """``[ ... ]``: the axes an op works along (softmax, get_at, ...), each a dimension."""

    elements: tuple[Axis | Anon | Dots | Group, ...]
    span: Span


#: What an element holds when its compositions are opened: the elementary items.
Item = Axis | Anon | Dots | Skip | Star
Element = Axis | Anon | Dots | Group | Skip | Star | Bracket


class Term(NamedTuple):
    """The elements of one operand, left to right."""

    elements: tuple[Element, ...]
    span: Span


class Pattern(NamedTuple):
    """A parsed pattern: the terms left of ``->`` and, if there is an arrow, right of it."""

    text: str
    inputs: tuple[Term, ...]
    outputs: tuple[Term, ...] | None
    arrow: Span | None


def items_of(term: Term) -> Iterator[tuple[Element, Item]]:
    """Each elementary item of `term` with the top-level element it belongs to.

    Brackets and groups are opened: ``"a [(b c)]"`` gives ``a``, ``b``, ``c``.
    """
    for element in term.elements:
        for inner in element.elements if isinstance(element, Bracket) else (element,):
            for item in inner.items if isinstance(inner, Group) else (inner,):
                yield element, item


# The text in one pass of the regex engine: separators (whitespace, '...', '->' and the
# one-character symbols) split out, the words between them left at the even positions.
# Beyond ASCII every non-space character is part of a word: compact einsum equations use
# any Unicode symbol as one axis, as opt_einsum writes them.
_PIECES = re.compile(r"(\s+|\.\.\.|->|[()\[\],*+])")
_SYMBOLS = frozenset(("...", "->", "(", ")", "[", "]", ",", "*", "+"))
# One word: the characters an axis name or an integer is made of.
_WORD = re.compile(r"(?:[0-9A-Za-z_]|[^\x00-\x7f\s])+")


#: A named tuple made without its Python-level ``__new__``: half the cost of ``Axis(...)``,
#: for the nodes every pattern makes (benchmarks/cold.py: the first call of a pattern).
_new = tuple.__new__


def _word(text: str, word: str, start: int) -> Axis | Anon | Skip:
    """The element a word is; raises at a character no word holds, or a bad integer."""
    end = start + len(word)
    if word.isidentifier():  # every character of an identifier is a word character
        return Skip((start, end)) if word == "_" else Axis(word, (start, end))
    if word.isascii() and word.isdecimal():
        if word.strip("0"):
            return Anon(int(word), (start, end))
    else:
        run = _WORD.match(word)
        if run is None:
            raise _bad_character(text, start)
        if run.end() < len(word):  # the word before the character is read first
            _classify_word(text, run.group(), start)
            raise _bad_character(text, start + run.end())
    _classify_word(text, word, start)  # a digit first, or zero: its error
    return Axis(word, (start, end))  # a symbol beyond ASCII: a name for the ops to judge


def _classify_word(text: str, word: str, start: int) -> None:
    """Refuse a word that starts with a digit but is not a positive integer."""
    if "0" <= word[0] <= "9":
        if not (word.isascii() and word.isdigit()):
            raise PatternError(
                f"axis name {word!r} starts with a digit",
                pattern=text,
                span=(start, start + len(word)),
                hint="axis names are identifiers; integers stand for anonymous axes",
            )
        if int(word) < 1:
            raise PatternError(
                f"anonymous axis of length {word} is not allowed: lengths are >= 1",
                pattern=text,
                span=(start, start + len(word)),
            )


def _bad_character(text: str, i: int) -> PatternError:
    char = text[i]
    hint = None
    if char == ".":
        hint = "an ellipsis is written with exactly three dots: ..."
    elif char in "-=>":
        hint = "the arrow is written ->"
    elif char in "{}":
        hint = "compose axes with round parentheses: (h w)"
    return PatternError(
        f"unexpected character {char!r} in pattern", pattern=text, span=(i, i + 1), hint=hint
    )


def _word_error(text: str) -> PatternError | None:
    """The first word of `text` that is no word, left to right, if any.

    Such an error comes before any error of structure, wherever the two are.
    """
    start = 0
    for k, piece in enumerate(_PIECES.split(text)):
        if not k & 1 and piece:
            try:
                _word(text, piece, start)
            except PatternError as error:
                return error
        start += len(piece)
    return None


class _Open:
    """A group or bracket being read: where it opened and what it holds so far."""

    __slots__ = ("items", "parts", "plus", "start", "where")

    def __init__(self, start: int, where: str) -> None:
        self.start = start
        self.where = where  # "parentheses" or "brackets": where a group stands
        self.items: list[Any] = []
        self.parts: list[tuple[Axis | Anon | Dots, ...]] = []
        self.plus: list[Span] = []

    def part(self) -> tuple[Axis | Anon | Dots, ...]:
        """The items since the last '+'."""
        return tuple(self.items[sum(map(len, self.parts)) :])


def _error(text: str, reason: str, span: Span, hint: str | None = None) -> PatternError:
    return PatternError(reason, pattern=text, span=span, hint=hint)


def _read(text: str, concat: bool) -> Pattern:
    """The pattern of `text`; `concat`: whether '+' joins the parts of a group.

    A word that is no word is the error, wherever an error of structure is.
    """
    try:
        return _read_tokens(text, concat)
    except PatternError as error:
        raise _word_error(text) or error from None


def _tokens(text: str) -> list[str]:
    """The tokens of `text`, by C string methods: symbols spaced apart, then split at spaces.

    A word is what is left between whitespace and symbols, as `_PIECES` splits the text.
    """
    for symbol, spaced in _SPACED:  # str.translate costs several times more
        if symbol in text:
            text = text.replace(symbol, spaced)
    return text.split()


#: Each symbol with a space each side (`_tokens`); '...' and '->' before the characters.
_SPACED = tuple((symbol, f" {symbol} ") for symbol in ("...", "->", *"()[],*+"))


def _read_tokens(text: str, concat: bool) -> Pattern:
    """`_read` in one pass over the tokens of `text`; the rarer symbols in `_symbol`."""
    inputs: tuple[Term, ...] | None = None
    arrow: Span | None = None
    terms: list[Term] = []
    elements: list[Element] = []
    group: _Open | None = None
    bracket: _Open | None = None
    into = elements  # where the next node goes: the open group's, bracket's or term's list
    find = text.find
    end = 0
    for token in _tokens(text):
        start = find(token, end)  # only whitespace lies between two tokens
        end = start + len(token)
        node: Element
        if token.isidentifier() and token != "_":  # a name: most tokens
            into.append(_new(Axis, (token, (start, end))))
            continue
        if token == "(":
            if group is not None:
                raise _error(text, "nested parentheses are not allowed", (start, end))
            group = _Open(start, "brackets" if bracket else "parentheses")
            into = group.items
            continue
        if token == ")":
            if group is None:
                raise _error(text, "unmatched closing parenthesis", (start, end))
            node, group = _close(text, group, end), None
            into = bracket.items if bracket is not None else elements
        elif token == "->" or token == ",":
            if group or bracket:
                raise _unclosed(text, group, bracket)
            terms.append(_term(elements, start))
            elements = into = []
            if token == "->":
                if arrow is not None:
                    raise _error(text, "a pattern has at most one '->'", (start, end))
                inputs, arrow, terms = tuple(terms), (start, end), []
            continue
        elif token == "...":
            node = _new(Dots, ((start, end),))
        elif token in _SYMBOLS:
            found = _symbol(text, token, (start, end), concat, group, bracket)
            if found is None:
                continue
            if isinstance(found, _Open):
                bracket = found
                into = bracket.items
                continue
            node = found
            if node.__class__ is Bracket:
                bracket, into = None, elements
        else:
            node = _word(text, token, start)
            if node.__class__ is Skip and (group or bracket):
                where = "parentheses" if group else "brackets"
                raise _not_inside(text, where, (start, end))
        into.append(node)
    if group or bracket:
        raise _unclosed(text, group, bracket)
    return _pattern(text, inputs, [*terms, _term(elements, len(text))], arrow)


def _pattern(
    text: str, inputs: tuple[Term, ...] | None, terms: list[Term], arrow: Span | None
) -> Pattern:
    """The pattern of `text` whose last terms are `terms` (the inputs, without an arrow)."""
    if inputs is None:
        return _new(Pattern, (text, tuple(terms), None, None))
    return _new(Pattern, (text, inputs, tuple(terms), arrow))


def _term(elements: list[Element], start: int) -> Term:
    """A term of these elements; an empty one stands where the next token does."""
    if elements:
        return _new(Term, (tuple(elements), (elements[0].span[0], elements[-1].span[1])))
    return _new(Term, ((), (start, start)))


def _unclosed(text: str, group: _Open | None, bracket: _Open | None) -> PatternError:
    if group is not None:
        return _error(text, "unclosed parenthesis", (group.start, group.start + 1))
    assert bracket is not None
    return _error(text, "unclosed bracket", (bracket.start, bracket.start + 1))


def _not_inside(text: str, where: str, span: Span) -> PatternError:
    """A token a group ("parentheses", wherever it is) or a bracket does not hold."""
    return _error(text, f"{text[span[0] : span[1]]!r} is not allowed inside {where}", span)


def _close(text: str, group: _Open, end: int) -> Group:
    """The group closed by ')' ending at `end`."""
    span = (group.start, end)
    if not group.plus:
        return Group(tuple(group.items), span)
    part = group.part()
    if not part:
        raise _error(text, "a part of the concatenation is empty", group.plus[-1])
    return Group(tuple(group.items), span, (*group.parts, part), tuple(group.plus))


def _symbol(
    text: str, symbol: str, span: Span, concat: bool, group: _Open | None, bracket: _Open | None
) -> Element | _Open | None:
    """'[', ']', '*' or '+' where it stands: an element, a bracket opened, or None (a '+' read)."""
    if group is not None:
        if symbol == "]":
            raise _unclosed(text, group, None)
        if symbol == "+":
            _plus(text, group, span, concat)
            return None
        raise _not_inside(text, "parentheses", span)
    if bracket is not None:
        if symbol == "]":
            return Bracket(tuple(bracket.items), (bracket.start, span[1]))
        if symbol == "[":
            raise _error(text, "nested brackets are not allowed", span)
        if symbol == "+":
            raise _error(text, "'+' is not allowed inside brackets", span)
        raise _not_inside(text, "brackets", span)
    if symbol == "*":
        return Star(span)
    if symbol == "[":
        return _Open(span[0], "brackets")
    if symbol == "]":
        raise _error(text, "unmatched closing bracket", span)
    raise _error(
        text,
        "'+' is allowed only inside parentheses, between the parts of a concatenation",
        span,
        hint="concatenate with a group: 'b c1, b c2 -> b (c1 + c2)'",
    )


def _plus(text: str, group: _Open, span: Span, concat: bool) -> None:
    """A '+' between the parts of a group; refused inside brackets or where no op joins."""
    if group.where == "brackets":
        raise _error(text, "'+' is not allowed inside brackets", span)
    if not concat:
        raise _error(
            text,
            "concatenation with '+' is supported by rearrange and einsum only",
            span,
            hint="concatenate first: tops.rearrange([x, y], 'b c1, b c2 -> b (c1 + c2)')",
        )
    part = group.part()
    if not part:
        raise _error(text, "a part of the concatenation is empty", span)
    group.parts.append(part)
    group.plus.append(span)


@functools.lru_cache(maxsize=1024)
def parse_pattern(text: str) -> Pattern:
    """Parse pattern text into a `Pattern`; raises `PatternError` with a caret span.

    The result is cached: parsing the same text again is a dictionary lookup.
    """
    return _read(text, False)


@functools.lru_cache(maxsize=1024)
def parse_concat(text: str) -> Pattern:
    """Parse pattern text where ``+`` joins the parts of a group (rearrange, einsum); cached.

    Raises:
        PatternError: the pattern is malformed, or a part of a concatenation is empty.
    """
    return _read(text, True)


#: An underscore that starts or ends a word (ASCII text).
_EDGE_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z_])_|_(?![0-9A-Za-z_])")


def check_names(pattern: Pattern) -> None:
    """Check that every axis name is an identifier not starting or ending with ``_``.

    Raises:
        PatternError: at the first bad name.
    """
    text = pattern.text
    # A name is a word of the text, and the parser refuses a word that starts with a digit:
    # in ASCII only an underscore at either end of a word can make one bad.
    if text.isascii() and ("_" not in text or not _EDGE_UNDERSCORE.search(text)):
        return
    for term in (*pattern.inputs, *(pattern.outputs or ())):
        for element in term.elements:  # items_of, inline
            for inner in element.elements if element.__class__ is Bracket else (element,):
                for item in inner.items if inner.__class__ is Group else (inner,):
                    if item.__class__ is Axis and not is_axis_name(item.name):
                        _refuse_name(text, item)


def is_axis_name(word: str) -> bool:
    """Whether `word` is a valid axis name: an identifier neither starting nor ending with ``_``.

    Examples:
        >>> is_axis_name("d_model"), is_axis_name("_x"), is_axis_name("2a")
        (True, False, False)
    """
    return word.isidentifier() and word[0] != "_" and word[-1] != "_"


def _refuse_name(text: str, axis: Axis) -> NoReturn:
    name = axis.name
    if not name.isidentifier():
        reason = f"{name!r} is not a valid axis name: names are identifiers"
    else:
        reason = f"axis name {name!r} starts or ends with '_'"
    raise PatternError(
        reason,
        pattern=text,
        span=axis.span,
        hint="e.g. b, height, d_model; '_' alone skips an axis",
    )


def is_spaced(pattern: Pattern) -> bool:
    """Whether an einsum equation uses spaced names rather than compact letters.

    It is spaced when a term has whitespace between two of its elements or uses
    parentheses; ``"ij,jk->ik"`` and ``"bij , bjk -> bik"`` are compact. A spaced
    equation of single letters means what its compact twin means, so the rule only
    matters for words of several characters.
    """
    for term in (*pattern.inputs, *(pattern.outputs or ())):
        elements = term.elements
        if any(isinstance(element, Group) for element in elements):
            return True
        for left, right in itertools.pairwise(elements):
            if left.span[1] < right.span[0]:
                return True
    return False
