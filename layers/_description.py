"""What every layer family shares: the layers' arguments, checks, reprs and EinMix's plan.

This module knows no framework. A family module (`tensorops.layers.torch`,
``.flax``, ``.nnx``, ``.equinox``, ``.keras``, ``.paddle``) reads its
constructor's arguments with `describe` or `describe_einmix`, keeps the frozen
description it gets back, and calls it in its forward pass. Everything the
families must agree on lives here once: einops' keyword spellings
(``pattern=``, ``reduction=``), the checks that make a bad layer fail when it is
built (with the same `tensorops.TensorOpsError` in every family), the reprs
that reproduce the constructor call, and for `EinMix` the whole plan: the
weight's and the bias's shapes, the einsum equation, the rearranges around it,
``fan_in`` and einops' initialization bounds.

The build-time check runs the layer on a *probe*: an array of a shape that fits
the pattern (unknown lengths are 1). The default probe is a NumPy array of
zero strides, which allocates nothing; a family may pass its own (torch passes
meta tensors) so that the check also runs the framework's code path. EinMix's
default check computes nothing: it plans the einsum on shapes alone
(`tensorops.einsum_path`), as a large weight would make even a probe's einsum slow.

Examples:
    A family module wraps the description in its framework's module class
    (here a plain class standing in for ``nn.Module``):

    >>> import numpy as np
    >>> from tensorops.layers._description import describe, describe_einmix
    >>> class Rearrange:
    ...     def __init__(self, pattern=None, /, *extra, **lengths):
    ...         self.spec = describe("Rearrange", (pattern, *extra), lengths)
    ...     def __call__(self, x):
    ...         return self.spec(x)
    ...     def __repr__(self):
    ...         return repr(self.spec)
    >>> layer = Rearrange("b (h w) -> b h w", h=2)
    >>> layer
    Rearrange('b (h w) -> b h w', h=2)
    >>> layer(np.zeros((3, 8))).shape
    (3, 2, 4)

    EinMix's plan gives the parameters' shapes and bounds; the family draws them
    with its own random numbers, then calls ``plan.mix``:

    >>> plan = describe_einmix("b n d -> b n e", "d e", "e", {"d": 4, "e": 3})
    >>> plan.weight_dims, plan.bias_dims, plan.fan_in
    ((4, 3), (1, 1, 3), 4)
    >>> round(plan.weight_bound, 4), plan.bias_bound
    (0.866, 0.5)
    >>> plan.mix(np.ones((2, 5, 4)), np.ones((4, 3)), np.zeros((1, 1, 3))).shape
    (2, 5, 3)
    >>> plan
    EinMix('b n d -> b n e', weight_shape='d e', bias_shape='e', d=4, e=3)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import tensorops as tops
from tensorops._einmix import plan_einmix
from tensorops._probes import probe_shapes

__all__ = [
    "EinMixPlan",
    "LayerSpec",
    "Probe",
    "Reduction",
    "call_repr",
    "check_when_built",
    "describe",
    "describe_einmix",
    "layer_pattern",
    "numpy_probe",
    "probe_shape",
    "reduction_repr",
]

#: A reduction: a name of `tensorops.reduce` (``"sum"``, ``"argmax"``, ...) or
#: ``f(x, axes) -> array``.
Reduction = str | Callable[..., Any]

#: Makes an array of a given shape for the build-time check.
Probe = Callable[[tuple[int, ...]], Any]

#: The op each pattern layer calls (Reduce also passes its reduction).
_OPS: dict[str, Callable[..., Any]] = {
    "Rearrange": tops.rearrange,
    "Reduce": tops.reduce,
    "Repeat": tops.repeat,
    "Softmax": tops.softmax,
    "LogSoftmax": tops.log_softmax,
    "Check": tops.check,
}


def numpy_probe(shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    """A float32 array of `shape` whose strides are all zero: it allocates nothing."""
    return np.broadcast_to(np.zeros((), np.float32), shape)


# --- arguments, reprs ----------------------------------------------------------------------------


def layer_pattern(layer: str, pattern: str | None, lengths: dict[str, Any]) -> str:
    """The pattern `layer` is built with: positional, else einops' keyword ``pattern=``.

    When the pattern was given positionally, a keyword ``pattern=`` stays in
    `lengths`: the length of an axis named ``pattern``. `lengths` loses the
    keyword otherwise.
    """
    if pattern is None:
        pattern = lengths.pop("pattern", None)
        if pattern is None:
            raise tops.ArgumentError(
                "missing the argument 'pattern'",
                op=layer,
                hint=f"pass the pattern first, or as the keyword: {layer}(pattern='...')",
            )
    return pattern


def call_repr(layer: str, args: Sequence[str], lengths: Mapping[str, Any]) -> str:
    """``Name(arg, ..., axis=length, ...)``: the call that builds the layer again."""
    shown = [*args, *(f"{name}={value!r}" for name, value in lengths.items())]
    return f"{layer}({', '.join(shown)})"


def reduction_repr(reduction: object) -> str:
    """A reduction as it is written in the call: a quoted name, or a function's name."""
    if isinstance(reduction, str):
        return repr(reduction)
    name = getattr(reduction, "__qualname__", None)
    if isinstance(name, str) and "<" not in name:
        return name  # a named function: its name reproduces the call where it is in scope
    return repr(reduction)


# --- the build-time check ------------------------------------------------------------------------


def probe_shape(pattern: object, lengths: Mapping[str, Any]) -> tuple[int, ...]:
    """A shape that fits the first term of `pattern`; axes of unknown length get length 1.

    ``...`` stands for no axes; a concatenation ``(a + b)`` is its parts' lengths added
    (`tensorops._probes.probe_shapes`, which the linter plans calls on too). A pattern
    that does not parse gives ``()``: the op called on the probe then reports the
    syntax error.
    """
    if not isinstance(pattern, str):
        return ()
    given = {k: v for k, v in lengths.items() if type(v) is int and v > 0}
    probes = probe_shapes(pattern, given)
    return probes[0] if probes else ()


def check_when_built(layer: str, run: Callable[[], object]) -> None:
    """Call `run` (the layer on probes), so that a bad layer fails when it is built.

    An error names the layer, not the op it calls, and leaves out the probe's
    shape, which would only confuse.
    """
    try:
        run()
    except tops.TensorOpsError as error:
        raise error.with_context(op=layer, inputs=()) from None


# --- Rearrange, Reduce, Repeat, Softmax, LogSoftmax, Check ------------------------------------


@dataclass(frozen=True, slots=True)
class LayerSpec:
    """A pattern layer, checked: its op, pattern, reduction (Reduce only) and lengths.

    Calling it runs the op on an array of any family.
    """

    kind: str
    pattern: str
    lengths: Mapping[str, Any]
    reduction: Reduction | None = None
    #: The name in messages and the repr: the layer's class, perhaps a user's subclass.
    name: str = ""

    def __call__(self, x: Any) -> Any:
        """The layer's op on `x`."""
        if self.kind == "Reduce":
            return tops.reduce(x, self.pattern, self.reduction, **self.lengths)
        return _OPS[self.kind](x, self.pattern, **self.lengths)

    def check(self, probe: Probe = numpy_probe) -> None:
        """Run the op on a probe of a shape that fits the pattern; raise as the layer."""
        # A callable is not run on the probe: the plan does not depend on it.
        reduction = "sum" if callable(self.reduction) else self.reduction
        spec = LayerSpec(self.kind, self.pattern, self.lengths, reduction)
        shape = probe_shape(self.pattern, self.lengths)
        check_when_built(self.name or self.kind, lambda: spec(probe(shape)))

    def __hash__(self) -> int:
        # Hashable for the frameworks that keep a layer's static data in a jit cache key.
        return hash((self.kind, self.pattern, tuple(self.lengths.items()), self.reduction))

    def args(self) -> list[str]:
        """The positional arguments as the call writes them."""
        if self.kind == "Reduce":
            return [repr(self.pattern), reduction_repr(self.reduction)]
        return [repr(self.pattern)]

    def __repr__(self) -> str:
        return call_repr(self.name or self.kind, self.args(), self.lengths)


def describe(
    kind: str,
    args: Sequence[Any],
    lengths: Mapping[str, Any],
    *,
    probe: Probe = numpy_probe,
    name: str | None = None,
) -> LayerSpec:
    """Read a pattern layer's constructor arguments, as einops spells them; check the layer.

    Args:
        kind: ``"Rearrange"``, ``"Reduce"``, ``"Repeat"``, ``"Softmax"``,
            ``"LogSoftmax"`` or ``"Check"``: the op the layer calls.
        args: the positional arguments: the pattern (and, for Reduce, the reduction).
        lengths: the keyword arguments: axis lengths, and ``pattern=`` /
            ``reduction=`` when those were not given positionally. Not modified.
        probe: makes the array the check runs on (default: `numpy_probe`).
        name: the layer's name in messages and its repr (default: `kind`); a
            family passes ``type(self).__name__``, so a subclass names itself.

    Returns:
        The layer's description; ``spec(x)`` runs it.

    Raises:
        TensorOpsError: the pattern, the reduction or the lengths are invalid
            (the message names the layer).
        TypeError: more positional arguments than the layer takes.

    Examples:
        >>> from tensorops.layers._description import describe
        >>> describe("Reduce", ("b c (h 2) -> b c h",), {"reduction": "max"})
        Reduce('b c (h 2) -> b c h', 'max')
        >>> import tensorops as tops
        >>> try:
        ...     describe("Repeat", ("b -> b r",), {"r": 2, "pattern": 3})
        ... except tops.TensorOpsError as error:
        ...     print(str(error).splitlines()[0])
        Repeat: axis length pattern=3 is given but 'pattern' is not in the pattern
    """
    layer = name or kind
    wanted = 2 if kind == "Reduce" else 1
    if len(args) > wanted:  # Python's own message would name the family's base class
        what = "the pattern and the reduction" if kind == "Reduce" else "the pattern"
        raise TypeError(
            f"{layer}() takes {what} positionally and axis lengths as keywords; "
            f"{len(args) - wanted} more positional argument(s) given"
        )
    given = [*args, None, None]
    lengths = dict(lengths)
    pattern = layer_pattern(layer, given[0], lengths)
    reduction = None
    if kind == "Reduce":
        reduction = given[1]
        if reduction is None:  # einops' keyword spelling, Reduce(pattern, reduction="max")
            reduction = lengths.pop("reduction", None)
    spec = LayerSpec(kind, pattern, lengths, reduction, layer)
    spec.check(probe)
    return spec


# --- EinMix --------------------------------------------------------------------------------------


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

    def mix(self, x: Any, weight: Any, bias: Any | None) -> Any:
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
        shape = probe_shape(self.pattern, self.lengths)
        if probe is not None:
            parameter_probe = parameter_probe or probe
            x = probe(shape)
            weight = parameter_probe(self.weight_dims)
            bias = None if self.bias_dims is None else parameter_probe(self.bias_dims)
            check_when_built(self.name, lambda: self.mix(x, weight, bias))
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

    def args(self) -> list[str]:
        """The arguments before the lengths, as the call writes them."""
        args = [repr(self.pattern), f"weight_shape={self.weight_shape!r}"]
        if self.bias_shape is not None:
            args.append(f"bias_shape={self.bias_shape!r}")
        return args

    def __repr__(self) -> str:
        return call_repr(self.name, self.args(), self.lengths)


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
        >>> from tensorops.layers._description import describe_einmix
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
