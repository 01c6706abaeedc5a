"""A small U-Net: tensorops' functions imported by name, patterns kept as module constants."""

import tensorops.layers.torch as tl
import torch
from torch import nn

from tensorops import rearrange, repeat
from tensorops import reduce as pool

TO_CHANNELS_LAST = "b c h w -> b h w c"
TO_CHANNELS_FIRST = "b h w c -> b c h w"
SPACE = "(h p1) (w p2)"
DOWNSAMPLE = f"b c {SPACE} -> b (c p1 p2) h w"
HALVE: str = "b c (h 2) (w 2) -> b c h w"


class Downsample(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels * 4, channels * 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(rearrange(x, DOWNSAMPLE, p1=2, p2=2))


class Upsample(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, channels // 2, 3, padding=1)
        self.spread = tl.Repeat("b c h w -> b c (h 2) (w 2)")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(self.spread(x))


class Block(nn.Module):
    def __init__(self, channels: int, groups: int = 4) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(channels)
        self.proj = nn.Conv2d(channels, channels, 3, padding=1)
        self.groups = groups

    def forward(self, x: torch.Tensor, time: torch.Tensor) -> torch.Tensor:
        y = rearrange(tensor=x, pattern=TO_CHANNELS_LAST)
        y = rearrange(self.norm(y), pattern=TO_CHANNELS_FIRST)
        scale = repeat(time, "b c -> b c h w", h=x.shape[2], w=x.shape[3])
        grouped = rearrange(y, "b (g c) h w -> b g c h w", g=self.groups)
        stats = pool(grouped, "b g c h w -> b g () () ()", "mean")
        y = rearrange(grouped - stats, "b g c h w -> b (g c) h w")
        return self.proj(y * scale) + x


class UNet(nn.Module):
    def __init__(self, channels: int = 8) -> None:
        super().__init__()
        self.down = Downsample(channels)
        self.mid = Block(channels * 2)
        self.up = Upsample(channels * 2)
        self.pool = tl.Reduce(HALVE, "max")
        self.squeeze = tl.Rearrange("b c h w -> b (c h w)")

    def forward(self, x: torch.Tensor, time: torch.Tensor) -> torch.Tensor:
        skip = x
        x = self.mid(self.down(x), time)
        x = self.up(x) + skip
        return self.squeeze(pool(self.pool(x), "b c h w -> b c 1 1", reduction="mean"))
