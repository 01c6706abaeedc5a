"""Recorded programs written out as Python functions, for Dynamo to inline.

A `tensorops._tracing.Program` is the list of framework calls one tensorops call
makes for given shapes. `tensorops._tracing.replay` makes those calls with a loop
that reads the program step by step, which Dynamo traces step by step: every
iteration, every ``getattr`` and every adapter method is bytecode Dynamo steps
through, and each stepped instruction costs it tens of microseconds. Here the
program is written once as the straight-line function it stands for::

    def call(a, x0):
        x1 = x0.permute((0, 2, 3, 1))
        x2 = x1.reshape((2, 20, 3))
        return x2

so that Dynamo steps through one line per framework call. The adapter names the
methods it makes as plain tensor methods or operators (its ``INLINE`` table of
format strings, and ``inline_maker`` for executors such as a reducer); any other
step calls the adapter, as `replay` would. The functions live as attributes of
`WRITTEN`, named by `written`: Dynamo reads them through that attribute (a guard
on the function, which never changes) and inlines them.

Only plain data is written into the source: numbers, strings, None and tuples of
them. A program holding anything else (a dtype, a named tuple) is not written, and
its call replays as before. This module imports no framework.
"""

from __future__ import annotations

import hashlib
import math
import types
from collections.abc import Callable
from typing import Any

__all__ = ["WRITTEN", "literal", "source", "written"]

#: The written functions, by name: ``getattr(WRITTEN, name)(adapter, arrays)``.
WRITTEN = types.ModuleType("tensorops._written.functions")

#: (adapter type, source) -> the name in `WRITTEN` of the function.
_NAMES: dict[tuple[type, str], str] = {}


def written(adapter: Any, program: Any, inputs: int, many: bool) -> str | None:
    """The name in `WRITTEN` of `program` written as a function; None if it cannot be.

    The function takes the adapter and the arrays (one array, or with `many` a
    sequence of `inputs` arrays) and returns what `tensorops._tracing.replay` returns.
    Its globals are the adapter's ``INLINE_NAMES`` (such as the framework's module).
    """
    text = source(adapter, program, inputs, many)
    if text is None:
        return None
    key = (type(adapter), text)
    name = _NAMES.get(key)
    if name is None:
        # named by its content: one name is one function in every process, so a graph
        # that names it can be cached across processes (`tensorops._graph`)
        kind = f"{type(adapter).__module__}.{type(adapter).__qualname__}"
        digest = hashlib.sha256(f"{kind}\n{text}".encode()).hexdigest()[:24]
        name = _NAMES[key] = f"call_{digest}"
        names = dict(getattr(adapter, "INLINE_NAMES", {}))
        namespace: dict[str, Callable[..., Any]] = {}
        exec(compile(text, f"<tensorops recorded {name}>", "exec"), names, namespace)
        setattr(WRITTEN, name, namespace["call"])
    return name


def source(adapter: Any, program: Any, inputs: int, many: bool) -> str | None:
    """The Python source of `program` as ``def call(a, x0)`` (or ``(a, xs)``); None if not."""
    steps, result = program
    lines = ["def call(a, xs):", f"    {_names(0, inputs)} = xs"] if many else ["def call(a, x0):"]
    inline: dict[str, str] = getattr(adapter, "INLINE", {})
    maker = getattr(adapter, "inline_maker", None)
    known = inputs
    for method, made, template, refs, count in steps:
        call = _call(method, made, template, refs, count, inline, maker)
        if call is None or count is True:  # a list of results of unknown length
            return None
        if count is None or count is False:
            lines.append(f"    x{known} = {call}")
            known += 1
        else:
            lines.append(f"    {_names(known, count)} = {call}")
            known += count
    if isinstance(result, int):
        lines.append(f"    return x{result}")
    else:
        lines.append("    return [" + ", ".join(f"x{i}" for i in result) + "]")
    return "\n".join(lines) + "\n"


def _call(
    method: str,
    made: Any,
    template: tuple[Any, ...],
    refs: Any,
    count: Any,
    inline: dict[str, str],
    maker: Callable[[str, Any], str | None] | None,
) -> str | None:
    """One step's expression; None if a constant in it cannot be written."""
    if count is None:  # one array, first: its index, then the other arguments
        args = [f"x{refs}", *(literal(value) for value in template)]
    else:
        args = [literal(value) for value in template]
        for position, index in refs:
            args[position] = (
                "[" + ", ".join(f"x{i}" for i in index) + "]"
                if isinstance(index, tuple)
                else f"x{index}"
            )
    if None in args:
        return None
    if made is None:
        form = inline.get(method)
        return form.format(*args) if form else f"a.{method}({', '.join(args)})"  # type: ignore[arg-type]
    form = maker(method, made) if maker is not None else None
    if form is not None:
        return form.format(*args)
    made_args = [literal(value) for value in made]
    if None in made_args:
        return None
    return f"a.{method}({', '.join(made_args)})({', '.join(args)})"  # type: ignore[arg-type]


def literal(value: Any) -> str | None:
    """`value` as Python source that evaluates to an equal value; None if not plain data."""
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return repr(value)
    if kind is float:
        return repr(value) if math.isfinite(value) else None
    if kind is tuple or kind is list:
        items = [literal(item) for item in value]
        if None in items:
            return None
        inside = "".join(f"{item}, " for item in items)
        return f"({inside})" if kind is tuple else f"[{inside}]"
    return None


def _names(first: int, count: int) -> str:
    """``x3, x4`` for two arrays taken from a sequence, ``x3,`` for one."""
    names = [f"x{first + i}" for i in range(count)]
    return ", ".join(names) + ("," if count == 1 else "")
