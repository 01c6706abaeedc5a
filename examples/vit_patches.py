"""A small Vision Transformer built from tensorops layers, trained on synthetic images.

The patches come from a ``Rearrange``, every linear map is an ``EinMix``, attention
is two ``tops.einsum`` calls, and the classifier pools with ``Reduce``. The model
trains for a few steps eagerly and then under ``torch.compile``; both losses fall.

Run: ``python examples/vit_patches.py`` (about half a minute on two CPU cores).
"""

from __future__ import annotations

import argparse
import time

import torch
from tensorops.layers.torch import EinMix, Rearrange, Reduce
from torch import nn

import tensorops as tops


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        head_dim = dim // heads
        self.scale = head_dim**-0.5
        self.qkv = EinMix(
            "b n d -> k b h n e",
            weight_shape="d k h e",
            bias_shape="k h e",
            d=dim,
            k=3,
            h=heads,
            e=head_dim,
        )
        self.out = EinMix(
            "b h n e -> b n d", weight_shape="h e d", bias_shape="d", h=heads, e=head_dim, d=dim
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x)
        scores = tops.einsum("b h i e, b h j e -> b h i j", q, k) * self.scale
        return self.out(tops.einsum("b h i j, b h j e -> b h i e", scores.softmax(dim=-1), v))


class Block(nn.Module):
    def __init__(self, dim: int, heads: int, hidden: int) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attention = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(
            EinMix("b n d -> b n f", weight_shape="d f", bias_shape="f", d=dim, f=hidden),
            nn.GELU(),
            EinMix("b n f -> b n d", weight_shape="f d", bias_shape="d", f=hidden, d=dim),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class PositionEmbedding(nn.Module):
    def __init__(self, n: int, dim: int) -> None:
        super().__init__()
        self.position = nn.Parameter(torch.randn(n, dim) * 0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.position


def build_model(
    image: int = 32,
    patch: int = 4,
    channels: int = 3,
    dim: int = 64,
    depth: int = 2,
    heads: int = 4,
    classes: int = 10,
) -> nn.Sequential:
    """The classifier: patches -> embedding -> transformer blocks -> mean pool -> logits."""
    return nn.Sequential(
        Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=patch, p2=patch),
        EinMix(
            "b n p -> b n d",
            weight_shape="p d",
            bias_shape="d",
            p=patch * patch * channels,
            d=dim,
        ),
        PositionEmbedding((image // patch) ** 2, dim),
        *[Block(dim, heads, 2 * dim) for _ in range(depth)],
        nn.LayerNorm(dim),
        Reduce("b n d -> b d", "mean"),
        EinMix("b d -> b k", weight_shape="d k", bias_shape="k", d=dim, k=classes),
    )


def synthetic_batch(
    templates: torch.Tensor, batch: int, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Noisy copies of one template image per class: learnable in a few steps."""
    labels = torch.randint(len(templates), (batch,), generator=generator)
    noise = torch.randn((batch, *templates.shape[1:]), generator=generator)
    return templates[labels] + 0.5 * noise, labels


def train(model: nn.Module, steps: int, batch: int, seed: int, label: str) -> list[float]:
    """A few Adam steps; prints the loss and returns it per step."""
    generator = torch.Generator().manual_seed(seed)
    templates = torch.randn((10, 3, 32, 32), generator=generator)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    start = time.perf_counter()
    for step in range(steps):
        images, labels = synthetic_batch(templates, batch, generator)
        loss = nn.functional.cross_entropy(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if step % 5 == 0 or step == steps - 1:
            print(f"{label:>8} step {step:3d}  loss {loss.item():.4f}")
    print(f"{label:>8} {steps} steps in {time.perf_counter() - start:.1f} s")
    return losses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()
    torch.manual_seed(0)

    model = build_model()
    print(model[:2])
    eager = train(model, args.steps, args.batch, seed=1, label="eager")

    torch.manual_seed(0)
    compiled = torch.compile(build_model(), fullgraph=True)
    losses = train(compiled, args.steps, args.batch, seed=1, label="compiled")

    for name, curve in (("eager", eager), ("compiled", losses)):
        first, last = sum(curve[:3]) / 3, sum(curve[-3:]) / 3
        assert last < first, f"{name}: the loss did not go down ({first:.3f} -> {last:.3f})"
    print(f"loss went down: eager {eager[0]:.3f} -> {eager[-1]:.3f}, "
          f"compiled {losses[0]:.3f} -> {losses[-1]:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
