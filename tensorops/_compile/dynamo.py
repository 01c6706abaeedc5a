"""Every torch API the compile room touches, each in one function that checks for it first.

Each function here answers whether it could do its part; where torch lacks the
feature (or it behaves differently), the caller keeps the plain path: Dynamo traces
tensorops' Python, as it traces einops'. Nothing here changes torch's behaviour
beyond registering tensorops' own functions with it.

* `when_dynamo_imported`: runs the registrations once ``torch._dynamo`` is imported
  (`tensorops._imports.when_imported`; torch has no hook for this);
* `substitute`, `fold`: ``torch._dynamo.substitute_in_graph`` (exported by
  ``torch._dynamo``; ``skip_signature_check``, ``can_constant_fold_through``);
* `allow_in_graph`: ``torch.compiler.allow_in_graph`` (public);
* `mark_constant_results`: ``torch._dynamo.assume_constant_result`` (exported);
* `allow_lru_caches`: ``torch._dynamo.utils.allow_lru_cache_wrapper_trace_without_warning``
  (private, torch >= 2.13);
* `mark_cacheable`: ``torch._inductor.config.unsafe_marked_cacheable_functions``
  (private, torch >= 2.8).

Why a finder: the stand-ins must be registered before Dynamo traces the first call,
and importing Dynamo ourselves would cost every user seconds at ``import tensorops``.
torch offers no hook for "Dynamo was imported", so a finder waits for the module
``torch._dynamo`` to be executed, runs the registrations, and removes itself. Where
the module's loader cannot be wrapped, the registrations wait for the first call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from tensorops._imports import when_imported

__all__ = [
    "allow_in_graph",
    "allow_lru_caches",
    "fold",
    "mark_cacheable",
    "mark_constant_results",
    "substitute",
    "when_dynamo_imported",
]

_DYNAMO = "torch._dynamo"


def when_dynamo_imported(hook: Callable[[Any], None]) -> None:
    """Run ``hook(torch._dynamo)`` now if Dynamo is imported, else right after it is."""
    when_imported(_DYNAMO, hook)


def substitute(dynamo: Any, original: Callable[..., Any], stand_in: Callable[..., Any]) -> bool:
    """Have Dynamo trace `stand_in` wherever it meets `original`; whether it could."""
    register = getattr(dynamo, "substitute_in_graph", None)
    if register is None:
        return False
    try:
        register(original, skip_signature_check=True)(stand_in)
    except (TypeError, ValueError):  # another signature, or `original` not accepted
        return False
    return True


def fold(dynamo: Any, function: Callable[..., Any], otherwise: Callable[..., Any]) -> bool:
    """Have Dynamo call `function` itself when every argument is a constant, else trace `otherwise`.

    The call's result is then a constant of the trace, and an assertion error it
    raises reaches the user as it is. Whether it could be registered.
    """
    register = getattr(dynamo, "substitute_in_graph", None)
    if register is None:
        return False
    try:
        register(function, can_constant_fold_through=True, skip_signature_check=True)(otherwise)
    except (TypeError, ValueError):  # a torch whose substitute_in_graph cannot fold
        return False
    return True


def allow_in_graph(torch: Any, function: Callable[..., Any]) -> bool:
    """Have Dynamo put a call of `function` in its graph as one node; whether it could."""
    allow = getattr(getattr(torch, "compiler", None), "allow_in_graph", None)
    if allow is None:
        return False
    allow(function)
    return True


def mark_constant_results(dynamo: Any, functions: Iterable[Callable[..., Any]]) -> bool:
    """Mark `functions` with ``assume_constant_result``: Dynamo runs them itself.

    torch marks a function in place; where it wraps it instead, or lacks the
    decorator, ours stay unmarked and Dynamo traces them. Whether all were marked.
    """
    mark = getattr(dynamo, "assume_constant_result", None)
    if mark is None:
        return False
    return all(mark(function) is function for function in functions)


def allow_lru_caches(dynamo: Any, modules: Iterable[Any]) -> None:
    """Tell Dynamo it may trace the ``lru_cache`` wrappers of `modules` without a warning.

    Dynamo traces the function such a wrapper wraps (exact for tensorops' caches:
    plans are pure functions of strings and shapes) and warns once per wrapper where
    it is not told; torch < 2.13 has no such list.
    """
    allow = getattr(
        getattr(dynamo, "utils", None), "allow_lru_cache_wrapper_trace_without_warning", None
    )
    if allow is None:
        return
    for module in modules:
        for value in list(vars(module).values()):
            if hasattr(value, "cache_info") and hasattr(value, "__wrapped__"):
                allow(value)


def mark_cacheable(torch: Any, function: Callable[..., Any], key: str) -> None:
    """Let AOTAutograd cache across processes graphs that call `function` (keyed by `key`).

    Without the mark (torch < 2.8) such graphs bypass that cache and compile each time.
    """
    config = getattr(getattr(torch, "_inductor", None), "config", None)
    marked = getattr(config, "unsafe_marked_cacheable_functions", None)
    if isinstance(marked, dict):
        marked[f"{function.__module__}.{function.__qualname__}"] = key
