"""Pattern text -> an immutable tree with source spans.

One parser serves every op::

    pattern   := operands [ "->" operands ]
    operands  := term { "," term }
    term      := { element }
    element   := NAME | INTEGER | "..." | "(" { NAME | INTEGER | "..." } ")" | "_" | "*"

This module knows nothing of tensors or shapes: which elements an op accepts,
and what they mean, is decided by the plan. Every node keeps the ``(start, end)``
character span it came from so errors can put a caret under the fault.

The nodes are named tuples: immutable, hashable, safe to share between threads,
and about ten times cheaper to define at import than frozen dataclasses. Being
tuples, two nodes of different kinds with equal fields (``Skip(span)`` and
``Star(span)``) compare equal: tell the kinds apart with ``isinstance``.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

from tensorops._errors import PatternError, Span

__all__ = [
    "Anon",
    "Axis",
    "Element",
    "Ellipsis",
    "Group",
    "Pattern",
    "Skip",
    "Star",
    "Term",
    "parse_pattern",
]


class Axis(NamedTuple):
    """A named axis such as ``b`` or ``height``."""

    name: str
    span: Span


class Anon(NamedTuple):
    """An integer literal: an anonymous axis of that length (``1`` is a unit axis)."""

    length: int
    span: Span


class Ellipsis(NamedTuple):  # noqa: A001 - the grammar's node for '...'
    """``...``: any number of axes."""

    span: Span


class Skip(NamedTuple):
    """``_``: an axis that is matched but not named (parse_shape)."""

    span: Span


class Star(NamedTuple):
    """``*``: the packed axes of pack / unpack."""

    span: Span


GroupItem = Axis | Anon | Ellipsis


class Group(NamedTuple):
    """``( ... )``: axes composed into one dimension; ``()`` is a unit axis."""

    items: tuple[GroupItem, ...]
    span: Span


Element = Axis | Anon | Ellipsis | Group | Skip | Star


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


class _Token(NamedTuple):
    kind: str  # "name" "int" "..." "(" ")" "," "->" "_" "*"
    text: str
    span: Span


_PUNCTUATION = {"(": "(", ")": ")", ",": ",", "*": "*"}


def _is_name_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char.isspace():
            i += 1
        elif text.startswith("...", i):
            tokens.append(_Token("...", "...", (i, i + 3)))
            i += 3
        elif text.startswith("->", i):
            tokens.append(_Token("->", "->", (i, i + 2)))
            i += 2
        elif char in _PUNCTUATION:
            tokens.append(_Token(_PUNCTUATION[char], char, (i, i + 1)))
            i += 1
        elif _is_name_char(char) and char.isascii():
            j = i
            while j < n and _is_name_char(text[j]) and text[j].isascii():
                j += 1
            word = text[i:j]
            tokens.append(_Token(_classify_word(text, word, i), word, (i, j)))
            i = j
        else:
            raise _bad_character(text, i)
    return tokens


def _classify_word(text: str, word: str, start: int) -> str:
    if word == "_":
        return "_"
    if word[0].isdigit():
        if not word.isdigit():
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
    elif char in "[]{}":
        hint = "compose axes with round parentheses: (h w)"
    return PatternError(
        f"unexpected character {char!r} in pattern", pattern=text, span=(i, i + 1), hint=hint
    )


class _Parser:
    def __init__(self, text: str, tokens: list[_Token]) -> None:
        self.text = text
        self.tokens = tokens
        self.pos = 0

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
            elements.append(self.element(token))
        span = (elements[0].span[0], elements[-1].span[1]) if elements else (start, start)
        return Term(tuple(elements), span)

    def element(self, token: _Token) -> Element:
        self.pos += 1
        kind = token.kind
        if kind == "name":
            return Axis(token.text, token.span)
        if kind == "int":
            return Anon(int(token.text), token.span)
        if kind == "...":
            return Ellipsis(token.span)
        if kind == "_":
            return Skip(token.span)
        if kind == "*":
            return Star(token.span)
        if kind == "(":
            return self.group(token)
        raise self.error("unmatched closing parenthesis", token.span)

    def group(self, opening: _Token) -> Group:
        items: list[GroupItem] = []
        while (token := self.peek()) is not None:
            self.pos += 1
            if token.kind == ")":
                return Group(tuple(items), (opening.span[0], token.span[1]))
            if token.kind == "name":
                items.append(Axis(token.text, token.span))
            elif token.kind == "int":
                items.append(Anon(int(token.text), token.span))
            elif token.kind == "...":
                items.append(Ellipsis(token.span))
            elif token.kind == "(":
                raise self.error("nested parentheses are not allowed", token.span)
            elif token.kind in (",", "->"):
                break
            else:
                raise self.error(f"{token.text!r} is not allowed inside parentheses", token.span)
        raise self.error("unclosed parenthesis", opening.span)


@functools.lru_cache(maxsize=1024)
def parse_pattern(text: str) -> Pattern:
    """Parse pattern text into a :class:`Pattern`; raises `PatternError` with a caret span.

    The result is cached: parsing the same text again is a dictionary lookup.
    """
    return _Parser(text, _tokenize(text)).parse()
