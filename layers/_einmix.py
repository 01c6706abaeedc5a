"""EinMix's plan, for every layer family: its parameters' shapes and bounds, and how it mixes.

This module knows no framework. `describe_einmix` reads EinMix's constructor arguments
(einops' spellings included), checks them against each other and works out the
whole layer: the weight's and the bias's shapes (einops'), the einsum equation, the
rearranges around it, ``fan_in`` and einops' initialization bounds. A family draws
the parameters with its own random numbers (`EinMixPlan.parameters`) and calls the
plan in its forward pass.

EinMix's default build-time check computes nothing: it plans the einsum on shapes
alone (`tensorops.einsum_path`), as a large weight would make even a probe's einsum
slow. A family may pass probes (torch passes meta tensors) to run its own code path.

Examples:
    >>> import numpy as np
    >>> from tensorops.layers._einmix import describe_einmix
    >>> plan = describe_einmix("b n d -> b n e", "d e", "e", {"d": 4, "e": 3})
    >>> plan
    EinMix('b n d -> b n e', weight_shape='d e', bias_shape='e', d=4, e=3)
    >>> [(name, shape, round(bound, 4)) for name, shape, bound in plan.parameters]
    [('weight', (4, 3), 0.866), ('bias', (1, 1, 3), 0.5)]
    >>> plan(np.ones((2, 5, 4)), np.ones((4, 3)), np.zeros((1, 1, 3))).shape
    (2, 5, 3)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import tensorops as tops
from tensorops._einmix import plan_einmix

from ._description import (
    Probe,
    call_repr,
    check_when_built,
    fitting_shape,
    layer_pattern,
    numpy_probe,
)

__all__ = ["EinMixPlan", "describe_einmix"]


@dataclass(frozen=True, slots=True)
class EinMixPlan:
    """An `EinMix` layer, planned: its parameters' shapes and bounds, and how it mixes.

    Attributes:
        pattern, weight_shape, bias_shape, lengths: the constructor's arguments.
        weight_dims: the weight's shape, in the order of ``weight_shape``.
        bias_dims: the bias's shape, broadcastable against the output (einops'),
            or ``None`` for no bias.
        fan_in: the product of the lengths of the weight axes summed over.
        einsum_pattern: the einsum of the flat terms, one letter per axis (einops').
        pre, pre_lengths: the rearrange that flattens the input, if one is needed.
        post: the rearrange that composes the output, if one is needed.
    """

    pattern: str
    weight_shape: str
    bias_shape: str | None
    lengths: Mapping[str, Any]
    weight_dims: tuple[int, ...]
    bias_dims: tuple[int, ...] | None
    fan_in: int
    einsum_pattern: str
    pre: str | None = None
    pre_lengths: Mapping[str, Any] = field(default_factory=dict)
    post: str | None = None
    #: The name in the repr and the build-time check's messages (a subclass's own).
    name: str = "EinMix"

    @property
    def weight_bound(self) -> float:
        """The bound of the weight's uniform initialization (einops'): ``sqrt(3 / fan_in)``."""
        return math.sqrt(3.0) * self.bias_bound

    @property
    def bias_bound(self) -> float:
        """The bound of the bias's uniform initialization (einops'): ``1 / sqrt(fan_in)``."""
        return 1.0 / math.sqrt(self.fan_in) if self.fan_in > 0 else 0.0

    @property
    def parameters(self) -> tuple[tuple[str, tuple[int, ...] | None, float], ...]:
        """``(name, shape, bound)`` of each parameter in einops' order of draws, weight first.

        The shape is ``None`` where there is no such parameter (no bias); a family draws
        each one uniform in ``(-bound, bound)``.
        """
        return (
            ("weight", self.weight_dims, self.weight_bound),
            ("bias", self.bias_dims, self.bias_bound),
        )

    @property
    def arguments(self) -> dict[str, Any]:
        """The arguments that build the layer again, by name (the lengths aside)."""
        return {
            "pattern": self.pattern,
            "weight_shape": self.weight_shape,
            "bias_shape": self.bias_shape,
        }

    def __call__(self, x: Any, weight: Any, bias: Any | None) -> Any:
        """The output: `x` mixed with `weight`, plus `bias`, composed as the pattern says."""
        if self.pre is not None:
            x = tops.rearrange(x, self.pre, **self.pre_lengths)
        x = tops.einsum(self.einsum_pattern, x, weight)
        if bias is not None:
            x = x + bias
        if self.post is not None:
            x = tops.rearrange(x, self.post)
        return x

    def check(self, probe: Probe | None = None, parameter_probe: Probe | None = None) -> None:
        """Check that an input fitting the pattern mixes; raise as the layer.

        With `probe` (and `parameter_probe`, default `probe`), mix probes of the
        planned shapes. Without, plan the einsum on shapes alone and run the
        rearranges around it on zero-stride NumPy probes: nothing is computed.
        """
        shape = fitting_shape(self.pattern, self.lengths)
        if probe is not None:
            parameter_probe = parameter_probe or probe
            x = probe(shape)
            weight = parameter_probe(self.weight_dims)
            bias = None if self.bias_dims is None else parameter_probe(self.bias_dims)
            check_when_built(self.name, lambda: self(x, weight, bias))
        else:
            check_when_built(self.name, lambda: self._check_shapes(shape))

    def _check_shapes(self, shape: tuple[int, ...]) -> None:
        x = numpy_probe(shape)
        if self.pre is not None:
            x = tops.rearrange(x, self.pre, **self.pre_lengths)
        tops.einsum_path(self.einsum_pattern, x.shape, self.weight_dims)
        # The probe's '...' is no axes: each output letter is an axis of x or of the weight.
        left, weight, right = self.einsum_pattern.replace("->", ",").replace("...", "").split(",")
        sizes = dict(zip(left + weight, x.shape + self.weight_dims, strict=True))
        if self.post is not None:
            tops.rearrange(numpy_probe(tuple(sizes[a] for a in right)), self.post)

    def __hash__(self) -> int:
        # Hashable for the frameworks that keep a layer's static data in a jit cache key.
        return hash((self.pattern, self.weight_shape, self.bias_shape, *self.lengths.items()))

    def written_args(self) -> list[str]:
        """The arguments before the lengths, as the call writes them."""
        args = [repr(self.pattern), f"weight_shape={self.weight_shape!r}"]
        if self.bias_shape is not None:
            args.append(f"bias_shape={self.bias_shape!r}")
        return args

    def __repr__(self) -> str:
        return call_repr(self.name, self.written_args(), self.lengths)


def describe_einmix(
    pattern: str | None,
    weight_shape: str | None,
    bias_shape: str | None,
    lengths: Mapping[str, Any],
    *,
    probe: Probe | None = None,
    parameter_probe: Probe | None = None,
    name: str = "EinMix",
) -> EinMixPlan:
    """Read EinMix's constructor arguments and plan the layer (see `EinMixPlan`).

    Args:
        pattern: ``"left -> right"``, or ``None`` when given as the keyword ``pattern=``.
        weight_shape: the weight's axis names; ``None`` is an error (the
            argument is optional in signatures only so that ``pattern=`` can be a keyword).
        bias_shape: the bias's axis names, or ``None`` for no bias.
        lengths: the keyword arguments: axis lengths (and ``pattern=``). Not modified.
        probe: makes the input the check runs on; by default the check runs on
            shapes alone (`EinMixPlan.check`).
        parameter_probe: makes the parameters the check runs on (default: `probe`).
        name: the layer's name in its repr (``type(self).__name__``).

    Raises:
        TensorOpsError: the patterns do not fit together or a length is missing.

    Examples:
        >>> from tensorops.layers._einmix import describe_einmix
        >>> plan = describe_einmix("b (h c) -> b h e", "h c e", None, {"h": 2, "c": 3, "e": 4})
        >>> plan.pre, plan.einsum_pattern, plan.fan_in
        ('b (h c) -> b h c', 'adb,dbc->adc', 3)
    """
    lengths = dict(lengths)
    pattern = layer_pattern("EinMix", pattern, lengths)
    if weight_shape is None:
        raise tops.ArgumentError(
            "missing the argument 'weight_shape'",
            op="EinMix",
            hint="EinMix('b n c -> b n d', weight_shape='c d', c=..., d=...)",
        )
    parts = plan_einmix(pattern, weight_shape, bias_shape, lengths)
    plan = EinMixPlan(pattern, weight_shape, bias_shape, lengths, *parts, name=name)
    plan.check(probe, parameter_probe)
    return plan
