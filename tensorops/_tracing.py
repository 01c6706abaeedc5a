"""Everything tensorops does for torch.compile, in one place.

torch.compile's frontend, Dynamo, traces the Python code of every tensorops call
that a compiled function makes. Three things make that work without graph
breaks, warnings or foreign error types; `install`, called once by
``import tensorops``, is the entry point for all three.

1. **Caches.** Dynamo does not call ``functools.lru_cache`` wrappers: it traces the
   function they wrap (exact here: plans are pure functions of strings and shapes,
   and the trace folds them into the framework calls), but warns once per wrapper,
   which breaks ``-W error`` test suites. torch keeps a list of wrappers it may
   trace without warning (einops' planning helpers are on it); `install`
   puts the caches of tensorops there as soon as ``torch._dynamo`` is imported —
   at once if it already is, else through a ``sys.meta_path`` finder that waits
   for it, because importing Dynamo ourselves would cost seconds. The path
   planners use ``heapq``; torch's pure-Python stand-in for it is switched on then
   too (`_trace_heapq`).
   ``import tensorops`` loads every module that has a cache, so the list is
   complete then.
2. **Errors.** An exception raised while Dynamo traces reaches the user as
   Dynamo's own ``Unsupported`` error with ``fullgraph=True``. Dynamo lets
   assertion errors raised by functions it runs itself pass unchanged, and it runs
   functions marked as having a constant result (``assume_constant_result``)
   itself. So `raise_error`, inside a trace, replays the failing call in such
   a function on stand-ins of the arrays (meta tensors of the same shapes and
   dtypes) and raises the error that gives as a subclass of its class that is also
   an ``AssertionError``: the user gets the same class, the same message, the same
   fields as in eager mode, whatever the compile options.
3. **Settings.** Dynamo cannot trace a ``ContextVar``: `is_compiling` lets
   ``tops.config`` use its process-wide defaults inside compiled code.

This module imports no framework; it finds torch in ``sys.modules``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable
from typing import Any, NamedTuple, NoReturn, TypeVar

from tensorops._errors import FRAMEWORK_ERRORS, TensorOpsError

__all__ = [
    "REPLAYS",
    "STAND_INS",
    "Replay",
    "install",
    "is_compiling",
    "raise_error",
    "replayable",
]

_DYNAMO = "torch._dynamo"
_PACKAGE = "tensorops"

_IS_COMPILING: list[Callable[[], bool]] = []
#: The replays under way (Dynamo still reports that it compiles while one runs).
_REPLAYING: list[str] = []


def is_compiling() -> bool:
    """Whether torch.compile (or torch.export) is tracing the caller right now.

    False while `raise_error` replays a call: that runs as eager code does.
    """
    if _REPLAYING:
        return False
    if not _IS_COMPILING:
        torch = sys.modules.get("torch")
        if torch is None:
            return False  # without torch there is no compiler to trace us
        _IS_COMPILING.append(torch.compiler.is_compiling)
    return _IS_COMPILING[0]()


def raise_error(error: TensorOpsError, replay: Replay | None = None) -> NoReturn:
    """Raise `error`, so that it reaches the user as it is even from inside a torch.compile trace.

    Args:
        error: the error, with its context.
        replay: how to make it again outside the trace: the name a function was
            registered under with `replayable`, and the arguments of the call
            that failed. Inside a trace the error's text may hold symbolic sizes that
            only the compiler can print; the call is replayed where Dynamo runs its own
            code, on stand-ins of the same shapes and dtypes (meta tensors: no data,
            no computation), and the error that raises is the one the user gets —
            word for word the error of an eager call.

    Examples:
        >>> import tensorops as tops
        >>> from tensorops._tracing import raise_error
        >>> raise_error(tops.ShapeError("does not fit"))
        Traceback (most recent call last):
        tensorops._errors.ShapeError: does not fit
    """
    if not is_compiling():
        try:
            raise error
        finally:
            del error  # the traceback holds this frame: no cycle through the error
    name, args = replay if replay is not None else ("", ())
    _replay(name, _spec(args))


#: The functions `raise_error` may replay, by name, and the stand-ins it makes for
#: arrays, by family name (the torch adapter registers meta tensors).
REPLAYS: dict[str, Callable[..., Any]] = {}
STAND_INS: dict[str, Callable[[tuple[int, ...], str], Any]] = {}

Replay = tuple[str, tuple[Any, ...]]
_CallableT = TypeVar("_CallableT", bound=Callable[..., Any])


def replayable(name: str) -> Callable[[_CallableT], _CallableT]:
    """Register a function that `raise_error` may call again, under `name`."""

    def register(function: _CallableT) -> _CallableT:
        REPLAYS[name] = function
        return function

    return register


class _Stand(NamedTuple):
    """What a traced array is: its family, shape and dtype, as constants."""

    family: str
    shape: tuple[int, ...]
    dtype: str


def _spec(value: Any) -> Any:
    """`value` with every array made a `_Stand` and every function a marker (traced)."""
    if type(value) is list or type(value) is tuple:
        return type(value)(_spec(item) for item in value)
    if isinstance(value, tuple):  # a named tuple of settings (einsum's): constants already
        return value
    if isinstance(value, dict):
        return {key: _spec(item) for key, item in value.items()}
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        family = type(value).__module__.split(".")[0]
        return _Stand(family, tuple(_int(d) for d in value.shape), str(value.dtype))
    if isinstance(value, int) and not isinstance(value, bool):
        return _int(value)
    if callable(value) and not isinstance(value, type):
        return _CALLABLE
    return value


def _int(value: int) -> int:
    """A symbolic size as the plain int it is in this trace (Dynamo folds a range's length)."""
    return len(range(value)) if value >= 0 else -len(range(-value))


_CALLABLE = "<a function>"


def _sum(x: Any, axes: tuple[int, ...]) -> Any:
    """What a function given as a reduction is replayed as: the error is never in it."""
    return x.sum(axes)


def _rebuild(value: Any) -> Any:
    if isinstance(value, _Stand):
        return STAND_INS[value.family](value.shape, value.dtype)
    if type(value) is list or type(value) is tuple:
        return type(value)(_rebuild(item) for item in value)
    if isinstance(value, dict):
        return {key: _rebuild(item) for key, item in value.items()}
    return _sum if value == _CALLABLE else value


def _replay(name: str, args: tuple[Any, ...]) -> NoReturn:
    """Make the error of a traced call again and raise it as it is; run by Dynamo itself."""
    error = TensorOpsError(
        "the call failed while torch.compile traced it; call it outside torch.compile to see why"
    )
    _REPLAYING.append(name)  # the replay raises its errors as eager code does
    try:
        if name in REPLAYS:
            REPLAYS[name](*_rebuild(args))
    except TensorOpsError as raised:
        error = raised
    except FRAMEWORK_ERRORS as other:
        error = TensorOpsError(f"{type(other).__name__}: {other}")
    finally:
        _REPLAYING.pop()
    fields = TensorOpsError.__reduce__(error)[1][2]
    raise _passing(type(error))(error.reason, **fields) from None


# What torch.compiler.assume_constant_result sets: Dynamo then calls the function itself
# rather than tracing it. Set directly, so that marking it needs no import of torch;
# tests/test_compile.py checks that torch still uses this attribute.
_replay._dynamo_marked_constant = True  # type: ignore[attr-defined]

_PASSING: dict[type[TensorOpsError], type[TensorOpsError]] = {}


def _passing(cls: type[TensorOpsError]) -> type[TensorOpsError]:
    """`cls` as an assertion error too, which Dynamo lets through; same name, same pickle."""
    passing = _PASSING.get(cls)
    if passing is None and cls in _PASSING.values():
        return cls
    if passing is None:

        def reduce(self: TensorOpsError) -> tuple[Any, ...]:
            rebuild, (_, *fields) = TensorOpsError.__reduce__(self)
            return rebuild, (cls, *fields)  # unpickles as the plain class

        passing = type(cls.__name__, (cls, AssertionError), {"__reduce__": reduce})
        passing.__module__ = cls.__module__
        passing.__qualname__ = cls.__qualname__
        _PASSING[cls] = passing
    return passing


def _prepare_dynamo(dynamo: Any) -> None:
    """Run once Dynamo is imported: the caches on its list, heapq traced (see below)."""
    _trace_heapq()
    allow = getattr(dynamo.utils, "allow_lru_cache_wrapper_trace_without_warning", None)
    if allow is None:  # older torch: Dynamo warns once per cache, results are unaffected
        return
    for name, module in list(sys.modules.items()):
        if name != _PACKAGE and not name.startswith(_PACKAGE + "."):
            continue
        for value in list(vars(module).values()):
            if hasattr(value, "cache_info") and hasattr(value, "__wrapped__"):
                allow(value)


def _trace_heapq() -> None:
    """Let Dynamo trace ``heapq``, which the path planners use, through torch's own stand-in.

    torch ships a pure-Python ``heapq`` for Dynamo (``torch._dynamo.polyfills.heapq``) but
    does not load it (torch 2.13), so planning a contraction of three or more operands in
    a compiled function would stop at the C ``heapq``. Loading it the way torch's own
    polyfill loader loads the modules it lists makes Dynamo trace the stand-in instead.
    """
    try:
        polyfill = importlib.import_module("torch._dynamo.polyfills.heapq")
        trace_rules = importlib.import_module("torch._dynamo.trace_rules")
        for name in polyfill.__all__:
            original = getattr(polyfill, name).__torch_dynamo_original__
            trace_rules._builtin_function_ids.remove(id(original))  # a no-op if absent
    except (ImportError, AttributeError):  # another torch: planning may then break graphs
        return


class _WaitForDynamo(importlib.abc.MetaPathFinder):
    """Runs `_prepare_dynamo` right after the package ``torch._dynamo`` is executed."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != _DYNAMO:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        loader = getattr(spec, "loader", None)
        if loader is not None and hasattr(loader, "exec_module"):
            exec_module = loader.exec_module

            def exec_and_allow(module: Any) -> None:
                exec_module(module)
                _prepare_dynamo(module)

            loader.exec_module = exec_and_allow
        return spec


def install() -> None:
    """Prepare tensorops for torch.compile: called once, at the end of ``import tensorops``."""
    if _DYNAMO in sys.modules:
        _prepare_dynamo(sys.modules[_DYNAMO])
    elif not any(isinstance(finder, _WaitForDynamo) for finder in sys.meta_path):
        sys.meta_path.insert(0, _WaitForDynamo())
