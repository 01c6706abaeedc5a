"""The `EinMix` layer; import it from `tensorops.layers.torch`."""

from __future__ import annotations

import math
import string
from typing import Any

import torch
from torch import nn

import tensorops as tops
from tensorops._grammar import Anon, Axis, Dots, Group, Term, parse_pattern

from ._torch_common import call_repr, check_when_built, layer_pattern

__all__ = ["EinMix"]

#: The axes of a term, a dimension at a time: names and "..." (unit axes give no name).
_Dims = list[list[str]]


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


class EinMix(nn.Module):
    """A learned einsum: the input is mixed with a weight whose axes a pattern names.

    ``EinMix("b n d_in -> b n d_out", weight_shape="d_in d_out", bias_shape="d_out",
    d_in=48, d_out=64)`` is a linear layer over the last axis; any axes may be
    mixed, and the weight may carry axes of the output that are not mixed (one
    linear map per head, per group, ...). Axes composed in the pattern are split
    or merged around the einsum, so ``"b (h w) c -> b h w c2"`` works as it reads.

    The parameters are initialized as einops initializes them, so a model that
    swaps einops' layer for this one starts from the same weights under the same
    seed: the weight uniform in ``(-sqrt(3/fan_in), sqrt(3/fan_in))``, then the bias
    uniform in ``(-1/sqrt(fan_in), 1/sqrt(fan_in))``, where ``fan_in`` is the
    product of the lengths of the weight axes that are summed over (those absent
    from the output). The parameters have einops' shapes: the weight in the order of
    ``weight_shape``, the bias broadcastable against the output, so checkpoints
    of ``einops.layers.torch.EinMix`` load.

    Args:
        pattern: ``"left -> right"``: the input's axes and the output's. ``...``
            stands for any number of axes and must appear on both sides.
        weight_shape: the weight's axes, names separated by spaces; each must
            appear on a side of `pattern` and have a length in `lengths`.
        bias_shape: the bias's axes, a subset of the output's, or ``None`` for no
            bias. Every bias axis needs a length in `lengths`.
        **lengths: the lengths of the weight and bias axes, and of input axes
            that cannot be inferred (composed axes).

    Raises:
        TensorOpsError: when built, if the patterns do not fit together or a
            length is missing; when called, if the input does not fit.

    Examples:
        >>> import torch
        >>> from tensorops.layers.torch import EinMix
        >>> mix = EinMix("b n d_in -> b n d_out", weight_shape="d_in d_out",
        ...              bias_shape="d_out", d_in=48, d_out=64)
        >>> mix  # doctest: +NORMALIZE_WHITESPACE
        EinMix('b n d_in -> b n d_out', weight_shape='d_in d_out', bias_shape='d_out',
               d_in=48, d_out=64)
        >>> mix(torch.zeros(2, 16, 48)).shape
        torch.Size([2, 16, 64])
        >>> heads = EinMix("b n (h c) -> b h n e", weight_shape="h c e", h=4, c=16, e=8)
        >>> heads(torch.zeros(2, 16, 64)).shape
        torch.Size([2, 4, 16, 8])
    """

    weight: nn.Parameter
    bias: nn.Parameter | None

    def __init__(
        self,
        pattern: str | None = None,
        /,
        weight_shape: str | None = None,
        bias_shape: str | None = None,
        **lengths: Any,
    ) -> None:
        super().__init__()
        self.pattern = layer_pattern(self, pattern, lengths)
        if weight_shape is None:  # optional in the signature only for pattern= to be a keyword
            raise tops.ArgumentError(
                "missing the argument 'weight_shape'",
                op="EinMix",
                hint="EinMix('b n c -> b n d', weight_shape='c d', c=..., d=...)",
            )
        self.weight_shape = weight_shape
        self.bias_shape = bias_shape
        self.lengths = lengths
        weight_dims, bias_dims, fan_in = self._plan()
        self.fan_in = fan_in
        self.weight = nn.Parameter(torch.empty(weight_dims))
        if bias_dims is None:
            self.register_parameter("bias", None)
        else:
            self.bias = nn.Parameter(torch.empty(bias_dims))
        self.reset_parameters()

        def run(x: torch.Tensor) -> torch.Tensor:
            # Meta parameters: the check allocates nothing, and the torch backend
            # learns the Parameter type before any torch.compile.
            weight = nn.Parameter(torch.empty(weight_dims, device="meta"))
            bias = (
                None if bias_dims is None else nn.Parameter(torch.empty(bias_dims, device="meta"))
            )
            return self._mix(x, weight, bias)

        check_when_built(self, run, self.pattern)

    def _fail(self, reason: str, hint: str | None = None) -> tops.TensorOpsError:
        return tops.PatternError(
            reason, op="EinMix", pattern=self.pattern, lengths=self.lengths, hint=hint
        )

    def _terms(self) -> tuple[Term, Term, list[str]]:
        """The pattern's two terms and the weight's axis names, read with the grammar."""
        if not isinstance(self.pattern, str) or self.pattern.count("->") != 1:
            raise self._fail(
                "the pattern must be one 'left -> right' string", hint="e.g. 'b n c -> b n d'"
            )
        parsed = parse_pattern(self.pattern)
        assert parsed.outputs is not None
        if len(parsed.inputs) != 1 or len(parsed.outputs) != 1:
            raise self._fail("the pattern must be one 'left -> right' string")
        names: list[str] = []
        for what, text in (("weight_shape", self.weight_shape), ("bias_shape", self.bias_shape)):
            if text is None:
                continue
            term = parse_pattern(text).inputs[0] if isinstance(text, str) else None
            if term is None or not all(isinstance(e, Axis) for e in term.elements):
                raise self._fail(
                    f"{what} {text!r} must be axis names separated by spaces",
                    hint="no parentheses, '...' or integers in weight and bias shapes",
                )
            if what == "weight_shape":
                names = [e.name for e in term.elements if isinstance(e, Axis)]
        return parsed.inputs[0], parsed.outputs[0], names

    def _plan(self) -> tuple[tuple[int, ...], tuple[int, ...] | None, int]:
        """Check the patterns; set the helper patterns; return weight shape, bias shape, fan-in."""
        lengths = self.lengths
        try:
            left_term, right_term, weight = self._terms()
        except tops.TensorOpsError as error:
            raise error.with_context(op="EinMix", lengths=lengths) from None
        left, right = _flat(_dims(left_term)), _flat(_dims(right_term))
        if ("..." in left) != ("..." in right):
            raise self._fail("'...' must appear on both sides or neither")
        for name in sorted(set(weight)):
            if weight.count(name) > 1:
                raise self._fail(
                    f"axis '{name}' appears twice in weight_shape {self.weight_shape!r}"
                )
        names = {*left, *weight} - {"..."}
        missing = [n for n in right if n != "..." and n not in names]
        if missing:
            raise self._fail(
                f"output axis '{missing[0]}' is neither in the input nor in the weight",
                hint="add it to weight_shape",
            )
        redundant = [n for n in weight if n not in left and n not in right]
        if redundant:
            raise self._fail(f"weight axis '{redundant[0]}' is neither in the input nor the output")
        for name in weight:
            if name not in lengths:
                raise self._fail(
                    f"the length of weight axis '{name}' is not given", hint=f"pass {name}=..."
                )
        unused = [n for n in lengths if n not in names]
        if unused:
            raise self._fail(f"axis length {unused[0]}={lengths[unused[0]]!r} is not used")
        weight_dims = tuple(lengths[n] for n in weight)
        fan_in = math.prod(lengths[n] for n in weight if n not in right)
        bias_dims = None if self.bias_shape is None else self._bias_dims(right)
        left_text, right_text = (part.strip() for part in self.pattern.split("->"))
        self._pre: str | None = None
        self._pre_lengths: dict[str, int] = {}
        if not _is_flat(left_term):
            self._pre = f"{left_text} -> {' '.join(left)}"
            self._pre_lengths = {n: v for n, v in lengths.items() if n in left}
        self._post = None if _is_flat(right_term) else f"{' '.join(right)} -> {right_text}"
        #: The einsum of the flat terms with one letter per axis, as einops' EinMix has it.
        self.einsum_pattern = _letters(left, weight, right)
        return weight_dims, bias_dims, fan_in

    def _bias_dims(self, right: list[str]) -> tuple[int, ...]:
        bias = str(self.bias_shape).split()
        for name in bias:
            if name not in right:
                raise self._fail(f"bias axis '{name}' is not in the output")
            if name not in self.lengths:
                raise self._fail(
                    f"the length of bias axis '{name}' is not given", hint=f"pass {name}=..."
                )
        dims: list[int] = []
        for i, name in enumerate(right):
            if name == "...":
                if any(n in bias for n in right[:i]):
                    raise self._fail("bias axes must come after '...' in the output")
                continue
            dims.append(self.lengths[name] if name in bias else 1)
        return tuple(dims)

    def reset_parameters(self) -> None:
        """Draw the weight in ``±sqrt(3/fan_in)``, then the bias in ``±1/sqrt(fan_in)`` (uniform).

        The bounds and the order of the draws are einops': the same seed gives the
        same initial parameters as ``einops.layers.torch.EinMix``.
        """
        bound = 1.0 / math.sqrt(self.fan_in) if self.fan_in > 0 else 0.0
        nn.init.uniform_(self.weight, -math.sqrt(3.0) * bound, math.sqrt(3.0) * bound)
        if self.bias is not None:
            nn.init.uniform_(self.bias, -bound, bound)

    def _mix(
        self, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None
    ) -> torch.Tensor:
        if self._pre is not None:
            x = tops.rearrange(x, self._pre, **self._pre_lengths)
        x = tops.einsum(self.einsum_pattern, x, weight)
        if bias is not None:
            x = x + bias
        if self._post is not None:
            x = tops.rearrange(x, self._post)
        return x

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Mix `x` with the weight (and add the bias)."""
        return self._mix(x, self.weight, self.bias)

    def __repr__(self) -> str:
        args = [repr(self.pattern), f"weight_shape={self.weight_shape!r}"]
        if self.bias_shape is not None:
            args.append(f"bias_shape={self.bias_shape!r}")
        return call_repr(self, args, self.lengths)


def _letters(left: list[str], weight: list[str], right: list[str]) -> str:
    """The equation of the flat terms, each axis renamed to a letter in sorted order of names."""
    names = sorted({*left, *weight, *right} - {"..."})
    letters = dict(zip(names, string.ascii_letters, strict=False))
    letters["..."] = "..."
    left_c, weight_c, right_c = (
        "".join(letters[n] for n in term) for term in (left, weight, right)
    )
    return f"{left_c},{weight_c}->{right_c}"
