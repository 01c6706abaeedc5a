"""Per-call time of tensorops, einops and hand-written native code, in one run.

Usage: python benchmarks/overhead.py [--quick]

Tiny cases measure the overhead of a cache hit; medium cases check that the
framework calls tensorops makes are as fast as the hand-written ones. Every
number in one table comes from the same process, so the ratios are fair.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import einops
import numpy as np

import tensorops as tops


def best_time(fn: Callable[[], Any], repeat: int, number: int) -> float:
    """Median of `repeat` runs of `number` calls, in microseconds per call."""
    fn()
    times = timeit.repeat(fn, repeat=repeat, number=number)
    return statistics.median(times) / number * 1e6


def cases(
    xp: str,
) -> list[tuple[str, str, Callable[[], Any], Callable[[], Any], Callable[[], Any]]]:
    """(name, size, tensorops call, einops call, native call) for one framework."""
    if xp == "numpy":
        tiny = np.zeros((2, 3, 4, 4), dtype=np.float32)
        medium = np.random.default_rng(0).standard_normal((32, 64, 56, 56)).astype(np.float32)

        def native_pool(x: np.ndarray) -> np.ndarray:
            b, c, h, w = x.shape
            return x.reshape(b, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))

        def permute(x: np.ndarray) -> np.ndarray:
            return x.transpose(0, 2, 3, 1)

        def merge(x: np.ndarray) -> np.ndarray:
            b, c, h, w = x.shape
            return x.reshape(b, c, h * w)

        def rep(x: np.ndarray) -> np.ndarray:
            return np.broadcast_to(x[..., None], (*x.shape, 3))

        def mean(x: np.ndarray) -> np.ndarray:
            return x.mean(axis=(2, 3))

    else:
        import torch

        torch.set_num_threads(2)
        tiny = torch.zeros(2, 3, 4, 4)
        medium = torch.randn(32, 64, 56, 56)

        def native_pool(x: Any) -> Any:
            b, c, h, w = x.shape
            return x.reshape(b, c, h // 2, 2, w // 2, 2).amax(dim=(3, 5))

        def permute(x: Any) -> Any:
            return x.permute(0, 2, 3, 1)

        def merge(x: Any) -> Any:
            b, c, h, w = x.shape
            return x.reshape(b, c, h * w)

        def rep(x: Any) -> Any:
            return x[..., None].expand(*x.shape, 3)

        def mean(x: Any) -> Any:
            return x.mean(dim=(2, 3))

    rows = []
    for size, x in (("tiny", tiny), ("medium", medium)):
        rows += [
            (
                "rearrange b c h w -> b h w c",
                size,
                lambda x=x: tops.rearrange(x, "b c h w -> b h w c"),
                lambda x=x: einops.rearrange(x, "b c h w -> b h w c"),
                lambda x=x: permute(x),
            ),
            (
                "rearrange b c h w -> b c (h w)",
                size,
                lambda x=x: tops.rearrange(x, "b c h w -> b c (h w)"),
                lambda x=x: einops.rearrange(x, "b c h w -> b c (h w)"),
                lambda x=x: merge(x),
            ),
            (
                "reduce 2x2 max-pool",
                size,
                lambda x=x: tops.reduce(x, "b c (h 2) (w 2) -> b c h w", "max"),
                lambda x=x: einops.reduce(x, "b c (h 2) (w 2) -> b c h w", "max"),
                lambda x=x: native_pool(x),
            ),
            (
                "reduce b c h w -> b c mean",
                size,
                lambda x=x: tops.reduce(x, "b c h w -> b c", "mean"),
                lambda x=x: einops.reduce(x, "b c h w -> b c", "mean"),
                lambda x=x: mean(x),
            ),
            (
                "repeat b c h w -> b c h w r",
                size,
                lambda x=x: tops.repeat(x, "b c h w -> b c h w r", r=3),
                lambda x=x: einops.repeat(x, "b c h w -> b c h w r", r=3),
                lambda x=x: rep(x),
            ),
        ]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    frameworks = ["numpy"]
    try:
        import torch  # noqa: F401

        frameworks.append("torch")
    except ImportError:
        print("torch is not installed: NumPy only")
    print(
        "| framework | case | size | tensorops µs | einops µs | native µs | tops/einops "
        "| added tops µs | added einops µs |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for xp in frameworks:
        ratios, medium = [], []
        for name, size, ours, theirs, native in cases(xp):
            repeat, number = (5, 2000) if size == "tiny" else (5, 5)
            if args.quick:
                repeat, number = 3, number // 4 or 1
            t_ours = best_time(ours, repeat, number)
            t_einops = best_time(theirs, repeat, number)
            t_native = best_time(native, repeat, number)
            ratio = t_ours / t_einops
            if size == "tiny":
                ratios.append(ratio)
            else:
                medium.append(t_ours / t_native)
            print(
                f"| {xp} | {name} | {size} | {t_ours:.2f} | {t_einops:.2f} | {t_native:.2f} "
                f"| {ratio:.2f} | {t_ours - t_native:.2f} | {t_einops - t_native:.2f} |"
            )
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"| {xp} | geometric mean tops/einops (tiny) | | | | | {geo:.2f} | | |")
        geo_medium = math.exp(sum(math.log(r) for r in medium) / len(medium))
        print(f"| {xp} | geometric mean tops/native (medium) | | | | | {geo_medium:.2f} | | |")


if __name__ == "__main__":
    main()
