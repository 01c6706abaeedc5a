"""Einsum equations -> a normalized form on elementary axes, for given operand ranks.

Two spellings share the grammar of :mod:`tensorops._grammar`, decided for the whole
equation:

* compact (NumPy / PyTorch): ``"ij,jk->ik"``, ``"...ij,...jk"``; every letter
  ``a-z A-Z`` is one axis and spaces around ``,`` and ``->`` are ignored;
* spaced (einops): ``"b h i d, b h j d -> b h i j"``; axis names are words and may
  be composed with ``( )``. An equation is spaced when a term has whitespace
  between two of its elements or uses parentheses.

:func:`parse_equation` expands ``...`` for given operand ranks (names ``…0``,
``…1``, ... that no user axis can take) and fills in the implicit output;
:mod:`tensorops._einsum._bind` then resolves the axis sizes against shapes.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from tensorops._errors import PatternError, ShapeError, Span
from tensorops._grammar import Axis, Ellipsis, Group, Pattern, Term, parse_pattern

__all__ = ["ELLIPSIS_PREFIX", "Notation", "parse_equation", "render_axes"]

_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
ELLIPSIS_PREFIX = "…"

#: The axes of one dimension: one axis, or several composed with ``( )``.
Dim = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Notation:
    """An equation resolved for given operand ranks.

    Attributes:
        equation: The equation text as given.
        spaced: Whether it is in the spaced (einops) spelling.
        inputs: Per operand, per dimension, the elementary axes composed into it.
        output: Per output dimension, the elementary axes composed into it.
        input_spans: Per operand, per dimension, its position in ``equation``.
        term_spans: Position of each input term.
        ellipsis: How many dimensions ``...`` stands for after broadcasting.
    """

    equation: str
    spaced: bool
    inputs: tuple[tuple[Dim, ...], ...]
    output: tuple[Dim, ...]
    input_spans: tuple[tuple[Span, ...], ...]
    term_spans: tuple[Span, ...]
    ellipsis: int

    @property
    def output_axes(self) -> tuple[str, ...]:
        """The elementary axes of the output, in order."""
        return tuple(axis for dim in self.output for axis in dim)

    @property
    def normalized(self) -> str:
        """The equation with explicit output, in its own spelling (``...`` expanded)."""
        return _render(
            [tuple(a for dim in term for a in dim) for term in self.inputs],
            self.output_axes,
            self.spaced,
        )


def render_axes(axes: Sequence[str], spaced: bool) -> str:
    """One term of an equation: ``"ij"`` compact, ``"i j"`` spaced; ``...`` axes as ``…k``."""
    return " ".join(axes) if spaced else "".join(axes)


def _render(inputs: Sequence[Sequence[str]], output: Sequence[str], spaced: bool) -> str:
    comma, arrow = (", ", " -> ") if spaced else (",", "->")
    terms = comma.join(render_axes(term, spaced) for term in inputs)
    return f"{terms}{arrow}{render_axes(output, spaced)}"


def _is_spaced(pattern: Pattern) -> bool:
    for term in (*pattern.inputs, *(pattern.outputs or ())):
        elements = term.elements
        if any(isinstance(element, Group) for element in elements):
            return True
        for left, right in itertools.pairwise(elements):
            if left.span[1] < right.span[0]:
                return True
    return False


def _error(text: str, reason: str, span: Span | None, hint: str | None = None) -> PatternError:
    return PatternError(reason, pattern=text, span=span, hint=hint)


def _compact_term(text: str, term: Term) -> list[Dim | None]:
    """Dims of a compact term; ``None`` marks the ellipsis."""
    dims: list[Dim | None] = []
    for element in term.elements:
        if isinstance(element, Ellipsis):
            dims.append(None)
        elif isinstance(element, Axis):
            start = element.span[0]
            for offset, char in enumerate(element.name):
                if char not in _LETTERS:
                    raise _error(
                        text,
                        f"{char!r} is not a letter: in compact notation every axis is one "
                        "letter a-z or A-Z",
                        (start + offset, start + offset + 1),
                        "for longer axis names separate them with spaces: 'b h i d, ...'",
                    )
                dims.append((char,))
        else:
            raise _unsupported(text, element.span)
    return dims


def _spaced_term(text: str, term: Term) -> list[Dim | None]:
    dims: list[Dim | None] = []
    for element in term.elements:
        if isinstance(element, Ellipsis):
            dims.append(None)
        elif isinstance(element, Axis):
            dims.append((element.name,))
        elif isinstance(element, Group):
            names: list[str] = []
            for item in element.items:
                if not isinstance(item, Axis):
                    raise _unsupported(text, item.span)
                names.append(item.name)
            dims.append(tuple(names))
        else:
            raise _unsupported(text, element.span)
    return dims


def _unsupported(text: str, span: Span) -> PatternError:
    return _error(
        text,
        f"{text[span[0] : span[1]]!r} is not allowed in einsum: use named axes, '...' "
        "and ( ) compositions",
        span,
    )


def _term_dims(text: str, term: Term, spaced: bool) -> tuple[list[Dim | None], list[Span]]:
    dims = _spaced_term(text, term) if spaced else _compact_term(text, term)
    spans: list[Span] = []
    for element in term.elements:
        if isinstance(element, Axis) and not spaced:
            start = element.span[0]
            spans.extend((start + i, start + i + 1) for i in range(len(element.name)))
        else:
            spans.append(element.span)
    ellipses = [spans[i] for i, dim in enumerate(dims) if dim is None]
    if len(ellipses) > 1:
        raise _error(text, "'...' appears more than once in one term", ellipses[1])
    return dims, spans


@functools.lru_cache(maxsize=1024)
def parse_equation(equation: str, ndims: tuple[int, ...]) -> Notation:
    """Parse ``equation`` for operands of ranks ``ndims``; cached.

    Raises:
        PatternError: The equation is malformed.
        ShapeError: A term does not fit its operand's rank, or the operand count is wrong.
    """
    pattern = parse_pattern(equation)
    spaced = _is_spaced(pattern)
    if len(pattern.inputs) != len(ndims):
        raise _count_error(equation, pattern, len(ndims))
    inputs: list[tuple[Dim, ...]] = []
    spans: list[tuple[Span, ...]] = []
    ellipsis = 0
    expanded: list[tuple[list[Dim | None], list[Span], int]] = []
    for number, (term, ndim) in enumerate(zip(pattern.inputs, ndims, strict=True)):
        dims, dim_spans = _term_dims(equation, term, spaced)
        named = len(dims) - (None in dims)
        if ndim < named or (None not in dims and ndim != named):
            raise _rank_error(equation, term, number, ndim, named, None in dims)
        expanded.append((dims, dim_spans, ndim - named))
        ellipsis = max(ellipsis, ndim - named if None in dims else 0)
    for dims, dim_spans, extra in expanded:
        term_dims, term_spans = _expand(dims, dim_spans, extra, ellipsis)
        inputs.append(term_dims)
        spans.append(term_spans)
    output = _output(equation, pattern, spaced, inputs, ellipsis)
    term_spans = tuple(term.span for term in pattern.inputs)
    return Notation(equation, spaced, tuple(inputs), output, tuple(spans), term_spans, ellipsis)


def _expand(
    dims: list[Dim | None], spans: list[Span], extra: int, ellipsis: int
) -> tuple[tuple[Dim, ...], tuple[Span, ...]]:
    """Replace ``...`` by its axes, right-aligned against the broadcast ellipsis."""
    result: list[Dim] = []
    result_spans: list[Span] = []
    for dim, span in zip(dims, spans, strict=True):
        if dim is None:
            names = [f"{ELLIPSIS_PREFIX}{i}" for i in range(ellipsis - extra, ellipsis)]
            result.extend((name,) for name in names)
            result_spans.extend(span for _ in names)
        else:
            result.append(dim)
            result_spans.append(span)
    return tuple(result), tuple(result_spans)


def _output(
    text: str, pattern: Pattern, spaced: bool, inputs: list[tuple[Dim, ...]], ellipsis: int
) -> tuple[Dim, ...]:
    counts: dict[str, int] = {}
    for input_dims in inputs:
        for input_dim in input_dims:
            for axis in input_dim:
                counts[axis] = counts.get(axis, 0) + 1
    broadcast = tuple((f"{ELLIPSIS_PREFIX}{i}",) for i in range(ellipsis))
    if pattern.outputs is None:
        singles = sorted(a for a, n in counts.items() if n == 1 and a[0] != ELLIPSIS_PREFIX)
        return broadcast + tuple((axis,) for axis in singles)
    if len(pattern.outputs) != 1:
        raise _error(text, "einsum has exactly one output term", pattern.outputs[1].span)
    term = pattern.outputs[0]
    dims, spans = _term_dims(text, term, spaced)
    if None not in dims and ellipsis:
        raise _error(
            text,
            f"the inputs' '...' stands for {ellipsis} dimension(s) but the output has no '...'",
            term.span,
            "add '...' to the output, or sum those dimensions explicitly",
        )
    output: list[Dim] = []
    seen: dict[str, Span] = {}
    for maybe_dim, span in zip(dims, spans, strict=True):
        if maybe_dim is None:
            output.extend(broadcast)
            continue
        dim = maybe_dim
        for axis in dim:
            if axis not in counts:
                raise _error(text, f"output axis {axis!r} does not appear in any input", span)
            if axis in seen:
                raise _error(text, f"output axis {axis!r} appears more than once", span)
            seen[axis] = span
        output.append(dim)
    return tuple(output)


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


def _rank_error(
    text: str, term: Term, number: int, ndim: int, named: int, ellipsis: bool
) -> ShapeError:
    term_text = text[term.span[0] : term.span[1]]
    want = f"at least {named}" if ellipsis else f"{named}"
    return ShapeError(
        f"operand {number} has {ndim} dimension(s) but its term {term_text!r} has {want}",
        pattern=text,
        span=term.span if term.span[1] > term.span[0] else (term.span[0], term.span[0] + 1),
        hint=None if ellipsis else "use '...' for a variable number of dimensions",
    )
