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
from typing import NamedTuple

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


class _Token(NamedTuple):
    kind: str  # "name" "int" "..." "(" ")" "[" "]" "," "->" "_" "*" "+"
    text: str
    span: Span


# One token per match, scanned by the regex engine: a long equation (hundreds of
# terms) is read in time linear in its length, without a Python step per character.
# Beyond ASCII every non-space character is part of a word: compact einsum equations
# use any Unicode symbol as one axis, as opt_einsum writes them.
_TOKEN = re.compile(
    r"\s+|(?P<punct>\.\.\.|->|[()\[\],*+])|(?P<word>(?:[0-9A-Za-z_]|[^\x00-\x7f\s])+)"
)


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    match = _TOKEN.match
    i, n = 0, len(text)
    while i < n:
        found = match(text, i)
        if found is None:
            raise _bad_character(text, i)
        j = found.end()
        kind = found.lastgroup
        if kind == "punct":
            symbol = found.group()
            tokens.append(_Token(symbol, symbol, (i, j)))
        elif kind == "word":
            word = found.group()
            tokens.append(_Token(_classify_word(text, word, i), word, (i, j)))
        i = j
    return tokens


def _classify_word(text: str, word: str, start: int) -> str:
    if word == "_":
        return "_"
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
        return "int"
    return "name"


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


class _Parser:
    def __init__(self, text: str, tokens: list[_Token], concat: bool = False) -> None:
        self.text = text
        self.tokens = tokens
        self.pos = 0
        self.concat = concat  # whether '+' joins the parts of a group

    def error(self, reason: str, span: Span, hint: str | None = None) -> PatternError:
        return PatternError(reason, pattern=self.text, span=span, hint=hint)

    def peek(self) -> _Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def parse(self) -> Pattern:
        inputs = self.operands()
        token = self.peek()
        if token is None:
            return Pattern(self.text, inputs, None, None)
        if token.kind == "->":
            self.pos += 1
            outputs = self.operands()
            extra = self.peek()
            if extra is not None:
                raise self.error("a pattern has at most one '->'", extra.span)
            return Pattern(self.text, inputs, outputs, token.span)
        raise self.error(f"unexpected {token.text!r}", token.span)  # pragma: no cover

    def operands(self) -> tuple[Term, ...]:
        terms = [self.term()]
        while (token := self.peek()) is not None and token.kind == ",":
            self.pos += 1
            terms.append(self.term())
        return tuple(terms)

    def term(self) -> Term:
        elements: list[Element] = []
        start = self.tokens[self.pos].span[0] if self.pos < len(self.tokens) else len(self.text)
        while (token := self.peek()) is not None and token.kind not in (",", "->"):
            self.pos += 1
            elements.append(self.element(token))
        span = (elements[0].span[0], elements[-1].span[1]) if elements else (start, start)
        return Term(tuple(elements), span)

    def element(self, token: _Token) -> Element:
        kind = token.kind
        if kind == "_":
            return Skip(token.span)
        if kind == "*":
            return Star(token.span)
        if kind == "[":
            return self.bracket(token)
        if kind == "]":
            raise self.error("unmatched closing bracket", token.span)
        if kind == "+":
            raise self.error(
                "'+' is allowed only inside parentheses, between the parts of a concatenation",
                token.span,
                hint="concatenate with a group: 'b c1, b c2 -> b (c1 + c2)'",
            )
        return self.inner(token, "parentheses")

    def inner(self, token: _Token, where: str) -> Axis | Anon | Dots | Group:
        """An element allowed inside brackets: a name, an integer, '...' or a group."""
        if token.kind == "+" and where == "brackets":
            raise self.error("'+' is not allowed inside brackets", token.span)
        kind = token.kind
        if kind == "name":
            return Axis(token.text, token.span)
        if kind == "int":
            return Anon(int(token.text), token.span)
        if kind == "...":
            return Dots(token.span)
        if kind == "(":
            return self.group(token, where)
        if kind == ")":
            raise self.error("unmatched closing parenthesis", token.span)
        raise self.error(f"{token.text!r} is not allowed inside {where}", token.span)

    def group(self, opening: _Token, where: str = "parentheses") -> Group:
        items: list[Axis | Anon | Dots] = []
        parts: list[tuple[Axis | Anon | Dots, ...]] = []
        plus: list[Span] = []
        while (token := self.peek()) is not None and token.kind not in (",", "->", "]"):
            self.pos += 1
            if token.kind == ")":
                span = (opening.span[0], token.span[1])
                if not plus:
                    return Group(tuple(items), span)
                part = tuple(items[sum(map(len, parts)) :])
                if not part:
                    raise self.error("a part of the concatenation is empty", plus[-1])
                return Group(tuple(items), span, (*parts, part), tuple(plus))
            if token.kind == "(":
                raise self.error("nested parentheses are not allowed", token.span)
            if token.kind == "+":
                self.check_plus(token, where)
                part = tuple(items[sum(map(len, parts)) :])
                if not part:
                    raise self.error("a part of the concatenation is empty", token.span)
                parts.append(part)
                plus.append(token.span)
                continue
            item = self.inner(token, "parentheses")
            assert not isinstance(item, Group)
            items.append(item)
        raise self.error("unclosed parenthesis", opening.span)

    def check_plus(self, token: _Token, where: str) -> None:
        """Refuse a '+' in a group where the op does not concatenate, or inside brackets."""
        if where == "brackets":
            raise self.error("'+' is not allowed inside brackets", token.span)
        if not self.concat:
            raise self.error(
                "concatenation with '+' is supported by rearrange and einsum only",
                token.span,
                hint="concatenate first: tops.rearrange([x, y], 'b c1, b c2 -> b (c1 + c2)')",
            )

    def bracket(self, opening: _Token) -> Bracket:
        elements: list[Axis | Anon | Dots | Group] = []
        while (token := self.peek()) is not None and token.kind not in (",", "->"):
            self.pos += 1
            if token.kind == "]":
                return Bracket(tuple(elements), (opening.span[0], token.span[1]))
            if token.kind == "[":
                raise self.error("nested brackets are not allowed", token.span)
            elements.append(self.inner(token, "brackets"))
        raise self.error("unclosed bracket", opening.span)


@functools.lru_cache(maxsize=1024)
def parse_pattern(text: str) -> Pattern:
    """Parse pattern text into a `Pattern`; raises `PatternError` with a caret span.

    The result is cached: parsing the same text again is a dictionary lookup.
    """
    return _Parser(text, _tokenize(text)).parse()


@functools.lru_cache(maxsize=1024)
def parse_concat(text: str) -> Pattern:
    """Parse pattern text where ``+`` joins the parts of a group (rearrange, einsum); cached.

    Raises:
        PatternError: the pattern is malformed, or a part of a concatenation is empty.
    """
    return _Parser(text, _tokenize(text), concat=True).parse()


def check_names(pattern: Pattern) -> None:
    """Check that every axis name is an identifier not starting or ending with ``_``.

    Raises:
        PatternError: at the first bad name.
    """
    for term in (*pattern.inputs, *(pattern.outputs or ())):
        for _, item in items_of(term):
            if isinstance(item, Axis):
                _check_name(pattern.text, item)


def _check_name(text: str, axis: Axis) -> None:
    name = axis.name
    if not name.isidentifier():
        reason = f"{name!r} is not a valid axis name: names are identifiers"
    elif name[0] == "_" or name[-1] == "_":
        reason = f"axis name {name!r} starts or ends with '_'"
    else:
        return
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
