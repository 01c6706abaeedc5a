"""What Dynamo traces in place of the public ops: one graph node per call.

torch.compile's Dynamo steps through the Python code it calls, bytecode by
bytecode, and each step costs it tens of microseconds; each framework call it
meets costs it a graph node and a run on fake tensors. Plain torch code pays the
second cost only. In place of `rearrange`, `reduce`, `repeat`, `einsum`, `pack`,
`unpack`, `softmax` and `log_softmax`, Dynamo traces a stand-in of a few lines::

    if type(x) in _PLAIN:
        name = _node("rearrange", pattern, x.shape, lengths, None, (x.dtype,))
        if name is not None:
            return _run(name, x)
    return <the op's own code>

``_node`` is constant-folded: when every argument is a constant (the sizes and
lengths plain ints, the pattern a string) Dynamo calls it itself, outside the
trace; otherwise it traces `_not_constant`, which gives None. ``_node`` records
the call's framework calls on stand-ins of the arrays, as `tensorops._dispatch`
does for a traced call, and returns the name of the recorded calls written as a
function (`tensorops._written`); None if the call cannot be recorded (an error,
a size 0, a callable reduction, a step that cannot be written). ``_run`` is
allowed in the graph (``torch.compiler.allow_in_graph``): Dynamo puts one node
calling it in the graph and runs it on fake tensors, without tracing its code;
AOTAutograd and torch.export trace through it to the framework's operators, so
inductor compiles the same operators as for a traced call and autograd
differentiates them.

Every other call (symbolic sizes from ``dynamic=True``, ``mark_dynamic`` or a
second shape; lists of arrays; NumPy arrays under Dynamo; keywords such as
``pattern=``; einsum's options; errors) runs the op's own code, which Dynamo
traces as before (`tensorops._dispatch`): errors are raised there as in eager
mode, and symbolic sizes stay symbolic. The stand-ins are registered with Dynamo
(``substitute_in_graph``) when it is imported (`tensorops._tracing.ON_DYNAMO`):
eager calls run exactly their own code.

Each stand-in is one frame without helpers: each frame Dynamo inlines costs
capture time. This module imports no framework; torch's types are read when
Dynamo is imported.
"""

from __future__ import annotations

import importlib.metadata
import sys
import types
from collections.abc import Callable
from typing import Any

from tensorops._backends import ADAPTERS
from tensorops._config import config
from tensorops._dispatch import Op, _written_program
from tensorops._einsum import einsum
from tensorops._ops import rearrange, reduce, repeat
from tensorops._pack import _pack_program, _unpack_program, pack, unpack
from tensorops._softmax import log_softmax, softmax
from tensorops._tracing import ON_DYNAMO
from tensorops._written import WRITTEN

__all__ = ["install"]

#: The array types whose calls become graph nodes: torch's tensor and parameter.
_PLAIN: tuple[type, ...] = ()
#: The torch adapter, once Dynamo is imported.
_TORCH: list[Any] = []
#: The stand-ins' default for an argument not given: a str, since Dynamo wraps a
#: stand-in without a source and so cannot hold `MISSING` as a default. The op's
#: own code is then called without the argument, and applies its own default.
_ABSENT = "<tensorops: argument not given>"


def _copy(function: Any) -> Any:
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


_REDUCE, _EINSUM, _PACK, _UNPACK = _copy(reduce), _copy(einsum), _copy(pack), _copy(unpack)


def _node(
    op: str, pattern: Any, shapes: Any, lengths: Any, variant: Any, dtypes: tuple[Any, ...]
) -> str | None:
    """The name in `WRITTEN` of the call's framework calls; None: the op's own code runs.

    Dynamo calls it itself when every argument is a constant: plain sizes and
    lengths (`install` registers it with ``can_constant_fold_through``); else it
    traces `_not_constant`, which gives None. The arguments: the op's name, the
    pattern, the shape (a tuple of shapes for einsum), the lengths, the variant
    (reduce's reduction; einsum's spaced flag, completed here with the settings,
    which are the process-wide defaults inside compiled code) and the dtypes.
    None also for an error (the op's own code raises it), a size 0 or a callable
    reduction.
    """
    if type(pattern) is not str or (op == "reduce" and type(variant) is not str):
        return None
    many = op == "einsum"
    for shape in shapes if many else (shapes,):
        if 0 in shape:
            return None
    items = tuple(lengths.items()) if lengths else ()
    for _, n in items:
        if type(n) is not int:
            return None
    arg = variant if op == "reduce" else None
    if many:
        variant = (config.current(), variant)
    written, _ = _written_program(
        Op.by_name[op], pattern, shapes, items, variant, _TORCH[0], dtypes, arg
    )
    return written


def _not_constant(*args: Any) -> None:
    """What Dynamo traces for `_node`, `_pack_node`, `_unpack_node` on a non-constant.

    Such as a symbolic size: the op's own code runs then.
    """
    return None


def _run(name: str, arrays: Any) -> Any:
    """Make the calls written as `name` on `arrays`: a node of the graph (allowed in it).

    One array, or a sequence of them for einsum and pack, as the written function takes.
    """
    return getattr(WRITTEN, name)(_TORCH[0], arrays)


#: Copies of the ops on one array, read by their stand-ins (`_on_one_array`) as a
#: global: a function Dynamo reaches through a closure has no source, nor its defaults.
_OWN = {
    "rearrange": _copy(rearrange),
    "repeat": _copy(repeat),
    "softmax": _copy(softmax),
    "log_softmax": _copy(log_softmax),
}


def _on_one_array(op: str) -> Callable[..., Any]:
    """The stand-in of rearrange, repeat, softmax or log_softmax (`op`)."""

    def stand_in(x: Any = _ABSENT, pattern: Any = _ABSENT, /, **lengths: Any) -> Any:
        if type(x) in _PLAIN:
            name = _node(op, pattern, x.shape, lengths, None, (x.dtype,))
            if name is not None:
                return _run(name, x)
        own = _OWN[op]
        if pattern is _ABSENT:  # einops' keywords: tensor=, pattern=
            return own(**lengths) if x is _ABSENT else own(x, **lengths)
        return own(x, pattern, **lengths)

    return stand_in


_rearrange, _repeat = _on_one_array("rearrange"), _on_one_array("repeat")
_softmax, _log_softmax = _on_one_array("softmax"), _on_one_array("log_softmax")


def _reduce(
    x: Any = _ABSENT, pattern: Any = _ABSENT, reduction: Any = None, /, **lengths: Any
) -> Any:
    if type(x) in _PLAIN:
        name = _node("reduce", pattern, x.shape, lengths, reduction, (x.dtype,))
        if name is not None:
            return _run(name, x)
    if pattern is _ABSENT:
        return _REDUCE(**lengths) if x is _ABSENT else _REDUCE(x, **lengths)
    return _REDUCE(x, pattern, reduction, **lengths)


def _einsum(*args: Any, **keywords: Any) -> Any:
    if not keywords and len(args) == 3:  # two arrays, the equation first or last
        first, x, y = args
        spaced = None
        if type(first) is not str:
            first, x, y, spaced = y, first, x, True
        if type(x) in _PLAIN and type(y) in _PLAIN:
            name = _node("einsum", first, (x.shape, y.shape), None, spaced, (x.dtype, y.dtype))
            if name is not None:
                return _run(name, (x, y))
    return _EINSUM(*args, **keywords)


def _pack_node(pattern: Any, shapes: Any, dtypes: Any) -> tuple[str, Any] | None:
    """`_node` for pack: the written function's name and the packed shapes, or None."""
    if type(pattern) is not str or not shapes:
        return None
    for shape in shapes:
        if 0 in shape:
            return None
    made = _pack_program(pattern, shapes, "torch", dtypes)
    if made is None or made[2] is None:
        return None
    return made[2], made[1]


def _unpack_node(pattern: Any, shape: Any, packed_shapes: Any, dtype: Any) -> str | None:
    """`_node` for unpack: the written function's name, or None."""
    if type(pattern) is not str or 0 in shape or not isinstance(packed_shapes, (list, tuple)):
        return None
    pieces: tuple[tuple[int, ...], ...] = ()
    for piece in packed_shapes:
        if not isinstance(piece, (list, tuple)):
            return None
        for n in piece:
            if type(n) is not int:
                return None
        pieces += (tuple(piece),)
    made = _unpack_program(pattern, shape, pieces, "torch", dtype)
    return None if made is None else made[1]


def _pack(tensors: Any, pattern: Any) -> Any:
    if isinstance(tensors, (list, tuple)):
        shapes: tuple[Any, ...] = ()
        dtypes: tuple[Any, ...] = ()
        for x in tensors:
            if type(x) not in _PLAIN:
                break
            shapes += (x.shape,)
            dtypes += (x.dtype,)
        else:
            made = _pack_node(pattern, shapes, dtypes)
            if made is not None:
                return _run(made[0], tensors), list(made[1])
    return _PACK(tensors, pattern)


def _unpack(tensor: Any, packed_shapes: Any, pattern: Any) -> Any:
    if type(tensor) in _PLAIN:
        name = _unpack_node(pattern, tensor.shape, packed_shapes, tensor.dtype)
        if name is not None:
            return _run(name, tensor)
    return _UNPACK(tensor, packed_shapes, pattern)


_STAND_INS = (
    (rearrange, _rearrange),
    (repeat, _repeat),
    (softmax, _softmax),
    (log_softmax, _log_softmax),
    (reduce, _reduce),
    (einsum, _einsum),
    (pack, _pack),
    (unpack, _unpack),
)


def _version() -> str:
    try:
        return importlib.metadata.version("tensorops")
    except importlib.metadata.PackageNotFoundError:  # a source tree without install
        return "unknown"


def install() -> None:
    """Register the stand-ins with Dynamo: run once it is imported (`ON_DYNAMO`)."""
    global _PLAIN
    torch, dynamo = sys.modules.get("torch"), sys.modules.get("torch._dynamo")
    substitute = getattr(dynamo, "substitute_in_graph", None)
    allow = getattr(getattr(torch, "compiler", None), "allow_in_graph", None)
    if _TORCH or substitute is None or allow is None:
        return  # done, or a torch without them: every call is traced as before
    tensor, parameter = torch.Tensor, torch.nn.Parameter  # type: ignore[union-attr]
    _TORCH.append(ADAPTERS[tensor])
    try:
        for node in (_node, _pack_node, _unpack_node):
            fold = substitute(node, can_constant_fold_through=True, skip_signature_check=True)
            fold(_not_constant)
    except TypeError:  # a torch whose substitute_in_graph cannot fold: traced as before
        return
    _PLAIN = (tensor, parameter)
    allow(_run)
    # A graph with `_run` nodes may be cached across processes (AOTAutograd's cache,
    # else bypassed): a name is one written function in every process (`written`),
    # and the key changes with the version, as the written code may.
    cacheable = getattr(getattr(torch, "_inductor", None), "config", None)
    marked = getattr(cacheable, "unsafe_marked_cacheable_functions", None)
    if isinstance(marked, dict):
        marked[f"{_run.__module__}.{_run.__name__}"] = f"tensorops {_version()}"
    for original, stand_in in _STAND_INS:
        substitute(original, skip_signature_check=True)(stand_in)


ON_DYNAMO.append(install)
