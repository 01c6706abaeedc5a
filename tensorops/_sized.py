"""Recorded calls for symbolic sizes: sizes written as products of the inputs' sizes.

Under torch.compile with dynamic shapes (``dynamic=True``, ``mark_dynamic``, automatic
dynamic after a second shape) some sizes are symbolic: Dynamo knows them as symbols,
not values. A call with symbolic sizes is recorded like one with plain sizes
(`tensorops._tracing.record`), on stand-ins of generic sizes: each symbolic size
becomes ``unit * p`` for a prime ``p`` of its own (``unit`` divisible by 1-6 and by
the call's lengths where that keeps the sizes small, so that splits such as
``(h 2)`` plan as they would for most real sizes). The call is recorded twice, with
two sets of primes; an int of the recording that differs between the two is a size
``num / den * product of symbols``, which the exponents of the primes in it tell.
Such a size is written in the program as a hole that `replay_sized` fills with its
value on the real arrays' sizes, so that Dynamo sees ``x.reshape(s0 // 2, 2)`` as
plain torch code would write it, and guards what that code would.

Whatever the two recordings do not both explain (a plan that branches on a size, a
size that is a sum of sizes, an error) gives None: the caller plans the call in the
trace instead, as eager code does, so that errors and guards are Dynamo's own.

This module imports no framework.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any, NamedTuple

from tensorops._tracing import replay

__all__ = ["Size", "SizeRef", "SizedProgram", "generalize", "replay_sized"]

#: Stand-in sizes for symbols: ``unit * p`` for distinct primes p that do not divide the
#: unit; two sets of them, one per recording.
_PRIMES = (61, 67, 71, 73, 79, 83, 89, 97, 101, 103, 107, 109, 113, 127, 131, 137, 139, 149)
_SYMBOLS = 8  # at most this many symbolic sizes per call
_UNITS = (60, 12, 2, 1)  # the first that keeps every stand-in's size in int64
_MAX_UNIT = 10**4
_MAX_NUMEL = 2**62


class Size(NamedTuple):
    """A size of a recorded call: ``num * product(arrays[i].shape[d] ** e) // den``."""

    num: int
    den: int
    factors: tuple[tuple[int, int, int], ...]


class SizeRef(NamedTuple):
    """Where a `Size` goes in a recorded call's arguments: its index in the program."""

    at: int


#: Steps (each with a last field: its holes, see `_holes`), the index of the result
#: among the arrays, the sizes, and the pairs of positions ``((i, d), (j, e))`` whose
#: symbolic sizes the program takes to be one (checked before it is replayed).
SizedProgram = tuple[
    tuple[tuple[Any, ...], ...],
    int,
    tuple[Size, ...],
    tuple[tuple[tuple[int, int], tuple[int, int]], ...],
]


class _MismatchError(Exception):
    """The two recordings differ in a way no product of sizes explains."""


def generalize(
    record_at: Callable[[Any], Any],
    masked: Any,
    many: bool,
    lengths: tuple[tuple[str, Any], ...],
    groups: Any = (),
) -> SizedProgram | None:
    """The program of a call whose symbolic sizes are None in `masked`; None if there is none.

    Args:
        record_at: records the call for plain shapes (one shape, or a tuple of shapes
            if `many`); gives a `tensorops._tracing.Program` or None.
        masked: the shape(s), a symbolic size as None.
        many: whether `masked` is a tuple of shapes.
        lengths: the call's lengths (plain ints): the unit is divisible by each.
        groups: positions ``(array, dimension)`` of symbolic sizes that the call
            takes to be one size (einsum's axes of one name): each group is recorded
            with one stand-in size, and `replay_sized` checks that they are equal.

    Examples:
        >>> program = ((("reshape", None, (None, 60 * 61 // 2, 2), ((0, 0),), False),), 1)
        >>> other = ((("reshape", None, (None, 60 * 101 // 2, 2), ((0, 0),), False),), 1)
        >>> programs = iter((program, other))
        >>> generalize(lambda shape: next(programs), (None,), False, ())[2]
        (Size(num=1, den=2, factors=((0, 0, 1),)),)
    """
    shapes = masked if many else (masked,)
    positions = [(i, d) for i, shape in enumerate(shapes) for d, n in enumerate(shape) if n is None]
    first = {p: group[0] for group in groups for p in group}  # each position's representative
    symbols = [p for p in positions if first.get(p, p) == p]
    slot = [symbols.index(first.get(p, p)) for p in positions]  # each position's symbol
    equal = tuple((p, first[p]) for p in positions if first.get(p, p) != p)
    if not symbols or len(symbols) > _SYMBOLS:
        return None
    lcm = math.lcm(_UNITS[0], *[n for _, n in lengths if type(n) is int and n > 0])
    for unit in (lcm, *_UNITS) if lcm <= _MAX_UNIT else _UNITS:
        primes = [p for p in _PRIMES if unit % p][: 2 * _SYMBOLS]
        sets = (primes[:_SYMBOLS], primes[_SYMBOLS:])
        filled = [_fill_shapes(shapes, [unit * chosen[k] for k in slot]) for chosen in sets]
        if all(math.prod(shape) <= _MAX_NUMEL for shape in filled[1]):
            break
    else:
        return None
    programs = [record_at(shapes if many else shapes[0]) for shapes in filled]
    if programs[0] is None or programs[1] is None:
        return None
    try:
        steps, result, sizes = _Merge(symbols, unit, sets).programs(programs[0], programs[1])
    except _MismatchError:
        return None
    return steps, result, sizes, equal


def _fill_shapes(shapes: Any, values: list[int]) -> tuple[tuple[int, ...], ...]:
    """`shapes` with the symbolic sizes (None) made `values`, in order."""
    given = iter(values)
    return tuple(tuple(next(given) if n is None else n for n in shape) for shape in shapes)


class _Merge:
    """Two recordings made one, their differing ints made `SizeRef`s."""

    def __init__(
        self, symbols: list[tuple[int, int]], unit: int, primes: tuple[list[int], list[int]]
    ) -> None:
        self.symbols = symbols
        self.primes = [chosen[: len(symbols)] for chosen in primes]
        self.sizes = [[unit * p for p in chosen] for chosen in self.primes]
        self.found: list[Size] = []

    def programs(self, a: Any, b: Any) -> tuple[Any, int, tuple[Size, ...]]:
        (steps_a, result_a), (steps_b, result_b) = a, b
        if result_a != result_b or len(steps_a) != len(steps_b):
            raise _MismatchError
        steps = []
        for step_a, step_b in zip(steps_a, steps_b, strict=True):
            method, made, template, refs, many = self.value(step_a, step_b)
            holes: list[tuple[int, int, int, int]] = []
            made = _holes(made, 0, holes) if made is not None else None
            template = _holes(template, 1, holes)
            steps.append((method, made, template, refs, many, tuple(holes)))
        return tuple(steps), result_a, tuple(self.found)

    def value(self, a: Any, b: Any) -> Any:
        if type(a) is int and type(b) is int:
            return a if a == b else self.size(a, b)
        if isinstance(a, (tuple, list)) and type(a) is type(b) and len(a) == len(b):
            items = [self.value(x, y) for x, y in zip(a, b, strict=True)]
            if hasattr(a, "_fields"):  # a named tuple
                return a._make(items)  # type: ignore[union-attr]
            return type(a)(items)
        if type(a) is not type(b) or a != b:
            raise _MismatchError
        return a

    def size(self, a: int, b: int) -> SizeRef:
        """The `Size` that is `a` in the first recording and `b` in the second."""
        exponents = [_exponent(a, p) for p in self.primes[0]]
        if exponents != [_exponent(b, p) for p in self.primes[1]]:
            raise _MismatchError
        if not any(exponents):
            raise _MismatchError
        ratios = [
            Fraction(value, math.prod(n**e for n, e in zip(sizes, exponents, strict=True)))
            for value, sizes in ((a, self.sizes[0]), (b, self.sizes[1]))
        ]
        if ratios[0] != ratios[1]:
            raise _MismatchError
        factors = tuple(
            (*symbol, e) for symbol, e in zip(self.symbols, exponents, strict=True) if e
        )
        size = Size(ratios[0].numerator, ratios[0].denominator, factors)
        if size not in self.found:
            self.found.append(size)
        return SizeRef(self.found.index(size))


def _holes(args: tuple[Any, ...], where: int, holes: list[tuple[Any, ...]]) -> Any:
    """`args` with each `SizeRef` made None, and where it was added to `holes`.

    A hole is ``(where, position, index, items)``: the argument at `position` (of the
    maker's arguments if `where` is 0, of the call's if 1) is the size `index`, or if
    `items` is not None, a tuple of them: ``(index, constant)`` each, a size where
    `index` is not -1. Deeper sizes are not replayed (`_MismatchError`).
    """
    result = list(args)
    for position, value in enumerate(args):
        if isinstance(value, SizeRef):
            holes.append((where, position, value.at, None))
            result[position] = None
        elif (type(value) is tuple or type(value) is list) and _refers(value):
            items = []
            for item in value:
                if isinstance(item, SizeRef):
                    items.append((item.at, None))
                elif _refers(item):
                    raise _MismatchError
                else:
                    items.append((-1, item))
            holes.append((where, position, -1, tuple(items)))
            result[position] = None
        elif _refers(value):
            raise _MismatchError
    return tuple(result)


def _refers(value: Any) -> bool:
    if isinstance(value, SizeRef):
        return True
    return isinstance(value, (tuple, list)) and any(_refers(item) for item in value)


def _exponent(value: int, prime: int) -> int:
    """How many times `prime` divides `value` (not 0)."""
    count = 0
    while value and value % prime == 0:
        value //= prime
        count += 1
    return count


def replay_sized(adapter: Any, program: SizedProgram, arrays: Any) -> Any:
    """Make the calls of `program` on `arrays` with `adapter`; None where a size does not divide.

    The sizes are evaluated first, on the arrays' (symbolic) sizes; a size that is not
    a whole number, or sizes taken to be one that differ, make the call fail as eager
    code does, in the caller's plan.
    """
    for (i, d), (j, e) in program[3]:  # one symbol: no guard; two: the one torch adds
        if arrays[i].shape[d] != arrays[j].shape[e]:
            return None
    values = []
    for num, den, factors in program[2]:
        value = num
        for i, d, e in factors:
            value = value * arrays[i].shape[d] if e == 1 else value * arrays[i].shape[d] ** e
        if den != 1:
            if value % den != 0:
                return None
            value = value // den
        values.append(value)
    steps = []
    for method, made, template, refs, many, holes in program[0]:
        if holes:
            made, template = _filled(made, template, holes, values)
        steps.append((method, made, template, refs, many))
    return replay(adapter, (tuple(steps), program[1]), arrays)


def _filled(
    made: Any, template: tuple[Any, ...], holes: Any, values: list[Any]
) -> tuple[Any, tuple[Any, ...]]:
    """A step's maker arguments and call arguments with its holes filled (see `_holes`)."""
    args = list(template)
    filled = list(made) if made is not None else None
    for where, position, index, items in holes:
        size = values[index] if items is None else _sizes(items, values)
        if where:
            args[position] = size
        else:
            filled[position] = size  # type: ignore[index]
    return filled, tuple(args)


def _sizes(items: tuple[tuple[int, Any], ...], values: list[Any]) -> tuple[Any, ...]:
    """A tuple of sizes and constants (see `_holes`)."""
    return tuple([constant if index < 0 else values[index] for index, constant in items])
