"""An MLP-Mixer on tensorops' layers: EinMix mixes tokens and channels."""

import torch
from tensorops.layers.torch import EinMix, Rearrange, Reduce
from torch import nn

import tensorops as tops

TOKENS = 16
CHANNELS = 32


class MixerBlock(nn.Module):
    def __init__(self, tokens: int = TOKENS, channels: int = CHANNELS, expansion: int = 2) -> None:
        super().__init__()
        hidden = channels * expansion
        self.token_mix = nn.Sequential(
            nn.LayerNorm(channels),
            EinMix(
                "b t c -> b hid c", weight_shape="t hid", bias_shape="hid", t=tokens, hid=hidden
            ),
            nn.GELU(),
            EinMix("b hid c -> b t c", weight_shape="hid t", bias_shape="t", t=tokens, hid=hidden),
        )
        self.channel_mix = nn.Sequential(
            nn.LayerNorm(channels),
            EinMix(
                "b t c -> b t hid", weight_shape="c hid", bias_shape="hid", c=channels, hid=hidden
            ),
            nn.GELU(),
            EinMix(
                "b t hid -> b t c", weight_shape="hid c", bias_shape="c", c=channels, hid=hidden
            ),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.token_mix(x)
        return x + self.channel_mix(x)


class Mixer(nn.Module):
    def __init__(self, classes: int = 10, patch: int = 4, depth: int = 2) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            Rearrange("b c (h p) (w q) -> b (h w) (p q c)", p=patch, q=patch),
            nn.Linear(patch * patch * 2, CHANNELS),
        )
        self.blocks = nn.Sequential(*(MixerBlock() for _ in range(depth)))
        self.head = nn.Sequential(Reduce("b t c -> b c", "mean"), nn.Linear(CHANNELS, classes))

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(self.stem(images)))


class GroupedMix(nn.Module):
    def __init__(self, groups: int = 4, width: int = 8) -> None:
        super().__init__()
        self.mix = EinMix(
            "b t (g c) -> b t (g d)", weight_shape="g c d", g=groups, c=width, d=width
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.mix(x)
        return tops.rearrange(y, "b t (g d) -> b t g d", g=4)
