"""A small model zoo, each model written three ways: tensorops, einops and plain torch.

Used by ``benchmarks/compile_time.py`` (compile time) and ``tests/test_compile_zoo.py``
(the three variants agree). The tensorops and einops variants run the same source: the
pattern library is passed in as ``ops``, the way a model written for einops runs on
tensorops with only its import changed. The torch variant is the same model hand-written
with reshape / permute / matmul / cat. All three share one class per model, so a seed
gives every variant the same parameters.

Every model takes one input tensor whose shape is set by a batch size and a length
(``example_input``): the number of patches per side (ViT), tokens (decoder), input
elements (Perceiver), or pixels per side (U-Net stage, vector quantizer).

>>> model = build("vit", "tensorops", small=True)
>>> tuple(model(example_input("vit", 2, 2, small=True)).shape)
(2, 16)
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import einops
import torch
import torch.nn.functional as F
from torch import nn

import tensorops

IMPLS = ("tensorops", "einops", "torch")
_LIBS: dict[str, ModuleType] = {"tensorops": tensorops, "einops": einops}


class ZooModel(nn.Module):
    """A model whose ``forward`` runs the variant named by ``impl``.

    ``patterns(ops, x)`` is the model written with a pattern library ``ops``
    (tensorops or einops, same source), ``native(x)`` the same model in plain torch.
    """

    def __init__(self, impl: str) -> None:
        super().__init__()
        if impl not in IMPLS:
            raise ValueError(f"impl must be one of {IMPLS}, not {impl!r}")
        self.impl = impl
        self.ops = _LIBS.get(impl)

    def forward(self, x: torch.Tensor) -> Any:
        if self.ops is None:
            return self.native(x)
        return self.patterns(self.ops, x)

    def patterns(self, ops: ModuleType, x: torch.Tensor) -> Any:
        raise NotImplementedError

    def native(self, x: torch.Tensor) -> Any:
        raise NotImplementedError


def _mlp(dim: int, hidden: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))


class Attention(nn.Module):
    """Multi-head self-attention over tokens ``b n d`` (used by the ViT and the U-Net stage)."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim)

    def patterns(self, ops: ModuleType, t: torch.Tensor) -> torch.Tensor:
        qkv = self.qkv(t)
        q, k, v = ops.rearrange(qkv, "b n (three h e) -> three b h n e", three=3, h=self.heads)
        scores = ops.einsum(q, k, "b h i e, b h j e -> b h i j") * self.scale
        out = ops.einsum(scores.softmax(dim=-1), v, "b h i j, b h j e -> b h i e")
        return self.out(ops.rearrange(out, "b h n e -> b n (h e)"))

    def native(self, t: torch.Tensor) -> torch.Tensor:
        b, n, d = t.shape
        qkv = self.qkv(t).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        scores = (q @ k.transpose(-2, -1)) * self.scale
        out = scores.softmax(dim=-1) @ v
        return self.out(out.transpose(1, 2).reshape(b, n, d))


# --- a ViT block: patches, attention, MLP, mean pooling ------------------------------------------


class ViTBlock(ZooModel):
    """Patch embedding, one pre-norm transformer block, mean pooling: ``b c H W -> b d``."""

    def __init__(self, impl: str, *, dim: int = 64, heads: int = 4, patch: int = 4) -> None:
        super().__init__(impl)
        self.patch = patch
        self.embed = nn.Linear(3 * patch * patch, dim)
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attention = Attention(dim, heads)
        self.mlp = _mlp(dim, 2 * dim)

    def patterns(self, ops: ModuleType, x: torch.Tensor) -> torch.Tensor:
        p = self.patch
        t = self.embed(ops.rearrange(x, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=p, p2=p))
        t = t + self.attention.patterns(ops, self.norm1(t))
        t = t + self.mlp(self.norm2(t))
        return ops.reduce(t, "b n d -> b d", "mean")

    def native(self, x: torch.Tensor) -> torch.Tensor:
        b, c, height, width = x.shape
        p = self.patch
        x = x.reshape(b, c, height // p, p, width // p, p).permute(0, 2, 4, 3, 5, 1)
        t = self.embed(x.reshape(b, (height // p) * (width // p), p * p * c))
        t = t + self.attention.native(self.norm1(t))
        t = t + self.mlp(self.norm2(t))
        return t.mean(dim=1)


# --- a decoder block: rotary embeddings, grouped-query causal attention, SwiGLU -------------------


class DecoderBlock(ZooModel):
    """A pre-norm decoder block with rotary attention and grouped key/value heads: ``b n d``."""

    def __init__(self, impl: str, *, dim: int = 64, heads: int = 4, kv_heads: int = 2) -> None:
        super().__init__(impl)
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, dim // heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wkv = nn.Linear(dim, 2 * kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.w12 = nn.Linear(dim, 4 * dim, bias=False)
        self.w3 = nn.Linear(2 * dim, dim, bias=False)
        inv_freq = 1.0 / 10000 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim)
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def patterns(self, ops: ModuleType, x: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        q = ops.rearrange(self.wq(h), "b n (h e) -> b h n e", h=self.heads)
        k, v = ops.rearrange(self.wkv(h), "b n (two g e) -> two b g n e", two=2, g=self.kv_heads)
        k = ops.repeat(k, "b g n e -> b (g r) n e", r=self.heads // self.kv_heads)
        v = ops.repeat(v, "b g n e -> b (g r) n e", r=self.heads // self.kv_heads)
        positions = torch.arange(x.shape[1], device=x.device, dtype=self.inv_freq.dtype)
        freqs = ops.repeat(
            ops.einsum(positions, self.inv_freq, "n, f -> n f"), "n f -> n (f r)", r=2
        )
        q, k = (_rotary(ops, t, freqs) for t in (q, k))
        scores = ops.einsum(q, k, "b h i e, b h j e -> b h i j") * self.head_dim**-0.5
        scores = scores.masked_fill(_causal_mask(scores), float("-inf"))
        out = ops.einsum(scores.softmax(dim=-1), v, "b h i j, b h j e -> b h i e")
        x = x + self.wo(ops.rearrange(out, "b h n e -> b n (h e)"))
        a, gate = ops.rearrange(self.w12(self.norm2(x)), "b n (two f) -> two b n f", two=2)
        return x + self.w3(a * F.silu(gate))

    def native(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        e, repeats = self.head_dim, self.heads // self.kv_heads
        h = self.norm1(x)
        q = self.wq(h).reshape(b, n, self.heads, e).transpose(1, 2)
        k, v = self.wkv(h).reshape(b, n, 2, self.kv_heads, e).permute(2, 0, 3, 1, 4).unbind(0)
        k, v = k.repeat_interleave(repeats, dim=1), v.repeat_interleave(repeats, dim=1)
        positions = torch.arange(n, device=x.device, dtype=self.inv_freq.dtype)
        freqs = torch.outer(positions, self.inv_freq).repeat_interleave(2, dim=-1)
        q, k = (_rotary_native(t, freqs) for t in (q, k))
        scores = (q @ k.transpose(-2, -1)) * e**-0.5
        scores = scores.masked_fill(_causal_mask(scores), float("-inf"))
        out = scores.softmax(dim=-1) @ v
        x = x + self.wo(out.transpose(1, 2).reshape(b, n, d))
        a, gate = self.w12(self.norm2(x)).chunk(2, dim=-1)
        return x + self.w3(a * F.silu(gate))


def _causal_mask(scores: torch.Tensor) -> torch.Tensor:
    n = scores.shape[-1]
    return torch.ones(n, n, dtype=torch.bool, device=scores.device).triu(1)


def _rotary(ops: ModuleType, t: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
    """Rotary embedding, pairs of adjacent features rotated (``rotate_half`` on ``(f r)``)."""
    pairs = ops.rearrange(t, "... (f r) -> ... f r", r=2)
    x1, x2 = pairs.unbind(dim=-1)
    rotated = ops.rearrange(torch.stack((-x2, x1), dim=-1), "... f r -> ... (f r)")
    return t * freqs.cos() + rotated * freqs.sin()


def _rotary_native(t: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
    x1, x2 = t.unflatten(-1, (-1, 2)).unbind(dim=-1)
    rotated = torch.stack((-x2, x1), dim=-1).flatten(-2)
    return t * freqs.cos() + rotated * freqs.sin()


# --- a Perceiver cross-attention: latents attend to a long input ---------------------------------


class PerceiverCross(ZooModel):
    """Learned latents cross-attend to ``b n c`` inputs, then an MLP: ``b n c -> b d``."""

    def __init__(
        self, impl: str, *, channels: int = 32, dim: int = 64, latents: int = 32, heads: int = 4
    ) -> None:
        super().__init__(impl)
        self.heads, self.scale = heads, (dim // heads) ** -0.5
        self.latents = nn.Parameter(torch.randn(latents, dim))
        self.context = nn.Linear(channels, dim)
        self.norm_latents, self.norm_context = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.norm_mlp = nn.LayerNorm(dim)
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wkv = nn.Linear(dim, 2 * dim, bias=False)
        self.wo = nn.Linear(dim, dim)
        self.mlp = _mlp(dim, 2 * dim)

    def patterns(self, ops: ModuleType, x: torch.Tensor) -> torch.Tensor:
        latents = ops.repeat(self.latents, "m d -> b m d", b=x.shape[0])
        context = self.norm_context(self.context(x))
        q = ops.rearrange(
            self.wq(self.norm_latents(latents)), "b m (h e) -> (b h) m e", h=self.heads
        )
        kv = self.wkv(context)
        k, v = ops.rearrange(kv, "b n (two h e) -> two (b h) n e", two=2, h=self.heads)
        scores = ops.einsum(q, k, "b i e, b j e -> b i j") * self.scale
        out = ops.einsum(scores.softmax(dim=-1), v, "b i j, b j e -> b i e")
        latents = latents + self.wo(ops.rearrange(out, "(b h) m e -> b m (h e)", h=self.heads))
        latents = latents + self.mlp(self.norm_mlp(latents))
        return ops.reduce(latents, "b m d -> b d", "mean")

    def native(self, x: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        m, d = self.latents.shape
        e = d // self.heads
        latents = self.latents.expand(b, m, d)
        context = self.norm_context(self.context(x))
        q = self.wq(self.norm_latents(latents)).reshape(b, m, self.heads, e).transpose(1, 2)
        kv = self.wkv(context).reshape(b, n, 2, self.heads, e).permute(2, 0, 3, 1, 4)
        k, v = kv.unbind(0)
        q, k, v = q.reshape(b * self.heads, m, e), k.flatten(0, 1), v.flatten(0, 1)
        scores = (q @ k.transpose(-2, -1)) * self.scale
        out = (scores.softmax(dim=-1) @ v).reshape(b, self.heads, m, e)
        latents = latents + self.wo(out.transpose(1, 2).reshape(b, m, d))
        latents = latents + self.mlp(self.norm_mlp(latents))
        return latents.mean(dim=1)


# --- a U-Net stage: gated residual blocks with memory-token attention, then a downsample --------


class UNetBlock(nn.Module):
    """A gated conv block conditioned on its own pooled features, then attention with memory tokens.

    Concatenations and splits go through ``pack`` / ``unpack`` (six calls per block).
    """

    def __init__(self, channels: int, heads: int, memory: int) -> None:
        super().__init__()
        self.channels = channels
        self.norm = nn.GroupNorm(4, channels)
        self.conv = nn.Conv2d(channels, 2 * channels, 3, padding=1)
        self.condition = nn.Linear(channels, 2 * channels)
        self.merge = nn.Conv2d(2 * channels, channels, 1)
        self.memory = nn.Parameter(torch.randn(memory, channels))
        self.attention = Attention(channels, heads)

    def patterns(self, ops: ModuleType, x: torch.Tensor) -> torch.Tensor:
        c = self.channels
        pooled = ops.reduce(x, "b c h w -> b c", "mean")
        scale, shift = ops.rearrange(self.condition(pooled), "b (two c) -> two b c 1 1", two=2)
        value, gate = ops.unpack(self.conv(F.silu(self.norm(x))), [[c], [c]], "b * h w")
        h = value * torch.sigmoid(gate) * (scale + 1) + shift
        both, _ = ops.pack([h, x], "b * h w")
        x = x + self.merge(both)
        flat, spatial = ops.pack([x], "b c *")
        tokens = ops.rearrange(flat, "b c n -> b n c")
        memory = ops.repeat(self.memory, "m c -> b m c", b=x.shape[0])
        tokens, parts = ops.pack([memory, tokens], "b * c")
        _, tokens = ops.unpack(self.attention.patterns(ops, tokens), parts, "b * c")
        [attended] = ops.unpack(ops.rearrange(tokens, "b n c -> b c n"), spatial, "b c *")
        return x + attended

    def native(self, x: torch.Tensor) -> torch.Tensor:
        b, c, height, width = x.shape
        pooled = x.mean(dim=(2, 3))
        scale, shift = self.condition(pooled).reshape(b, 2, c, 1, 1).unbind(1)
        value, gate = self.conv(F.silu(self.norm(x))).split([c, c], dim=1)
        h = value * torch.sigmoid(gate) * (scale + 1) + shift
        x = x + self.merge(torch.cat([h, x], dim=1))
        tokens = x.reshape(b, c, height * width).transpose(1, 2)
        memory = self.memory.expand(b, *self.memory.shape)
        tokens = self.attention.native(torch.cat([memory, tokens], dim=1))[:, memory.shape[1] :]
        return x + tokens.transpose(1, 2).reshape(b, c, height, width)


class UNetStage(ZooModel):
    """``depth`` U-Net blocks and a space-to-depth downsample: ``b c H W -> b c H/2 W/2``."""

    def __init__(
        self, impl: str, *, channels: int = 32, depth: int = 2, heads: int = 2, memory: int = 4
    ) -> None:
        super().__init__(impl)
        self.blocks = nn.ModuleList(UNetBlock(channels, heads, memory) for _ in range(depth))
        self.down = nn.Conv2d(4 * channels, channels, 1)

    def patterns(self, ops: ModuleType, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block.patterns(ops, x)
        return self.down(ops.rearrange(x, "b c (h p1) (w p2) -> b (c p1 p2) h w", p1=2, p2=2))

    def native(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block.native(x)
        b, c, height, width = x.shape
        x = x.reshape(b, c, height // 2, 2, width // 2, 2).permute(0, 1, 3, 5, 2, 4)
        return self.down(x.reshape(b, c * 4, height // 2, width // 2))


# --- a vector-quantizer step: nearest code, straight-through, losses, code usage -----------------


class VectorQuantizer(ZooModel):
    """Quantizes ``b c h w`` features to a codebook; returns (features, loss, perplexity)."""

    def __init__(self, impl: str, *, channels: int = 32, codes: int = 256) -> None:
        super().__init__(impl)
        self.codes = codes
        self.project_in = nn.Conv2d(channels, channels, 1)
        self.codebook = nn.Parameter(torch.randn(codes, channels))
        self.project_out = nn.Conv2d(channels, channels, 1)

    def patterns(self, ops: ModuleType, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        flat, spatial = ops.pack([ops.rearrange(self.project_in(x), "b c h w -> b h w c")], "b * c")
        distances = (
            ops.reduce(flat**2, "b n c -> b n 1", "sum")
            - 2 * ops.einsum(flat, self.codebook, "b n c, k c -> b n k")
            + ops.rearrange(ops.reduce(self.codebook**2, "k c -> k", "sum"), "k -> 1 1 k")
        )
        ids = distances.argmin(dim=-1)
        chosen = self.codebook[ids]
        commitment = ops.reduce((flat - chosen.detach()) ** 2, "b n c -> b", "mean")
        codebook = ops.reduce((chosen - flat.detach()) ** 2, "b n c -> b", "mean")
        usage = ops.reduce(F.one_hot(ids, self.codes).to(flat.dtype), "b n k -> k", "mean")
        quantized = flat + (chosen - flat).detach()
        [quantized] = ops.unpack(quantized, spatial, "b * c")
        out = self.project_out(ops.rearrange(quantized, "b h w c -> b c h w"))
        return out, (0.25 * commitment + codebook).mean(), _perplexity(usage)

    def native(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        b, c, height, width = x.shape
        flat = self.project_in(x).permute(0, 2, 3, 1).reshape(b, height * width, c)
        distances = (
            flat.pow(2).sum(dim=-1, keepdim=True)
            - 2 * flat @ self.codebook.t()
            + self.codebook.pow(2).sum(dim=-1)
        )
        ids = distances.argmin(dim=-1)
        chosen = self.codebook[ids]
        commitment = (flat - chosen.detach()).pow(2).mean(dim=(1, 2))
        codebook = (chosen - flat.detach()).pow(2).mean(dim=(1, 2))
        usage = F.one_hot(ids, self.codes).to(flat.dtype).mean(dim=(0, 1))
        quantized = (flat + (chosen - flat).detach()).reshape(b, height, width, c)
        out = self.project_out(quantized.permute(0, 3, 1, 2))
        return out, (0.25 * commitment + codebook).mean(), _perplexity(usage)


def _perplexity(usage: torch.Tensor) -> torch.Tensor:
    return torch.exp(-(usage * torch.log(usage + 1e-10)).sum())


# --- the zoo ------------------------------------------------------------------------------------

# name -> (constructor, full-size options, small options for tests)
_MODELS: dict[str, tuple[Callable[..., ZooModel], dict[str, int], dict[str, int]]] = {
    "vit": (ViTBlock, {}, {"dim": 16, "heads": 2, "patch": 2}),
    "decoder": (DecoderBlock, {}, {"dim": 16, "heads": 4, "kv_heads": 2}),
    "perceiver": (PerceiverCross, {}, {"channels": 6, "dim": 16, "latents": 5, "heads": 2}),
    "unet": (UNetStage, {}, {"channels": 8, "depth": 2, "heads": 2, "memory": 2}),
    "vq": (VectorQuantizer, {}, {"channels": 8, "codes": 16}),
}
MODELS = tuple(_MODELS)


def build(name: str, impl: str, *, small: bool = False, seed: int = 0) -> ZooModel:
    """The model ``name`` written the ``impl`` way; the same seed gives the same parameters.

    >>> a, b = build("vq", "einops", small=True), build("vq", "torch", small=True)
    >>> bool((a.codebook == b.codebook).all())
    True
    """
    constructor, full, little = _MODELS[name]
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        return constructor(impl, **(little if small else full))


def example_input(
    name: str, batch: int, length: int, *, small: bool = False, seed: int = 1
) -> torch.Tensor:
    """An input for model ``name``: ``batch`` examples, ``length`` as in the module docstring.

    >>> tuple(example_input("decoder", 2, 7, small=True).shape)
    (2, 7, 16)
    """
    _, full, little = _MODELS[name]
    options = little if small else full
    generator = torch.Generator().manual_seed(seed)
    if name == "vit":
        side = length * options.get("patch", 4)
        return torch.randn(batch, 3, side, side, generator=generator)
    if name in ("decoder", "perceiver"):
        width = options.get("dim", 64) if name == "decoder" else options.get("channels", 32)
        return torch.randn(batch, length, width, generator=generator)
    return torch.randn(batch, options.get("channels", 32), length, length, generator=generator)


def objective(output: Any) -> torch.Tensor:
    """A scalar of every output of a model, to backpropagate (a training step's loss)."""
    if isinstance(output, torch.Tensor):
        return output.square().mean()
    return torch.stack([objective(item) for item in output]).sum()
