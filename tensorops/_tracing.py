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
    "IS_DYNAMO",
    "ON_DYNAMO",
    "REPLAYING",
    "REPLAYS",
    "STAND_INS",
    "Program",
    "Recorder",
    "Replay",
    "constant_result",
    "for_compiler",
    "install",
    "is_compiling",
    "is_dynamo_tracing",
    "outside_trace",
    "raise_error",
    "record",
    "replay",
    "replayable",
]

_DYNAMO = "torch._dynamo"
_PACKAGE = "tensorops"

_IS_COMPILING: list[Callable[[], bool]] = []
#: The replays under way (Dynamo still reports that it compiles while one runs).
REPLAYING: list[str] = []


def is_compiling() -> bool:
    """Whether torch.compile (or torch.export) is tracing the caller right now.

    False while `raise_error` replays a call: that runs as eager code does.
    """
    if REPLAYING:
        return False
    if not _IS_COMPILING:
        torch = sys.modules.get("torch")
        if torch is None:
            return False  # without torch there is no compiler to trace us
        _find_compiler_checks(torch)
    return _IS_COMPILING[0]()


def for_compiler() -> bool:
    """Whether the caller works for torch.compile: traced, or run by it outside the trace.

    True while Dynamo traces the caller, and while a call is planned and recorded for
    it, or replayed to raise its error (`record`, `outside_trace`, `raise_error`):
    those run as eager code does, but are part of compiling, so nothing is shown.
    """
    return bool(REPLAYING) or is_compiling()


#: ``torch.compiler.is_dynamo_compiling`` once Dynamo is imported (empty before):
#: Dynamo folds a call of it to True. `tensorops._dispatch.bound_plan` reads it and
#: `REPLAYING` itself, one call less to trace than `is_dynamo_tracing`.
IS_DYNAMO: list[Callable[[], bool]] = []


def is_dynamo_tracing() -> bool:
    """Whether Dynamo itself traces the caller (not torch.export's non-strict tracing).

    Then the caller's ``lru_cache`` is not consulted, so what it returns is not cached.
    """
    if REPLAYING:
        return False
    if not IS_DYNAMO:
        torch = sys.modules.get("torch")
        if torch is None:
            return False
        _find_compiler_checks(torch)
    return IS_DYNAMO[0]()


def _find_compiler_checks(torch: Any) -> None:
    """Fill `_IS_COMPILING` and `IS_DYNAMO` from ``torch.compiler``.

    Done once Dynamo is imported (`_prepare_dynamo`): found inside a trace instead,
    Dynamo would trace ``sys.modules.get``, and wrapping ``sys.modules`` costs it
    about 25 ms of capture time.
    """
    compiler = torch.compiler
    if not _IS_COMPILING:
        _IS_COMPILING.append(compiler.is_compiling)
    if not IS_DYNAMO:
        IS_DYNAMO.append(getattr(compiler, "is_dynamo_compiling", compiler.is_compiling))


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
_T = TypeVar("_T")


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
    REPLAYING.append(name)  # the replay raises its errors as eager code does
    try:
        if name in REPLAYS:
            REPLAYS[name](*_rebuild(args))
    except TensorOpsError as raised:
        error = raised
    except FRAMEWORK_ERRORS as other:
        error = TensorOpsError(f"{type(other).__name__}: {other}")
    finally:
        REPLAYING.pop()
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


def constant_result(function: _CallableT) -> _CallableT:
    """Mark `function` as Dynamo's ``assume_constant_result`` does, without importing torch.

    Dynamo then calls it itself on the constant values of its arguments and puts its
    result in the trace as a constant, instead of tracing its bytecode.
    """
    function._dynamo_marked_constant = True  # type: ignore[attr-defined]
    return function


def outside_trace(function: Callable[..., _T]) -> Callable[..., _T | None]:
    """`function` as Dynamo runs it itself (`constant_result`); None where it raises.

    For pure functions of plain data (a pattern's parse): under torch.compile the
    caller traces the call instead only when this gives None, and so raises the
    error there, as eager code does.
    """

    @constant_result
    def outside(*args: Any) -> _T | None:
        REPLAYING.append("outside")
        try:
            return function(*args)
        except TensorOpsError:
            return None
        finally:
            REPLAYING.pop()

    return outside


# --- Recording: a call's framework calls, planned outside the trace ----------------------
#
# Under torch.compile the dispatch hands a call with plain (static) sizes to a function
# marked with `constant_result`. That function plans the call as eager code does, with a
# `Recorder` for adapter, and runs the plan's executor on stand-ins (meta tensors): the
# recorder writes down each framework call the executor makes, with its constant
# arguments. Dynamo gets that list as a constant and traces only `replay`, a short loop
# that makes the same calls on the real arrays.

#: One recorded call: the adapter method, the arguments that made the executor it is
#: (None for a plain method), its arguments (None where an array goes), where the arrays
#: go ``(position, index or tuple of indices)``, and whether it returns a list (False,
#: or the list's length; True for an empty one). A plain
#: method on one array, its first argument, has the array's index for where the arrays
#: go and its other arguments alone, and None for whether it returns a list (the
#: shortest replay: `replay` tells it by that None, with no call to trace). Plain
#: data only: Dynamo takes it as a constant, which may hold no function.
Step = tuple[str, Any, tuple[Any, ...], Any, int | None]
#: A recorded call path: its steps and the index of the result among the arrays (a
#: tuple of them for a list of results).
Program = tuple[tuple[Step, ...], Any]


class _Tape:
    """The steps recorded so far and the number of arrays known (inputs and results)."""

    __slots__ = ("count", "steps")

    def __init__(self, count: int) -> None:
        self.steps: list[Step] = []
        self.count = count


class _Recorded:
    """An array of the recorded call: its stand-in (shape, dtype) and its index on the tape."""

    __slots__ = ("index", "stand_in", "tape")

    def __init__(self, stand_in: Any, tape: _Tape, index: int) -> None:
        self.stand_in, self.tape, self.index = stand_in, tape, index

    @property
    def shape(self) -> Any:
        return self.stand_in.shape

    @property
    def dtype(self) -> Any:
        return self.stand_in.dtype

    @property
    def ndim(self) -> int:
        return len(self.stand_in.shape)


#: The adapter methods that make an executor: the executor's calls are recorded.
_MAKERS = frozenset(
    ("permuter", "reshaper", "reducer", "softmaxer", "einsummer", "gatherer", "scatterer")
)


#: Makers whose executor is the adapter's plain method on ``(x, *made)``.
_TWINS = {"permuter": "permute", "reshaper": "reshape"}


class Recorder:
    """An adapter that plans as `inner` does and records the framework calls it makes.

    Every method is `inner`'s; a call with a recorded array among its arguments runs
    on the stand-ins and is written down (see `record`).
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name

    def __getattr__(self, method: str) -> Any:
        function = getattr(self.inner, method)
        if method not in _MAKERS:
            return lambda *args: _call(method, None, function, args)

        twin = _TWINS.get(method)
        if twin is not None:  # recorded as the plain method: one call less to trace
            plain_method = getattr(self.inner, twin)
            return lambda *made: lambda x, arg: _call(twin, None, plain_method, (x, *made))

        def make(*made: Any) -> Any:
            run = function(*made)
            plain = tuple(_without_functions(value) for value in made)
            return None if run is None else (lambda *args: _call(method, plain, run, args))

        return make

    def __repr__(self) -> str:
        return f"Recorder({self.inner!r})"


def _without_functions(value: Any) -> Any:
    """`value` with the functions in a named tuple made None.

    A function cannot be part of Dynamo's constant: `IndexSpec.out_of_range`, which
    the torch adapter never calls (its kernels check the range).
    """
    fields = getattr(value, "_fields", None)
    if not isinstance(value, tuple) or fields is None:
        return value
    functions = {k: None for k, v in zip(fields, value, strict=True) if callable(v)}
    return value._replace(**functions) if functions else value  # type: ignore[attr-defined]


def _call(method: str, made: Any, function: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """`function` on the stand-ins of `args`; written down if an argument is recorded."""
    tape: _Tape | None = None
    plain: list[Any] = []
    refs: list[tuple[int, Any]] = []
    for position, value in enumerate(args):
        if isinstance(value, _Recorded):
            tape = value.tape
            refs.append((position, value.index))
            plain.append(value.stand_in)
        elif isinstance(value, (list, tuple)) and value and isinstance(value[0], _Recorded):
            tape = value[0].tape
            refs.append((position, tuple(item.index for item in value)))
            plain.append([item.stand_in for item in value])
        else:
            plain.append(value)
    result = function(*plain)
    if tape is None:
        return result  # a question about dtypes or shapes: its answer is constant
    template = list(args)
    for position, _ in refs:
        template[position] = None
    many = isinstance(result, (list, tuple))
    one = made is None and not many and len(refs) == 1 and refs[0][0] == 0
    if one and type(refs[0][1]) is int:  # the common call: one array, first: fewer to trace
        tape.steps.append((method, None, tuple(template[1:]), refs[0][1], None))
        return _recorded_results(tape, [result])
    # a list of results: how many (Python code written for the program unpacks them)
    count = (len(result) or True) if many else False
    tape.steps.append((method, made, tuple(template), tuple(refs), count))
    return _recorded_results(tape, list(result) if many else [result], many)


def _recorded_results(tape: _Tape, results: list[Any], many: bool = False) -> Any:
    """The results of a recorded call, numbered on `tape`."""
    recorded = [_Recorded(item, tape, tape.count + i) for i, item in enumerate(results)]
    tape.count += len(recorded)
    return recorded if many else recorded[0]


def record(
    plan: Callable[[], Callable[[Any, Any], Any]], stand_ins: list[Any], arg: Any, many: bool
) -> Program:
    """What the executor `plan` makes (for a `Recorder`) does to arrays like `stand_ins`.

    Raises:
        TensorOpsError: the plan's or the executor's error.
        TypeError: the executor does something to an array that is not an adapter call.
    """
    tape = _Tape(len(stand_ins))
    inputs = [_Recorded(x, tape, i) for i, x in enumerate(stand_ins)]
    REPLAYING.append("record")  # plans and errors as in eager code
    try:
        result = plan()(inputs if many else inputs[0], arg)
    finally:
        REPLAYING.pop()
    if isinstance(result, list) and all(isinstance(item, _Recorded) for item in result):
        return tuple(tape.steps), tuple(item.index for item in result)  # unpack's pieces
    if not isinstance(result, _Recorded):
        raise TypeError("the executor returned no recorded array")
    return tuple(tape.steps), result.index


def replay(adapter: Any, program: Program, arrays: Any) -> Any:
    """Make the recorded calls of `program` on `arrays` (a list) with `adapter`.

    This loop is all Dynamo traces of a recorded call.
    """
    known = list(arrays)
    for method, made, template, refs, many in program[0]:
        if many is None:  # one array, first: see `Step`
            known.append(getattr(adapter, method)(known[refs], *template))
            continue
        args = list(template)
        for position, index in refs:
            args[position] = [known[i] for i in index] if isinstance(index, tuple) else known[index]
        function = getattr(adapter, method)
        result = function(*made)(*args) if made is not None else function(*args)
        if many:
            known.extend(result)
        else:
            known.append(result)
    result = program[1]
    return known[result] if isinstance(result, int) else [known[i] for i in result]


#: What to run once Dynamo is imported (torch is then fully loaded): the adapters
#: register the torch one there, so that a first call inside a trace takes the fast path.
ON_DYNAMO: list[Callable[[], None]] = []


def _prepare_dynamo(dynamo: Any) -> None:
    """Run once Dynamo is imported: the caches on its list, heapq traced, `ON_DYNAMO`."""
    _trace_heapq()
    _find_compiler_checks(sys.modules["torch"])
    for hook in ON_DYNAMO:
        hook()
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
