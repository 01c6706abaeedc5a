"""check: shapes checked against patterns, and the axis lengths solved from them.

``check(x, "b t c", c=3)`` reads the pattern with the shared grammar and resolves
it against ``x.shape`` with the one axis resolver (`tensorops._axes`); it returns
``x`` itself. With a list of arrays and one term per array, every term is checked
against its array, a name shared by several terms must have one length everywhere,
and the call returns every named axis's length.

The work is split in two, both cached:

* `check_program` (pattern text, ranks, names given) -> `Program`: which dimension
  solves which name, in an order that needs no sizes (a dimension is solved once at
  most one of its parts is unknown). It depends on no size, so torch.compile's
  stand-in runs it folded and replays its steps on symbolic sizes in the trace.
* `_solved` (pattern, shapes, lengths) -> the solved lengths: the program's steps
  run on the sizes. A warm call is one lookup in this cache.

``tops.config.checks = False`` (or ``TENSOROPS_CHECKS=0``) turns the verification of
a single array off; the lengths of several arrays are still solved.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeVar, overload

from tensorops._axes import (
    DOTS_PREFIX,
    Dim,
    check_lengths,
    check_used,
    count_dots,
    resolve_dims,
    term_dims,
)
from tensorops._backends import get_backend
from tensorops._config import config
from tensorops._errors import (
    ArgumentError,
    PatternError,
    ShapeError,
    TensorOpsError,
    describe_inputs,
    not_a_pattern,
)
from tensorops._grammar import Anon, Axis, Dots, Group, Skip, Term, check_names, parse_pattern
from tensorops._staging import is_compiling, raise_error, replayable
from tensorops._staging.sizes import deferred_checks, is_run_time, require_equal, same_length

__all__ = ["Program", "Step", "check", "check_program"]

ArrayT = TypeVar("ArrayT")
Shape = tuple[int, ...]

_EXAMPLE = "check(x, 'b t c', c=3)"
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


def _shape_of(x: Any) -> tuple[Any, ...]:
    """The shape of an array (anything with a ``shape``; else the unsupported-type error)."""
    shape = getattr(x, "shape", None)
    if shape is None:
        get_backend(x)  # raises the unsupported-type error
        raise ArgumentError(f"a {type(x).__name__} has no shape")
    if not isinstance(shape, tuple) or not all(type(n) is int for n in shape):
        # the adapter reads it: PyTensor's x.shape is a graph, a TensorFlow or JAX shape
        # may hold lengths known only when the graph runs
        try:
            return get_backend(x).sizes(x)
        except TensorOpsError:  # not an array of a known family: anything with a shape
            pass
    return tuple(shape)


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
def _solved(
    pattern: str, shapes: tuple[Shape, ...], lengths: tuple[tuple[str, Any], ...]
) -> tuple[tuple[str, int], ...]:
    """The lengths `pattern` solves from `shapes`: the cache behind a warm call."""
    return _solve(pattern, shapes, lengths)


def _solve(
    pattern: str, shapes: Sequence[Sequence[Any]], lengths: tuple[tuple[str, Any], ...]
) -> tuple[tuple[str, Any], ...]:
    given = check_lengths(lengths)
    for shape in shapes:
        _check_sizes(shape)
    program = check_program(pattern, tuple(len(s) for s in shapes), tuple(given))
    check_used(pattern, given, program.names)
    return tuple(_run_program(pattern, program, shapes, given).items())


@overload
def check(x: Sequence[Any], pattern: str, /, **lengths: Any) -> dict[str, int]: ...
@overload
def check(x: ArrayT, pattern: str, /, **lengths: Any) -> ArrayT: ...


def check(x: Any, pattern: str, /, **lengths: Any) -> Any:
    """Check the shape of an array against a pattern; several arrays: also solve their lengths.

    The pattern reads as in every op: names, integer literals (``3`` means that
    axis has length 3, ``1`` and ``()`` a unit axis), groups ``(h w)`` (with `h`
    given, the axis must be a multiple of it, and `w` is solved), ``_`` for an
    axis of any length, ``...`` for any number of axes. A name repeated must have
    one length everywhere (``"n n"``: a square matrix).

    With a list (or tuple) of arrays, the pattern holds one term per array,
    separated by commas; a name shared by several terms must have one length in
    all of them, and ``...`` must stand for the same dimensions in every array.

    ``tops.config.checks = False`` (or the environment variable
    ``TENSOROPS_CHECKS=0``) turns the check of a single array off: it then
    returns `x` at once. The lengths of several arrays are solved and checked
    whatever the switch says, since the caller uses them.

    Args:
        x: an array, or a list / tuple of arrays.
        pattern: one term per array, e.g. ``"b t c"`` or ``"b h i d, b h j d"``.
        **lengths: lengths the axes must have, e.g. ``c=3``.

    Returns:
        `x` itself for one array (so ``y = tops.check(f(x), "b c")`` reads well);
        for a list of arrays, a dict from every named axis to its length, in
        first-seen order (``[x]`` gives the lengths of one array).

    Raises:
        TensorOpsError: the shape does not fit (`ShapeError`, with a caret at
            the axis), the pattern is malformed (`PatternError`), or the
            number of arrays is not the number of terms (`ArgumentError`).

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> x = np.zeros((2, 5, 3))
        >>> tops.check(x, "b t c", c=3) is x
        True
        >>> q, k = np.zeros((8, 4, 10, 64)), np.zeros((8, 4, 12, 64))
        >>> tops.check([q, k], "b h i d, b h j d", d=64)
        {'b': 8, 'h': 4, 'i': 10, 'd': 64, 'j': 12}
        >>> tops.check([np.zeros((2, 12))], "b (h w)", h=3)
        {'b': 2, 'h': 3, 'w': 4}
    """
    if type(x) is list or type(x) is tuple:
        return _check_slowly(x, pattern, lengths)
    if not config.checks:
        return x
    try:
        _solved(pattern, (x.shape,), tuple(lengths.items()))
    except (TypeError, AttributeError, TensorOpsError):  # symbolic sizes, not an array, an error
        _check_slowly(x, pattern, lengths)
    return x


def _check_slowly(x: Any, pattern: Any, lengths: dict[str, Any]) -> Any:
    """A list of arrays, an error, symbolic sizes: everything a warm single check is not."""
    many = type(x) is list or type(x) is tuple
    arrays = list(x) if many else [x]
    try:
        if type(pattern) is not str:
            raise not_a_pattern(pattern, _EXAMPLE)
        if many and not arrays:
            raise ArgumentError("check takes an array or a non-empty list of arrays")
        shapes = tuple(_shape_of(array) for array in arrays)
        items = tuple(lengths.items())
        try:
            solved = _solved(pattern, shapes, items)
        except TypeError:  # symbolic sizes: solved uncached
            solved = _solve_staged(arrays, pattern, shapes, lengths)
    except TensorOpsError as error:
        if is_compiling():  # made again outside the trace, context and all
            raise_error(error, ("check", (x, pattern, lengths)))
        shown = error.with_context(
            op="check",
            pattern=pattern if type(pattern) is str else None,
            inputs=describe_inputs(arrays),
            lengths=lengths,
        )
        raise_error(shown, ("check", (x, pattern, lengths)))
    return dict(solved) if many else x


def _solve_staged(
    arrays: list[Any], pattern: str, shapes: tuple[Any, ...], lengths: dict[str, Any]
) -> tuple[tuple[str, Any], ...]:
    """`_solve` of sizes a compiler or a graph holds.

    What only the graph can check is placed there by the adapter, and a length solved is
    the framework's own scalar.
    """
    if is_compiling():  # torch.compile's symbolic sizes compare: nothing is left over
        return _solve(pattern, shapes, tuple(lengths.items()))
    adapter = get_backend(arrays[0])
    items = tuple(adapter.inward_lengths(lengths).items())
    with deferred_checks() as pending:
        solved = _solve(pattern, shapes, items)
    for first, second, error in pending:
        shown = functools.partial(_checked_in_context, error, arrays, pattern, lengths)
        adapter.assert_equal(first, second, shown)
    return tuple((name, adapter.outward_size(size)) for name, size in solved)


def _checked_in_context(
    error: Callable[[], TensorOpsError], arrays: list[Any], pattern: str, lengths: dict[str, Any]
) -> TensorOpsError:
    return error().with_context(
        op="check", pattern=pattern, inputs=describe_inputs(arrays), lengths=lengths
    )


@replayable("check")
def _check_again(x: Any, pattern: Any, lengths: dict[str, Any]) -> Any:
    """`check` as `raise_error` replays it, outside a torch.compile trace."""
    return check(x, pattern, **lengths)
