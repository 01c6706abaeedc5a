"""What Dynamo traces in place of the public ops: a check outside the trace, then one graph node.

torch.compile's Dynamo steps through the Python it calls, bytecode by bytecode:
tensorops' parsing and planning would cost it thousands of steps per call, and
constructs its older releases cannot trace. In place of every public op on torch
tensors, Dynamo traces a stand-in of a few lines instead::

    def stand_in(*args, **keywords):              # arrays and plain data
        specs = ...                               # each tensor as (marker, shape, dtype)
        checked = check(op, specs, keywords)      # run by Dynamo itself: not traced
        if checked is None:                       # symbolic sizes
            arm(); y = in_graph(op, *args, **keywords); raise_pending(); return y
        if checked is False:
            raise_pending()                       # the eager error
        return in_graph(op, *args, **keywords)    # one node of the graph

* `check` is folded (`dynamo.fold`): when every argument is a constant — the sizes
  plain ints, the pattern a string — Dynamo calls it itself, outside the trace. It
  runs the op on meta tensors of the same shapes and dtypes (no data, cached plans);
  a failing call keeps its eager error for `raise_pending`, which Dynamo runs as a
  constant-result function, so the user gets the eager error word for word. Where
  a size is symbolic (``dynamic=True``, ``mark_dynamic``, a second shape) the call is
  not constant, and Dynamo traces `not_constant` (None) instead.
* `in_graph` is allowed in the graph (`dynamo.allow_in_graph`): Dynamo puts one node
  calling it in the graph and runs it on fake tensors, without tracing it. That run
  is tensorops' eager code: with symbolic sizes the plan is made from them (the plan
  caches refuse unhashable sizes and plan afresh), and the guards torch adds are those
  of the size arithmetic, as for hand-written torch code; an error there is kept
  (`arm`) and raised by `raise_pending` at the sizes' present values. AOTAutograd,
  inductor and torch.export trace through the node to the framework's operators.

A call the stand-in cannot make a node (no torch tensor, a function as reduction,
an argument that is neither a tensor nor plain data; einsum's ``argmax=True`` with
symbolic sizes, whose dict of indices a node cannot return) runs the op's own code,
which Dynamo traces as it traces einops. With constant sizes the check names the
axes of einsum's indices, and one node returns the values and the indices. This
module imports no framework; torch's types are read when Dynamo is imported
(`install`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from tensorops._check import check as check_shapes
from tensorops._check import check_program
from tensorops._compile import dynamo
from tensorops._compile.checks import (
    INDICES,
    NODE_OPS,
    OWN,
    PLAIN_DATA,
    TENSOR,
    TENSORS,
    arm,
    check,
    in_graph,
    is_node,
    not_constant,
    raise_pending,
)
from tensorops._config import config
from tensorops._errors import TensorOpsError
from tensorops._pack import axis_positions, pack, pack_positions, parse_shape, unpack
from tensorops._staging.compiler import CONSTANT_RESULTS, ON_DYNAMO, stand_ins_wanted

__all__ = ["install", "installed"]

#: The array types whose calls become nodes: torch's tensor and parameter, once installed.
_PLAIN: tuple[type, ...] = ()
#: A stand-in's default for an argument not given (a str: Dynamo holds it as a constant).
_ABSENT = "<tensorops: not given>"


def _stand_in(op: str) -> Callable[..., Any]:
    """The stand-in Dynamo traces for the op `op` (see the module's docstring).

    One frame for the common call (an array, a pattern, perhaps a reduction's name,
    lengths): each frame and each instruction Dynamo steps through costs capture time.
    """

    # The first two parameters are positional-only under names no call uses: Dynamo
    # before 2.11 refuses a keyword named like a positional-only parameter (einops'
    # ``pattern=``). The common calls are spelled out; the rest go through `_specs`.
    def stand_in(tops_x_: Any = _ABSENT, tops_p_: Any = _ABSENT, /, *rest: Any, **kw: Any) -> Any:
        specs: Any = None
        if type(tops_x_) in _PLAIN:
            if type(tops_p_) is str and tops_p_ != _ABSENT and (not rest or type(rest[0]) is str):
                if len(rest) < 2:  # x, pattern, perhaps a reduction's name
                    specs = ((TENSOR, tops_x_.shape, tops_x_.dtype), tops_p_, *rest)
            elif type(tops_p_) in _PLAIN and len(rest) == 1 and type(rest[0]) is str:
                x, y = tops_x_, tops_p_  # einsum(x, y, equation)
                specs = ((TENSOR, x.shape, x.dtype), (TENSOR, y.shape, y.dtype), rest[0])
        elif type(tops_x_) is str and type(tops_p_) in _PLAIN and len(rest) == 1:
            x, y = tops_p_, rest[0]  # einsum(equation, x, y)
            if type(y) in _PLAIN:
                specs = (tops_x_, (TENSOR, x.shape, x.dtype), (TENSOR, y.shape, y.dtype))
        if specs is not None:
            checked = check(op, specs, kw)
            if checked is True:
                return in_graph(op, tops_x_, tops_p_, *rest, **kw)
            return _otherwise(op, checked, (tops_x_, tops_p_, *rest), kw)
        args = rest  # without the arguments not given (einops' keywords tensor=, pattern=)
        if not (type(tops_p_) is str and tops_p_ == _ABSENT):
            args = (tops_x_, tops_p_, *rest)
        elif not (type(tops_x_) is str and tops_x_ == _ABSENT):
            args = (tops_x_,)
        found = _specs(args, kw)
        if found is None:
            return OWN[op](*args, **kw)
        checked = check(op, found[0], found[1])
        if checked is True and found[2]:
            return in_graph(op, *args, **kw)
        if not found[2]:  # no tensor: only the eager error (if any) is taken from the check
            checked = False if checked is False else "own"
        return _otherwise(op, checked, args, kw)

    stand_in.__name__ = stand_in.__qualname__ = op
    return stand_in


def _otherwise(op: str, checked: Any, args: tuple[Any, ...], keywords: dict[str, Any]) -> Any:
    """A stand-in's call that is not a checked node: symbolic sizes, an error, or neither.

    `checked` is what `check` gave: None (not constants: symbolic sizes), False (the
    call's eager error, kept), "own" (an argument a node cannot take) or the axes of
    einsum's indices (``argmax=True``: one node returns the values and the indices).
    """
    if checked is None:
        for value in keywords.values():  # a function among symbolic sizes: not a node
            if type(value) not in PLAIN_DATA and type(value) not in _PLAIN:
                return OWN[op](*args, **keywords)
        if not is_node(op, keywords):
            return OWN[op](*args, **keywords)
        arm()  # an error of the node's run is kept, and raised after it
        result = in_graph(op, *args, **keywords)
        raise_pending()
        return result
    if checked is False:
        raise_pending()
    if type(checked) is tuple:  # einsum's indices, under the axes the check found
        values, *indices = in_graph(INDICES, *args, **keywords)
        return values, dict(zip(checked, indices, strict=True))
    return OWN[op](*args, **keywords)


def _specs(args: tuple[Any, ...], keywords: dict[str, Any]) -> Any:
    """The arguments as `check` takes them, tensors as shapes and dtypes, and whether any is.

    None where an argument is neither a torch tensor, a list of them nor plain data
    (a function as reduction, a NumPy array): the op's own code runs then. A call
    with no tensor at all (a missing argument) is checked only for its eager error.
    """
    tensors = False
    specs: tuple[Any, ...] = ()
    for arg in args:
        kind = type(arg)
        if kind in _PLAIN:
            specs += ((TENSOR, arg.shape, arg.dtype),)
            tensors = True
        elif kind in PLAIN_DATA:
            specs += (arg,)
        elif kind is list or kind is tuple:
            items: tuple[Any, ...] = ()
            arrays = 0
            for item in arg:
                if type(item) in _PLAIN:
                    items += ((item.shape, item.dtype),)
                    arrays += 1
                elif type(item) in PLAIN_DATA:
                    items += (item,)
                else:
                    return None
            if arrays == 0:
                specs += (arg,)
            elif arrays == len(items):
                specs += ((TENSORS, items),)
                tensors = True
            else:
                return None
        else:
            return None
    named = {}
    for name, value in keywords.items():  # lengths, options; einops' tensor=
        kind = type(value)
        if kind in _PLAIN:
            named[name] = (TENSOR, value.shape, value.dtype)
            tensors = True
        elif kind in PLAIN_DATA:
            named[name] = value
        else:
            return None
    return specs, named, tensors


def _pack(*args: Any, **keywords: Any) -> Any:
    """Pack's stand-in: the packed array is one node.

    The packed shapes are constants of the check, or read in the trace from
    symbolic sizes.
    """
    if len(args) == 2 and not keywords:
        tensors, pattern = args
        if (type(tensors) is list or type(tensors) is tuple) and type(pattern) is str:
            specs: tuple[Any, ...] = ()
            for x in tensors:
                if type(x) not in _PLAIN:
                    return OWN["pack"](*args)
                specs += ((x.shape, x.dtype),)
            if specs:
                shapes = check("pack", ((TENSORS, specs), pattern), {})
                if shapes is False:
                    raise_pending()
                if shapes is not None:  # checked: constant sizes
                    return in_graph("pack", tensors, pattern), list(shapes)
                arm()
                packed = in_graph("pack", tensors, pattern)
                raise_pending()
                position, after = _pack_positions(pattern)
                shapes = []
                for x in tensors:
                    shapes.append(tuple(x.shape[position : x.dim() - after]))
                return packed, shapes
    return OWN["pack"](*args, **keywords)


def _unpack(*args: Any, **keywords: Any) -> Any:
    """Unpack's stand-in: one node; the shapes go to the check as they are."""
    if len(args) == 3 and not keywords:
        x, shapes, pattern = args
        if type(x) in _PLAIN and type(pattern) is str and type(shapes) in (list, tuple):
            checked = check("unpack", ((TENSOR, x.shape, x.dtype), shapes, pattern), {})
            if checked is False:
                raise_pending()
            if checked is not None:
                return in_graph("unpack", x, shapes, pattern)
            arm()
            pieces = in_graph("unpack", x, shapes, pattern)
            raise_pending()
            return pieces
    return OWN["unpack"](*args, **keywords)


def _pack_positions(pattern: str) -> tuple[int, int]:
    """Folded: where ``*`` starts and how many axes follow it."""
    return pack_positions(pattern)


def _parse_shape(*args: Any, **keywords: Any) -> Any:
    """parse_shape's stand-in: the sizes are read in the trace, so a symbolic one stays so."""
    if len(args) == 2 and not keywords:
        x, pattern = args
        if type(x) in _PLAIN and type(pattern) is str:
            if check("parse_shape", ((TENSOR, x.shape, x.dtype), pattern), {}) is False:
                raise_pending()
            shape = x.shape
            result = {}
            for name, dim in _axis_positions(pattern, x.dim()):
                result[name] = shape[dim]
            return result
    return OWN["parse_shape"](*args, **keywords)


def _axis_positions(pattern: str, ndim: int) -> tuple[tuple[str, int], ...]:
    """Folded: the dimension each name of a parse_shape pattern reads."""
    return axis_positions(pattern, ndim)


def _check(*args: Any, **keywords: Any) -> Any:
    """The stand-in of `check`: no node; sizes compared in the trace, symbolic ones stay so.

    With constant sizes the check is folded (its eager error raised as it is); with
    symbolic ones the steps of its program (folded: they need no sizes) compare the
    sizes in the trace, which makes guards on them, as hand-written comparisons do,
    and the lengths solved are symbolic too. A failing comparison runs the op's own
    code, traced, which raises the eager error.
    """
    if len(args) == 2 and type(args[1]) is str:
        x, pattern = args
        arrays: Any = x
        specs: Any = None
        if type(x) in _PLAIN:
            arrays, specs = (x,), (TENSOR, x.shape, x.dtype)
        elif (type(x) is list or type(x) is tuple) and x:
            items: tuple[Any, ...] = ()
            for array in x:
                if type(array) not in _PLAIN:
                    return OWN["check"](*args, **keywords)
                items += ((array.shape, array.dtype),)
            specs = (TENSORS, items)
        else:
            return OWN["check"](*args, **keywords)
        checked = check("check", (specs, pattern), keywords)
        if checked is False:
            raise_pending()
        if type(checked) is str:  # a length that is not plain data
            return OWN["check"](*args, **keywords)
        if checked is True and arrays is not x:  # one array, checked
            return x
        ranks = tuple(array.dim() for array in arrays)
        program = _check_steps(pattern, ranks, tuple(keywords), arrays is not x)
        if program is None:  # an error: the op's own code raises it
            return OWN["check"](*args, **keywords)
        steps, names = program
        values = dict(keywords)
        for i, j, known, literal, unknown in steps:
            size = arrays[i].shape[j]
            product = literal
            for name in known:
                product = product * values[name]
            if unknown is None:
                if size != product:
                    return OWN["check"](*args, **keywords)
            elif known or literal != 1:
                if product == 0 or size % product != 0:
                    return OWN["check"](*args, **keywords)
                if unknown:
                    values[unknown] = size // product
            elif unknown:
                values[unknown] = size
        if arrays is not x:
            return x
        result = {}
        for name in names:
            result[name] = values[name]
        return result
    return OWN["check"](*args, **keywords)


def _check_steps(pattern: str, ranks: tuple[int, ...], given: tuple[str, ...], single: bool) -> Any:
    """Folded: the steps of check's program as plain tuples, and the names it solves.

    ``((), ())`` where nothing is to be checked (one array, checks off); None where
    the program raises or a dimension cannot be solved: the op's own code reports it.
    """
    if single and not config.checks:
        return (), ()
    try:
        program = check_program(pattern, ranks, given)
    except TensorOpsError:
        return None
    if program.stuck is not None or not set(given) <= set(program.names):
        return None
    return tuple(tuple(step) for step in program.steps), program.names


_STAND_INS: tuple[tuple[Callable[..., Any], Callable[..., Any]], ...] = (
    *(
        (function, _stand_in(name))
        for name, function in NODE_OPS.items()
        if name not in ("pack", "unpack", INDICES)
    ),
    (pack, _pack),
    (unpack, _unpack),
    (parse_shape, _parse_shape),
    (check_shapes, _check),
)

#: Whether the stand-ins are registered (a list: set once, when Dynamo is imported).
_INSTALLED: list[bool] = []


def installed() -> bool:
    """Whether Dynamo traces the stand-ins (False: the fallback, tensorops' own Python)."""
    return bool(_INSTALLED) and _INSTALLED[0]


def install(torch_dynamo: Any) -> None:
    """Register the stand-ins with Dynamo: run once it is imported.

    Each torch API is checked for first (`tensorops._compile.dynamo`); where one is
    missing, or ``TENSOROPS_COMPILE=traced`` asks for it, nothing is registered and
    Dynamo traces tensorops' own Python.
    """
    global _PLAIN
    if _INSTALLED:
        return
    torch = sys.modules["torch"]
    ok = stand_ins_wanted() and dynamo.allow_in_graph(torch, in_graph)
    for function in (check, _pack_positions, _axis_positions, _check_steps):
        ok = ok and dynamo.fold(torch_dynamo, function, not_constant)
    if ok:
        _PLAIN = (torch.Tensor, torch.nn.Parameter)
        for original, stand_in in _STAND_INS:
            ok = ok and dynamo.substitute(torch_dynamo, original, stand_in)
    if not ok:
        _PLAIN = ()  # a call that reaches a registered stand-in runs the op's own code
    _INSTALLED.append(ok)
    if ok:
        from importlib.metadata import PackageNotFoundError, version

        try:
            key = f"tensorops {version('tensorops')}"
        except PackageNotFoundError:  # a source tree without install
            key = "tensorops (not installed)"
        dynamo.mark_cacheable(torch, in_graph, key)


def _on_dynamo() -> None:
    torch_dynamo = sys.modules["torch._dynamo"]
    if dynamo.mark_constant_results(torch_dynamo, CONSTANT_RESULTS):
        install(torch_dynamo)
    else:  # errors could not leave a trace as they are: the fallback
        _INSTALLED.append(False)


ON_DYNAMO.append(_on_dynamo)
