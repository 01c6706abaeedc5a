"""A Perceiver-style encoder: einops imported as a module under an alias."""

import einops as E
import torch
from einops.layers.torch import Reduce
from torch import nn


def fourier_features(x: torch.Tensor, bands: int = 4) -> torch.Tensor:
    scales = torch.linspace(1.0, 8.0, bands)
    x = E.rearrange(x, "... -> ... 1") * scales
    return E.rearrange(torch.cat([x.sin(), x.cos()], dim=-1), "b n d f -> b n (d f)")


class CrossAttention(nn.Module):
    def __init__(self, dim: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.to_q = nn.Linear(dim, dim)
        self.to_kv = nn.Linear(dim, dim * 2)

    def forward(self, latents: torch.Tensor, data: torch.Tensor) -> torch.Tensor:
        h = self.heads
        q = E.rearrange(self.to_q(latents), "b n (h d) -> (b h) n d", h=h)
        k, v = self.to_kv(data).chunk(2, dim=-1)
        k = E.rearrange(k, "b m (h d) -> (b h) m d", h=h)
        v = E.rearrange(v, "b m (h d) -> (b h) m d", h=h)
        similarity = E.einsum(q, k, "bh i d, bh j d -> bh i j")
        attention = similarity.softmax(dim=-1)
        out = E.einsum(attention, v, "bh i j, bh j d -> bh i d")
        return E.rearrange(out, "(b h) n d -> b n (h d)", h=h)


class Perceiver(nn.Module):
    def __init__(self, latents: int = 16, dim: int = 32, classes: int = 10) -> None:
        super().__init__()
        self.latents = nn.Parameter(torch.randn(latents, dim))
        self.attend = CrossAttention(dim)
        self.to_logits = nn.Sequential(
            Reduce("b n d -> b d", "mean"), nn.LayerNorm(dim), nn.Linear(dim, classes)
        )

    def forward(self, data: torch.Tensor) -> torch.Tensor:
        batch = E.parse_shape(data, "b _ _")
        latents = E.repeat(self.latents, "n d -> b n d", **batch)
        x = self.attend(latents, data) + latents
        return self.to_logits(x)


def pool_tokens(tokens: torch.Tensor, window: int = 2) -> torch.Tensor:
    pooled = E.reduce(tokens, "b (n w) d -> b n d", "max", w=window)
    return E.reduce(pooled, "b n d -> b d", reduction="mean")


def with_register(tokens: torch.Tensor, register: torch.Tensor) -> torch.Tensor:
    packed, shapes = E.pack([register, tokens], "b * d")
    packed = packed * 2
    register, tokens = E.unpack(packed, shapes, "b * d")
    return tokens
