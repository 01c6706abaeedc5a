"""Errors that reach the user as they are, from inside a torch.compile trace too.

Dynamo turns an exception raised in code it traces into its own ``Unsupported``
error, and one raised while it runs a graph node on fake tensors into a
``TorchRuntimeError``. It lets assertion errors raised by functions it runs itself
pass unchanged. So an error meant for the user is raised outside the trace:

* by a stand-in's check (`tensorops._compile.stand_ins`), which Dynamo runs itself
  when the call's sizes are constants: `pass_through` makes the error raised there
  an instance of a subclass of its class that is also an ``AssertionError``;
* by `raise_error` in code that Dynamo traces (the fallback): the failing call is
  made again, in `_replay`, on stand-ins of its arrays (meta tensors of the same
  shapes and dtypes), which Dynamo runs itself (``assume_constant_result``).

Either way the user gets the class, the message and the fields of the eager error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, NoReturn, TypeVar

from tensorops._errors import FRAMEWORK_ERRORS, TensorOpsError
from tensorops._staging.compiler import (
    STAND_INS,
    constant_result,
    is_compiling,
    replaying,
)

__all__ = ["REPLAYS", "Replay", "pass_through", "raise_error", "replayable"]

Replay = tuple[str, tuple[Any, ...]]
_CallableT = TypeVar("_CallableT", bound=Callable[..., Any])

#: The functions `raise_error` may replay, by name.
REPLAYS: dict[str, Callable[..., Any]] = {}


def replayable(name: str) -> Callable[[_CallableT], _CallableT]:
    """Register a function that `raise_error` may call again, under `name`."""

    def register(function: _CallableT) -> _CallableT:
        REPLAYS[name] = function
        return function

    return register


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
        >>> from tensorops._staging import raise_error
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


class _Stand(NamedTuple):
    """What a traced array is: its family, shape and dtype, as constants."""

    family: str
    shape: tuple[int, ...]
    dtype: str


_CALLABLE = "<a function>"


def _spec(value: Any) -> Any:
    """`value` with every array made a `_Stand` and every function a marker (traced)."""
    if type(value) is list or type(value) is tuple:
        return type(value)(_spec(item) for item in value)
    if isinstance(value, tuple):  # a named tuple of settings (einsum's): constants already
        return value
    if isinstance(value, dict):
        return {key: _spec(item) for key, item in value.items()}
    # ints first: Dynamo cannot trace hasattr() on a symbolic int (a length given as a size)
    if isinstance(value, int) and not isinstance(value, bool):
        return _int(value)
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        family = type(value).__module__.split(".")[0]
        return _Stand(family, tuple(_int(d) for d in value.shape), str(value.dtype))
    if callable(value) and not isinstance(value, type):
        return _CALLABLE
    return value


def _int(value: int) -> int:
    """A symbolic size as the plain int it is in this trace (Dynamo folds a range's length)."""
    return len(range(value)) if value >= 0 else -len(range(-value))


def _sum(x: Any, axes: tuple[int, ...]) -> Any:
    """What a function given as a reduction is replayed as: the error is never in it."""
    return x.sum(axes)


def _rebuild(value: Any) -> Any:
    """`value` with each `_Stand` made a stand-in array of its family (see `_spec`)."""
    if isinstance(value, _Stand):
        return STAND_INS[value.family](value.shape, value.dtype)
    if type(value) is list or type(value) is tuple:
        return type(value)(_rebuild(item) for item in value)
    if isinstance(value, dict):
        return {key: _rebuild(item) for key, item in value.items()}
    return _sum if value == _CALLABLE else value


@constant_result
def _replay(name: str, args: tuple[Any, ...]) -> NoReturn:
    """Make the error of a traced call again and raise it as it is; run by Dynamo itself."""
    error = TensorOpsError(
        "the call failed while torch.compile traced it; call it outside torch.compile to see why"
    )
    try:
        with replaying(name):  # the replay raises its errors as eager code does
            if name in REPLAYS:
                REPLAYS[name](*_rebuild(args))
    except TensorOpsError as raised:
        error = raised
    except FRAMEWORK_ERRORS as other:
        error = TensorOpsError(f"{type(other).__name__}: {other}")
    raise pass_through(error) from None


_PASSING: dict[type[TensorOpsError], type[TensorOpsError]] = {}


def pass_through(error: TensorOpsError) -> TensorOpsError:
    """`error` as an instance of its class made an assertion error too, which Dynamo lets through.

    Same name, same message, same fields; it pickles as the plain class.
    """
    fields = TensorOpsError.__reduce__(error)[1][2]
    return _passing(type(error))(error.reason, **fields)


def _passing(cls: type[TensorOpsError]) -> type[TensorOpsError]:
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
