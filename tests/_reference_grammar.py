"""A plain reader of pattern text, token by token, for the differential tests of the grammar.

`tensorops._grammar` reads a pattern in one pass over its tokens, made by string methods,
for speed. This module reads it the straightforward way: a regular expression matches
one token at a time, then a recursive-descent parser builds the tree. Both must give
the same tree, or the same error with the same span and hint, for every text
(`tests/test_grammar.py`).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from tensorops._errors import PatternError, Span
from tensorops._grammar import (
    Anon,
    Axis,
    Bracket,
    Dots,
    Element,
    Group,
    Pattern,
    Skip,
    Star,
    Term,
)

__all__ = ["read"]


def read(text: str, concat: bool = False) -> Pattern:
    """The pattern of `text` (`concat`: '+' joins the parts of a group), or its PatternError."""
    return _Parser(text, _tokenize(text), concat).parse()


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
