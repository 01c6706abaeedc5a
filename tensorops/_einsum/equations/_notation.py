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
in the implicit output; `tensorops._einsum.equations._bind` then resolves the lengths.
`plain_axes` reads the names of an equation of plain axes (no ``...``, groups or
digits) without the grammar, for the binder's one-pass hot path.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
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
    "Plain",
    "plain_axes",
    "plain_input_names",
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


class Plain(NamedTuple):
    """An equation of plain axes as `plain_axes` reads it: axis names only, no positions.

    Attributes:
        spaced: Whether it is in the spaced (einops) spelling.
        inputs: Each input term's axis names.
        output: The output's axis names (the implicit output filled in).
    """

    spaced: bool
    inputs: tuple[tuple[str, ...], ...]
    output: tuple[str, ...]


# Hot path (cold planning of large networks): equations of plain axes only, the form
# of every network opt_einsum and cotengra write. `plain_axes` splits them with string
# methods (which torch.compile can trace too) into the names `parse_equation` finds
# (tests/test_einsum_notation.py compares the two). It keeps no positions: an equation
# that does not fit its shapes is parsed again by the grammar, which says where.
_NOT_PLAIN = frozenset(".()[]*…->")


def _compact_word(word: str) -> bool:
    if word.isalpha():
        return True
    return all(char.isalpha() if char.isascii() else not char.isspace() for char in word)


def plain_axes(equation: str, spaced: bool | None) -> Plain | None:
    """The axis names of a valid equation of plain axes (no ``...``, groups or digits); else None.

    Ranks are not checked: that is for the caller, who has the shapes.
    """
    left, arrow, right = equation.partition("->")
    if arrow and ("->" in right or "," in right):
        return None
    if not spaced and " " not in equation:  # compact, as opt_einsum writes: one test per side
        letters = left.replace(",", "")
        if (letters.isalpha() or not letters) and (right.isalpha() or not right):
            inputs = tuple(map(tuple, left.split(",")))
            return _with_output(False, inputs, tuple(right) if arrow else None, letters)
    texts = [*left.split(",")]  # a list of our own: torch.compile cannot append to split's
    if arrow:
        texts = [*texts, right]
    terms = []
    several = False
    for text in texts:
        if not _NOT_PLAIN.isdisjoint(text):
            return None
        words = text.split()
        several = several or len(words) > 1
        terms.append(words)
    if spaced is None:
        spaced = several
    elif not spaced and several:
        return None
    if spaced:  # every word a name: an identifier neither starting nor ending with '_'
        if not equation.isascii():
            return None
        edges = "_" in equation
        for words in terms:
            for word in words:
                if not word.isidentifier() or (edges and (word[0] == "_" or word[-1] == "_")):
                    return None
        inputs = tuple([tuple(words) for words in (terms[:-1] if arrow else terms)])
        return _with_output(spaced, inputs, tuple(terms[-1]) if arrow else None)
    names: list[tuple[str, ...]] = []
    for words in terms:
        if words:
            if not _compact_word(words[0]):
                return None
            names.append(tuple(words[0]))
        else:
            names.append(())
    inputs = tuple(names[: len(names) - 1] if arrow else names)
    return _with_output(spaced, inputs, names[-1] if arrow else None)


def _with_output(
    spaced: bool,
    inputs: tuple[tuple[str, ...], ...],
    output: tuple[str, ...] | None,
    names: Iterable[str] | None = None,
) -> Plain | None:
    """The `Plain` of these terms, or None if the explicit output is not valid.

    An implicit output (None) is filled in; an explicit one must hold distinct
    input axes. `names` are the input axes, where the caller has them at hand.
    """
    if output is None:
        counts: dict[str, int] = {}
        for term in inputs:
            for name in term:
                counts[name] = counts.get(name, 0) + 1
        output = tuple(sorted(name for name, count in counts.items() if count == 1))
    else:
        distinct = set(output)
        if names is None:
            names = [name for term in inputs for name in term]
        if len(distinct) != len(output) or not distinct.issubset(names):
            return None
    return Plain(spaced, inputs, output)


def plain_input_names(equation: str, spaced: bool | None) -> frozenset[str] | None:
    """The input axis names of a valid equation of plain axes (`plain_axes`); else None."""
    plain = plain_axes(equation, spaced)
    return None if plain is None else frozenset(name for term in plain.inputs for name in term)


@functools.lru_cache(maxsize=1024)
def parse_equation(equation: str, ndims: tuple[int, ...], spaced: bool | None = None) -> Notation:
    """Parse `equation` for operands of ranks `ndims` by the shared grammar; cached.

    Args:
        equation: The equation.
        ndims: Each operand's number of dimensions.
        spaced: True to read it as spaced whatever it looks like (the einops argument
            order), None to decide by `tensorops._grammar.is_spaced`.

    Raises:
        PatternError: The equation is malformed.
        ShapeError: A term does not fit its operand's rank, or the operand count is wrong.
    """
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
