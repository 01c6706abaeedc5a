"""Per-call time of tensorops, einops and hand-written native code, in one run.

Usage: python benchmarks/overhead.py [--quick] [--device cuda]

``--device`` other than ``cpu`` times torch alone on that device, waiting for its
queued work (``torch.cuda.synchronize``) before and after each batch of calls.

Tiny cases measure the overhead of a cache hit; medium cases check that the
framework calls tensorops makes are as fast as the hand-written ones. Every
number in one table comes from the same process, so the ratios are fair: the
three calls of a row take turns, round by round, so a change in machine load
hits them alike, and each reports its fastest round (timeit's advice: slower
rounds are other processes, not the code). The medium geometric mean is over the
rows that compute; the others return views, whose time is the tiny rows' overhead.
Where the framework's own call is most of a tiny row (a reduction, NumPy's einsum loop),
the ratio cannot fall below native/einops: the "added" columns are what each library
adds to it, and their geometric mean compares those.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import einops
import numpy as np

import tensorops as tops


def _no_sync() -> None:
    """The CPU has no queued work to wait for."""


#: Waits for the device's queued work; set by ``main`` for a GPU.
SYNC: Callable[[], Any] = _no_sync
#: The torch device the torch cases run on.
DEVICE = "cpu"
#: The clock of `_timed`: wall time; ``time.thread_time`` leaves out the waits for a
#: core on a busy machine (single-threaded CPU work only).
CLOCK: Callable[[], float] = time.perf_counter


def _timed(fn: Callable[[], Any], number: int) -> float:
    """Seconds for ``number`` calls of ``fn``, the device's queued work included."""
    SYNC()
    start = CLOCK()
    for _ in range(number):
        fn()
    SYNC()
    return CLOCK() - start


def best_times(fns: list[Callable[[], Any]], rounds: int, seconds: float) -> list[float]:
    """Fastest round of each function, in µs per call; the functions take turns each round.

    A round times enough calls to last about ``seconds`` (at least one call).
    """
    numbers = []
    for fn in fns:
        fn()  # warm the caches
        once = _timed(fn, 1)
        numbers.append(max(1, min(100_000, int(seconds / max(once, 1e-9)))))
    best = [math.inf] * len(fns)
    for _ in range(rounds):
        for i, (fn, number) in enumerate(zip(fns, numbers, strict=True)):
            best[i] = min(best[i], _timed(fn, number) / number * 1e6)
    return best


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

        einsum = np.einsum

    else:
        import torch

        torch.set_num_threads(2)
        tiny = torch.zeros(2, 3, 4, 4, device=DEVICE)
        medium = torch.randn(32, 64, 56, 56, device=DEVICE)

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

        einsum = torch.einsum

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
    # einsum on a pair of tiny operands (einops calls the framework's einsum: the native column)
    a, b = tiny[0], tiny[1]
    rows.insert(
        5,
        (
            "einsum c h w, c h v -> c w v",
            "tiny",
            lambda: tops.einsum(a, b, "c h w, c h v -> c w v"),
            lambda: einops.einsum(a, b, "c h w, c h v -> c w v"),
            lambda: einsum("chw,chv->cwv", a, b),
        ),
    )
    return rows


def main() -> None:
    global SYNC, DEVICE
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--device", default="cpu", help="torch's device; not cpu: torch only")
    args = parser.parse_args()
    frameworks = ["numpy"] if args.device == "cpu" else []
    try:
        import torch

        frameworks.append("torch")
        DEVICE = args.device
        if DEVICE.startswith("cuda"):
            SYNC = torch.cuda.synchronize
    except ImportError:
        print("torch is not installed: NumPy only")
    print(
        "| framework | case | size | tensorops µs | einops µs | native µs | tops/einops "
        "| added tops µs | added einops µs |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for xp in frameworks:
        ratios, floors, added, medium = [], [], [], []
        for name, size, ours, theirs, native in cases(xp):
            rounds, seconds = (5, 0.01) if args.quick else (15, 0.02)
            t_ours, t_einops, t_native = best_times([ours, theirs, native], rounds, seconds)
            ratio = t_ours / t_einops
            if size == "tiny":
                ratios.append(ratio)
                floors.append(t_native / t_einops)
                added.append((t_ours - t_native, t_einops - t_native))
            elif name.startswith("reduce"):  # the medium rows that compute
                medium.append(t_ours / t_native)
            print(
                f"| {xp} | {name} | {size} | {t_ours:.2f} | {t_einops:.2f} | {t_native:.2f} "
                f"| {ratio:.2f} | {t_ours - t_native:.2f} | {t_einops - t_native:.2f} |"
            )
        print(
            f"| {xp} | geometric mean tops/einops (tiny) | | | | "
            f"| {geometric_mean(ratios):.2f} | | |"
        )
        print(
            f"| {xp} | geometric mean native/einops (tiny): no overhead at all | | | | "
            f"| {geometric_mean(floors):.2f} | | |"
        )
        shown = [ours / theirs for ours, theirs in added if ours > 0 and theirs > 0]
        print(
            f"| {xp} | geometric mean added tops / added einops (tiny, {len(shown)} rows "
            f"where both add) | | | | | {geometric_mean(shown):.2f} | | |"
        )
        print(
            f"| {xp} | geometric mean tops/native (medium, computing rows) | | | | "
            f"| {geometric_mean(medium):.2f} | | |"
        )


def geometric_mean(values: list[float]) -> float:
    """The geometric mean of `values` (nan for none)."""
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


if __name__ == "__main__":
    main()
