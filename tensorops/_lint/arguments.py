"""How a call's arguments bind to the parameters of the function it calls.

`bind` reads a call of a known function (`tensorops._lint.targets`) into a
`StaticCall`: the pattern (when it is a constant, `tensorops._lint.constants`), the
operands where they are visible, each keyword's value (or `UNKNOWN`), and the literal
shapes of operands made by ``zeros((4, 9))`` and the like. A call whose pattern is
not a constant gives None: nothing is checked.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any, NamedTuple

from tensorops._lint.calls import UNKNOWN, FoundCall
from tensorops._lint.constants import Constants
from tensorops._lint.targets import MAKERS, TARGETS, Target

__all__ = ["CALLABLE", "NOT_GIVEN", "StaticCall", "bind"]

#: A reduction given as a function (a lambda, ``torch.mean``): not a name to check.
CALLABLE: Any = type("Callable", (), {"__repr__": lambda self: "CALLABLE"})()
#: An argument the call does not give.
NOT_GIVEN: Any = type("NotGiven", (), {"__repr__": lambda self: "NOT_GIVEN"})()


class StaticCall(NamedTuple):
    """A call of a known function whose pattern is a constant.

    Attributes:
        target: the function.
        node: the call.
        pattern: the pattern text.
        pattern_node: the expression it came from (where findings point).
        operands: the array arguments, None when they are not visible (``*args``).
        shapes: each operand's shape where a literal gives it (None where unknown).
        lengths: each keyword that is not an argument of its own: its value or `UNKNOWN`.
        sources: each keyword's value expression (shown in messages for unknown values).
        open: whether ``**kwargs`` may give more keywords.
        reduction: the reduction (Reduce, reduce): a str, `CALLABLE`, `UNKNOWN`
            or `NOT_GIVEN`.
        weight_shape: EinMix's weight_shape (a str, `UNKNOWN` or `NOT_GIVEN`).
        bias_shape: EinMix's bias_shape (a str, None, `UNKNOWN` or `NOT_GIVEN`).
    """

    target: Target
    node: ast.Call
    pattern: str
    pattern_node: ast.expr
    operands: tuple[ast.expr, ...] | None
    shapes: tuple[tuple[int, ...] | None, ...]
    lengths: dict[str, Any]
    sources: dict[str, ast.expr]
    open: bool
    reduction: Any = NOT_GIVEN
    weight_shape: Any = NOT_GIVEN
    bias_shape: Any = NOT_GIVEN


class _Reader:
    """Reads the arguments of one call: values of expressions, shapes of operands."""

    def __init__(self, found: FoundCall, constants: Constants, paths: dict[int, str]) -> None:
        self.found = found
        self.constants = constants
        self.paths = paths
        self.node = found.node

    def value(self, node: ast.expr | None) -> Any:
        return self.constants.value(node, self.found.shadowed)

    def shape(self, node: ast.expr, literal: bool) -> tuple[int, ...] | None:
        """The shape `node` has: a tuple of ints when `literal`, else an array a maker made."""
        if literal:
            value = self.value(node)
            if _is_shape(value):
                return value  # type: ignore[no-any-return]
        if not isinstance(node, ast.Call) or any(isinstance(a, ast.Starred) for a in node.args):
            return None
        first = self.paths.get(id(node))
        if first not in MAKERS:
            return None
        if torch_style := not MAKERS[first]:
            if len(node.args) == 1:
                torch_style = not isinstance(self.value(node.args[0]), tuple)
            value = self.value(ast.Tuple(node.args, ast.Load())) if torch_style else None
        if not torch_style:
            value = self.value(node.args[0]) if node.args else UNKNOWN
            value = (value,) if type(value) is int else value
        return value if _is_shape(value) else None

    def keywords(self, taken: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, ast.expr], bool]:
        """(lengths, their expressions, open) of the keywords not in `taken`."""
        lengths: dict[str, Any] = {}
        sources: dict[str, ast.expr] = {}
        is_open = False
        for keyword in self.node.keywords:
            if keyword.arg is None:
                is_open = True
            elif keyword.arg not in taken:
                lengths[keyword.arg] = self.value(keyword.value)
                sources[keyword.arg] = keyword.value
        return lengths, sources, is_open

    def keyword(self, name: str) -> ast.expr | None:
        return next((k.value for k in self.node.keywords if k.arg == name), None)


def _is_shape(value: Any) -> bool:
    return isinstance(value, tuple) and all(type(d) is int and d >= 0 for d in value)


def _positional(node: ast.Call) -> list[ast.expr] | None:
    """The positional arguments, or None when one is starred (their number is unknown)."""
    if any(isinstance(arg, ast.Starred) for arg in node.args):
        return None
    return list(node.args)


def _argument(
    reader: _Reader, args: list[ast.expr], index: int, keyword: str | None
) -> tuple[ast.expr | None, bool]:
    """(the node of an argument given at `index` or as `keyword`, whether it came by keyword)."""
    if index < len(args):
        return args[index], False
    if keyword is not None:
        found = reader.keyword(keyword)
        if found is not None:
            return found, True
    return None, False


def _array_operands(node: ast.expr | None) -> tuple[ast.expr, ...] | None:
    """The arrays of an array argument: the items of a list literal, else the argument."""
    if node is None:
        return None
    if isinstance(node, ast.List | ast.Tuple):
        if any(isinstance(item, ast.Starred) for item in node.elts):
            return None
        return tuple(node.elts)
    return (node,)


def _make(
    reader: _Reader,
    target: Target,
    pattern_node: ast.expr | None,
    operands: tuple[ast.expr, ...] | None,
    taken: tuple[str, ...],
    literal_shapes: bool = False,
    **extra: Any,
) -> StaticCall | None:
    if pattern_node is None:
        return None
    pattern = reader.value(pattern_node)
    if not isinstance(pattern, str):
        return None
    lengths, sources, is_open = reader.keywords(taken)
    shapes = tuple(reader.shape(o, literal_shapes) for o in operands or ())
    return StaticCall(
        target,
        reader.node,
        pattern,
        pattern_node,
        operands,
        shapes,
        lengths,
        sources,
        is_open,
        **extra,
    )


def _array_pattern(reader: _Reader, target: Target, args: list[ast.expr]) -> StaticCall | None:
    """``op(x, pattern, **lengths)``; ``tensor=`` / ``pattern=`` when not positional."""
    x, by_keyword = _argument(reader, args, 0, "tensor")
    taken: tuple[str, ...] = ("tensor",) if by_keyword else ()
    pattern, by_keyword = _argument(reader, args, 1, "pattern")
    taken += ("pattern",) if by_keyword else ()
    extra: dict[str, Any] = {}
    if target.op == "reduce":
        reduction, by_keyword = _argument(reader, args, 2, "reduction")
        taken += ("reduction",) if by_keyword else ()
        extra["reduction"] = _reduction(reader, reduction)
    return _make(reader, target, pattern, _array_operands(x), taken, **extra)


def _reduction(reader: _Reader, node: ast.expr | None) -> Any:
    if node is None:
        return NOT_GIVEN
    if isinstance(node, ast.Lambda):
        return CALLABLE
    value = reader.value(node)
    return value if isinstance(value, str) else UNKNOWN


def _operands(count: int) -> Callable[[_Reader, Target, list[ast.expr]], StaticCall | None]:
    """``op(a, b, ..., pattern, **lengths)`` with `count` operands before the pattern."""

    def read(reader: _Reader, target: Target, args: list[ast.expr]) -> StaticCall | None:
        if len(args) != count + 1:
            return None
        return _make(reader, target, args[count], tuple(args[:count]), ())

    return read


def _elementwise(reader: _Reader, target: Target, args: list[ast.expr]) -> StaticCall | None:
    """``elementwise(f, a, b, ..., pattern)``."""
    if len(args) < 2:
        return None
    return _make(reader, target, args[-1], tuple(args[1:-1]), ())


def _einsum(first: bool | None, shapes: bool = False) -> Any:
    """An einsum call: the equation first (NumPy's order), last (einops'), or either."""

    def read(reader: _Reader, target: Target, args: list[ast.expr]) -> StaticCall | None:
        if not args:
            return None
        head, tail = reader.value(args[0]), reader.value(args[-1])
        if first or (first is None and isinstance(head, str)):
            pattern, operands = args[0], args[1:]
        elif first is None and not isinstance(tail, str):
            return None
        else:
            pattern, operands = args[-1], args[:-1]
        if len(operands) == 1 and isinstance(operands[0], ast.List):  # einsum(eq, [a, b])
            listed = _array_operands(operands[0])
            if listed is None:
                return None
            operands = list(listed)
        literal = shapes or (reader.value(reader.keyword("shapes")) is True)
        return _make(reader, target, pattern, tuple(operands), (), literal)

    return read


def _pack(reader: _Reader, target: Target, args: list[ast.expr]) -> StaticCall | None:
    tensors, _ = _argument(reader, args, 0, "tensors")
    pattern, _ = _argument(reader, args, 1, "pattern")
    return _make(reader, target, pattern, _array_operands(tensors), ("tensors", "pattern"))


def _unpack(reader: _Reader, target: Target, args: list[ast.expr]) -> StaticCall | None:
    tensor, _ = _argument(reader, args, 0, "tensor")
    pattern, _ = _argument(reader, args, 2, "pattern")
    operands = None if tensor is None else (tensor,)
    taken = ("tensor", "packed_shapes", "pattern")
    return _make(reader, target, pattern, operands, taken)


def _parse_shape(reader: _Reader, target: Target, args: list[ast.expr]) -> StaticCall | None:
    x, _ = _argument(reader, args, 0, "x")
    pattern, _ = _argument(reader, args, 1, "pattern")
    return _make(reader, target, pattern, None if x is None else (x,), ("x", "pattern"))


def _layer(reader: _Reader, target: Target, args: list[ast.expr]) -> StaticCall | None:
    """``Layer(pattern, [reduction,] **lengths)``; Flax's ``sizes={...}`` read as lengths."""
    wanted = 2 if target.form == "layer_reduce" else 1
    if len(args) > wanted + 1:  # Flax's layers take `sizes` after them
        return None
    pattern, by_keyword = _argument(reader, args, 0, "pattern")
    taken: tuple[str, ...] = ("pattern",) if by_keyword else ()
    extra: dict[str, Any] = {}
    if target.form == "layer_reduce":
        reduction, by_keyword = _argument(reader, args, 1, "reduction")
        taken += ("reduction",) if by_keyword else ()
        extra["reduction"] = _reduction(reader, reduction)
    call = _make(reader, target, pattern, None, (*taken, "sizes"), **extra)
    return None if call is None else _with_sizes(reader, call, args, wanted)


def _with_sizes(reader: _Reader, call: StaticCall, args: list[ast.expr], at: int) -> StaticCall:
    """The lengths of a Flax layer's ``sizes`` dict (a keyword, or after the arguments)."""
    sizes = reader.keyword("sizes") if len(args) <= at else args[at]
    if sizes is None:
        return call
    if not isinstance(sizes, ast.Dict) or any(key is None for key in sizes.keys):
        return call._replace(open=True)
    lengths, sources = dict(call.lengths), dict(call.sources)
    for key, value in zip(sizes.keys, sizes.values, strict=True):
        name = reader.value(key)
        if not isinstance(name, str):
            return call._replace(open=True)
        lengths[name] = reader.value(value)
        sources[name] = value
    return call._replace(lengths=lengths, sources=sources)


def _einmix(reader: _Reader, target: Target, args: list[ast.expr]) -> StaticCall | None:
    """``EinMix(pattern, weight_shape, bias_shape=None, **lengths)``."""
    if len(args) > 3:
        return None
    pattern, by_keyword = _argument(reader, args, 0, "pattern")
    taken = ("weight_shape", "bias_shape") + (("pattern",) if by_keyword else ())
    shapes: dict[str, Any] = {}
    for index, name in ((1, "weight_shape"), (2, "bias_shape")):
        node, _ = _argument(reader, args, index, name)
        value = reader.value(node) if node is not None else NOT_GIVEN
        shapes[name] = value if value is NOT_GIVEN or isinstance(value, str | None) else UNKNOWN
    call = _make(reader, target, pattern, None, taken, **shapes)
    return None if call is None else _with_sizes(reader, call, args, 3)


_BINDERS: dict[str, Callable[[_Reader, Target, list[ast.expr]], StaticCall | None]] = {
    "array_pattern": _array_pattern,
    "reduce": _array_pattern,
    "operands2": _operands(2),
    "operands3": _operands(3),
    "elementwise": _elementwise,
    "einsum_any": _einsum(None),
    "einsum_first": _einsum(True),
    "einsum_last": _einsum(False),
    "shapes_first": _einsum(True, shapes=True),
    "pack": _pack,
    "unpack": _unpack,
    "parse_shape": _parse_shape,
    "layer": _layer,
    "layer_reduce": _layer,
    "einmix": _einmix,
}


def bind(found: FoundCall, constants: Constants, paths: dict[int, str]) -> StaticCall | None:
    """The `StaticCall` of a found call, or None: not a known function, or no constant pattern.

    Args:
        found: the call and its callee's path.
        constants: evaluates the module's expressions.
        paths: the path of every found call by ``id`` of its node (for array makers).
    """
    target = TARGETS.get(found.path)
    if target is None:
        return None
    args = _positional(found.node)
    if args is None and target.form not in ("einsum_any", "einsum_first", "einsum_last"):
        return None
    reader = _Reader(found, constants, paths)
    if args is None:  # einsum(eq, *operands): the equation is read, the operands are not
        return _starred_einsum(reader, target)
    return _BINDERS[target.form](reader, target, args)


def _starred_einsum(reader: _Reader, target: Target) -> StaticCall | None:
    args = reader.node.args
    first = not isinstance(args[0], ast.Starred) and isinstance(reader.value(args[0]), str)
    if target.form != "einsum_last" and first:
        pattern = args[0]
    elif target.form != "einsum_first" and not isinstance(args[-1], ast.Starred):
        pattern = args[-1]
    else:
        return None
    return _make(reader, target, pattern, None, ())
