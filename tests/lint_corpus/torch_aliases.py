"""torch and einops under aliases, imports inside functions, calls the linter leaves alone."""

import functools

import torch as th
from einops import rearrange as r
from torch import einsum, nn

WINDOW = 4


def relative_logits(q: th.Tensor, rel: th.Tensor) -> th.Tensor:
    logits = th.einsum("b h x y d, r d -> b h x y r", q, rel)
    return r(logits, "b h x y r -> b (h x) y r")


def shift_windows(x: th.Tensor, window: int = WINDOW) -> th.Tensor:
    windows = r(x, "b (x w1) (y w2) c -> (b x y) w1 w2 c", w1=window, w2=window)
    return einsum("nijc,nijc->nc", windows, windows)


def lazily(x: th.Tensor) -> th.Tensor:
    from einops import reduce

    return reduce(x, "b c (h 2) (w 2) -> b c h w", "max")


def pattern_from_argument(x: th.Tensor, pattern: str, **axes: int) -> th.Tensor:
    return r(x, pattern, **axes)


def shadowed(rearrange, x: th.Tensor) -> th.Tensor:
    return rearrange(x, "a -> b")


def einsum_of_strings(einsum, left: str) -> str:
    return einsum("i j, j k", left)


class Gate(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, dim * 2)
        self.split = functools.partial(r, pattern="b n (two d) -> two b n d", two=2)

    def forward(self, x: th.Tensor) -> th.Tensor:
        value, gate = self.split(self.proj(x))
        return value * gate.sigmoid()


def outer_heads(x: th.Tensor, y: th.Tensor, heads: int) -> th.Tensor:
    x = r(x, "b n (h d) -> b h n d", h=heads)
    y = r(y, "b n (h d) -> b h n d", h=heads)
    return th.einsum("bhid,bhjd->bhij", x, y)


def local_np_is_not_numpy(x: th.Tensor) -> th.Tensor:
    np = th
    return np.einsum("ii", x)
