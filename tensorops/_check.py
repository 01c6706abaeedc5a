"""check: shapes checked against patterns, and the axis lengths solved from them.

``check(x, "b t c", c=3)`` reads the pattern with the shared grammar and resolves
it against ``x.shape`` with the one axis resolver (`tensorops._axes`); it returns
``x`` itself. With a list of arrays and one term per array, every term is checked
against its array, a name shared by several terms must have one length everywhere,
and the call returns every named axis's length.

The work is split in two, both cached, in `tensorops._check_patterns` (no framework:
the linter runs them on probes):

* `check_program` (pattern text, ranks, names given) -> `Program`: which dimension
  solves which name, in an order that needs no sizes (a dimension is solved once at
  most one of its parts is unknown). It depends on no size, so torch.compile's
  stand-in runs it folded and replays its steps on symbolic sizes in the trace.
* `solved` (pattern, shapes, lengths) -> the solved lengths: the program's steps
  run on the sizes. A warm call is one lookup in this cache.

``tops.config.checks = False`` (or ``TENSOROPS_CHECKS=0``) turns the verification of
a single array off; the lengths of several arrays are still solved.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

from tensorops._backends import get_backend
from tensorops._check_patterns import Program, Step, check_program, solve, solved
from tensorops._config import config
from tensorops._errors import ArgumentError, TensorOpsError, describe_inputs, not_a_pattern
from tensorops._staging import is_compiling, raise_error, replayable
from tensorops._staging.sizes import deferred_checks

__all__ = ["Program", "Step", "check", "check_program"]

ArrayT = TypeVar("ArrayT")

_EXAMPLE = "check(x, 'b t c', c=3)"


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
        solved(pattern, (x.shape,), tuple(lengths.items()))
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
            found = solved(pattern, shapes, items)
        except TypeError:  # symbolic sizes: solved uncached
            found = _solve_staged(arrays, pattern, shapes, lengths)
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
    return dict(found) if many else x


def _solve_staged(
    arrays: list[Any], pattern: str, shapes: tuple[Any, ...], lengths: dict[str, Any]
) -> tuple[tuple[str, Any], ...]:
    """`_solve` of sizes a compiler or a graph holds.

    What only the graph can check is placed there by the adapter, and a length solved is
    the framework's own scalar.
    """
    if is_compiling():  # torch.compile's symbolic sizes compare: nothing is left over
        return solve(pattern, shapes, tuple(lengths.items()))
    adapter = get_backend(arrays[0])
    items = tuple(adapter.inward_lengths(lengths).items())
    with deferred_checks() as pending:
        found = solve(pattern, shapes, items)
    for first, second, error in pending:
        shown = functools.partial(_checked_in_context, error, arrays, pattern, lengths)
        adapter.assert_equal(first, second, shown)
    return tuple((name, adapter.outward_size(size)) for name, size in found)


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
