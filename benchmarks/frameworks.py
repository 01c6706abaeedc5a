"""Per-call time of tensorops, einops and hand-written code on TensorFlow, Paddle, tinygrad,
PyTensor and MLX, and of ``tensorops.einsum`` against each framework's own einsum.

Usage: python benchmarks/frameworks.py [--quick] [--framework NAME]

Without ``--framework`` every installed framework runs in a process of its own (TensorFlow
and Paddle cannot share one) and the rows are printed as one table.

What is timed is the whole public call, as a user makes it, with a pattern already seen
(``tensorops.rearrange(x, pattern)`` against ``einops.rearrange(x, pattern)`` against the
framework's own calls written by hand), the fastest round of calls taking turns (as
``benchmarks/overhead.py``). The first call of a pattern is ``benchmarks/cold.py``'s.

MLX and tinygrad are lazy: each call here ends with ``mx.eval`` / ``.realize()``, so the
framework's work is timed too. PyTensor is symbolic: a call builds graph, and that is what
its rows time.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import einops
import numpy as np

import tensorops as tops
from benchmarks.overhead import best_times, geometric_mean

FRAMEWORKS = {
    "tensorflow": "tensorflow",
    "paddle": "paddle",
    "tinygrad": "tinygrad",
    "pytensor": "pytensor",
    "mlx": "mlx.core",
}


@dataclass(frozen=True)
class Native:
    """A framework's own calls, for the hand-written column, and how to finish a call."""

    asarray: Callable[[np.ndarray], Any]
    permute: Callable[[Any, tuple[int, ...]], Any]
    reshape: Callable[[Any, tuple[int, ...]], Any]
    amax: Callable[[Any, tuple[int, ...]], Any]
    mean: Callable[[Any, tuple[int, ...]], Any]
    repeat_last: Callable[[Any, int], Any]
    einsum: Callable[..., Any]
    #: what makes a lazy result real (identity where calls compute at once)
    done: Callable[[Any], Any] = lambda x: x


def native(name: str) -> Native:
    """The hand-written calls of framework ``name``."""
    if name == "tensorflow":
        import tensorflow as tf

        return Native(
            lambda a: tf.constant(a),
            tf.transpose,
            tf.reshape,
            lambda x, axes: tf.reduce_max(x, axis=axes),
            lambda x, axes: tf.reduce_mean(x, axis=axes),
            lambda x, r: tf.broadcast_to(x[..., None], (*x.shape, r)),
            tf.einsum,
        )
    if name == "paddle":
        import paddle

        return Native(
            paddle.to_tensor,
            paddle.transpose,
            paddle.reshape,
            lambda x, axes: paddle.amax(x, axis=axes),
            lambda x, axes: paddle.mean(x, axis=axes),
            lambda x, r: paddle.expand(x.unsqueeze(-1), (*x.shape, r)),
            paddle.einsum,
        )
    if name == "tinygrad":
        from tinygrad import Tensor

        return Native(
            lambda a: Tensor(a).realize(),
            lambda x, axes: x.permute(axes),
            lambda x, shape: x.reshape(shape),
            lambda x, axes: x.max(axis=axes),
            lambda x, axes: x.mean(axis=axes),
            lambda x, r: x.unsqueeze(-1).expand(*x.shape, r),
            Tensor.einsum,
            lambda x: x.realize(),
        )
    if name == "pytensor":
        import pytensor.tensor as pt

        return Native(
            pt.as_tensor_variable,
            lambda x, axes: x.transpose(axes),
            lambda x, shape: x.reshape(shape),
            lambda x, axes: pt.max(x, axis=axes),
            lambda x, axes: pt.mean(x, axis=axes),
            lambda x, r: pt.broadcast_to(x[..., None], (*x.type.shape, r)),
            pt.einsum,
        )
    if name == "mlx":
        import mlx.core as mx

        def done(x: Any) -> Any:
            mx.eval(x)
            return x

        return Native(
            mx.array,
            mx.transpose,
            mx.reshape,
            lambda x, axes: mx.max(x, axis=axes),
            lambda x, axes: mx.mean(x, axis=axes),
            lambda x, r: mx.broadcast_to(x[..., None], (*x.shape, r)),
            mx.einsum,
            done,
        )
    raise ValueError(f"unknown framework {name!r}: expected one of {sorted(FRAMEWORKS)}")


Row = tuple[str, Callable[[], Any], Callable[[], Any] | None, Callable[[], Any]]


def overhead_rows(fw: Native) -> list[Row]:
    """(case, tensorops call, einops call, hand-written call) on tiny arrays."""
    x = fw.asarray(np.zeros((2, 3, 4, 4), dtype=np.float32))
    d = fw.done
    return [
        (
            "rearrange b c h w -> b h w c",
            lambda: d(tops.rearrange(x, "b c h w -> b h w c")),
            lambda: d(einops.rearrange(x, "b c h w -> b h w c")),
            lambda: d(fw.permute(x, (0, 2, 3, 1))),
        ),
        (
            "rearrange b c h w -> b c (h w)",
            lambda: d(tops.rearrange(x, "b c h w -> b c (h w)")),
            lambda: d(einops.rearrange(x, "b c h w -> b c (h w)")),
            lambda: d(fw.reshape(x, (2, 3, 16))),
        ),
        (
            "reduce 2x2 max-pool",
            lambda: d(tops.reduce(x, "b c (h 2) (w 2) -> b c h w", "max")),
            lambda: d(einops.reduce(x, "b c (h 2) (w 2) -> b c h w", "max")),
            lambda: d(fw.amax(fw.reshape(x, (2, 3, 2, 2, 2, 2)), (3, 5))),
        ),
        (
            "reduce b c h w -> b c mean",
            lambda: d(tops.reduce(x, "b c h w -> b c", "mean")),
            lambda: d(einops.reduce(x, "b c h w -> b c", "mean")),
            lambda: d(fw.mean(x, (2, 3))),
        ),
        (
            "repeat b c h w -> b c h w r",
            lambda: d(tops.repeat(x, "b c h w -> b c h w r", r=3)),
            lambda: d(einops.repeat(x, "b c h w -> b c h w r", r=3)),
            lambda: d(fw.repeat_last(x, 3)),
        ),
    ]


def einsum_rows(fw: Native) -> list[Row]:
    """(case, tensorops.einsum, None, the framework's einsum)."""
    rng = np.random.default_rng(0)

    def arrays(*shapes: tuple[int, ...]) -> list[Any]:
        return [fw.asarray(rng.standard_normal(s).astype(np.float32)) for s in shapes]

    cases = [
        ("ij,jk->ik", "8x8 @ 8x8", arrays((8, 8), (8, 8))),
        ("bij,bjk->bik", "16x64x64 batched", arrays((16, 64, 64), (16, 64, 64))),
        ("ab,bc,cd,de->ae", "chain of four 64x64", arrays(*[(64, 64)] * 4)),
        ("ij,j,jk->ik", "matrix, vector, matrix 128", arrays((128, 128), (128,), (128, 128))),
    ]
    d = fw.done
    return [
        (
            f"einsum {eq} ({what})",
            lambda eq=eq, ops=ops: d(tops.einsum(eq, *ops)),
            None,
            lambda eq=eq, ops=ops: d(fw.einsum(eq, *ops)),
        )
        for eq, what, ops in cases
    ]


def run(name: str, quick: bool) -> None:
    """Print the table rows of framework ``name``."""
    fw = native(name)
    rounds, seconds = (5, 0.01) if quick else (15, 0.02)
    ratios, floors, added = [], [], []
    for case, ours, theirs, hand in overhead_rows(fw):
        assert theirs is not None
        try:
            theirs()
        except Exception as error:  # einops' own backend fails this case
            t_ours, t_hand = best_times([ours, hand], rounds, seconds)
            failure = f"einops raises {type(error).__name__}"
            print(f"| {name} | {case} | {t_ours:.2f} | {failure} | {t_hand:.2f} | | |")
            continue
        t_ours, t_einops, t_hand = best_times([ours, theirs, hand], rounds, seconds)
        ratios.append(t_ours / t_einops)
        floors.append(t_hand / t_einops)
        if t_ours > t_hand and t_einops > t_hand:
            added.append((t_ours - t_hand) / (t_einops - t_hand))
        print(
            f"| {name} | {case} | {t_ours:.2f} | {t_einops:.2f} | {t_hand:.2f} "
            f"| {t_ours / t_einops:.2f} | {t_ours - t_hand:.2f} | {t_einops - t_hand:.2f} |"
        )
    over = f"{len(ratios)} cases einops runs"
    print(
        f"| {name} | geometric mean tensorops/einops (warm, {over}) | | | "
        f"| {geometric_mean(ratios):.2f} | | |"
    )
    print(
        f"| {name} | geometric mean hand-written/einops: no overhead at all | | | "
        f"| {geometric_mean(floors):.2f} | | |"
    )
    print(
        f"| {name} | geometric mean added tops / added einops ({len(added)} cases where "
        f"both add) | | | | {geometric_mean(added):.2f} | | |"
    )
    for case, ours, _, hand in einsum_rows(fw):
        t_ours, t_hand = best_times([ours, hand], rounds, seconds)
        print(f"E| {name} | {case} | {t_ours:.2f} | {t_hand:.2f} | {t_ours / t_hand:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--framework", choices=sorted(FRAMEWORKS), help="one framework, here")
    args = parser.parse_args()
    if args.framework:
        run(args.framework, args.quick)
        return
    overhead, einsum = [], []
    for name, module in FRAMEWORKS.items():
        if importlib.util.find_spec(module.split(".")[0]) is None:
            overhead.append(f"| {name} | not installed | | | | | | |")
            continue
        quick = ["--quick"] if args.quick else []
        command = [sys.executable, __file__, "--framework", name, *quick]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        lines = done.stdout.splitlines()
        overhead += [line for line in lines if line.startswith("|")]
        einsum += [line[1:] for line in lines if line.startswith("E|")]
        if done.returncode:
            overhead.append(f"| {name} | failed: {done.stderr[-300:]!r} | | | | | | |")
    print(
        "| framework | case | tensorops µs | einops µs | hand-written µs | tops/einops "
        "| added tops µs | added einops µs |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(overhead))
    print()
    print("| framework | einsum | tensorops.einsum µs | the framework's einsum µs | ratio |")
    print("|---|---|---:|---:|---:|")
    print("\n".join(einsum))


if __name__ == "__main__":
    main()
