"""The small model of every torch layer that the compile and export tests run."""

from __future__ import annotations

import torch
from tensorops.layers.torch import EinMix, Rearrange, Reduce, Repeat


def layer_model(einmix: bool = True, reduction: str = "mean") -> torch.nn.Sequential:
    """Patches -> EinMix (or an identity Rearrange) -> Repeat -> Reduce, on (b, 3, 8, 8)."""
    mix = (
        EinMix("b n d -> b n e", weight_shape="d e", bias_shape="e", d=12, e=8)
        if einmix
        else Rearrange("b n d -> b n d")
    )
    return torch.nn.Sequential(
        Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2),
        mix,
        Repeat("b n e -> b n e r", r=2),
        Reduce("b n e r -> b e", reduction),
    )
