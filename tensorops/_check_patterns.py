"""check's patterns: read, planned for ranks, and solved on sizes, without arrays.

`check_program` (pattern text, ranks, names given) -> `Program`: which dimension
solves which name, in an order that needs no sizes. `_solved` / `solve` run a
program's steps on the sizes. Imports no framework: `tensorops._check` gives them the
shapes of arrays, and the linter the shapes of probes.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

from tensorops._axes import (
    DOTS_PREFIX,
    Dim,
    check_lengths,
    check_used,
    count_dots,
    resolve_dims,
    term_dims,
)
from tensorops._errors import ArgumentError, PatternError, ShapeError, TensorOpsError
from tensorops._grammar import Anon, Axis, Dots, Group, Skip, Term, check_names, parse_pattern
from tensorops._staging.sizes import is_run_time, require_equal, same_length

__all__ = ["Program", "Step", "check_program", "solve", "solved"]

Shape = tuple[int, ...]

#: The name of a step's unknown when it is a skipped axis ``_``: checked, not named.
SKIPPED = ""


class Step(NamedTuple):
    """One dimension checked, and perhaps one name solved from it.

    Attributes:
        input: which array.
        dim: which of its dimensions.
        known: the names composed into it whose lengths are known by now.
        literal: the product of the integer literals composed into it.
        unknown: the name solved here (its length is the dimension's divided by the
            rest), `SKIPPED` for a ``_`` (only divisibility is checked), or None
            (the dimension must equal the product).
    """

    input: int
    dim: int
    known: tuple[str, ...]
    literal: int
    unknown: str | None


class Program(NamedTuple):
    """How a pattern is checked against arrays of given ranks (no sizes needed).

    Attributes:
        steps: the dimensions checked, in an order where each needs only names
            solved before it.
        names: every named axis, in first-seen order (the keys of the result).
        stuck: the first dimension with two unknown parts, as ``(input, dim)``,
            or None: the sizes are needed for its error.
    """

    steps: tuple[Step, ...]
    names: tuple[str, ...]
    stuck: tuple[int, int] | None


@functools.lru_cache(maxsize=1024)
def _terms(pattern: str) -> tuple[Term, ...]:
    """The terms of a check pattern, each element checked to be one check accepts."""
    parsed = parse_pattern(pattern)
    check_names(parsed)
    if parsed.arrow is not None:
        raise PatternError(
            "check patterns have no '->': they describe the inputs only",
            pattern=pattern,
            span=parsed.arrow,
            hint="one term per array, separated by commas: 'b h i d, b h j d'",
        )
    for term in parsed.inputs:
        dots = 0
        for element in term.elements:
            items = element.items if isinstance(element, Group) else (element,)
            for item in items:
                if isinstance(item, Dots) and isinstance(element, Group):
                    raise PatternError(
                        "'...' cannot be composed in a check pattern",
                        pattern=pattern,
                        span=element.span,
                    )
                if not isinstance(item, (Axis, Anon, Dots, Skip)):
                    raise PatternError(
                        "check patterns hold axis names, integers, '_', '...' and "
                        "groups '( )' only",
                        pattern=pattern,
                        span=item.span,
                        hint="brackets and '*' belong to other ops",
                    )
            if isinstance(element, Dots):
                dots += 1
                if dots == 2:
                    raise PatternError("'...' appears twice", pattern=pattern, span=element.span)
    return parsed.inputs


@functools.lru_cache(maxsize=1024)
def check_program(pattern: str, ranks: tuple[int, ...], given: tuple[str, ...]) -> Program:
    """How `pattern` checks arrays of ranks `ranks` with the lengths of `given` known.

    A name in `given` that is not in the pattern is the caller's to report
    (`check_used`, with its value).

    Raises:
        TensorOpsError: the pattern is malformed, has another number of terms than
            there are arrays, or does not fit a rank.
    """
    dims = _term_dims(pattern, _terms(pattern), ranks)
    names: dict[str, None] = {}
    for term in dims:
        for dim in term:
            for slot in dim.slots:  # named: not '_', not '...', not an integer literal
                if slot.name is not None and slot.length is None and slot.name[0] != DOTS_PREFIX:
                    names[slot.name] = None
    steps: list[Step] = []
    known = set(given)
    waiting = [(i, j) for i, term in enumerate(dims) for j in range(len(term))]
    while waiting:
        left = []
        for i, j in waiting:
            step = _step(i, j, dims[i][j], known)
            if step is None:
                left.append((i, j))
                continue
            steps.append(step)
            if step.unknown:
                known.add(step.unknown)
        if len(left) == len(waiting):
            return Program(tuple(steps), tuple(names), left[0])
        waiting = left
    return Program(tuple(steps), tuple(names), None)


def _term_dims(
    pattern: str, terms: tuple[Term, ...], ranks: tuple[int, ...]
) -> tuple[tuple[Dim, ...], ...]:
    """Each term's dimensions against its array's rank; ``...`` the same length in all."""
    many = len(ranks) > 1
    if len(terms) != len(ranks):
        arrays = f"{len(ranks)} array" + ("s were" if many else " was")
        extra = terms[len(ranks)].span if len(terms) > len(ranks) else None
        raise ArgumentError(
            f"the pattern has {len(terms)} term(s) but {arrays} given",
            pattern=pattern,
            span=extra,
            hint="one term per array, the arrays in a list: check([q, k], 'b i d, b j d')",
        )
    dims = []
    dots: tuple[int, int, Any] | None = None  # (input, count, span) of the first '...'
    for i, (term, rank) in enumerate(zip(terms, ranks, strict=True)):
        count = count_dots(pattern, term, rank, i if many else None)
        span = next((e.span for e in term.elements if isinstance(e, Dots)), None)
        if span is not None and dots is None:
            dots = (i, count, span)
        elif span is not None and dots is not None and count != dots[1]:
            raise ShapeError(
                f"'...' stands for {dots[1]} dimension(s) in input {dots[0]} and {count} "
                f"in input {i}",
                pattern=pattern,
                span=span,
                hint="'...' stands for the same dimensions in every array",
            )
        dims.append(term_dims(term, count, anon_prefix=f"#{i}."))
    return tuple(dims)


def _step(i: int, j: int, dim: Dim, known: set[str]) -> Step | None:
    """The step checking `dim`, or None while two of its parts are unknown."""
    literal, names, unknown = 1, [], []
    for slot in dim.slots:
        if slot.length is not None:
            literal *= slot.length
        elif slot.name is not None and slot.name in known:
            names.append(slot.name)
        else:
            unknown.append(SKIPPED if slot.name is None else slot.name)
    if len(unknown) > 1:
        return None
    return Step(i, j, tuple(names), literal, unknown[0] if unknown else None)


def _run_program(
    pattern: str, program: Program, shapes: Sequence[Sequence[Any]], given: dict[str, Any]
) -> dict[str, Any]:
    """Every length `program` solves from `shapes`, checked; the given lengths included.

    Raises:
        ShapeError: a dimension does not fit (the error of the first that does not).
    """
    values = dict(given)
    for step in program.steps:
        size = shapes[step.input][step.dim]
        product = step.literal
        for name in step.known:
            product *= values[name]
        if is_run_time(size) or is_run_time(product):
            # known when the graph runs: checked there (`require_equal`), solved as a size
            if step.unknown is None:
                require_equal(
                    size,
                    product,
                    functools.partial(
                        _mismatch, pattern, program, shapes, given, step, dict(values)
                    ),
                )
            elif same_length(product, 0) is True:
                raise _mismatch(pattern, program, shapes, given, step, values)
            elif step.unknown:
                values[step.unknown] = size // product
        elif step.unknown is None:
            if size != product:
                raise _mismatch(pattern, program, shapes, given, step, values)
        elif product == 0 or size % product:
            raise _mismatch(pattern, program, shapes, given, step, values)
        elif step.unknown:
            values[step.unknown] = size // product
    if program.stuck is not None:
        raise _mismatch(pattern, program, shapes, given, None, values)
    return {name: values[name] for name in program.names}


def _mismatch(
    pattern: str,
    program: Program,
    shapes: Sequence[Sequence[Any]],
    given: dict[str, Any],
    step: Step | None,
    values: dict[str, Any],
) -> TensorOpsError:
    """The error of `step` (None: the dimension the program could not solve)."""
    i, j = (step.input, step.dim) if step is not None else program.stuck  # type: ignore[misc]
    terms = _terms(pattern)
    ranks = tuple(len(shape) for shape in shapes)
    dims = _term_dims(pattern, terms, ranks)
    dim = dims[i][j]
    many = len(shapes) > 1
    if step is not None and len(dim.slots) == 1 and step.known and step.known[0] not in given:
        name = step.known[0]
        first = _first_solved(program, name)
        size = shapes[i][j]
        if name[0] == DOTS_PREFIX:
            return ShapeError(
                f"'...' stands for {_dots_shape(dims, shapes, first)} in input {first} and "
                f"{_dots_shape(dims, shapes, i)} in input {i}",
                pattern=pattern,
                span=dim.span,
            )
        lengths = (
            f"length {values[name]} in input {first} and {size} in input {i}"
            if many
            else f"lengths {values[name]} and {size}"
        )
        return ShapeError(
            f"axis '{name}' has {lengths}",
            pattern=pattern,
            span=dim.span,
        )
    known = {name: values[name] for name in (step.known if step is not None else values)}
    try:
        resolve_dims(pattern, [dim], [shapes[i][j]], known)
    except ShapeError as error:
        return error
    return ShapeError(f"dimension {j} of input {i} does not fit", pattern=pattern, span=dim.span)


def _first_solved(program: Program, name: str) -> int:
    """The input whose dimension solved `name`."""
    return next(step.input for step in program.steps if step.unknown == name)


def _dots_shape(dims: Any, shapes: Sequence[Sequence[Any]], i: int) -> tuple[int, ...]:
    """The dimensions ``...`` stands for in input `i`."""
    return tuple(
        int(size)
        for dim, size in zip(dims[i], shapes[i], strict=True)
        if dim.slots and (dim.slots[0].name or "x")[0] == DOTS_PREFIX
    )


def _check_sizes(sizes: Sequence[Any]) -> None:
    """Check that every length of a shape is an integer (or a symbolic size)."""
    for size in sizes:
        # torch's SymInt under torch.compile, a length known only when a graph runs
        if type(size) is int or is_run_time(size) or type(size).__name__ == "SymInt":
            continue
        if hasattr(size, "shape"):  # recorded as a tensor (torch.jit.trace): `_shape_of` reads it
            raise TypeError("a length recorded as a tensor")
        if isinstance(size, bool) or not hasattr(size, "__index__"):
            raise ShapeError(
                f"the shape {tuple(sizes)} has a length that is not an integer",
                hint="a lazy array of unknown chunk sizes: compute them first "
                "(dask: x.compute_chunk_sizes())",
            )


@functools.lru_cache(maxsize=1024)
def solved(
    pattern: str, shapes: tuple[Shape, ...], lengths: tuple[tuple[str, Any], ...]
) -> tuple[tuple[str, int], ...]:
    """The lengths `pattern` solves from `shapes`: the cache behind a warm call."""
    return solve(pattern, shapes, lengths)


def solve(
    pattern: str, shapes: Sequence[Sequence[Any]], lengths: tuple[tuple[str, Any], ...]
) -> tuple[tuple[str, Any], ...]:
    given = check_lengths(lengths)
    for shape in shapes:
        _check_sizes(shape)
    program = check_program(pattern, tuple(len(s) for s in shapes), tuple(given))
    check_used(pattern, given, program.names)
    return tuple(_run_program(pattern, program, shapes, given).items())
