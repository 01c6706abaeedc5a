"""The first call of a pattern: tensorops against einops, on every framework both serve.

Usage: python benchmarks/cold.py [--quick] [--framework NAME] [--processes N]

Model code meets each of its patterns once per process, as does every notebook cell
and script: what such a call costs is the pattern read and checked, the plan made
for the shapes, and the framework's calls. Each call here is the first of a pattern
that the process has never seen (fresh axis names every time), on tiny arrays, so the
framework's own work is small and the libraries' work shows.

Every framework runs in processes of its own (TensorFlow and Paddle cannot share one),
several of them (``--processes``). In each, both libraries are imported and warmed on
other patterns first (one-time costs such as finding the backend are not the first
call of a pattern), then the two take turns on each case, pattern by pattern,
alternating which goes first, so that a change in machine load hits both alike. A
process reports the median of its first calls per case and library; the table gives
the median of those over the processes, and the spread of the ratio (lowest and
highest process). Lazy frameworks (MLX, tinygrad) are not made to compute: the call is
what is timed.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

#: Each framework and the module that says whether it is installed.
FRAMEWORKS = {
    "numpy": "numpy",
    "torch": "torch",
    "tensorflow": "tensorflow",
    "paddle": "paddle",
    "jax": "jax",
    "mlx": "mlx.core",
    "tinygrad": "tinygrad",
    "pytensor": "pytensor",
}

#: case -> a function of (library, fresh suffix, arrays) making the call.
Case = Callable[[Any, str, dict[str, Any]], Any]


CASES: dict[str, Case] = {
    "rearrange a b c (d k) -> a (b c) k d": lambda lib, n, a: lib.rearrange(
        a["x"], f"a{n} b{n} c{n} (d{n} k{n}) -> a{n} (b{n} c{n}) k{n} d{n}", **{f"k{n}": 2}
    ),
    "rearrange b c h w -> b h w c": lambda lib, n, a: lib.rearrange(
        a["x"], f"b{n} c{n} h{n} w{n} -> b{n} h{n} w{n} c{n}"
    ),
    "rearrange ... (h d) -> ... h d": lambda lib, n, a: lib.rearrange(
        a["x"], f"... (h{n} d{n}) -> ... h{n} d{n}", **{f"h{n}": 2}
    ),
    "reduce a b (c r) d -> a d, max": lambda lib, n, a: lib.reduce(
        a["x"], f"a{n} b{n} (c{n} r{n}) d{n} -> a{n} d{n}", "max", **{f"r{n}": 2}
    ),
    "reduce b c (h 2) (w 2) -> b c h w, mean": lambda lib, n, a: lib.reduce(
        a["x"], f"b{n} c{n} (h{n} 2) (w{n} 2) -> b{n} c{n} h{n} w{n}", "mean"
    ),
    "repeat b c h w -> b c h w r": lambda lib, n, a: lib.repeat(
        a["x"], f"b{n} c{n} h{n} w{n} -> b{n} c{n} h{n} w{n} r{n}", **{f"r{n}": 3}
    ),
    "einsum b i d, b j d -> b i j": lambda lib, n, a: lib.einsum(
        a["q"], a["k"], f"b{n} i{n} d{n}, b{n} j{n} d{n} -> b{n} i{n} j{n}"
    ),
    "pack b * c": lambda lib, n, a: lib.pack([a["q"], a["x2"]], f"b{n} * c{n}"),
    "unpack b * c": lambda lib, n, a: lib.unpack(a["packed"], [(3,), (4, 4)], f"b{n} * c{n}"),
}


def arrays(framework: str) -> dict[str, Any]:
    """Tiny arrays of `framework`: x (2, 3, 4, 4), q and k (2, 3, 4), x2 (2, 4, 4, 4), packed."""
    import numpy as np

    rng = np.random.default_rng(0)
    shapes = {"x": (2, 3, 4, 4), "q": (2, 3, 4), "k": (2, 3, 4), "x2": (2, 4, 4, 4)}
    host = {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}
    host["packed"] = np.zeros((2, 19, 4), dtype=np.float32)
    convert = _converter(framework)
    return {name: convert(value) for name, value in host.items()}


def _converter(framework: str) -> Callable[[Any], Any]:
    if framework == "numpy":
        return lambda a: a
    if framework == "torch":
        import torch

        torch.set_num_threads(1)
        return torch.from_numpy
    if framework == "tensorflow":
        import tensorflow as tf

        return tf.constant
    if framework == "paddle":
        import paddle

        return paddle.to_tensor
    if framework == "jax":
        import jax.numpy as jnp

        return jnp.asarray
    if framework == "mlx":
        import mlx.core as mx

        return mx.array
    if framework == "tinygrad":
        from tinygrad import Tensor

        return lambda a: Tensor(a).realize()
    if framework == "pytensor":
        import pytensor.tensor as pt

        return pt.as_tensor_variable
    raise ValueError(f"unknown framework {framework!r}: expected one of {sorted(FRAMEWORKS)}")


def worker(framework: str, patterns: int, cases: list[str]) -> dict[str, list[float]]:
    """In this process: {case: [tensorops µs, einops µs]}, medians of `patterns` first calls."""
    import einops

    import tensorops

    libraries = (tensorops, einops)
    data = arrays(framework)
    fresh = (f"_{i}" for i in itertools.count())
    usable = {}
    for case, call in CASES.items():
        if cases and not any(word in case for word in cases):
            continue
        try:  # one-time costs of each library on this framework: not a first call of a pattern
            for library in libraries:
                call(library, next(fresh), data)
            usable[case] = call
        except Exception as error:  # einops' own backend may fail a case
            print(f"# {framework}: {case}: {type(error).__name__}: {error}", file=sys.stderr)
    times: dict[str, list[list[float]]] = {case: [[], []] for case in usable}
    clock = time.perf_counter
    for round_ in range(patterns):
        order = (0, 1) if round_ % 2 == 0 else (1, 0)
        for case, call in usable.items():
            for which in order:
                suffix = next(fresh)
                start = clock()
                call(libraries[which], suffix, data)
                times[case][which].append((clock() - start) * 1e6)
    return {case: [statistics.median(t) for t in pair] for case, pair in times.items()}


def run(framework: str, processes: int, patterns: int, cases: list[str]) -> list[str]:
    """The table rows of `framework`, from `processes` fresh processes."""
    results = []
    for _ in range(processes):
        command = [sys.executable, __file__, "--worker", framework, "--patterns", str(patterns)]
        command += [f"--case={case}" for case in cases]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode:
            return [f"| {framework} | failed: {done.stderr[-300:]!r} | | | | |"]
        results.append(json.loads(done.stdout.splitlines()[-1]))
    rows = []
    for case in results[0]:
        ours = statistics.median(r[case][0] for r in results)
        theirs = statistics.median(r[case][1] for r in results)
        ratios = [r[case][0] / r[case][1] for r in results]
        spread = f"{min(ratios):.2f}-{max(ratios):.2f}"
        rows.append(
            f"| {framework} | {case} | {ours:.1f} | {theirs:.1f} | {ours / theirs:.2f} | {spread} |"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer processes and patterns")
    parser.add_argument("--framework", choices=sorted(FRAMEWORKS), action="append")
    parser.add_argument("--processes", type=int, default=None, help="processes per framework")
    parser.add_argument("--patterns", type=int, default=None, help="fresh patterns per case")
    parser.add_argument("--case", action="append", default=[], help="cases naming this word")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    patterns = args.patterns or (15 if args.quick else 40)
    if args.worker:
        print(json.dumps(worker(args.worker, patterns, args.case)))
        return
    processes = args.processes or (3 if args.quick else 5)
    print(
        f"First calls of fresh patterns: medians over {processes} processes of each process's "
        f"median of {patterns} patterns."
    )
    print()
    print("| framework | case | tensorops µs | einops µs | tops/einops | spread |")
    print("|---|---|---:|---:|---:|---:|")
    for framework in args.framework or FRAMEWORKS:
        if importlib.util.find_spec(FRAMEWORKS[framework].split(".")[0]) is None:
            print(f"| {framework} | not installed | | | | |")
            continue
        print("\n".join(run(framework, processes, patterns, args.case)), flush=True)


if __name__ == "__main__":
    main()
