"""The check a stand-in has Dynamo run itself, the graph node, and the errors they keep.

* `check` is folded: with constant sizes Dynamo calls it itself and it runs the op
  on meta tensors (`checked`, cached); a failing call's eager error is kept and
  `raise_pending` raises it. A fold that raises is turned into Dynamo's own error by
  newer torch; a function Dynamo runs as constant-result lets it pass as it is.
* `in_graph` is the node: the public op, run by Dynamo on fake tensors and then by
  the compiled graph. With symbolic sizes (`arm` before it) an error of the fake
  run is kept and `raise_pending` raises it, made again at the sizes' present values.

The stand-ins (`tensorops._compile.stand_ins`) call these; see there for the whole.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any

from tensorops._along import argsort, cumsum, flip, roll, sort
from tensorops._check import check as check_shapes
from tensorops._einsum import einsum
from tensorops._elementwise import ELEMENTWISE_OPS, align_operands, finish_result
from tensorops._errors import TensorOpsError
from tensorops._indexing import add_at, get_at, set_at
from tensorops._ops import rearrange, reduce, repeat
from tensorops._pack import pack, parse_shape, unpack
from tensorops._softmax import log_softmax, softmax
from tensorops._staging.compiler import STAND_INS, constant_result, in_node, replaying
from tensorops._staging.errors import pass_through

__all__ = [
    "INDICES",
    "NODE_OPS",
    "OWN",
    "PLAIN_DATA",
    "TENSOR",
    "TENSORS",
    "arm",
    "check",
    "in_graph",
    "is_node",
    "not_constant",
    "raise_pending",
]

#: The node of ``einsum(..., argmax=True)``: the values and the indices as a tuple.
INDICES = "einsum_with_indices"


def _einsum_with_indices(*args: Any, **keywords: Any) -> tuple[Any, ...]:
    """``einsum(..., argmax=True)`` as tensors only: the values, then the indices axis by axis.

    A node returns tensors; the stand-in puts the indices back in a dict under the
    axes the check found (`check` returns them).
    """
    values, indices = einsum(*args, **keywords)
    return (values, *indices.values())


#: The public ops whose calls on torch tensors become one node each, by name.
NODE_OPS: dict[str, Callable[..., Any]] = {
    "rearrange": rearrange,
    "reduce": reduce,
    "repeat": repeat,
    "einsum": einsum,
    "softmax": softmax,
    "log_softmax": log_softmax,
    "get_at": get_at,
    "set_at": set_at,
    "add_at": add_at,
    "pack": lambda tensors, pattern: pack(tensors, pattern)[0],  # the shapes: traced
    "unpack": unpack,
    "flip": flip,
    "roll": roll,
    "sort": sort,
    "argsort": argsort,
    "cumsum": cumsum,
    **ELEMENTWISE_OPS,  # add, subtract, multiply, divide, maximum, minimum, logaddexp, where
    "elementwise_align": align_operands,  # elementwise(f, ...): these two are nodes, f is traced
    "elementwise_result": finish_result,
    INDICES: _einsum_with_indices,
}


def is_node(op: str, keywords: dict[str, Any]) -> bool:
    """Whether a call of `op` with `keywords` returns tensors only: one node can run it.

    einsum's ``argmax=True`` adds a dict of indices: with constant sizes the check
    names its axes and the node (`INDICES`) returns the indices as tensors; with
    symbolic sizes the call runs the op's own code, traced.
    """
    return op != "einsum" or keywords.get("argmax") is not True


#: Plain data a node takes as it is, besides tensors (a symbolic int is an ``int`` to
#: Dynamo); a keyword's value may also be a tuple (a shape).
PLAIN_DATA: tuple[type, ...] = (str, int, float, bool, type(None))
#: How a tensor and a list of tensors appear among a check's arguments.
TENSOR, TENSORS = "<tensorops: tensor>", "<tensorops: tensors>"


def copy_function(function: Any) -> Any:
    """Another function object with `function`'s code: Dynamo traces it, not the stand-in."""
    copy = types.FunctionType(
        function.__code__,
        function.__globals__,
        function.__name__,
        function.__defaults__,
        function.__closure__,
    )
    copy.__kwdefaults__ = function.__kwdefaults__
    copy.__qualname__ = function.__qualname__
    return copy


#: The ops' own code, for calls that cannot be a node (read as a global: a function
#: Dynamo reaches through a closure has no source).
OWN = {
    name: copy_function(function)
    for name, function in {
        **NODE_OPS,
        "pack": pack,
        "parse_shape": parse_shape,
        "check": check_shapes,
    }.items()
}


def check(op: str, specs: tuple[Any, ...], keywords: dict[str, Any]) -> Any:
    """Whether the call `specs` describes runs without error; run outside the trace.

    Dynamo calls it itself when every argument is a constant (`install`), else it
    traces `not_constant` (None). A tensor is ``(TENSOR, shape, dtype)`` in `specs`.
    Returns True, or for pack its packed shapes and for einsum's ``argmax=True`` the
    axes of its indices (constants of the trace then); False where the call fails:
    the error waits for `raise_pending` (a fold that raises would be Dynamo's error on
    newer torch, a constant-result function's is not); "own" where no node can run it.
    """
    items = tuple(keywords.items())
    for _, value in items:
        if not isinstance(value, PLAIN_DATA) and type(value) is not tuple:
            return "own"  # a function, an object: the op's own code, traced
    try:
        try:
            result = checked(op, specs, items)
        except TypeError:  # an unhashable constant (a list): not cached
            result = checked.__wrapped__(op, specs, items)
    except TensorOpsError as error:
        _PENDING[:] = [error]
        return False
    return result


@functools.lru_cache(maxsize=1024)
def checked(op: str, specs: tuple[Any, ...], keywords: tuple[tuple[str, Any], ...]) -> Any:
    """`_check`, cached by the call's description: the op run on meta tensors."""
    args = [stand_in_of(value) for value in specs]
    node = is_node(op, dict(keywords))
    try:
        with replaying(op):  # errors are made with their context, as eagerly
            result = OWN[op](*args, **{name: stand_in_of(value) for name, value in keywords})
    except TensorOpsError as error:
        raise pass_through(error) from None
    except Exception:  # not the op's error (a meta kernel missing): the node runs, if one can
        return None if op == "pack" else node or "own"
    if op == "pack" or not node:  # pack's shapes; einsum's argmax=True: its indices' axes
        return tuple(result[1])
    return True


def stand_in_of(value: Any) -> Any:
    """A check's argument as the op takes it: meta tensors for ``TENSOR`` / ``TENSORS`` specs."""
    if type(value) is tuple and value and value[0] == TENSOR:
        return STAND_INS["torch"](tuple(value[1]), str(value[2]))
    if type(value) is tuple and value and value[0] == TENSORS:
        return [STAND_INS["torch"](tuple(shape), str(dtype)) for shape, dtype in value[1]]
    return value


def not_constant(*args: Any) -> None:
    """What Dynamo traces for a folded function whose arguments are not all constants."""
    return None


def in_graph(op: str, /, *args: Any, **keywords: Any) -> Any:
    """The public op `op` on these arguments: one node of the graph (allowed in it).

    Run by Dynamo on fake tensors right after `arm` (symbolic sizes), an error is
    kept for `raise_pending` and a placeholder returned: Dynamo would turn the error
    into its own, and `raise_pending` raises it as the eager error instead.
    """
    armed = bool(_ARMED)
    _ARMED.clear()
    try:
        with in_node(op):
            return NODE_OPS[op](*args, **keywords)
    except TensorOpsError as error:
        first = _first_tensor(args, keywords)
        if not armed or first is None or not hasattr(first, "fake_mode"):
            raise
        _PENDING.append(_at_present_sizes(op, args, keywords, error))
        return [first] if op == "unpack" else first


#: Set by `arm` for the next `in_graph` run; the error it defers, for `raise_pending`.
_ARMED: list[bool] = []
_PENDING: list[TensorOpsError] = []


@constant_result
def arm() -> bool:
    """Run by Dynamo itself (no arguments), just before the node's fake run."""
    _ARMED.append(True)
    _PENDING.clear()
    return True


@constant_result
def raise_pending() -> bool:
    """Run by Dynamo itself: raise the error `check` or `in_graph` kept, as the eager error.

    An error raised by a function Dynamo runs as constant-result passes its trace
    as it is, where its class is also an ``AssertionError`` (`pass_through`).
    """
    _ARMED.clear()
    if _PENDING:
        error = _PENDING.pop()
        _PENDING.clear()
        raise error
    return True


def _first_tensor(args: tuple[Any, ...], keywords: dict[str, Any]) -> Any:
    for value in (*args, *keywords.values()):
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if hasattr(item, "shape") and hasattr(item, "dtype"):
                return item
    return None


def _at_present_sizes(
    op: str, args: tuple[Any, ...], keywords: dict[str, Any], error: TensorOpsError
) -> TensorOpsError:
    """The error of the call at the present values of its symbolic sizes, as eager code makes it.

    Made on meta tensors (`checked`); the symbolic sizes are read as ints, which
    would tie the graph to them, but this graph is abandoned for the error.
    """
    try:
        specs = tuple(_concrete(value) for value in args)
        named = tuple((name, _concrete(value)) for name, value in keywords.items())
        checked.__wrapped__(op, specs, named)
    except TensorOpsError as eager:
        return eager
    except Exception:
        return pass_through(error)
    return pass_through(error)


def _concrete(value: Any) -> Any:
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return (TENSOR, tuple(int(n) for n in value.shape), value.dtype)
    if isinstance(value, (list, tuple)) and value and hasattr(value[0], "shape"):
        return (TENSORS, tuple((tuple(int(n) for n in x.shape), x.dtype) for x in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_concrete(item) for item in value)
    if hasattr(value, "node") and not isinstance(value, (bool, float)):  # a symbolic int
        return int(value)
    return value
