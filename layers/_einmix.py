"""The `EinMix` layer; import it from `tensorops.layers.torch`."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from ._description import EinMixPlan, describe_einmix
from ._torch_common import meta_parameter, meta_probe

__all__ = ["EinMix"]


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
        plan = describe_einmix(
            pattern,
            weight_shape,
            bias_shape,
            lengths,
            probe=meta_probe,
            parameter_probe=meta_parameter,
            name=type(self).__name__,
        )
        self._plan: EinMixPlan = plan
        self.pattern = plan.pattern
        self.weight_shape = plan.weight_shape
        self.bias_shape = plan.bias_shape
        self.lengths = dict(plan.lengths)
        self.fan_in = plan.fan_in
        #: The einsum of the flat terms with one letter per axis, as einops' EinMix has it.
        self.einsum_pattern = plan.einsum_pattern
        self.weight = nn.Parameter(torch.empty(plan.weight_dims))
        if plan.bias_dims is None:
            self.register_parameter("bias", None)
        else:
            self.bias = nn.Parameter(torch.empty(plan.bias_dims))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the weight in ``±sqrt(3/fan_in)``, then the bias in ``±1/sqrt(fan_in)`` (uniform).

        The bounds and the order of the draws are einops': the same seed gives the
        same initial parameters as ``einops.layers.torch.EinMix``.
        """
        bound = self._plan.weight_bound
        nn.init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            nn.init.uniform_(self.bias, -self._plan.bias_bound, self._plan.bias_bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Mix `x` with the weight (and add the bias)."""
        mixed: torch.Tensor = self._plan.mix(x, self.weight, self.bias)
        return mixed

    def __repr__(self) -> str:
        return repr(self._plan)
