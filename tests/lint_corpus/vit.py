"""A vision transformer in the style of vit-pytorch: einops functions and layers."""

import torch
from einops import rearrange, repeat
from einops.layers.torch import Rearrange
from torch import nn


class PatchEmbedding(nn.Module):
    def __init__(self, image: int = 32, patch: int = 8, channels: int = 3, dim: int = 64) -> None:
        super().__init__()
        self.to_patches = nn.Sequential(
            Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=patch, p2=patch),
            nn.LayerNorm(patch * patch * channels),
            nn.Linear(patch * patch * channels, dim),
        )
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.positions = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, dim))

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = self.to_patches(images)
        cls = repeat(self.cls_token, "() n d -> b n d", b=x.shape[0])
        return torch.cat([cls, x], dim=1) + self.positions


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int = 8, dim_head: int = 16) -> None:
        super().__init__()
        inner = heads * dim_head
        self.heads = heads
        self.scale = dim_head**-0.5
        self.to_qkv = nn.Linear(dim, inner * 3, bias=False)
        self.to_out = nn.Linear(inner, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        q, k, v = (rearrange(t, "b n (h d) -> b h n d", h=self.heads) for t in (q, k, v))
        dots = torch.einsum("bhid,bhjd->bhij", q, k) * self.scale
        attention = dots.softmax(dim=-1)
        out = torch.einsum("bhij,bhjd->bhid", attention, v)
        out = rearrange(out, "b h n d -> b n (h d)")
        return self.to_out(out)


class ViT(nn.Module):
    def __init__(self, classes: int = 10, dim: int = 64, depth: int = 2) -> None:
        super().__init__()
        self.embed = PatchEmbedding(dim=dim)
        self.layers = nn.ModuleList(Attention(dim) for _ in range(depth))
        self.head = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, classes))

    def forward(self, images: torch.Tensor, pool: str = "cls") -> torch.Tensor:
        x = self.embed(images)
        for layer in self.layers:
            x = layer(x) + x
        x = x.mean(dim=1) if pool == "mean" else x[:, 0]
        return self.head(x)


def unpatchify(patches: torch.Tensor, patch: int = 8) -> torch.Tensor:
    side = int(patches.shape[1] ** 0.5)
    return rearrange(patches, "b (h w) (p1 p2 c) -> b c (h p1) (w p2)", h=side, p1=patch, p2=patch)
