"""A call planned as the run time plans it, on probes instead of arrays: its error, if any.

Each op is planned by the function its run time calls (`tensorops._plan.plan_recipe`,
`tensorops._concat.plan_concat`, `tensorops._marked.plan_marked`,
`tensorops._index_plan.plan_index`, `tensorops._elementwise._planning.plan_operands`,
`tensorops._einsum.equations._bind.bind_equation` after `_keywords.read_keywords`,
`tensorops._pack_patterns.pack_term` and `shape_term`, `tensorops._check_patterns.solve`,
`tensorops._einmix.plan_einmix`), so a finding says what the call would say when it
runs. The arrays are probes (`tensorops._probes`), or the call's own shapes where
literals give them all and every length is a constant.

A length whose value is not a constant (``h=self.heads``) is planned as `PLACEHOLDER`,
and a message that shows it shows the expression instead. A call with ``**kwargs``
may give lengths the linter cannot see: an error about a missing length is dropped.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from typing import Any

from tensorops._check_patterns import solve
from tensorops._concat import plan_concat
from tensorops._einmix import plan_einmix
from tensorops._einsum.equations._bind import bind_equation
from tensorops._einsum.equations._keywords import input_axes, read_keywords
from tensorops._elementwise._planning import plan_operands
from tensorops._errors import ArgumentError, TensorOpsError, unknown_option
from tensorops._grammar import Axis, is_spaced, items_of, parse_pattern
from tensorops._index_plan import plan_index
from tensorops._lint.arguments import CALLABLE, NOT_GIVEN, StaticCall
from tensorops._lint.calls import UNKNOWN
from tensorops._marked import plan_marked
from tensorops._pack_patterns import pack_term, shape_term
from tensorops._plan import plan_recipe
from tensorops._probes import probe_shapes
from tensorops._types import REDUCTIONS, Backend

__all__ = [
    "PLACEHOLDER",
    "Source",
    "is_literal",
    "is_number",
    "plan_call",
    "planned_lengths",
]

#: The length a non-constant keyword is planned with.
PLACEHOLDER = 2

_ALONG = frozenset({"flip", "roll", "sort", "argsort", "cumsum"})
_ELEMENTWISE = frozenset(
    {"add", "subtract", "multiply", "divide", "maximum", "minimum", "logaddexp", "where"}
) | {"elementwise"}
_INDEXING = frozenset({"get_at", "set_at", "add_at"})
_MARKED = frozenset({"softmax", "log_softmax"}) | _ALONG


class Source:
    """A keyword's value as written, shown where a message would show the value."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


class _Planning:
    """Stands in for an array family where a planner builds executors: they are not run.

    It answers the methods of the `Backend` protocol, and nothing else.
    """

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_") or not hasattr(Backend, name):
            raise AttributeError(name)
        return lambda *args, **keywords: _ignore


def _ignore(*args: Any, **keywords: Any) -> None:
    return None


_NO_FAMILY: Any = _Planning()


def planned_lengths(call: StaticCall) -> dict[str, Any]:
    """The call's keyword lengths as planned: constants as they are, others `PLACEHOLDER`."""
    return {
        name: PLACEHOLDER if value is UNKNOWN else value for name, value in call.lengths.items()
    }


def _probe_lengths(lengths: Mapping[str, Any]) -> dict[str, int]:
    return {name: value for name, value in lengths.items() if type(value) is int and value > 0}


def is_literal(call: StaticCall) -> bool:
    """Whether the call is planned on its own shapes: literals give them all, every length known."""
    known = call.shapes
    return bool(known) and None not in known and UNKNOWN not in call.lengths.values()


def _shapes(
    call: StaticCall, lengths: Mapping[str, Any], compact: bool = False
) -> tuple[tuple[int, ...], ...]:
    """The call's literal shapes (`is_literal`), else probes."""
    if is_literal(call):
        return call.shapes  # type: ignore[return-value]
    probes = probe_shapes(call.pattern, _probe_lengths(lengths), compact)
    count = len(call.operands) if call.operands is not None else None
    if probes is None:  # the planner reports the syntax error whatever the shapes
        return ((),) * (count or 1)
    return probes


def _items(lengths: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(lengths.items())


def _plan_pattern_op(call: StaticCall, lengths: dict[str, Any]) -> None:
    """rearrange, reduce, repeat (the functions and the layers)."""
    op, text = call.target.op, call.pattern
    shapes = _shapes(call, lengths)
    if op == "reduce":
        variant = call.reduction
        if variant is NOT_GIVEN and call.open:
            variant = UNKNOWN
        if variant is UNKNOWN:  # a name or a function: checked only if every reading fails
            _plan_all(call, shapes, lengths)
            return
        if variant is NOT_GIVEN:
            variant = None
        own = (CALLABLE, "rearrange", "repeat")
        if variant not in own and variant not in REDUCTIONS:
            raise unknown_option("reduction", variant, REDUCTIONS, "or a callable f(x, axes)")
        op = variant if variant in ("rearrange", "repeat") else "reduce"
    many = len(text.partition("->")[0].split(",")) > 1
    if op == "rearrange" and ("+" in text or "," in text):
        plan_concat(text, shapes if many else shapes[0], _items(lengths), _NO_FAMILY)
    else:
        plan_recipe(op, text, shapes[0], _items(lengths))


def _plan_all(call: StaticCall, shapes: Any, lengths: dict[str, Any]) -> None:
    """Plan a reduce whose reduction is unknown: its error when every reading fails."""
    first: TensorOpsError | None = None
    for op in ("reduce", "rearrange", "repeat"):
        try:
            plan_recipe(op, call.pattern, shapes[0], _items(lengths))
        except TensorOpsError as error:
            first = first or error
        else:
            return
    assert first is not None
    raise first


def _plan_marked(call: StaticCall, lengths: dict[str, Any]) -> None:
    op = call.target.op
    if op in _ALONG:  # options (shift=, ...) are no lengths; other keywords are the op's error
        names = _axis_names(call.pattern)
        lengths = {k: v for k, v in lengths.items() if k in names}
    plan_marked(op, call.pattern, _shapes(call, lengths)[0], _items(lengths))


def _axis_names(text: str) -> set[str]:
    pattern = parse_pattern(text)
    return {
        item.name
        for term in (*pattern.inputs, *(pattern.outputs or ()))
        for _, item in items_of(term)
        if isinstance(item, Axis)
    }


def _plan_elementwise(call: StaticCall, lengths: dict[str, Any]) -> None:
    operands = call.operands or ()
    numbers = tuple(k for k, node in enumerate(operands) if is_number(node))
    shapes = list(_shapes(call, lengths))
    for k in numbers:
        if k < len(shapes):
            shapes[k] = ()
    count = len(operands)
    shapes = (shapes + [()] * count)[:count] if count else shapes
    plan_operands(call.target.op, call.pattern, tuple(shapes), _items(lengths), numbers)


def is_number(node: Any) -> bool:
    """Whether an operand is a number literal (an element-wise op reads it as ``()``)."""
    return isinstance(node, ast.Constant) and type(node.value) in (int, float, complex)


def _plan_index(call: StaticCall, lengths: dict[str, Any]) -> None:
    plan_index(call.target.op, call.pattern, _shapes(call, lengths), _items(lengths))


def _plan_einsum(call: StaticCall, lengths: dict[str, Any], spaced: bool | None) -> None:
    text = call.pattern
    if "+" in text:  # concatenation in einsum: planned by the array-aware einsum alone
        return
    if spaced is None:
        try:
            spaced = is_spaced(parse_pattern(text)) or None
        except TensorOpsError:
            spaced = None
    compact = not spaced
    try:
        names: frozenset[str] = input_axes(text, spaced)
    except TensorOpsError:
        names = frozenset()
    _read_keywords(call, spaced)
    lengths = {k: v for k, v in lengths.items() if k in names}
    shapes = _shapes(call, lengths, compact)
    if call.operands is not None and len(call.operands) != len(shapes):
        count = len(call.operands)
        shapes = (tuple(shapes) + ((),) * count)[:count]
    bind_equation(text, tuple(shapes), _items(lengths), spaced)


def _read_keywords(call: StaticCall, spaced: bool | None) -> None:
    """Tensorops' einsum and einsum_path: a keyword neither an input axis nor an option.

    Only keywords of constant values are read (an int is taken for a length, anything
    else for an option: the message differs), and none where ``**kwargs`` may add more.
    """
    name = call.target.name
    if call.target.library != "tensorops" or name not in ("einsum", "einsum_path"):
        return
    if call.open:
        return
    given = {k: v for k, v in call.lengths.items() if v is not UNKNOWN}
    read_keywords(name, call.pattern, spaced, given)


def _plan_einmix(call: StaticCall, lengths: dict[str, Any]) -> None:
    """EinMix as its layers check it when built: its parts, then each step on a probe."""
    weight_shape, bias_shape = call.weight_shape, call.bias_shape
    if UNKNOWN in (weight_shape, bias_shape) or (weight_shape is NOT_GIVEN and call.open):
        return
    if weight_shape is NOT_GIVEN:
        raise ArgumentError(
            "missing the argument 'weight_shape'",
            op="EinMix",
            hint="EinMix('b n c -> b n d', weight_shape='c d', c=..., d=...)",
        )
    bias = None if bias_shape is NOT_GIVEN else bias_shape
    parts = plan_einmix(call.pattern, weight_shape, bias, lengths)
    shape = _shapes(call, lengths)[0]
    sizes = dict(zip(call.pattern.partition("->")[0].split(), shape, strict=False))
    if parts.pre is not None:
        recipe = plan_recipe("rearrange", parts.pre, shape, _items(parts.pre_lengths))
        sizes = dict(recipe.lengths)
        shape = tuple(sizes[name] for name in parts.pre.partition("->")[2].split() if name != "...")
    bound = bind_equation(parts.einsum_pattern, (shape, parts.weight_dims), ())
    if parts.post is not None:
        flat = tuple(bound.sizes[axis] for axis in bound.output)
        plan_recipe("rearrange", parts.post, flat, ())


def _plan_check(call: StaticCall, lengths: dict[str, Any]) -> None:
    """check: its pattern solved on the literal shapes, else on probes, one per array.

    The number of arrays is known for a list literal, an array a maker made, and the
    layer (one array); any other argument may be a list, and each term gets a probe.
    """
    count = _check_count(call)
    if count is not None and is_literal(call):
        shapes: tuple[tuple[int, ...], ...] = call.shapes  # type: ignore[assignment]
    else:
        shapes = _shapes(call, lengths)
        if count is not None and count != len(shapes):
            shapes = (tuple(shapes) + ((),) * count)[:count]
    solve(call.pattern, shapes, _items(lengths))


def _check_count(call: StaticCall) -> int | None:
    """How many arrays a check call gives, where the source says."""
    if call.target.form == "layer":
        return 1
    first = call.node.args[0] if call.node.args else None
    if isinstance(first, ast.List | ast.Tuple):
        return len(call.operands) if call.operands is not None else None
    return 1 if call.shapes and call.shapes[0] is not None else None


def plan_call(call: StaticCall, spaced: bool | None = None) -> TensorOpsError | None:
    """The error the run time raises for `call` whatever its arrays are, without its context.

    Args:
        call: the call.
        spaced: for einsum, whether the equation is read as spaced names (True), as
            compact letters (False), or as its text says (None).
    """
    lengths = planned_lengths(call)
    op = call.target.op
    try:
        if op in ("rearrange", "reduce", "repeat"):
            _plan_pattern_op(call, lengths)
        elif op in _MARKED:
            _plan_marked(call, lengths)
        elif op in _ELEMENTWISE:
            _plan_elementwise(call, lengths)
        elif op in _INDEXING:
            _plan_index(call, lengths)
        elif op == "einsum":
            _plan_einsum(call, lengths, spaced)
        elif op in ("pack", "unpack"):
            pack_term(op, call.pattern)
        elif op == "parse_shape":
            shape_term(call.pattern)
        elif op == "einmix":
            _plan_einmix(call, lengths)
        elif op == "check":
            _plan_check(call, lengths)
    except TensorOpsError as error:
        return error
    return None
