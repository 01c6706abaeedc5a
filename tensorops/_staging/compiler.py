"""Whether torch.compile is at work, the switch to its fallback, and hooks for when it loads.

The low floor of the compile room: the dispatch, the settings and the planners ask
`is_compiling` / `for_compiler`; the torch adapter registers its stand-in arrays in
`STAND_INS`; modules register what must run once Dynamo is imported in `ON_DYNAMO`.
It imports no framework: torch is found in ``sys.modules``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeVar

__all__ = [
    "FALLBACK_VARIABLE",
    "ON_DYNAMO",
    "STAND_INS",
    "constant_result",
    "for_compiler",
    "in_node",
    "is_compiling",
    "replaying",
    "stand_ins_wanted",
]

#: The environment variable that forces the fallback: ``TENSOROPS_COMPILE=traced``.
FALLBACK_VARIABLE = "TENSOROPS_COMPILE"

_IS_COMPILING: list[Callable[[], bool]] = []
#: The calls tensorops runs for the compiler outside its trace (checks, replays of
#: errors): they run as eager code does, whatever torch says.
_REPLAYING: list[str] = []
#: The graph nodes running (`tensorops._compile.checks.in_graph`): they are compiled
#: code, whatever torch says (the settings' defaults, no progress bars).
_IN_NODE: list[str] = []

#: What to run once Dynamo is imported (torch is then fully loaded).
ON_DYNAMO: list[Callable[[], None]] = []

#: Stand-in arrays by family name (the torch adapter registers meta tensors):
#: ``STAND_INS["torch"](shape, dtype_name)``, arrays of that shape and dtype without data.
STAND_INS: dict[str, Callable[[tuple[int, ...], str], Any]] = {}

_CallableT = TypeVar("_CallableT", bound=Callable[..., Any])
#: Functions Dynamo should run itself, marked with torch's own decorator when it loads.
CONSTANT_RESULTS: list[Callable[..., Any]] = []


def stand_ins_wanted() -> bool:
    """Whether the stand-ins may be registered: False where ``TENSOROPS_COMPILE=traced``.

    The fallback they then leave is Dynamo tracing tensorops' own Python, as it does
    for einops; the switch keeps that path tested on every torch.
    """
    return os.environ.get(FALLBACK_VARIABLE, "").strip().lower() != "traced"


def is_compiling() -> bool:
    """Whether torch.compile (or torch.export) is tracing the caller right now.

    False while tensorops runs a call for the compiler outside the trace (`replaying`):
    that runs as eager code does. True while a graph node runs (`in_node`).
    """
    if _REPLAYING:
        return False
    if _IN_NODE:
        return True
    if not _IS_COMPILING:
        torch = sys.modules.get("torch")
        if torch is None:
            return False  # without torch there is no compiler to trace us
        find_compiler_check(torch)
    return _IS_COMPILING[0]()


def for_compiler() -> bool:
    """Whether the caller works for torch.compile: traced, or run by it outside the trace.

    Then nothing is shown (progress bars) and nothing slow is started.
    """
    return bool(_REPLAYING) or is_compiling()


def replaying(what: str) -> AbstractContextManager[None]:
    """Run a call for the compiler, outside its trace, as eager code runs it."""
    return _pushed(_REPLAYING, what)


def in_node(what: str) -> AbstractContextManager[None]:
    """Run a graph node's call: compiled code, at trace time and when the graph runs."""
    return _pushed(_IN_NODE, what)


@contextmanager
def _pushed(stack: list[str], what: str) -> Iterator[None]:
    stack.append(what)
    try:
        yield
    finally:
        stack.pop()


def find_compiler_check(torch: Any) -> None:
    """Take ``torch.compiler.is_compiling`` once (public since torch 2.3).

    Done when Dynamo is imported: found inside a trace instead, Dynamo would trace
    ``sys.modules.get``.
    """
    if not _IS_COMPILING:
        compiler = getattr(torch, "compiler", None)
        check = getattr(compiler, "is_compiling", None)
        _IS_COMPILING.append(check if check is not None else lambda: False)


def constant_result(function: _CallableT) -> _CallableT:
    """Have Dynamo run `function` itself, its result a constant of the trace.

    For pure functions of plain data (a KaHyPar partition) that the path planners call,
    where Dynamo traces them (the fallback). The mark is torch's own
    ``torch._dynamo.assume_constant_result``, applied when Dynamo loads.
    """
    CONSTANT_RESULTS.append(function)
    return function
