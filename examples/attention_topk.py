"""Attention, then the k most attended tokens updated and scattered back: NumPy and PyTorch.

One function, written with tensorops only, runs on both families:

1. attention weights with ``softmax`` along the key axis, named: ``"b h i [j]"``;
2. how much attention each token receives, and the k most attended tokens, by
   ``reduce(..., "argmax")`` k times, each pick masked out with ``set_at``;
3. those tokens gathered with ``get_at`` (``"b [t] d, b k -> b k d"``), transformed,
   and the updates added back with ``add_at`` (``"b [t] d, b k, b k d -> b [t] d"``).

The NumPy and torch results agree to float32 precision.

Usage: python examples/attention_topk.py
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a source checkout

import tensorops as tops


def top_k(scores: Any, k: int) -> Any:
    """The positions of the k largest scores of each row, largest first: (b, k)."""
    picks = []
    for _ in range(k):
        best = tops.reduce(scores, "b t -> b", "argmax")
        picks.append(best)
        # the picked token drops out of the next round: -inf at its position
        scores = tops.set_at(scores, best, -np.inf, "b [t], b, -> b [t]")
    return tops.rearrange(picks, "k b -> b k")


def step(x: Any, w_qk: Any, w_update: Any, heads: int, k: int) -> tuple[Any, Any]:
    """Attend, pick the k most attended tokens, update them in place of a copy of `x`."""
    q, key = tops.rearrange(
        tops.einsum("b t d, d e -> b t e", x, w_qk), "b t (two h e) -> two b h t e", two=2, h=heads
    )
    scores = tops.einsum(q, key, "b h i e, b h j e -> b h i j") * q.shape[-1] ** -0.5
    weights = tops.softmax(scores, "b h i [j]")
    received = tops.reduce(weights, "b h i j -> b j", "sum")  # attention mass per token
    chosen = top_k(received, k)
    tokens = tops.get_at(x, chosen, "b [t] d, b k -> b k d")
    updates = tops.einsum("b k d, d e -> b k e", tokens, w_update)
    return tops.add_at(x, chosen, updates, "b [t] d, b k, b k d -> b [t] d"), chosen


def main() -> int:
    rng = np.random.default_rng(0)
    batch, length, dim, heads, k = 2, 16, 32, 4, 3
    x = rng.standard_normal((batch, length, dim)).astype(np.float32)
    w_qk = (rng.standard_normal((dim, 2 * dim)) / dim**0.5).astype(np.float32)
    w_update = (rng.standard_normal((dim, dim)) / dim**0.5).astype(np.float32)

    out, chosen = step(x, w_qk, w_update, heads, k)
    print(f"numpy: updated {out.shape}, the {k} most attended tokens per row: {chosen.tolist()}")
    untouched = np.ones(length, dtype=bool)
    untouched[chosen[0]] = False
    assert np.array_equal(out[0, untouched], x[0, untouched])  # only the chosen rows change

    if importlib.util.find_spec("torch") is None:
        print("torch is not installed: NumPy only")
        return 0
    import torch

    args = [tops.convert(a, "torch") for a in (x, w_qk, w_update)]
    out_t, chosen_t = step(*args, heads, k)
    assert torch.equal(chosen_t, torch.from_numpy(chosen))
    np.testing.assert_allclose(tops.asnumpy(out_t), out, rtol=1e-4, atol=1e-5)
    print(f"torch: the same tokens, max difference {np.abs(tops.asnumpy(out_t) - out).max():.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
