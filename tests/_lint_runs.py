"""Calls the linter reads, run for real: on arrays that fit their pattern, and mutated.

`read_calls` gives every call of a file as the linter binds it. `run` calls the library
the call names (tensorops, einops, NumPy, torch, JAX, opt_einsum; a layer of any family
as its torch twin of the same library) with a pattern, on arrays whose shapes fit the
call's *original* pattern: every axis gets a length (the call's constant, 2 for a
length it computes, else 3, 4, 5, ... in order of appearance), ``...`` stands for
one axis of length 2. `mutations` seeds the mistakes of the corpus test into a pattern.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import einops
import einops.layers.torch
import numpy as np
import tensorops.layers.torch
import torch

import tensorops as tops
from tensorops._errors import TensorOpsError
from tensorops._grammar import Anon, Axis, Bracket, Dots, Group, Skip, Star, Term, parse_concat
from tensorops._lint.arguments import CALLABLE, NOT_GIVEN, StaticCall, bind
from tensorops._lint.calls import UNKNOWN, find_calls
from tensorops._lint.constants import Constants
from tensorops._lint.planning import PLACEHOLDER
from tensorops._lint.targets import PATHS, TARGETS

DOTS = 2
_SIZES = (3, 4, 5)


class Mutation(NamedTuple):
    """A mistake seeded into a call: its kind, the pattern, and the reduction."""

    kind: str
    pattern: str
    reduction: Any


def read_calls(source: str) -> list[StaticCall]:
    """Every call of `source` that the linter binds (a known function, a constant pattern)."""
    tree = ast.parse(source)
    found = find_calls(tree, source, PATHS)
    constants = Constants(tree, source)
    paths = {id(item.node): item.path for item in found}
    calls = [bind(item, constants, paths) for item in found if item.path in TARGETS]
    return [call for call in calls if call is not None]


def is_runnable(call: StaticCall) -> bool:
    """Whether the test can build every argument (no ``**kwargs``, no computed shapes)."""
    return not call.open and call.weight_shape is not UNKNOWN and call.bias_shape is not UNKNOWN


def _compact(call: StaticCall) -> bool:
    if call.target.op != "einsum":
        return False
    if call.target.library in ("numpy", "torch", "jax", "opt_einsum"):
        return True
    if call.target.library == "einops" or call.node.args[0] is not call.pattern_node:
        return False
    try:
        pattern = parse_concat(call.pattern)
    except TensorOpsError:
        return True
    return not any(
        len(term.elements) > 1 or isinstance(e, Group)
        for term in (*pattern.inputs, *(pattern.outputs or ()))
        for e in term.elements
    )


def _compact_terms(text: str) -> list[list[str]]:
    """The input terms of a compact equation as its library reads them: a character an axis."""
    terms = []
    for term in text.partition("->")[0].split(","):
        term = "".join(term.split()).replace("...", ".")
        terms.append(list(term))
    return terms


def _names(call: StaticCall) -> list[str]:
    if _compact(call):
        names = [c for term in _compact_terms(call.pattern) for c in term if c != "."]
        names += [c for c in call.pattern.partition("->")[2] if not c.isspace() and c != "."]
        return list(dict.fromkeys(names))
    pattern = parse_concat(call.pattern)
    names: list[str] = []
    for term in (*pattern.inputs, *(pattern.outputs or ())):
        for element in term.elements:
            for inner in element.elements if isinstance(element, Bracket) else (element,):
                for item in inner.items if isinstance(inner, Group) else (inner,):
                    if isinstance(item, Axis):
                        names.extend(item.name if _compact(call) else (item.name,))
    return list(dict.fromkeys(names))


def axis_sizes(call: StaticCall) -> dict[str, int]:
    """The length of every axis of the call's pattern, as described in the module docstring."""
    sizes = {
        name: PLACEHOLDER if value is UNKNOWN else value
        for name, value in call.lengths.items()
        if value is UNKNOWN or type(value) is int
    }
    cycle = itertools.cycle(_SIZES)
    for name in _names(call):
        if name not in sizes:
            sizes[name] = next(cycle)
    return sizes


def _size(items: tuple[Any, ...], sizes: dict[str, int]) -> int:
    size = 1
    for item in items:
        size *= item.length if isinstance(item, Anon) else sizes.get(getattr(item, "name", ""), 3)
    return size


def _shape(term: Term, sizes: dict[str, int], compact: bool, packed: int) -> tuple[int, ...]:
    shape: list[int] = []
    for element in term.elements:
        for inner in element.elements if isinstance(element, Bracket) else (element,):
            if isinstance(inner, Dots):
                shape.append(DOTS)
            elif isinstance(inner, Star):
                shape.extend((packed,) if packed else ())
            elif isinstance(inner, Skip):
                shape.append(3)
            elif compact and isinstance(inner, Axis):
                shape.extend(sizes[letter] for letter in inner.name)
            elif isinstance(inner, Group) and inner.parts:
                shape.append(sum(_size(part, sizes) for part in inner.parts))
            else:
                shape.append(_size(inner.items if isinstance(inner, Group) else (inner,), sizes))
    return tuple(shape)


def input_shapes(call: StaticCall) -> list[tuple[int, ...]]:
    """One shape per operand, fitting the call's original pattern."""
    known = call.shapes
    if known and None not in known and UNKNOWN not in call.lengths.values():
        return list(known)  # type: ignore[arg-type]
    sizes = axis_sizes(call)
    if _compact(call):
        shapes = [
            tuple(DOTS if c == "." else sizes[c] for c in term)
            for term in _compact_terms(call.pattern)
        ]
    else:
        terms = parse_concat(call.pattern).inputs
        if call.target.op == "pack":  # one term for every array, '*' of another length each
            terms = terms[:1] * len(call.operands or terms)
        shapes = [_shape(term, sizes, False, packed=4 * i) for i, term in enumerate(terms)]
    if call.operands is not None and len(call.operands) > 1:  # the code says how many
        shapes = (shapes + [(3,)] * len(call.operands))[: len(call.operands)]
    return shapes


def _arrays(call: StaticCall, torch_arrays: bool) -> list[Any]:
    rng = np.random.default_rng(0)
    arrays: list[Any] = []
    operands = call.operands or ()
    for i, shape in enumerate(input_shapes(call)):
        node = operands[i] if i < len(operands) else None
        if isinstance(node, ast.Constant):
            arrays.append(node.value)
            continue
        op = call.target.op
        if (op == "where" and i == 0) or (op in ("get_at", "set_at", "add_at") and i == 1):
            array = np.zeros(shape, dtype=bool if op == "where" else np.int64)
        else:
            array = rng.standard_normal(shape)
        arrays.append(torch.from_numpy(array) if torch_arrays else array)
    return arrays


def _keywords(call: StaticCall) -> dict[str, Any]:
    return {k: PLACEHOLDER if v is UNKNOWN else v for k, v in call.lengths.items()}


def _reduction(value: Any) -> list[Any]:
    if value is NOT_GIVEN:
        return []
    if value is CALLABLE:
        return [lambda t, axes: t.max(axis=axes)]
    return ["mean" if value is UNKNOWN else value]


def _layer(call: StaticCall, pattern: str, reduction: Any) -> Callable[[], Any]:
    module = tensorops.layers.torch if call.target.library == "tensorops" else einops.layers.torch
    layer = getattr(module, call.target.name.split()[-1])
    keywords = _keywords(call)
    if call.target.op == "einmix":
        for name in ("weight_shape", "bias_shape"):
            value = getattr(call, name)
            if value is not NOT_GIVEN:
                keywords[name] = value
    x = _arrays(call, torch_arrays=True)[0].float()
    return lambda: layer(pattern, *_reduction(reduction), **keywords)(x)


def _einsum(call: StaticCall, pattern: str, fn: Callable[..., Any], last: bool) -> Any:
    library = call.target.library
    shaped = call.target.form == "shapes_first" or call.lengths.get("shapes") is True
    operands = input_shapes(call) if shaped else _arrays(call, library == "torch")
    if library == "opt_einsum" and call.target.form == "shapes_first":
        return lambda: fn(pattern, *operands)
    keywords = _keywords(call) if library == "tensorops" or shaped else {}
    if last:
        return lambda: fn(*operands, pattern, **keywords)
    return lambda: fn(pattern, *operands, **keywords)


def _function(call: StaticCall) -> Callable[..., Any]:
    library, op = call.target.library, call.target.op
    if library == "tensorops":
        return getattr(tops, call.target.name)  # type: ignore[no-any-return]
    if library == "einops":
        return getattr(einops, op)  # type: ignore[no-any-return]
    name = call.target.name.rsplit(".", 1)[1]
    module = {"numpy": np, "torch": torch}.get(library)
    if module is None:
        import importlib

        module = importlib.import_module("jax.numpy" if library == "jax" else "opt_einsum")
    return getattr(module, name)  # type: ignore[no-any-return]


def _thunk(call: StaticCall, pattern: str, reduction: Any) -> Callable[[], Any]:
    form = call.target.form
    if form in ("layer", "layer_reduce", "einmix"):
        return _layer(call, pattern, reduction)
    fn = _function(call)
    if call.target.op == "einsum":
        last = call.target.library == "einops" or (
            call.target.library == "tensorops" and call.node.args[0] is not call.pattern_node
        )
        return _einsum(call, pattern, fn, last)
    arrays = _arrays(call, False)
    keywords = _keywords(call)
    if form in ("array_pattern", "reduce"):
        first = call.node.args[0] if call.node.args else call.node.keywords[0].value
        listed = isinstance(first, ast.List)
        x = arrays if listed else arrays[0]
        keywords.pop("tensor", None)
        keywords.pop("pattern", None)
        return lambda: fn(x, pattern, *_reduction(reduction), **keywords)
    if form in ("operands2", "operands3"):
        return lambda: fn(*arrays, pattern, **keywords)
    if form == "elementwise":
        return lambda: fn(np.multiply, *arrays, pattern)
    if form == "pack":
        return lambda: fn(arrays, pattern)
    if form == "unpack":
        term = parse_concat(call.pattern).inputs[0]
        whole = np.zeros(_shape(term, axis_sizes(call), compact=False, packed=5))
        return lambda: fn(whole, [(1,), (4,)], pattern)
    return lambda: fn(arrays[0], pattern)  # parse_shape


def run(
    call: StaticCall, pattern: str | None = None, reduction: Any = None, fitting: bool = False
) -> Exception | None:
    """Run `call` with `pattern` (default: its own); the exception it raises, or None.

    The arrays fit the call's own pattern, or with `fitting` the pattern run (then
    a pattern whose arrays cannot be made, as it does not parse, fails).
    """
    pattern = call.pattern if pattern is None else pattern
    reduction = call.reduction if reduction is None else reduction
    try:
        if fitting:
            call = call._replace(pattern=pattern)  # literal shapes stay: the code gives them
        _thunk(call, pattern, reduction)()
    except Exception as error:  # any failure is the call's
        return error
    return None


# --- mutations ---------------------------------------------------------------------------------


def _axes(term: Term) -> list[Axis]:
    return [
        item
        for element in term.elements
        for inner in (element.elements if isinstance(element, Bracket) else (element,))
        for item in (inner.items if isinstance(inner, Group) else (inner,))
        if isinstance(item, Axis)
    ]


def _replace(text: str, span: tuple[int, int], new: str) -> str:
    return text[: span[0]] + new + text[span[1] :]


def _fresh_letter(text: str) -> str:
    return next(c for c in "zyxwvutsrqponmlkZYXWVUTSRQ" if c not in text)


def mutations(call: StaticCall) -> Iterator[Mutation]:
    """The seeded mistakes of one call (each kind where the pattern has what it changes)."""
    text, reduction = call.pattern, call.reduction
    pattern = parse_concat(text)
    compact = _compact(call)
    einsum = call.target.op == "einsum"
    outputs = pattern.outputs or ()
    if outputs and (axes := _axes(outputs[0])):
        axis = axes[0]
        new = _fresh_letter(text) if compact else "novel"
        span = (axis.span[0], axis.span[0] + 1) if compact else axis.span
        yield Mutation("rename an output axis", _replace(text, span, new), reduction)
    if pattern.arrow is not None:
        yield Mutation("drop the arrow", _replace(text, pattern.arrow, " "), reduction)
        if einsum:
            yield Mutation("drop the output", text[: pattern.arrow[0]].rstrip(), reduction)
    if ")" in text:
        at = text.rindex(")")
        yield Mutation("unbalance a parenthesis", text[:at] + text[at + 1 :], reduction)
    elif axes := _axes(pattern.inputs[0]):
        yield Mutation(
            "unbalance a parenthesis", _replace(text, axes[0].span[:1] * 2, "("), reduction
        )
    term = outputs[0] if einsum and outputs else pattern.inputs[0]
    repeatable = not (call.target.name == "parse_shape" or call.target.op == "check")
    if repeatable and len(axes := _axes(term)) >= 1:
        if compact and len(term.elements) == 1 and len(axes[0].name) >= 2:
            name = axes[0].name
            span = (axes[0].span[1] - 1, axes[0].span[1])
            yield Mutation("repeat an axis", _replace(text, span, name[0]), reduction)
        elif len(axes) >= 2 and axes[-1].name != axes[0].name:
            yield Mutation("repeat an axis", _replace(text, axes[-1].span, axes[0].name), reduction)
    if einsum and len(pattern.inputs) >= 2:
        first, second = pattern.inputs[0], pattern.inputs[1]
        dropped = text[: first.span[0]] + text[second.span[0] :]
        yield Mutation("drop an operand's term", dropped, reduction)
    if isinstance(reduction, str) and len(reduction) >= 3:
        misspelled = reduction[0] + reduction[2] + reduction[1] + reduction[3:]
        yield Mutation("misspell the reduction", text, misspelled)


def rewritten(source: str, call: StaticCall, mutation: Mutation) -> str:
    """`source` with `call`'s pattern (and reduction) replaced by the mutation's."""
    edits = [(call.pattern_node, repr(mutation.pattern))]
    if mutation.reduction is not call.reduction:
        node = next(
            arg
            for arg in (*call.node.args, *(k.value for k in call.node.keywords))
            if isinstance(arg, ast.Constant) and arg.value == call.reduction
        )
        edits.append((node, repr(mutation.reduction)))
    lines = source.splitlines(keepends=True)
    offsets = [0, *itertools.accumulate(len(line.encode()) for line in lines)]
    data = source.encode()
    for node, text in sorted(edits, key=lambda edit: -edit[0].col_offset - 10**6 * edit[0].lineno):
        start = offsets[node.lineno - 1] + node.col_offset
        end = offsets[node.end_lineno - 1] + node.end_col_offset
        data = data[:start] + text.encode() + data[end:]
    return data.decode()
