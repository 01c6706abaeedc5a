"""Einsum equations -> the dimensions of every operand and of the output, for given ranks.

Two spellings share the grammar of `tensorops._grammar`, decided for the whole
equation by `tensorops._grammar.is_spaced`:

* compact (NumPy / PyTorch / opt_einsum): ``"ij,jk->ik"``, ``"...ij,...jk"``; every
  character is one axis (letters, and any non-ASCII symbol, as opt_einsum writes
  equations past 52 axes); spaces around ``,`` and ``->`` are ignored;
* spaced (einops): ``"b h i d, b h j d -> b h i j"``; axis names are words and may
  be composed with ``( )``. In the einops argument order (equation last) every
  equation is spaced, so ``"index ->"`` is one axis.

`parse_equation` expands ``...`` for given operand ranks (axes named as
`tensorops._axes.dots_name` gives, right-aligned as NumPy broadcasts) and fills
in the implicit output; `tensorops._einsum._bind` then resolves the lengths.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import NamedTuple

from tensorops._axes import DOTS_PREFIX, Dim, Slot, count_dots, dots_name, term_dims
from tensorops._errors import PatternError, ShapeError, Span
from tensorops._grammar import (
    Axis,
    Dots,
    Group,
    Pattern,
    Term,
    check_names,
    is_spaced,
    parse_pattern,
)

__all__ = [
    "Notation",
    "parse_equation",
    "parse_general",
    "plain_input_names",
    "read_plain",
    "render_axes",
]


class Notation(NamedTuple):
    """An equation resolved for given operand ranks.

    Attributes:
        equation: The equation text as given.
        spaced: Whether it is in the spaced (einops) spelling.
        inputs: Per operand, its dimensions (each the axes composed into it).
        output: The output's dimensions.
        term_spans: Position of each input term.
        dots: How many dimensions ``...`` stands for after broadcasting.
    """

    equation: str
    spaced: bool
    inputs: tuple[tuple[Dim, ...], ...]
    output: tuple[Dim, ...]
    term_spans: tuple[Span, ...]
    dots: int

    @property
    def output_axes(self) -> tuple[str, ...]:
        """The elementary axes of the output, in order."""
        return tuple(slot.name or "" for dim in self.output for slot in dim.slots)

    @property
    def normalized(self) -> str:
        """The equation with explicit output, in its own spelling (``...`` expanded)."""
        inputs = [[slot.name or "" for dim in term for slot in dim.slots] for term in self.inputs]
        comma, arrow = (", ", " -> ") if self.spaced else (",", "->")
        terms = comma.join(render_axes(term, self.spaced) for term in inputs)
        return f"{terms}{arrow}{render_axes(self.output_axes, self.spaced)}"


def render_axes(axes: Sequence[str], spaced: bool) -> str:
    """One term of an equation: ``"ij"`` compact, ``"i j"`` spaced; ``...`` axes as ``…k``."""
    return " ".join(axes) if spaced else "".join(axes)


def _error(text: str, reason: str, span: Span | None, hint: str | None = None) -> PatternError:
    return PatternError(reason, pattern=text, span=span, hint=hint)


def _unsupported(text: str, span: Span) -> PatternError:
    return _error(
        text,
        f"{text[span[0] : span[1]]!r} is not allowed in einsum: use named axes, '...' "
        "and ( ) compositions",
        span,
    )


def _check_compact(text: str, term: Term) -> None:
    """Every element of a compact term is a run of axis characters or ``...``."""
    for element in term.elements:
        if isinstance(element, Axis):
            start = element.span[0]
            for offset, char in enumerate(element.name):
                if char.isascii() and not char.isalpha():
                    raise _error(
                        text,
                        f"{char!r} is not a letter: in compact notation every axis is one letter",
                        (start + offset, start + offset + 1),
                        "for longer axis names separate them with spaces: 'b h i d, ...'",
                    )
        elif not isinstance(element, Dots):
            raise _unsupported(text, element.span)


def _check_spaced(text: str, term: Term) -> None:
    """A spaced term holds names, ``...`` and groups of names."""
    for element in term.elements:
        items = element.items if isinstance(element, Group) else (element,)
        for item in items:
            if not isinstance(item, (Axis, Dots)) or (isinstance(item, Dots) and items != (item,)):
                raise _unsupported(text, item.span)


def _compact_dims(term: Term, dots: int, total: int) -> tuple[Dim, ...]:
    """The dimensions of a compact term: one per character, ``...`` as `dots` of them."""
    dims: list[Dim] = []
    for element in term.elements:
        if isinstance(element, Dots):
            dims.extend(term_dims(Term((element,), element.span), dots, total))
        elif isinstance(element, Axis):
            start = element.span[0]
            for offset, char in enumerate(element.name):
                span = (start + offset, start + offset + 1)
                dims.append(Dim((Slot(char, None, span),), span, False))
    return tuple(dims)


def _compact_rank(term: Term) -> Term:
    """A stand-in of a compact term with one element per dimension, to count its rank."""
    elements = tuple(
        Axis(char, element.span) if isinstance(element, Axis) else element
        for element in term.elements
        for char in (element.name if isinstance(element, Axis) else "_")
    )
    return Term(elements, term.span)


@functools.lru_cache(maxsize=1024)
def parse_equation(equation: str, ndims: tuple[int, ...], spaced: bool | None = None) -> Notation:
    """Parse `equation` for operands of ranks `ndims`; cached.

    Args:
        equation: The equation.
        ndims: Each operand's number of dimensions.
        spaced: True to read it as spaced whatever it looks like (the einops argument
            order), None to decide by `tensorops._grammar.is_spaced`.

    Raises:
        PatternError: The equation is malformed.
        ShapeError: A term does not fit its operand's rank, or the operand count is wrong.
    """
    plain = read_plain(equation, ndims, spaced)
    return plain if plain is not None else parse_general(equation, ndims, spaced)


# Hot path (cold planning of large networks): equations of plain axes only, the form
# of every network opt_einsum and cotengra write. `read_plain` splits them with string
# methods (which torch.compile can trace too) and gives exactly what `parse_general`
# gives (tests/test_einsum_notation.py compares the two); anything else, errors
# included, takes the grammar.
_NOT_PLAIN = frozenset(".()[]_*…->")
_Word = tuple[str, int]  # a word and where it starts
_new = tuple.__new__  # builds a Slot / Dim without their Python-level __new__


def _plain_terms(equation: str) -> tuple[list[tuple[list[_Word], int]], int] | None:
    """Each term's words and where it ends, and how many terms are inputs; None if not plain."""
    left, arrow, right = equation.partition("->")
    texts = [*left.split(",")]
    n_inputs = len(texts)
    if arrow:
        if "->" in right or "," in right:
            return None
        texts = [*texts, right]
    terms: list[tuple[list[_Word], int]] = []
    offset = 0
    for number, text in enumerate(texts):
        if not _NOT_PLAIN.isdisjoint(text):
            return None
        words: list[_Word] = []
        cursor = 0
        for word in text.split():
            cursor = text.find(word, cursor)
            words.append((word, offset + cursor))
            cursor += len(word)
        terms.append((words, offset + len(text)))
        offset += len(text) + (2 if number == n_inputs - 1 else 1)
    return terms, n_inputs


def _compact_word(word: str) -> bool:
    if word.isalpha():
        return True
    return all(char.isalpha() if char.isascii() else not char.isspace() for char in word)


def _plain_name(word: str) -> bool:
    return word.isascii() and word.isidentifier() and word[0] != "_" and word[-1] != "_"


def plain_input_names(equation: str, spaced: bool | None) -> frozenset[str] | None:
    """The input axis names of an equation of plain axes, as `read_plain` reads it; else None."""
    found = _plain_terms(equation)
    if found is None:
        return None
    terms, n_inputs = found
    if spaced is None:
        spaced = any(len(words) > 1 for words, _ in terms)
    words = [word for term, _ in terms[:n_inputs] for word, _ in term]
    return frozenset(words) if spaced else frozenset("".join(words))


def read_plain(equation: str, ndims: tuple[int, ...], spaced: bool | None) -> Notation | None:
    """`parse_equation` of an equation of plain axes (no ``...``, groups or digits); else None."""
    found = _plain_terms(equation)
    if found is None:
        return None
    terms, n_inputs = found
    if n_inputs != len(ndims):
        return None
    several = any(len(words) > 1 for words, _ in terms)
    if spaced is None:
        spaced = several
    elif not spaced and several:
        return None
    names: list[list[str]] = []
    starts: list[list[int]] = []
    for words, _ in terms:
        if spaced:
            if not all(_plain_name(word) for word, _ in words):
                return None
            names.append([word for word, _ in words])
            starts.append([start for _, start in words])
        elif words:
            word, start = words[0]
            if not _compact_word(word):
                return None
            names.append(list(word))
            starts.append(list(range(start, start + len(word))))
        else:
            names.append([])
            starts.append([])
    if any(len(term) != ndim for term, ndim in zip(names, ndims, strict=False)):
        return None
    counts: dict[str, int] = {}
    for term in names[:n_inputs]:
        for name in term:
            counts[name] = counts.get(name, 0) + 1
    if len(terms) == n_inputs:
        output = tuple(_plain_dim(a, 0, 0) for a in sorted(a for a, n in counts.items() if n == 1))
    else:
        out = names[-1]
        if len(set(out)) != len(out) or any(name not in counts for name in out):
            return None
        output = _plain_dims(out, starts[-1])
    inputs = tuple(
        _plain_dims(term, at) for term, at in zip(names[:n_inputs], starts, strict=False)
    )
    spans = tuple(
        (at[0], at[-1] + len(term[-1])) if term else (end, end)
        for term, at, (_, end) in zip(names[:n_inputs], starts, terms, strict=False)
    )
    return Notation(equation, spaced, inputs, output, spans, 0)


def _plain_dims(names: list[str], starts: list[int]) -> tuple[Dim, ...]:
    return tuple(
        _plain_dim(name, start, len(name)) for name, start in zip(names, starts, strict=True)
    )


def _plain_dim(name: str, start: int, length: int) -> Dim:
    span = (start, start + length) if length else (0, 0)
    return _new(Dim, ((_new(Slot, (name, None, span)),), span, False))


def parse_general(equation: str, ndims: tuple[int, ...], spaced: bool | None) -> Notation:
    """`parse_equation` by the shared grammar: every form, and every error."""
    pattern = parse_pattern(equation)
    if spaced is None:
        spaced = is_spaced(pattern)
    if len(pattern.inputs) != len(ndims):
        raise _count_error(equation, pattern, len(ndims))
    terms = (*pattern.inputs, *(pattern.outputs or ()))
    for term in terms:
        _check_one_dots(equation, term)
        (_check_spaced if spaced else _check_compact)(equation, term)
    if spaced:
        check_names(pattern)
    rank_terms = pattern.inputs if spaced else tuple(_compact_rank(t) for t in pattern.inputs)
    counts = [
        count_dots(equation, term, ndim, operand=number)
        for number, (term, ndim) in enumerate(zip(rank_terms, ndims, strict=True))
    ]
    total = max(counts, default=0)
    inputs = tuple(
        term_dims(term, n, total) if spaced else _compact_dims(term, n, total)
        for term, n in zip(pattern.inputs, counts, strict=True)
    )
    output = _output(equation, pattern, spaced, inputs, total)
    term_spans = tuple(term.span for term in pattern.inputs)
    return Notation(equation, spaced, inputs, output, term_spans, total)


def _check_one_dots(text: str, term: Term) -> None:
    spans = [element.span for element in term.elements if isinstance(element, Dots)]
    if len(spans) > 1:
        raise _error(text, "'...' appears more than once in one term", spans[1])


def _output(
    text: str, pattern: Pattern, spaced: bool, inputs: tuple[tuple[Dim, ...], ...], dots: int
) -> tuple[Dim, ...]:
    counts: dict[str, int] = {}
    for term in inputs:
        for dim in term:
            for slot in dim.slots:
                name = slot.name or ""
                counts[name] = counts.get(name, 0) + 1
    broadcast = tuple(Dim((Slot(dots_name(i), None, (0, 0)),), (0, 0), False) for i in range(dots))
    if pattern.outputs is None:
        singles = sorted(a for a, n in counts.items() if n == 1 and a[0] != DOTS_PREFIX)
        return broadcast + tuple(Dim((Slot(a, None, (0, 0)),), (0, 0), False) for a in singles)
    if len(pattern.outputs) != 1:
        raise _error(text, "einsum has exactly one output term", pattern.outputs[1].span)
    out = pattern.outputs[0]
    has_dots = any(isinstance(element, Dots) for element in out.elements)
    if not has_dots and dots:
        raise _error(
            text,
            f"the inputs' '...' stands for {dots} dimension(s) but the output has no '...'",
            out.span,
            "add '...' to the output, or sum those dimensions explicitly",
        )
    dims = term_dims(out, dots) if spaced else _compact_dims(out, dots, dots)
    seen: set[str] = set()
    for dim in dims:
        for slot in dim.slots:
            name = slot.name or ""
            if name[0] == DOTS_PREFIX:
                continue
            if name not in counts:
                raise _error(text, f"output axis {name!r} does not appear in any input", dim.span)
            if name in seen:
                raise _error(text, f"output axis {name!r} appears more than once", dim.span)
            seen.add(name)
    return dims


def _count_error(text: str, pattern: Pattern, given: int) -> ShapeError:
    terms = len(pattern.inputs)
    span = pattern.inputs[min(given, terms - 1)].span if given < terms else None
    if given > terms:
        span = (pattern.inputs[-1].span[0], pattern.inputs[-1].span[1])
    return ShapeError(
        f"the equation has {terms} input term(s) but {given} array(s) were given",
        pattern=text,
        span=span,
        hint="write one comma-separated term per array",
    )
