"""tensorops' wider vocabulary: brackets, named broadcasting, concatenation, planned einsums."""

import numpy as np

import tensorops as tops


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, heads: int = 2) -> np.ndarray:
    logits = tops.einsum("b (h d) i, b (h d) j -> b h i j", q, k, h=heads)
    weights = tops.softmax(logits, "b h i [j]")
    return tops.einsum(weights, v, "b h i j, b (h d) j -> b (h d) i", h=heads)


def log_probabilities(logits: np.ndarray) -> np.ndarray:
    return tops.log_softmax(logits, "b t [v]")


def gather_tokens(x: np.ndarray, index: np.ndarray) -> np.ndarray:
    return tops.get_at(x, index, "b [t] c, b p -> b p c")


def scatter_tokens(x: np.ndarray, index: np.ndarray, values: np.ndarray) -> np.ndarray:
    return tops.add_at(x, index, values, "b [t] c, b p, b p c -> b [t] c")


def overwrite(x: np.ndarray, index: np.ndarray, values: np.ndarray) -> np.ndarray:
    return tops.set_at(x, index, values, "b [t] c, b p, b p c -> b [t] c")


def scale_channels(x: np.ndarray, scale: np.ndarray, bias: np.ndarray) -> np.ndarray:
    y = tops.multiply(x, scale, "b t c, c -> b t c")
    return tops.add(y, bias, "b t c, c")


def masked(mask: np.ndarray, x: np.ndarray) -> np.ndarray:
    return tops.where(mask, x, 0.0, "b t, b t c, -> b t c")


def gated(x: np.ndarray, gate: np.ndarray) -> np.ndarray:
    return tops.elementwise(np.multiply, x, gate, "b t c, b c -> b c t")


def causal_shift(x: np.ndarray) -> np.ndarray:
    shifted = tops.roll(x, "b [t] c", shift=1)
    return tops.cumsum(shifted, "b [t] c")


def mirrored(x: np.ndarray) -> np.ndarray:
    return tops.flip(x, "b [h w] c")


def ranked(scores: np.ndarray) -> np.ndarray:
    order = tops.argsort(scores, "b [n]", descending=True)
    return tops.sort(order, "b [n]")


def concatenate(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return tops.rearrange([x, y], "b c1, b c2 -> b (c1 + c2)")


def split(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return tops.rearrange(x, "b (c1 + c2) -> b c1, b c2", c1=3)


def pooled(x: np.ndarray) -> np.ndarray:
    return tops.reduce(x, "b c (h 2) (w 2) -> b c h w", lambda t, axes: t.max(axis=axes))


def plan_of_chain() -> str:
    plan = tops.einsum_path("ij,jk,kl->il", (8, 4), (4, 16), (16, 2), strategy="optimal")
    return str(plan)


def log_partition(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return tops.einsum("ij,jk->ik", a, b, semiring="logsumexp")


def lengths_of(x: np.ndarray) -> dict[str, int]:
    return tops.parse_shape(x, "b c _ _")


def packed(cls: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    both, shapes = tops.pack([cls, tokens], "b * d")
    return tops.unpack(both, shapes, "b * d")[1]


def checked_inputs(q: np.ndarray, k: np.ndarray) -> dict[str, int]:
    tops.check(q, "b t (h d)", h=4)
    return tops.check([q, k], "b t c, b s c")
