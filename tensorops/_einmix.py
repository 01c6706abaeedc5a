"""EinMix's arguments read and checked against each other: the parts of its plan, from text alone.

``EinMix("b t (h c) -> b t (h d)", weight_shape="h c d", h=8, c=64, d=32)`` is an
einsum of the input with a learned weight, between two rearranges. `plan_einmix`
reads the pattern, the weight's and the bias's axis names and the lengths with the
shared grammar and works out, without any array: the weight's and the bias's
shapes, ``fan_in`` (einops' initialization), the einsum of the flat terms (one letter
per axis) and the rearranges that flatten the input and compose the output. The
layers (``tensorops.layers``) build their `EinMixPlan` from these parts, and the
linter checks an ``EinMix(...)`` call with them. Imports no framework.
"""

from __future__ import annotations

import math
import string
from collections.abc import Mapping
from typing import Any, NamedTuple

from tensorops._errors import PatternError, TensorOpsError
from tensorops._grammar import Anon, Axis, Dots, Group, Term, parse_pattern

__all__ = ["EinMixParts", "plan_einmix"]

#: The axes of a term, a dimension at a time: names and "..." (unit axes give no name).
_Dims = list[list[str]]


class EinMixParts(NamedTuple):
    """What EinMix's arguments determine (the fields `EinMixPlan` adds to its arguments).

    Attributes:
        weight_dims: the weight's shape, in the order of ``weight_shape``.
        bias_dims: the bias's shape, broadcastable against the output (einops'),
            or ``None`` for no bias.
        fan_in: the product of the lengths of the weight axes summed over.
        einsum_pattern: the einsum of the flat terms, one letter per axis (einops').
        pre: the rearrange that flattens the input, if one is needed.
        pre_lengths: the lengths it takes.
        post: the rearrange that composes the output, if one is needed.
    """

    weight_dims: tuple[int, ...]
    bias_dims: tuple[int, ...] | None
    fan_in: int
    einsum_pattern: str
    pre: str | None
    pre_lengths: dict[str, Any]
    post: str | None


class _Planner:
    """Checks EinMix's arguments against each other and works out its parts."""

    def __init__(
        self, pattern: str, weight_shape: str, bias_shape: str | None, lengths: dict[str, Any]
    ) -> None:
        self.pattern = pattern
        self.weight_shape = weight_shape
        self.bias_shape = bias_shape
        self.lengths = lengths

    def fail(self, reason: str, hint: str | None = None) -> TensorOpsError:
        return PatternError(
            reason, op="EinMix", pattern=self.pattern, lengths=self.lengths, hint=hint
        )

    def terms(self) -> tuple[Term, Term, list[str]]:
        """The pattern's two terms and the weight's axis names, read with the grammar."""
        if not isinstance(self.pattern, str) or self.pattern.count("->") != 1:
            raise self.fail(
                "the pattern must be one 'left -> right' string", hint="e.g. 'b n c -> b n d'"
            )
        parsed = parse_pattern(self.pattern)
        assert parsed.outputs is not None
        if len(parsed.inputs) != 1 or len(parsed.outputs) != 1:
            raise self.fail("the pattern must be one 'left -> right' string")
        names: list[str] = []
        for what, text in (("weight_shape", self.weight_shape), ("bias_shape", self.bias_shape)):
            if text is None:
                continue
            term = parse_pattern(text).inputs[0] if isinstance(text, str) else None
            if term is None or not all(isinstance(e, Axis) for e in term.elements):
                raise self.fail(
                    f"{what} {text!r} must be axis names separated by spaces",
                    hint="no parentheses, '...' or integers in weight and bias shapes",
                )
            if what == "weight_shape":
                names = [e.name for e in term.elements if isinstance(e, Axis)]
        return parsed.inputs[0], parsed.outputs[0], names

    def plan(self) -> EinMixParts:
        lengths = self.lengths
        try:
            left_term, right_term, weight = self.terms()
        except TensorOpsError as error:
            raise error.with_context(op="EinMix", lengths=lengths) from None
        left, right = _flat(_dims(left_term)), _flat(_dims(right_term))
        if ("..." in left) != ("..." in right):
            raise self.fail("'...' must appear on both sides or neither")
        for name in sorted(set(weight)):
            if weight.count(name) > 1:
                raise self.fail(
                    f"axis '{name}' appears twice in weight_shape {self.weight_shape!r}"
                )
        names = {*left, *weight} - {"..."}
        missing = [n for n in right if n != "..." and n not in names]
        if missing:
            raise self.fail(
                f"output axis '{missing[0]}' is neither in the input nor in the weight",
                hint="add it to weight_shape",
            )
        redundant = [n for n in weight if n not in left and n not in right]
        if redundant:
            raise self.fail(f"weight axis '{redundant[0]}' is neither in the input nor the output")
        for name in weight:
            if name not in lengths:
                raise self.fail(
                    f"the length of weight axis '{name}' is not given", hint=f"pass {name}=..."
                )
        unused = [n for n in lengths if n not in names]
        if unused:
            raise self.fail(f"axis length {unused[0]}={lengths[unused[0]]!r} is not used")
        left_text, right_text = (part.strip() for part in self.pattern.split("->"))
        flat_left = _is_flat(left_term)
        return EinMixParts(
            weight_dims=tuple(lengths[n] for n in weight),
            bias_dims=None if self.bias_shape is None else self.bias_dims(right),
            fan_in=math.prod(lengths[n] for n in weight if n not in right),
            einsum_pattern=_letters(left, weight, right),
            pre=None if flat_left else f"{left_text} -> {' '.join(left)}",
            pre_lengths={} if flat_left else {n: v for n, v in lengths.items() if n in left},
            post=None if _is_flat(right_term) else f"{' '.join(right)} -> {right_text}",
        )

    def bias_dims(self, right: list[str]) -> tuple[int, ...]:
        bias = str(self.bias_shape).split()
        for name in bias:
            if name not in right:
                raise self.fail(f"bias axis '{name}' is not in the output")
            if name not in self.lengths:
                raise self.fail(
                    f"the length of bias axis '{name}' is not given", hint=f"pass {name}=..."
                )
        dims: list[int] = []
        for i, name in enumerate(right):
            if name == "...":
                if any(n in bias for n in right[:i]):
                    raise self.fail("bias axes must come after '...' in the output")
                continue
            dims.append(self.lengths[name] if name in bias else 1)
        return tuple(dims)


def plan_einmix(
    pattern: str, weight_shape: str, bias_shape: str | None, lengths: Mapping[str, Any]
) -> EinMixParts:
    """Check EinMix's arguments against each other and work out its parts.

    Args:
        pattern: ``"left -> right"``.
        weight_shape: the weight's axis names.
        bias_shape: the bias's axis names, or ``None`` for no bias.
        lengths: the axis lengths given (not modified).

    Raises:
        TensorOpsError: the patterns do not fit together or a length is missing (the
            op is ``"EinMix"``, the lengths are the call's).

    Examples:
        >>> parts = plan_einmix("b (h c) -> b h e", "h c e", None, {"h": 2, "c": 3, "e": 4})
        >>> parts.pre, parts.einsum_pattern, parts.fan_in
        ('b (h c) -> b h c', 'adb,dbc->adc', 3)
    """
    return _Planner(pattern, weight_shape, bias_shape, dict(lengths)).plan()


def _dims(term: Term) -> _Dims:
    dims: _Dims = []
    for element in term.elements:
        items = element.items if isinstance(element, Group) else (element,)
        dims.append(
            [
                item.name if isinstance(item, Axis) else "..."
                for item in items
                if not isinstance(item, Anon)
            ]
        )
    return dims


def _flat(dims: _Dims) -> list[str]:
    """The elementary axes of a term's dimensions; unit axes drop out."""
    return [name for dim in dims for name in dim]


def _is_flat(term: Term) -> bool:
    """Whether every dimension of `term` is one name or ``...``."""
    return all(isinstance(element, (Axis, Dots)) for element in term.elements)


def _letters(left: list[str], weight: list[str], right: list[str]) -> str:
    """The equation of the flat terms, each axis renamed to a letter in sorted order of names."""
    names = sorted({*left, *weight, *right} - {"..."})
    letters = dict(zip(names, string.ascii_letters, strict=False))
    letters["..."] = "..."
    left_c, weight_c, right_c = (
        "".join(letters[n] for n in term) for term in (left, weight, right)
    )
    return f"{left_c},{weight_c}->{right_c}"
