"""Ops along the bracketed axes of a pattern: flip, roll, sort, argsort, cumsum.

Each op is its `Op` and a public function that hands the call to `call`. The
pattern is planned by `tensorops._marked.plan_marked`, as softmax's is: the
bracketed dims of the array, and the rearrangement the optional ``-> ...`` asks
for. The options are the plan's variant (part of its cache key), checked while it is
planned, so a cached call makes only the framework calls. An option of another type
than its plain one is keyed as ``(None, value)``: ``1`` equals ``True`` and ``1.0``
equals ``1``, and would reach the plan of the valid option otherwise.

```
flip      "b [h w] c"     reverse each bracketed axis (one call; a view on NumPy)
roll      "b [h w] c"     roll each bracketed axis by its shift (one call)
sort      "b [h w] c"     the bracketed axes as one, flattened in their order:
argsort                   permute them last (if apart), merge, sort, split, permute back
cumsum                    (one bracketed axis, or several adjacent: no permutation)
```
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from tensorops._axes import product
from tensorops._dispatch import Lengths, Op, Planner, call
from tensorops._errors import ArgumentError, Span
from tensorops._grammar import Axis, items_of
from tensorops._marked import marked, plan_marked, read_pattern
from tensorops._types import Backend, Executor

__all__ = ["ARGSORT", "CUMSUM", "FLIP", "ROLL", "SORT", "argsort", "cumsum", "flip", "roll", "sort"]

ArrayT = TypeVar("ArrayT")

#: The options of each op, for the message of an unknown keyword.
_OPTIONS = {
    "flip": "",
    "roll": "shift=",
    "sort": "descending=",
    "argsort": "descending=",
    "cumsum": "reverse=",
}


def _identity(x: Any, arg: Any) -> Any:
    return x


def _chain(*steps: Executor) -> Executor:
    """One executor that runs `steps` in order (a step that does nothing left out)."""
    runs = tuple(step for step in steps if step is not _identity)
    if len(runs) == 1:
        return runs[0]
    if len(runs) == 2:
        first, second = runs
        return lambda x, arg: second(first(x, arg), arg)

    def run(x: Any, arg: Any) -> Any:
        for step in runs:
            x = step(x, arg)
        return x

    return run


def _jointly(
    backend: Backend, shape: Sequence[int], axes: tuple[int, ...], make: Callable[[int], Executor]
) -> Executor:
    """`make`'s executor along one axis, run along `axes` merged in their order.

    No axis (``[...]`` of none) is one axis of length 1, added and taken away again.
    """
    if len(axes) == 1:
        return make(axes[0])
    ndim, count = len(shape), len(axes)
    first = axes[0] if axes else ndim
    if axes == tuple(range(first, first + count)):  # adjacent: merged where they are
        merged = (*shape[:first], product(shape[i] for i in axes), *shape[first + count :])
        return _chain(backend.reshaper(merged), make(first), backend.reshaper(tuple(shape)))
    perm = (*(i for i in range(ndim) if i not in axes), *axes)
    moved = tuple(shape[i] for i in perm)
    start = ndim - count
    merged = (*moved[:start], product(moved[start:]))
    inverse = tuple(perm.index(i) for i in range(ndim))
    return _chain(
        backend.permuter(perm),
        backend.reshaper(merged),
        make(start),
        backend.reshaper(moved),
        backend.permuter(inverse),
    )


def _check_keywords(op: str, text: str, lengths: Lengths) -> None:
    """Every keyword names an axis of the pattern: else it is an unknown option.

    Raises:
        ArgumentError: for the first keyword that is neither.
    """
    if not lengths:
        return
    pattern = read_pattern(op, text)
    names = {
        item.name
        for term in (*pattern.inputs, *(pattern.outputs or ()))
        for _, item in items_of(term)
        if isinstance(item, Axis)
    }
    for name, value in lengths:
        if name not in names:
            options = f"{_OPTIONS[op]} and " if _OPTIONS[op] else ""
            raise ArgumentError(
                f"unexpected keyword {name}={value!r}: not an option of {op}, "
                f"nor an axis of the pattern",
                hint=f"{op} takes {options}the lengths of the pattern's axes",
            )


def _flag(op: str, name: str, value: Any) -> bool:
    if type(value) is not bool:
        raise ArgumentError(
            f"{name} must be True or False, got {value!r}",
            hint=f"e.g. {op}(x, 'b [t]', {name}=True)",
        )
    return value


def _brackets(text: str) -> Span:
    """From the first bracket of the array's term to the end of its last."""
    found = marked(read_pattern("roll", text).inputs[0])
    return found[0].span[0], found[-1].span[1]


def _shifts(text: str, shift: Any, count: int) -> tuple[int, ...]:
    """One shift per bracketed dim: an int for all of them, or a sequence of one each.

    Raises:
        ArgumentError: `shift` is missing, not integers, or of another count.
    """
    example = "e.g. roll(x, 'b [t] c', shift=1), or shift=(1, -2) for '[h w]'"
    values = (shift,) * count if isinstance(shift, numbers.Integral) else shift
    if shift is None or not isinstance(values, (tuple, list)):
        got = "no shift" if shift is None else f"shift={shift!r}"
        raise ArgumentError(
            f"shift must be an int, or a tuple of ints (one per bracketed axis): got {got}",
            hint=example,
        )
    for value in values:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ArgumentError(f"shift must hold ints, got {value!r}", hint=example)
    if len(values) != count:
        raise ArgumentError(
            f"shift has {len(values)} value{'s' * (len(values) != 1)} but "
            f"{'1 axis is' if count == 1 else f'{count} axes are'} in brackets: one per axis",
            pattern=text,
            span=_brackets(text),
            hint=example,
        )
    return tuple(int(value) for value in values)


def _plan_along(
    op: str, pattern: str, shape: Any, lengths: Lengths, variant: Any, backend: Backend
) -> Executor:
    """The executor of `op` on an array of `shape`: the framework calls, then the rearrangement."""
    _check_keywords(op, pattern, lengths)
    if type(variant) is tuple and variant and variant[0] is None:
        variant = variant[1]  # an option of another type than its plain one
    axes, output = plan_marked(op, pattern, shape, lengths)
    if op == "flip":
        run = backend.flipper(axes) if axes else _identity
    elif op == "roll":
        shifts = _shifts(pattern, variant, len(axes))
        run = backend.roller(shifts, axes) if axes else _identity
    elif op == "cumsum":
        run = _jointly(backend, shape, axes, backend.cumsummer)
        if _flag(op, "reverse", variant) and axes:  # flip, sum, flip back
            run = _chain(backend.flipper(axes), run, backend.flipper(axes))
    else:
        descending = _flag(op, "descending", variant)
        indices = op == "argsort"
        run = _jointly(backend, shape, axes, lambda axis: backend.sorter(axis, descending, indices))
    return run if output is None else _chain(run, output.executor(backend))


def _planner(op: str) -> Planner:
    return functools.partial(_plan_along, op)


FLIP = Op("flip", _planner("flip"), "flip(x, 'b [t] c')")
ROLL = Op("roll", _planner("roll"), "roll(x, 'b [t] c', shift=1)")
SORT = Op("sort", _planner("sort"), "sort(x, 'b [t] c')")
ARGSORT = Op("argsort", _planner("argsort"), "argsort(x, 'b [t] c')")
CUMSUM = Op("cumsum", _planner("cumsum"), "cumsum(x, 'b [t] c')")


def flip(x: ArrayT, pattern: str, /, **lengths: int) -> ArrayT:
    """Reverse the order of the elements along every bracketed axis.

    Flipping several axes, ``"[h w] c"``, is flipping each of them (which is also
    flipping them flattened together). On NumPy the result is a view of `x`, as
    ``numpy.flip`` gives.

    Args:
        x: an array of any supported family.
        pattern: the axes of `x`, those to reverse in brackets: ``"b [t] c"``,
            ``"[h w] c"``. An optional ``-> ...`` rearranges the result, the same
            axes bracketed on both sides: ``"b [t] c -> b c [t]"``.
        **lengths: lengths of axes that cannot be inferred from the shape.

    Returns:
        An array of `x`'s family, device, dtype and shape (rearranged if the pattern says so).

    Raises:
        TensorOpsError: the pattern is malformed, marks no axis, or does not fit `x`.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> x = np.arange(6).reshape(2, 3)
        >>> tops.flip(x, "b [t]")
        array([[2, 1, 0],
               [5, 4, 3]])
        >>> tops.flip(x, "[b t]")
        array([[5, 4, 3],
               [2, 1, 0]])
    """
    return call(FLIP, x, pattern, lengths, None, None)  # type: ignore[no-any-return]


def roll(
    x: ArrayT, pattern: str, /, shift: int | Sequence[int] | None = None, **lengths: int
) -> ArrayT:
    """Shift the elements along the bracketed axes cyclically, as ``numpy.roll``.

    An element at position ``i`` moves to ``(i + shift) % length``; the elements
    pushed past the end come back at the start.

    Args:
        x: an array of any supported family.
        pattern: the axes of `x`, those to roll in brackets: ``"b [t] c"``,
            ``"[h w] c"``. An optional ``-> ...`` rearranges the result, the same
            axes bracketed on both sides.
        shift: an int, by which every bracketed axis is rolled, or a tuple (or list)
            of ints, one per bracketed axis in the order of the pattern (with
            ``[...]``, one per axis it stands for). Under ``torch.compile`` an int
            or a tuple keeps the call one node of the graph.
        **lengths: lengths of axes that cannot be inferred from the shape.

    Returns:
        A new array of `x`'s family, device, dtype and shape (rearranged if the
        pattern says so).

    Raises:
        TensorOpsError: the pattern is malformed, marks no axis, or does not fit `x`;
            `shift` is missing, not ints, or not one per bracketed axis.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> x = np.arange(6).reshape(2, 3)
        >>> tops.roll(x, "b [t]", shift=1)
        array([[2, 0, 1],
               [5, 3, 4]])
        >>> tops.roll(x, "[b t]", shift=(1, -1))
        array([[4, 5, 3],
               [1, 2, 0]])
    """
    variant = tuple(shift) if type(shift) is list else shift
    if type(shift) is not int and not (
        type(variant) is tuple and all(type(value) is int for value in variant)
    ):
        variant = (None, shift)  # checked while planned, not mistaken for a valid shift
    return call(ROLL, x, pattern, lengths, variant, None)  # type: ignore[no-any-return]


def sort(x: ArrayT, pattern: str, /, descending: bool = False, **lengths: int) -> ArrayT:
    """Sort along the bracketed axis; several bracketed axes are sorted as one.

    The sort is stable (``numpy.sort(kind="stable")``, ``torch.sort(stable=True)``).
    Several bracketed axes, ``"b [h w]"``, are sorted jointly: as the one axis
    ``(h w)`` they make flattened in their order, the result put back in their shape.
    NaN sorts last ascending and first descending on NumPy and torch.

    Args:
        x: an array of any supported family.
        pattern: the axes of `x`, those to sort along in brackets: ``"b [t] c"``.
            An optional ``-> ...`` rearranges the result, the same axes bracketed on
            both sides.
        descending: sort from the largest to the smallest.
        **lengths: lengths of axes that cannot be inferred from the shape.

    Returns:
        A new array of `x`'s family, device, dtype and shape (rearranged if the
        pattern says so).

    Raises:
        TensorOpsError: the pattern is malformed, marks no axis, or does not fit `x`;
            `descending` is not a bool.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> x = np.array([[3, 1, 2], [0, 5, 4]])
        >>> tops.sort(x, "b [t]")
        array([[1, 2, 3],
               [0, 4, 5]])
        >>> tops.sort(x, "[b t]", descending=True)
        array([[5, 4, 3],
               [2, 1, 0]])
    """
    variant = descending if type(descending) is bool else (None, descending)
    return call(SORT, x, pattern, lengths, variant, None)  # type: ignore[no-any-return]


def argsort(x: ArrayT, pattern: str, /, descending: bool = False, **lengths: int) -> ArrayT:
    """The positions that sort the elements along the bracketed axis, stably.

    Equal elements keep their order (in either direction). With several bracketed
    axes, ``"b [h w]"``, the positions are into the one axis ``(h w)`` they make
    flattened in their order (as `reduce`'s ``"argmax"`` over several axes gives).

    Args:
        x: an array of any supported family.
        pattern: the axes of `x`, those to sort along in brackets: ``"b [t] c"``.
            An optional ``-> ...`` rearranges the result, the same axes bracketed on
            both sides.
        descending: order from the largest to the smallest.
        **lengths: lengths of axes that cannot be inferred from the shape.

    Returns:
        An array of `x`'s family, device and shape (rearranged if the pattern says
        so) of the family's index dtype (int64 on NumPy and torch).

    Raises:
        TensorOpsError: the pattern is malformed, marks no axis, or does not fit `x`;
            `descending` is not a bool.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> x = np.array([[3, 1, 3], [0, 5, 4]])
        >>> tops.argsort(x, "b [t]")
        array([[1, 0, 2],
               [0, 2, 1]])
        >>> tops.argsort(x, "b [t]", descending=True)
        array([[0, 2, 1],
               [1, 2, 0]])
    """
    variant = descending if type(descending) is bool else (None, descending)
    return call(ARGSORT, x, pattern, lengths, variant, None)  # type: ignore[no-any-return]


def cumsum(x: ArrayT, pattern: str, /, reverse: bool = False, **lengths: int) -> ArrayT:
    """The cumulative sum along the bracketed axis; several bracketed axes are summed as one.

    Several bracketed axes, ``"b [h w]"``, are summed along the one axis ``(h w)``
    they make flattened in their order, the result put back in their shape. The
    dtype follows the framework (NumPy and torch sum small integers and bools as
    int64).

    Args:
        x: an array of any supported family.
        pattern: the axes of `x`, those to sum along in brackets: ``"b [t] c"``.
            An optional ``-> ...`` rearranges the result, the same axes bracketed on
            both sides.
        reverse: sum from the end: each element is the sum of it and those after it.
        **lengths: lengths of axes that cannot be inferred from the shape.

    Returns:
        A new array of `x`'s family, device and shape (rearranged if the pattern says so).

    Raises:
        TensorOpsError: the pattern is malformed, marks no axis, or does not fit `x`;
            `reverse` is not a bool.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> x = np.arange(6).reshape(2, 3)
        >>> tops.cumsum(x, "b [t]")
        array([[ 0,  1,  3],
               [ 3,  7, 12]])
        >>> tops.cumsum(x, "[b t]", reverse=True)
        array([[15, 15, 14],
               [12,  9,  5]])
    """
    variant = reverse if type(reverse) is bool else (None, reverse)
    return call(CUMSUM, x, pattern, lengths, variant, None)  # type: ignore[no-any-return]
