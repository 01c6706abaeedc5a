"""A short printed tour of every tensorops op, on NumPy and (when installed) PyTorch.

Usage: python examples/quickstart.py
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a source checkout

import tensorops as tops


def show(label: str, value: Any) -> None:
    shape = getattr(value, "shape", None)
    text = tuple(shape) if shape is not None else value
    print(f"  {label:<52} {text}")


def tour(name: str, make: Any) -> None:
    print(f"{name}:")
    images = make(np.arange(2 * 3 * 4 * 4, dtype=np.float32).reshape(2, 3, 4, 4))  # b c h w

    show('rearrange "b c h w -> b h w c"', tops.rearrange(images, "b c h w -> b h w c"))
    show(
        'rearrange "b c (h p) (w q) -> b (h w) (p q c)"',
        tops.rearrange(images, "b c (h p) (w q) -> b (h w) (p q c)", p=2, q=2),
    )
    show(
        'rearrange [x, x] "n b c h w -> (n b) c h w"',
        tops.rearrange([images, images], "n b c h w -> (n b) c h w"),
    )
    show(
        'reduce "b c (h 2) (w 2) -> b c h w" max',
        tops.reduce(images, "b c (h 2) (w 2) -> b c h w", "max"),
    )
    show('reduce "b c h w -> b c" mean', tops.reduce(images, "b c h w -> b c", "mean"))
    show('repeat "b c h w -> b c (h 2) (w 2)"', tops.repeat(images, "b c h w -> b c (h 2) (w 2)"))
    show('repeat "b c h w -> b c h w k", k=3', tops.repeat(images, "b c h w -> b c h w k", k=3))

    a, b = make(np.ones((2, 3), np.float32)), make(np.ones((3, 4), np.float32))
    show('einsum "ij,jk->ik"', tops.einsum("ij,jk->ik", a, b))
    show('einsum a, b "i j, j k -> i k"', tops.einsum(a, b, "i j, j k -> i k"))
    x = make(np.ones((5, 8 * 4), np.float32))
    w = make(np.ones((4, 6), np.float32))
    show('einsum "b (h d), d e -> b h e", h=8', tops.einsum("b (h d), d e -> b h e", x, w, h=8))

    packed, shapes = tops.pack([images, images[:, 0]], "b * h w")
    show('pack [x, x[:, 0]] "b * h w"', packed)
    first, second = tops.unpack(packed, shapes, "b * h w")
    show("unpack -> shapes", (tuple(first.shape), tuple(second.shape)))
    show('parse_shape "b c _ _"', tops.parse_shape(images, "b c _ _"))
    print()


def main() -> int:
    tour("NumPy", np.asarray)
    if importlib.util.find_spec("torch") is None:
        print("PyTorch: not installed, skipped (pip install 'tensorops[torch]')")
    else:
        import torch

        tour("PyTorch", torch.from_numpy)
    print(tops.explain("b c (h w) -> b h w c", (2, 3, 16), h=4))
    return 0


if __name__ == "__main__":
    sys.exit(main())
