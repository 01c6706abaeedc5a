"""softmax, reductions, indexing, check, concatenation, element-wise ops and ops along axes.

Each is timed as tensorops against hand-written code and einx.

Usage: python benchmarks/new_ops.py [--quick] [--no-medium] [--cpu-time]

For every op, on tiny NumPy arrays and torch tensors, one table row holds the
per-call time of the tensorops call, of the hand-written framework call it
replaces, and of einx's call where einx spells the op the same way, all from the
same process (the house method of ``benchmarks/overhead.py``): the calls take
turns round by round, so a change in machine load hits them alike, and each
reports its fastest round. *Warm* is a call whose plan is cached (the same shapes
again); *cold* is the first call for a new shape (its plan is made), the median
over several new batch sizes. Medium sizes check that the framework work is the
native call's: softmax over (32, 8, 512, 512) float32, gather / scatter-add of
4096 rows of a (32, 65536, 64) float32 tensor.

einx is measured, never imported by tensorops. ``--cpu-time`` times the tiny rows
(one thread) in the thread's CPU time instead of wall time: on a machine whose
cores are busy with other work, the waits for a core drop out of the numbers.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
import overhead
from _pattern_ops import check_switched_off, pattern_op_cases
from overhead import best_times

import tensorops as tops

try:
    import einx
except ImportError:  # the einx column stays empty
    einx = None


class Case(NamedTuple):
    """One op: its arrays for a batch size, and the three ways to call it."""

    name: str
    make: Callable[[int], tuple[Any, ...]]
    ours: Callable[..., Any]
    native: Callable[..., Any]
    theirs: Callable[..., Any] | None


SOFTMAX = "b h i [j]"
GATHER = "b [t] c, b p -> b p c"
GATHER_2D = "b [h w] c, b p [2] -> b p c"
EMBED = "[v] d, b n -> b n d"
SCATTER = "b [t] c, b p, b p c -> b [t] c"


def _einx(name: str, pattern: str) -> Callable[..., Any] | None:
    if einx is None:
        return None
    function = getattr(einx, name)
    return lambda *arrays: function(pattern, *arrays)


def _copy(x: Any) -> Any:
    return x.copy() if isinstance(x, np.ndarray) else x.clone()


class Native(NamedTuple):
    """The hand-written calls of one framework, and how it makes arrays."""

    array: Callable[..., Any]  # array(*shape): float32 normal
    integers: Callable[..., Any]  # integers(high, *shape)
    stack: Callable[..., Any]
    softmax: Callable[[Any], Any]
    log_softmax: Callable[[Any], Any]
    logsumexp: Callable[[Any], Any]  # over the last two axes
    var: Callable[[Any], Any]
    std: Callable[[Any], Any]
    gather: Callable[[Any, Any], Any]  # b [t] c, b p -> b p c
    gather_2d: Callable[[Any, Any], Any]  # b [h w] c, b p [2] -> b p c
    set_rows: Callable[[Any, Any, Any], Any]  # b [t] c, b p, b p c -> b [t] c
    add_rows: Callable[[Any, Any, Any], Any]


def numpy_calls(rng: np.random.Generator) -> Native:
    """NumPy's hand-written calls. logsumexp is stable and handles infinities, as ours."""

    def softmax(x: Any) -> Any:
        exp = np.exp(x - x.max(-1, keepdims=True))
        return exp / exp.sum(-1, keepdims=True)

    def log_softmax(x: Any) -> Any:
        shifted = x - x.max(-1, keepdims=True)
        return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))

    def logsumexp(x: Any) -> Any:  # as scipy.special.logsumexp
        top = x.max((2, 3), keepdims=True)
        top[~np.isfinite(top)] = 0
        return np.log(np.exp(x - top).sum((2, 3))) + top[..., 0, 0]

    def rows(x: Any) -> Any:
        return np.arange(x.shape[0])[:, None]

    def set_rows(x: Any, index: Any, values: Any) -> Any:
        out = x.copy()
        out[rows(x), index] = values
        return out

    def add_rows(x: Any, index: Any, values: Any) -> Any:
        out = x.copy()
        np.add.at(out, (rows(x), index), values)
        return out

    return Native(
        array=lambda *shape: rng.standard_normal(shape).astype(np.float32),
        integers=lambda high, *shape: rng.integers(0, high, shape),
        stack=np.stack,
        softmax=softmax,
        log_softmax=log_softmax,
        logsumexp=logsumexp,
        var=lambda x: x.var((2, 3)),
        std=lambda x: x.std((2, 3)),
        gather=lambda x, index: np.take_along_axis(x, index[..., None], axis=1),
        gather_2d=lambda x, points: x[rows(x), points[..., 0], points[..., 1]],
        set_rows=set_rows,
        add_rows=add_rows,
    )


def torch_calls(rng: np.random.Generator) -> Native:
    """torch's hand-written calls."""
    import torch

    def expanded(x: Any, index: Any) -> Any:
        return index[..., None].expand(-1, -1, x.shape[2])

    def gather_2d(x: Any, points: Any) -> Any:
        b, h, w, c = x.shape
        flat = points[..., 0] * w + points[..., 1]
        return torch.gather(x.reshape(b, h * w, c), 1, flat[..., None].expand(-1, -1, c))

    return Native(
        array=lambda *shape: torch.from_numpy(rng.standard_normal(shape).astype(np.float32)),
        integers=lambda high, *shape: torch.from_numpy(rng.integers(0, high, shape)),
        stack=torch.stack,
        softmax=lambda x: torch.softmax(x, -1),
        log_softmax=lambda x: torch.log_softmax(x, -1),
        logsumexp=lambda x: torch.logsumexp(x, (2, 3)),
        var=lambda x: torch.var(x, (2, 3), correction=0),
        std=lambda x: torch.std(x, (2, 3), correction=0),
        gather=lambda x, index: torch.gather(x, 1, expanded(x, index)),
        gather_2d=gather_2d,
        set_rows=lambda x, index, values: x.scatter(1, expanded(x, index), values),
        add_rows=lambda x, index, values: x.scatter_add(1, expanded(x, index), values),
    )


def _reduce_case(native: Native, make: Any, name: str, right: str, bracketed: str) -> Case:
    """reduce(x, "b c h w -> {right}", name) against the native call and einx's bracketed form."""
    pattern = f"b c h w -> {right}"
    call = getattr(native, name) if name in Native._fields else lambda x: getattr(x, name)(-1)
    return Case(
        f"{name} {pattern}",
        make,
        lambda x: tops.reduce(x, pattern, name),
        call,
        _einx(name, bracketed),
    )


def _gather_case(pattern: str, make: Any, call: Callable[..., Any]) -> Case:
    return Case(
        f"get_at {pattern}",
        make,
        lambda x, i: tops.get_at(x, i, pattern),
        call,
        _einx("get_at", pattern),
    )


def _scatter_case(native: Native, make: Any, name: str) -> Case:
    ours = getattr(tops, name)
    # einx writes into a NumPy array it is given: hand it a copy
    theirs = None if einx is None else getattr(einx, name)
    return Case(
        f"{name} {SCATTER}",
        make,
        lambda x, i, v: ours(x, i, v, SCATTER),
        native.set_rows if name == "set_at" else native.add_rows,
        None if theirs is None else lambda x, i, v: theirs(SCATTER, _copy(x), i, v),
    )


def _softmax(op: Callable[..., Any], x: Any) -> Any:
    return op(x, SOFTMAX)


def tiny_cases(xp: str) -> list[Case]:
    """The ops on tiny arrays of `xp` ("numpy" or "torch"); batch sizes vary for cold calls."""
    rng = np.random.default_rng(0)
    native = numpy_calls(rng) if xp == "numpy" else torch_calls(rng)
    array, integers = native.array, native.integers

    def four(b: int) -> tuple[Any, ...]:
        return (array(b, 3, 4, 4),)

    def rows(b: int) -> tuple[Any, ...]:
        return (array(b, 6, 4), integers(6, b, 5))

    def points(b: int) -> tuple[Any, ...]:
        return (array(b, 4, 5, 3), native.stack([integers(4, b, 6), integers(5, b, 6)], -1))

    def scatter(b: int) -> tuple[Any, ...]:
        return (*rows(b), array(b, 5, 4))

    normalized = [
        Case(
            f"{op.__name__} {SOFTMAX}",
            four,
            partial(_softmax, op),
            call,
            _einx(op.__name__, SOFTMAX),
        )
        for op, call in ((tops.softmax, native.softmax), (tops.log_softmax, native.log_softmax))
    ]
    reduced = [
        _reduce_case(native, four, name, "b c h", "b c h [w]") for name in ("argmax", "argmin")
    ]
    reduced += [
        _reduce_case(native, four, name, "b c", "b c [h w]") for name in ("logsumexp", "var", "std")
    ]
    gathered = [
        _gather_case(GATHER, rows, native.gather),
        _gather_case(EMBED, lambda b: (array(10, 4), integers(10, b, 3)), lambda x, i: x[i]),
        _gather_case(GATHER_2D, points, native.gather_2d),
    ]
    return [
        *normalized,
        *reduced,
        *gathered,
        *(_scatter_case(native, scatter, n) for n in ("set_at", "add_at")),
    ]


def cold_time(
    call: Callable[..., Any], make: Callable[[int], tuple[Any, ...]], sizes: range
) -> float:
    """Median µs of a first call for a new shape (one per batch size in `sizes`)."""
    times = []
    for batch in sizes:
        arrays = make(batch)
        start = overhead.CLOCK()
        call(*arrays)
        times.append((overhead.CLOCK() - start) * 1e6)
    return statistics.median(times)


def medium_cases(xp: str) -> list[tuple[str, Callable[[], Any], Callable[[], Any]]]:
    """(name, tensorops call, native call) on medium sizes."""
    rng = np.random.default_rng(0)
    scores = rng.standard_normal((32, 8, 512, 512), dtype=np.float32)
    table = rng.standard_normal((32, 65536, 64), dtype=np.float32)
    index = rng.integers(0, 65536, (32, 4096))
    values = rng.standard_normal((32, 4096, 64), dtype=np.float32)
    rows = np.arange(32)[:, None]
    if xp == "numpy":

        def softmax() -> Any:
            exp = np.exp(scores - scores.max(-1, keepdims=True))
            exp /= exp.sum(-1, keepdims=True)
            return exp

        def add_rows() -> Any:
            out = table.copy()
            np.add.at(out, (rows, index), values)
            return out

        return [
            ("softmax (32, 8, 512, 512) [j]", lambda: tops.softmax(scores, SOFTMAX), softmax),
            (
                "get_at 4096 of (32, 65536, 64)",
                lambda: tops.get_at(table, index, GATHER),
                lambda: np.take_along_axis(table, index[..., None], axis=1),
            ),
            (
                "add_at 4096 into (32, 65536, 64)",
                lambda: tops.add_at(table, index, values, SCATTER),
                add_rows,
            ),
        ]
    import torch

    scores_t, table_t = torch.from_numpy(scores), torch.from_numpy(table)
    index_t, values_t = torch.from_numpy(index), torch.from_numpy(values)
    expanded = index_t[..., None].expand(-1, -1, 64)
    return [
        (
            "softmax (32, 8, 512, 512) [j]",
            lambda: tops.softmax(scores_t, SOFTMAX),
            lambda: torch.softmax(scores_t, -1),
        ),
        (
            "logsumexp (32, 8, 512, 512) -> b h",
            lambda: tops.reduce(scores_t, "b h i j -> b h", "logsumexp"),
            lambda: torch.logsumexp(scores_t, (2, 3)),
        ),
        (
            "get_at 4096 of (32, 65536, 64)",
            lambda: tops.get_at(table_t, index_t, GATHER),
            lambda: torch.gather(table_t, 1, index_t[..., None].expand(-1, -1, 64)),
        ),
        (
            "add_at 4096 into (32, 65536, 64)",
            lambda: tops.add_at(table_t, index_t, values_t, SCATTER),
            lambda: table_t.scatter_add(1, expanded, values_t),
        ),
    ]


def _us(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}" if value >= 100 else f"{value:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (under two minutes)")
    parser.add_argument("--no-medium", action="store_true", help="tiny arrays only")
    parser.add_argument(
        "--cpu-time", action="store_true", help="tiny rows in this thread's CPU time"
    )
    args = parser.parse_args()
    if args.cpu_time:
        overhead.CLOCK = time.thread_time
    rounds, seconds, cold_sizes = (5, 0.01, range(3, 8)) if args.quick else (15, 0.02, range(3, 18))
    frameworks = ["numpy"]
    try:
        import torch

        # one thread for tiny tensors: nothing to share out, and a second thread on a
        # busy machine only adds a wake-up to every call; two for the medium sizes
        torch.set_num_threads(1)
        frameworks.append("torch")
    except ImportError:
        print("torch is not installed: NumPy only")
    print(
        "| framework | op | tops µs | native µs | einx µs | added µs | tops / einx "
        "| cold tops µs | cold einx µs |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for xp in frameworks:
        for case in [*tiny_cases(xp), *pattern_op_cases(xp)]:
            arrays = case.make(2)
            calls = [case.ours, case.native] + ([case.theirs] if case.theirs else [])
            times = [*best_times([partial(c, *arrays) for c in calls], rounds, seconds), None]
            ours, native, theirs = times[0], times[1], times[2]
            cold_ours = cold_time(case.ours, case.make, cold_sizes)
            cold_theirs = (
                None if case.theirs is None else cold_time(case.theirs, case.make, cold_sizes)
            )
            ratio = "" if theirs is None else f"{ours / theirs:.2f}"
            print(
                f"| {xp} | {case.name} | {_us(ours)} | {_us(native)} | {_us(theirs)} "
                f"| {ours - native:.2f} | {ratio} | {_us(cold_ours)} | {_us(cold_theirs)} |"
            )
        print(check_switched_off(xp, rounds, seconds, best_times) + " | | |")
    if args.no_medium:
        return
    overhead.CLOCK = time.perf_counter  # two threads: wall time
    if "torch" in frameworks:
        torch.set_num_threads(2)
    print()
    print("| framework | op (medium) | tops ms | native ms | tops / native |")
    print("|---|---|---:|---:|---:|")
    for xp in frameworks:
        ratios = []
        for name, ours, native in medium_cases(xp):
            t_ours, t_native = best_times([ours, native], 3 if args.quick else 7, 0.0)
            ratios.append(t_ours / t_native)
            ratio = t_ours / t_native
            print(f"| {xp} | {name} | {t_ours / 1e3:.2f} | {t_native / 1e3:.2f} | {ratio:.3f} |")
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"| {xp} | geometric mean | | | {geo:.3f} |")


if __name__ == "__main__":
    main()
