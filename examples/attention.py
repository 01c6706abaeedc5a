"""Multi-head attention written once with tensorops, run on NumPy and PyTorch.

The same function runs on both families: every op returns an array of its
input's family, and the only framework-specific piece is the softmax's exp,
taken from the array's own namespace. The two results agree to float32 precision.

Usage: python examples/attention.py
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a source checkout

import tensorops as tops


def exp(x: Any) -> Any:
    return x.exp() if hasattr(x, "exp") else np.exp(x)


def softmax(x: Any) -> Any:
    """Softmax over the last axis, written with tensorops reductions."""
    shifted = x - tops.reduce(x, "... j -> ... 1", "max")
    e = exp(shifted)
    return e / tops.reduce(e, "... j -> ... 1", "sum")


def attention(x: Any, w_qkv: Any, w_out: Any, heads: int) -> Any:
    """Self-attention: x is (batch, tokens, dim); w_qkv is (dim, 3 * dim); w_out (dim, dim)."""
    qkv = tops.einsum("b t d, d e -> b t e", x, w_qkv)
    q, k, v = tops.rearrange(qkv, "b t (three h d) -> three b h t d", three=3, h=heads)
    scale = q.shape[-1] ** -0.5
    scores = tops.einsum(q, k, "b h i d, b h j d -> b h i j") * scale
    mixed = tops.einsum(softmax(scores), v, "b h i j, b h j d -> b h i d")
    merged = tops.rearrange(mixed, "b h t d -> b t (h d)")
    return tops.einsum("b t d, d e -> b t e", merged, w_out)


def main() -> int:
    rng = np.random.default_rng(0)
    batch, tokens, dim, heads = 2, 10, 32, 4
    x = rng.standard_normal((batch, tokens, dim)).astype(np.float32)
    w_qkv = (rng.standard_normal((dim, 3 * dim)) / dim**0.5).astype(np.float32)
    w_out = (rng.standard_normal((dim, dim)) / dim**0.5).astype(np.float32)

    out_numpy = attention(x, w_qkv, w_out, heads)
    print(f"NumPy:   {type(out_numpy).__name__} {out_numpy.shape} {out_numpy.dtype}")

    if importlib.util.find_spec("torch") is None:
        print("PyTorch: not installed, skipped (pip install 'tensorops[torch]')")
        return 0
    import torch

    inputs = [torch.from_numpy(a) for a in (x, w_qkv, w_out)]
    out_torch = attention(*inputs, heads)
    print(f"PyTorch: {type(out_torch).__name__} {tuple(out_torch.shape)} {out_torch.dtype}")
    difference = float(np.abs(tops.asnumpy(out_torch) - out_numpy).max())
    print(f"largest difference: {difference:.2e}")
    assert difference < 1e-4, difference
    reference = torch.nn.functional.scaled_dot_product_attention(
        *(
            t.reshape(batch, tokens, heads, -1).transpose(1, 2)
            for t in (inputs[0] @ inputs[1]).split(dim, dim=-1)
        )
    )
    reference = reference.transpose(1, 2).reshape(batch, tokens, dim) @ inputs[2]
    assert torch.allclose(out_torch, reference, atol=1e-4)
    print("matches torch.nn.functional.scaled_dot_product_attention")
    return 0


if __name__ == "__main__":
    sys.exit(main())
