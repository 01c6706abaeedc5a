"""Every way einsum's peers are called, read into one form: equation, operands, options.

* the equation first (NumPy, torch) or last (einops; then always spaced names);
* the operands one by one, or as one list (``torch.einsum(eq, [a, b])``); nested
  lists of numbers are NumPy arrays, as ``numpy.einsum`` reads them;
* the sublist (interleaved) format of NumPy and opt_einsum,
  ``einsum(a, [0, 1], b, [1, 2], [0, 2])``, with any hashable subscripts;
* keywords: axis lengths, tensorops' settings (``strategy``, ``memory_limit``,
  ``max_time``, ``minimize``, ``progress``, ``semiring``, ``argmax``) and the peers'
  (``optimize``, ``out``, ``dtype``, ``order``, ``casting``, ``use_blas``, ``backend``).

A keyword that names an input axis of the equation is that axis's length, whatever
its name: ``einsum("b out, out d -> b d", x, w, out=4)``. Any other keyword must be
one of the options above.
"""

from __future__ import annotations

import contextlib
import operator
import re
import string
from collections.abc import Callable, Hashable, Sequence
from typing import Any, NamedTuple

import numpy as np

from tensorops._axes import product
from tensorops._config import Settings, check_max_time, check_minimize
from tensorops._einsum.equations._keywords import OPTIONS, read_keywords
from tensorops._einsum.equations._semiring import check_argmax, check_semiring
from tensorops._einsum.planning._paths import PLANNERS
from tensorops._errors import ArgumentError, unknown_option

__all__ = [
    "OPTIONS",
    "Extras",
    "array_like",
    "memory_in_elements",
    "operand_list",
    "read_keywords",
    "split_operands",
    "sublist_subscripts",
]

_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
_ORDERS = ("K", "A", "C", "F")
# opt_einsum's names for its strategies -> the tensorops strategy that does that job
_PEER_STRATEGIES = {
    "branch-all": "optimal",
    "branch-2": "dp",
    "branch-1": "dp",
    "dynamic-programming": "dp",
    "random-greedy": "hyper",
    "random-greedy-128": "hyper",
    "auto-hq": "auto",
    "eager": "greedy",
    "opportunistic": "greedy",
}


class Extras(NamedTuple):
    """What a call asks of its result besides the contraction (NumPy's keywords)."""

    dtype: Any
    casting: str | None  # None: not given ("safe" for dtype=, "unsafe" into out=)
    out: Any
    order: str
    argmax: bool = False  # the maximizing assignment too (semirings max and min)


def _is_array(value: Any) -> bool:
    return hasattr(value, "shape") and hasattr(value, "dtype")


def array_like(value: Any) -> Any:
    """A nested list of numbers as the NumPy array ``numpy.einsum`` makes of it."""
    if isinstance(value, (list, tuple)) and not any(_is_array(item) for item in value):
        try:
            return np.asarray(value)
        except (ValueError, TypeError):
            return value
    return value


def operand_list(operands: tuple[Any, ...]) -> tuple[Any, ...]:
    """The operands as arrays, read as numpy and torch read them.

    One list of arrays is the operands (``torch.einsum(eq, [a, b])``); a nested
    list of numbers is the NumPy array ``numpy.einsum`` makes of it.
    """
    first = operands[0] if len(operands) == 1 else None
    if isinstance(first, (list, tuple)) and first and all(_is_array(item) for item in first):
        return tuple(first)
    return tuple(array_like(x) for x in operands)


def split_operands(
    op: str, args: tuple[Any, ...], arrays: bool = True
) -> tuple[str, tuple[Any, ...], bool | None]:
    """(equation, operands, spaced) from any of the calling conventions above.

    ``spaced`` is True in the einops order, else None (the equation decides). With
    ``arrays=False`` (``einsum_path``) the operands stay as given: shapes are tuples.

    Raises:
        ArgumentError: no equation, or a sublist that is not one.
    """
    read = operand_list if arrays else tuple
    if args and isinstance(args[0], str):
        return args[0], read(args[1:]), None
    if args and isinstance(args[-1], str):
        return args[-1], read(args[:-1]), True
    if len(args) >= 2 and _is_sublist(args[1]):
        equation, operands = _from_sublists(args)
        return equation, read(tuple(operands)), None
    given = ", ".join(type(arg).__name__ for arg in args[:4]) or "nothing"
    raise ArgumentError(
        f"the equation must be a str, given first or last; got {given}",
        hint=f"{op}('ij,jk->ik', a, b) (numpy order), {op}(a, b, 'i j, j k -> i k') "
        f"(einops order) or {op}(a, [0, 1], b, [1, 2], [0, 2]) (sublists)",
    )


def _symbol(i: int) -> str:
    """The ``i``-th axis character: a-z, A-Z, then Unicode past 52 (as opt_einsum counts)."""
    if i < 52:
        return string.ascii_letters[i]
    return chr(i + 140) if i + 140 < 55296 else chr(i + 140 + 2048)


def _from_sublists(args: tuple[Any, ...]) -> tuple[str, list[Any]]:
    """The equation and operands of the sublist format ``(a, [0, 1], b, [1, 2], [0, 2])``."""
    pairs = len(args) // 2
    operands = [args[2 * i] for i in range(pairs)]
    sublists = [_sublist(args[2 * i + 1], i) for i in range(pairs)]
    output = _sublist(args[-1], pairs) if len(args) % 2 else None
    names = _symbols(sublists)

    def term(sub: list[Hashable]) -> str:
        if output is not None and sub is output:
            unknown = [s for s in sub if s is not Ellipsis and s not in names]
            if unknown:
                raise ArgumentError(f"output subscript {unknown[0]!r} is in no input sublist")
        return "".join("..." if s is Ellipsis else names[s] for s in sub)

    equation = ",".join(term(sub) for sub in sublists)
    if output is not None:
        equation += "->" + term(output)
    return equation, operands


def _symbols(sublists: list[list[Hashable]]) -> dict[Hashable, str]:
    """The axis character of each subscript of the sublists."""
    names: dict[Hashable, str] = {}
    subscripts = [s for sub in sublists for s in sub if s is not Ellipsis]
    numbers = [s for s in subscripts if type(s) is int]
    if len(numbers) == len(subscripts):
        for n in numbers:
            if n < 0:
                raise ArgumentError(f"sublist subscript {n} is negative: subscripts are >= 0")
            names[n] = _symbol(n)
        return names
    distinct = list(dict.fromkeys(subscripts))
    # the implicit output is in the subscripts' own order, as opt_einsum has it;
    # unorderable subscripts stay in order of appearance
    with contextlib.suppress(TypeError):
        distinct.sort()  # type: ignore[call-arg]
    return {s: _symbol(i) for i, s in enumerate(distinct)}


def sublist_subscripts(args: tuple[Any, ...]) -> dict[str, Hashable] | None:
    """Axis character -> the caller's subscript, for a call in the sublist format; else None.

    What the indices of ``argmax=True`` are named by in that format.
    """
    if not args or isinstance(args[0], str) or isinstance(args[-1], str):
        return None
    if len(args) < 2 or not _is_sublist(args[1]):
        return None
    sublists = [_sublist(args[2 * i + 1], i) for i in range(len(args) // 2)]
    return {symbol: subscript for subscript, symbol in _symbols(sublists).items()}


def _is_sublist(value: Any) -> bool:
    """A list of subscripts: a list, tuple or range, or a 1-d integer array (NumPy's)."""
    if isinstance(value, (list, tuple, range)):
        return True
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    return kind in ("i", "u") and getattr(value, "ndim", None) == 1


def _sublist(value: Any, number: int) -> list[Hashable]:
    if not _is_sublist(value):
        raise ArgumentError(
            f"sublist {number} is a {type(value).__name__}, not a list of subscripts",
            hint="the sublist format alternates arrays and lists: (a, [0, 1], b, [1, 2])",
        )
    items: list[Hashable] = []
    for item in value.tolist() if hasattr(value, "tolist") else value:
        if not isinstance(item, Hashable) or isinstance(item, bool):
            raise ArgumentError(f"sublist {number} holds {item!r}, which cannot be a subscript")
        # NumPy integers are the ints they hold (numpy orders implicit outputs by them)
        items.append(operator.index(item) if hasattr(item, "__index__") else item)  # type: ignore[arg-type]
    return items


def _strategy(value: Any, name: str, count: int) -> Any:
    """A strategy name, an explicit path as a tuple of tuples, or a path optimizer."""
    if callable(value) and not isinstance(value, (str, Sequence)):
        return value  # opt_einsum's PathOptimizer protocol: asked for the path when planning
    if isinstance(value, str):
        value = _PEER_STRATEGIES.get(value, value)
        if value not in PLANNERS:
            raise unknown_option(
                "einsum strategy",
                value,
                PLANNERS,
                "or an explicit path",
                hint="an explicit path looks like strategy=[(0, 1), (0, 1)]",
            )
        return value
    if isinstance(value, Sequence):
        entries = list(value)
        if entries and entries[0] == "einsum_path":
            entries = entries[1:]
        path = []
        for number, entry in enumerate(entries):
            if isinstance(entry, (str, bytes)) or not isinstance(entry, Sequence):
                raise ArgumentError(
                    f"invalid contraction path: step {number} is {entry!r}, not a tuple of "
                    "operand positions",
                    hint="a path looks like [(0, 1), (0, 1)], as numpy.einsum_path returns",
                )
            path.append(tuple(entry))
        return tuple(path)
    raise ArgumentError(
        f"{name} must be a str or an explicit path, got {type(value).__name__}",
        hint="e.g. strategy='optimal' or strategy=[(0, 1), (0, 1)]",
    )


def _optimize(value: Any, count: int) -> tuple[Any, Any]:
    """Numpy's / opt_einsum's ``optimize=`` as (strategy, memory limit or None)."""
    if value is False:
        return (tuple(range(count)),), None  # no planning: one step, as numpy does
    if value is True or value is None:
        return "auto", None
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        return _strategy(value[0], "optimize", count), value[1]  # numpy's (strategy, limit)
    return _strategy(value, "optimize", count), None


_UNITS = {"": 1, "b": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY = {"ki": 2**10, "mi": 2**20, "gi": 2**30, "ti": 2**40}
_SIZE = re.compile(r"\s*([0-9]*\.?[0-9]+(?:e[0-9]+)?)\s*([kmgt]i?)?b?\s*", re.IGNORECASE)


def memory_in_elements(limit: Any, shapes: Sequence[Sequence[int]], itemsize: int) -> int | None:
    """A memory limit as a number of elements.

    Args:
        limit: None or -1 (no limit), a number of elements (0 counts as 1: a
            contraction cannot do with less), ``"max_input"`` (the largest
            operand, as opt_einsum has it), or a size in bytes as a str, ``"2GB"``,
            ``"512 MiB"``, divided by `itemsize`.
        shapes: the operands' shapes.
        itemsize: bytes per element of the operands' dtype.

    Raises:
        ArgumentError: anything else.

    Examples:
        >>> memory_in_elements("1KiB", [(2, 3)], 8)
        128
        >>> memory_in_elements("max_input", [(2, 3), (30,)], 8)
        30
    """
    if limit is None or (type(limit) is int and limit == -1):
        return None
    if type(limit) is int and limit >= 0:
        return max(limit, 1)
    if limit == "max_input":
        return max((product(shape) for shape in shapes), default=1)
    if isinstance(limit, str):
        match = _SIZE.fullmatch(limit)
        if match is not None:
            number, unit = match.group(1), (match.group(2) or "").lower()
            scale = _BINARY.get(unit) or _UNITS[unit[:1]]
            return max(int(float(number) * scale) // max(itemsize, 1), 1)
    raise ArgumentError(
        f"memory_limit {limit!r} is not a number of elements, a size such as '2GB', "
        "'max_input' or None",
        hint="e.g. memory_limit=10**6 (elements) or memory_limit='512MB'",
    )


def read_options(
    options: dict[str, Any],
    defaults: Callable[[], Any],
    shapes: Sequence[Sequence[int]],
    operands: Sequence[Any],
) -> tuple[Settings, Extras | None, Any]:
    """The plan settings, the extras and opt_einsum's ``backend=`` of a call's options.

    Args:
        options: the option keywords given (see `OPTIONS`).
        defaults: what gives the settings of ``tops.config`` (strategy, memory_limit).
        shapes: the operands' shapes.
        operands: the operands (arrays or shapes), whose element size a memory
            limit in bytes is divided by.

    Raises:
        ArgumentError: a bad value, or both ``strategy`` and ``optimize``.
    """
    count = len(shapes)
    strategy, memory_limit = options.get("strategy"), options.get("memory_limit")
    if "optimize" in options:
        if strategy is not None:
            raise ArgumentError(
                "strategy and optimize are the same option: give one",
                hint="optimize= is numpy's and opt_einsum's name for strategy=",
            )
        strategy, limit = _optimize(options["optimize"], count)
        memory_limit = limit if memory_limit is None else memory_limit
    settings = defaults()
    strategy = settings.strategy if strategy is None else _strategy(strategy, "strategy", count)
    if "memory_limit" not in options and memory_limit is None:
        memory_limit = settings.memory_limit
    # the defaults were checked when they were set
    max_time, minimize = settings.max_time, settings.minimize
    if "max_time" in options:
        max_time = check_max_time(options["max_time"])
    if "minimize" in options:
        minimize = check_minimize(options["minimize"])
    if memory_limit is not None:
        itemsize = _itemsize(operands) if isinstance(memory_limit, str) else 8
        memory_limit = memory_in_elements(memory_limit, shapes, itemsize)
    semiring = check_semiring(options.get("semiring", "sum"))
    plan = Settings(strategy, memory_limit, max_time, minimize, semiring)
    if "shapes" in options:
        raise ArgumentError(
            "shapes= is an option of einsum_path: einsum contracts arrays",
            hint="tops.einsum_path(equation, *shapes, shapes=True) plans for shapes",
        )
    family = options.get("backend", "auto")
    # opt_einsum's "object" contracts NumPy object arrays: they are contracted as they are
    return plan, _extras(options, semiring), "auto" if family == "object" else family


def _itemsize(operands: Sequence[Any]) -> int:
    """The largest element size of the operands' dtypes, in bytes (8 if none is known)."""
    sizes = [getattr(getattr(x, "dtype", None), "itemsize", None) for x in operands]
    known = [size for size in sizes if isinstance(size, int)]
    return max(known, default=8)


_EXTRAS = frozenset(("casting", "order", "dtype", "out", "use_blas", "argmax"))


def _extras(options: dict[str, Any], semiring: str) -> Extras | None:
    if _EXTRAS.isdisjoint(options):
        return None
    argmax = check_argmax(options.get("argmax", False), semiring)
    casting = options.get("casting")
    if casting is not None and casting not in _CASTINGS:
        raise unknown_option("casting", casting, _CASTINGS)
    order = options.get("order", "K")
    if not isinstance(order, str) or order.upper() not in _ORDERS:
        raise unknown_option("order", order, _ORDERS)
    dtype, out = options.get("dtype"), options.get("out")
    if dtype is not None and not hasattr(dtype, "is_floating_point"):  # torch's are fine
        try:
            np.dtype(dtype)
        except TypeError:
            raise ArgumentError(f"dtype {dtype!r} is not a data type") from None
    if out is not None and not _is_array(out):
        raise ArgumentError(f"out must be an array, got {type(out).__name__}")
    use_blas = options.get("use_blas", True)
    if not isinstance(use_blas, bool):
        raise ArgumentError(f"use_blas must be True or False, got {use_blas!r}")
    if dtype is None and out is None and order.upper() == "K" and not argmax:
        return None
    return Extras(dtype, casting, out, order.upper(), argmax)
