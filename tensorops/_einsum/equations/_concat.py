"""``+`` in einsum equations: concatenated operands before the contraction, a split after.

In spaced notation a group ``(c1 + c2)`` is one *joint* axis whose length is the sum
of its parts' (groups with the same parts are the same axis). An operand given as a
list of arrays whose term holds a joint axis is those arrays concatenated along it;
a plain array there is already concatenated. Several output terms split the
result: ``"b c, c (d1 + d2) -> b d1, b d2"`` computes ``b (d1 + d2)`` and splits it
into ``b d1`` and ``b d2`` (`tensorops._concat`, through rearrange).

The planner never sees a ``+``: the equation it plans is the user's with each joint
axis renamed (`_rewrite`), every character of the inputs kept in place, so that its
errors point at the user's equation.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

from tensorops._axes import count_dots
from tensorops._backends import get_backend
from tensorops._concat import concat_group, dim_index, plan_concat
from tensorops._errors import (
    ArgumentError,
    PatternError,
    ShapeError,
    Span,
    TensorOpsError,
    describe_inputs,
)
from tensorops._grammar import Anon, Axis, Dots, Group, Pattern, Term, parse_concat
from tensorops._staging import raise_error
from tensorops._types import Backend, Executor

__all__ = ["einsum_concat", "has_concat"]

#: The first letter of a joint axis's name in the planned equation (a letter no
#: pattern of ASCII names uses; the name fits in the smallest group, ``(a+b)``).
_JOINT = "\u1429"


def has_concat(args: tuple[Any, ...], keywords: dict[str, Any]) -> bool:
    """Whether an einsum call's equation (first, last or ``pattern=``) has a ``+``."""
    for value in (*args[:1], *args[-1:], keywords.get("pattern")):
        if type(value) is str and "+" in value:
            return True
    return False


class _Joint(NamedTuple):
    """One joint axis: the group that names it, and its parts as names or lengths."""

    group: Group
    parts: tuple[tuple[str | int, ...], ...]
    text: str


class _Rewrite(NamedTuple):
    """An equation with ``+`` read for the planner."""

    plain: str  # the equation the planner gets
    joints: tuple[_Joint, ...]
    inputs: tuple[tuple[int, int] | None, ...]  # per input term: (joint, element) or None
    split: str | None  # the rearrange that splits the result, if several output terms
    split_joint: int | None
    output_span: Span  # the output side in the user's equation
    part_names: frozenset[str]  # names that appear only inside '+' groups
    group_spans: tuple[Span, ...]  # every '+' group's span


def _part_item(item: Axis | Anon | Dots) -> str | int:
    """A part's item as a joint axis is keyed: its name, or its length."""
    return item.name if isinstance(item, Axis) else item.length if isinstance(item, Anon) else "..."


@functools.lru_cache(maxsize=256)
def _rewrite(equation: str) -> _Rewrite:
    """Read `equation`: its joint axes, and the equation and split of plain terms.

    Raises:
        PatternError: a malformed equation, several terms out without a split.
    """
    pattern = parse_concat(equation)
    chars = list(equation)
    joints: list[_Joint] = []
    keys: dict[tuple[tuple[str | int, ...], ...], int] = {}
    found: list[tuple[int, int] | None] = []
    spans: list[Span] = []
    terms = (*pattern.inputs, *(pattern.outputs or ()))
    for term in terms:
        where = concat_group(equation, term)
        if where is None:
            found.append(None)
            continue
        position, group = where
        spans.append(group.span)
        parts = tuple(tuple(_part_item(item) for item in part) for part in group.parts)
        if parts not in keys:
            keys[parts] = len(joints)
            joints.append(_Joint(group, parts, equation[group.span[0] : group.span[1]]))
        k = keys[parts]
        name = f"{_JOINT}{k}"
        start, end = group.span
        chars[start:end] = name + " " * (end - start - len(name))
        found.append((k, position))
    plain = "".join(chars)
    inside = {item.name for j in joints for item in j.group.items if isinstance(item, Axis)}
    outside = {
        item.name
        for term in pattern.inputs
        for element in term.elements
        if not (isinstance(element, Group) and element.parts)
        for item in (element.items if isinstance(element, Group) else (element,))
        if isinstance(item, Axis)
    }
    arrow = pattern.arrow
    output_span = (arrow[0], len(equation)) if arrow is not None else (len(equation),) * 2
    split, split_joint = None, None
    if pattern.outputs is not None and len(pattern.outputs) > 1:
        split_joint, joint_text = _split_of(equation, pattern, joints, found)
        outputs = equation[pattern.outputs[0].span[0] :]
        split = f"{joint_text} -> {outputs}"
        planned = joint_text.replace(joints[split_joint].text, f"{_JOINT}{split_joint}", 1)
        plain = plain[: output_span[0] + 2] + " " + planned
    return _Rewrite(
        plain,
        tuple(joints),
        tuple(found[: len(pattern.inputs)]),
        split,
        split_joint,
        output_span,
        frozenset(inside - outside),
        tuple(spans),
    )


def _split_of(
    equation: str, pattern: Pattern, joints: list[_Joint], found: list[tuple[int, int] | None]
) -> tuple[int, str]:
    """The joint axis several output terms split, and the output term that holds it whole.

    Each output term holds one part of a joint axis of as many parts, each part one
    named axis: ``"b d1, d2 b"`` splits ``"b (d1 + d2)"``, the first term with its
    part replaced by the group (rearrange's split then matches the terms by name).

    Raises:
        PatternError: no joint axis of the inputs is split that way.
    """
    outputs = pattern.outputs or ()
    start = outputs[0].span[0]
    span = (start, len(equation))
    if any(f is not None for f in found[len(pattern.inputs) :]):
        raise PatternError(
            "an output term cannot hold a '+' group when there are several output terms",
            pattern=equation,
            span=span,
            hint="several output terms split the joint axis: 'b c, c (d1 + d2) -> b d1, b d2'",
        )
    for k, joint in enumerate(joints):
        if len(joint.parts) != len(outputs) or not all(
            len(part) == 1 and isinstance(part[0], str) for part in joint.parts
        ):
            continue
        for part in joint.parts:
            whole = _whole(equation, outputs[0], str(part[0]), joint.text)
            if whole is not None:
                return k, whole
    raise PatternError(
        "several output terms must split a joint axis of the inputs: each output term "
        "holds one part of a '+' group, the other axes as the other terms",
        pattern=equation,
        span=span,
        hint="e.g. 'b c, c (d1 + d2) -> b d1, b d2'",
    )


def _whole(equation: str, term: Term, name: str, group_text: str) -> str | None:
    """`term` with its axis `name` replaced by the group, or None if it has no such axis."""
    for element in term.elements:
        if isinstance(element, Axis) and element.name == name:
            start, end = element.span
            return equation[term.span[0] : start] + group_text + equation[end : term.span[1]]
    return None


def einsum_concat(
    args: tuple[Any, ...], keywords: dict[str, Any], einsum: Callable[..., Any]
) -> Any:
    """`einsum` of an equation with ``+``: concatenate, contract with `einsum`, split."""
    keywords = dict(keywords)
    lengths: dict[str, Any] = {}
    if args and type(args[0]) is str and "+" in args[0]:
        equation, operands = args[0], args[1:]
    elif args and type(args[-1]) is str and "+" in args[-1]:
        equation, operands = args[-1], args[:-1]
    else:
        equation, operands = keywords.pop("pattern"), args
    try:
        rewrite = _rewrite(equation)
        if len(operands) == 1 and len(rewrite.inputs) > 1 and _is_list(operands[0]):
            operands = tuple(operands[0])  # torch.einsum(eq, [a, b])
        lengths = {name: keywords.pop(name) for name in rewrite.part_names if name in keywords}
        arrays, parts = _concatenated(equation, rewrite, operands, lengths)
    except TensorOpsError as error:
        shown = tuple(a for x in operands for a in (x if _is_list(x) else (x,)))
        raise_error(
            error.with_context(
                op="einsum", pattern=equation, inputs=describe_inputs(shown), lengths=lengths
            )
        )
    try:
        result = einsum(*arrays, rewrite.plain, **keywords)
    except TensorOpsError as error:
        raise_error(_in_user_terms(error, equation, rewrite))
    if rewrite.split is None:
        return result
    joint = rewrite.joints[rewrite.split_joint]  # type: ignore[index]
    known = parts.get(rewrite.split_joint)  # type: ignore[arg-type]
    split_lengths: dict[str, Any] = {}
    for p, part in enumerate(joint.parts):
        name = str(part[0])
        if known is not None:
            split_lengths[name] = known[p]
        elif name in lengths:
            split_lengths[name] = lengths[name]
    try:
        backend = get_backend(result)
        sizes = backend.sizes(result)
        items = tuple(split_lengths.items())
        try:
            run = _splitter(rewrite.split, sizes, items, backend)
        except TypeError:  # symbolic sizes under a tracing compiler: planned afresh
            run = plan_concat(rewrite.split, sizes, items, backend)
        return run(result, None)
    except TensorOpsError as error:
        error.span = rewrite.output_span
        raise_error(
            error.with_context(op="einsum", pattern=equation, inputs=describe_inputs(arrays))
        )


@functools.lru_cache(maxsize=256)
def _splitter(pattern: str, shape: Any, lengths: Any, backend: Backend) -> Executor:
    """The split of the result into the output terms (`plan_concat`), cached."""
    return plan_concat(pattern, shape, lengths, backend)


def _is_list(value: Any) -> bool:
    """A list or tuple of arrays (not of numbers: those are one NumPy array)."""
    return isinstance(value, (list, tuple)) and any(hasattr(x, "shape") for x in value)


def _concatenated(
    equation: str, rewrite: _Rewrite, operands: tuple[Any, ...], lengths: dict[str, Any]
) -> tuple[list[Any], dict[int, tuple[Any, ...]]]:
    """The operands with each list concatenated along its joint axis, and the parts' lengths.

    Raises:
        TensorOpsError: a list where the term has no ``+``, a list of the wrong length,
            parts of another length than a list elsewhere or a keyword says.
    """
    pattern = parse_concat(equation)
    arrays: list[Any] = []
    parts: dict[int, tuple[Any, ...]] = {}
    for i, x in enumerate(operands):
        if not _is_list(x):
            arrays.append(x)
            continue
        where = rewrite.inputs[i] if i < len(rewrite.inputs) else None
        term = pattern.inputs[i] if i < len(pattern.inputs) else None
        if where is None or term is None:
            raise ArgumentError(
                f"operand {i} is a list of arrays but its term has no '+' group",
                span=term.span if term is not None else None,
                hint="a list is concatenated along the '+' group of its term: (c1 + c2)",
            )
        k, position = where
        joint = rewrite.joints[k]
        if len(x) != len(joint.parts):
            raise ShapeError(
                f"operand {i} is a list of {len(x)} arrays for the {len(joint.parts)} parts "
                f"of {joint.text}",
                span=term.span,
            )
        adapter = get_backend(x[0])
        item_shapes = [adapter.sizes(item) for item in x]  # not x.shape: a graph on PyTensor
        ndims = {len(shape) for shape in item_shapes}
        dots = count_dots(equation, term, max(ndims), operand=i)
        axis = dim_index(term, position, dots)
        if len(ndims) > 1:
            raise ShapeError(
                f"the arrays of operand {i} have different numbers of dimensions: {sorted(ndims)}",
                span=term.span,
            )
        # a list, not a set: symbolic sizes (torch.compile) cannot be hashed
        outside = [(*shape[:axis], *shape[axis + 1 :]) for shape in item_shapes]
        if any(other != outside[0] for other in outside[1:]):
            shapes = ", ".join(str(shape) for shape in item_shapes)
            raise ShapeError(
                f"the arrays of operand {i} differ outside their '+' axis (dimension {axis}): "
                f"shapes {shapes}",
                span=term.span,
            )
        sizes = tuple(shape[axis] for shape in item_shapes)
        _check_parts(equation, joint, sizes, parts.get(k), lengths, term.span)
        parts[k] = sizes
        arrays.append(adapter.concat(list(x), axis))
    return arrays, parts


def _check_parts(
    equation: str,
    joint: _Joint,
    sizes: tuple[Any, ...],
    before: tuple[Any, ...] | None,
    lengths: dict[str, Any],
    span: Span,
) -> None:
    """The parts of a list agree with those of another list and with the lengths given."""
    if before is not None and before != sizes:
        raise ShapeError(
            f"the parts of {joint.text} have lengths {before} in one operand and "
            f"{sizes} in another",
            pattern=equation,
            span=span,
        )
    for part, size in zip(joint.parts, sizes, strict=True):
        expected = 1
        for item in part:
            if isinstance(item, str):
                if item not in lengths:
                    break
                expected *= lengths[item]
            else:
                expected *= item
        else:
            if expected != size:
                shown = " ".join(map(str, part))
                raise ShapeError(
                    f"part {shown!r} of {joint.text} has length {size}, not {expected}",
                    pattern=equation,
                    span=span,
                )


def _in_user_terms(error: TensorOpsError, equation: str, rewrite: _Rewrite) -> TensorOpsError:
    """An error of the planned equation, told in the user's: joint axes by their groups."""
    for k, joint in enumerate(rewrite.joints):
        error.reason = error.reason.replace(f"{_JOINT}{k}", joint.text)
        error.args = (error.reason,)
    span = error.span
    if span is not None and span[0] >= rewrite.output_span[0] and rewrite.split:
        error.span = rewrite.output_span
    elif span is not None:  # a joint axis: the whole group
        error.span = next((s for s in rewrite.group_spans if s[0] == span[0]), span)
    return error.with_context(pattern=equation)
