"""Einsum over other semirings: tensorops against hand-written NumPy and PyTorch.

Cases (float32; errors against a float64 reference):

* HMM forward pass, 1,000 states, 1,000 steps: the log-likelihood, as a loop of
  per-step calls (``"i,ij->j"``) and as one einsum over the whole chain (2,000
  operands in the sublist format: ``"dp"`` plans it, cold is the first call, planning
  included, warm the next; or the step-by-step path given explicitly).
* Viterbi (``"max"``) over the same HMM: the loop of per-step calls, and the chain as
  one einsum with ``argmax=True`` (the best path decoded).
* A 4-operand log-space contraction, ``ab,bc,cd,de->ae``, 24 per axis.

Each is timed (the whole public call: cold, then the best of two warm rounds) beside
(a) the hand-written broadcast and stable ``logsumexp`` / ``max`` and (b) the
hand-written max-shifted ``exp`` / matmul / ``log`` (which exponentiates the transition
matrix once, outside the loop). Memory, of a warm call: the peak traced by
``tracemalloc`` for NumPy; for torch, which allocates outside ``tracemalloc``, the peak
resident memory above the start, sampled beside the call in a fresh process per
method (with glibc's mmap threshold fixed, so that freed blocks leave). Each framework
runs in its own process.

Usage::

    python benchmarks/semiring.py            # full run (a few minutes)
    python benchmarks/semiring.py --quick    # 200 states, 200 steps
    python benchmarks/semiring.py --threads 1   # one thread per library (a busy machine)
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

ROUNDS = 3


def hmm(states: int, steps: int) -> dict[str, np.ndarray]:
    """Log-parameters of a random HMM and a sequence of observations (float64)."""
    rng = np.random.default_rng(0)
    symbols = 50
    return {
        "start": np.log(rng.dirichlet(np.ones(states))),
        "transition": np.log(rng.dirichlet(np.full(states, 0.5), size=states)),
        "emission": np.log(rng.dirichlet(np.full(symbols, 0.5), size=states)),
        "observed": rng.integers(0, symbols, size=steps),
    }


def chain_arguments(start: Any, transition: Any, emissions: list[Any]) -> list[Any]:
    """The chain in the sublist format: start(z0) e0(z0) T(z0 z1) e1(z1) ... -> ()."""
    arguments: list[Any] = [start, [0], emissions[0], [0]]
    for t in range(1, len(emissions)):
        arguments += [transition, [t - 1, t], emissions[t], [t]]
    return [*arguments, []]


def forward_path(steps: int) -> list[tuple[int, int]]:
    """The step-by-step order of the chain: (start, e0), then (T, alpha), (e, alpha), ..."""
    count = 2 * steps
    return [(0, 1)] + [(0, k) for k in range(count - 2, 0, -1)]


# --- the methods, written once over NumPy or torch ----------------------------------------


class Ops:
    """The few calls the hand-written versions make, in NumPy or torch."""

    def __init__(self, framework: str, precision: str) -> None:
        if framework == "numpy":
            dtype = np.dtype(precision)
            self.array: Callable[[Any], Any] = lambda x: np.ascontiguousarray(x, dtype)
            self.exp, self.log = np.exp, np.log
            self.amax: Callable[..., Any] = lambda x, axis, keep=False: x.max(axis, keepdims=keep)
            self.argmax: Callable[[Any, int], Any] = lambda x, axis: x.argmax(axis)
        else:
            import torch

            dtype = getattr(torch, precision)
            self.array = lambda x: torch.from_numpy(np.ascontiguousarray(x)).to(dtype)
            self.exp, self.log = torch.exp, torch.log
            self.amax = lambda x, axis, keep=False: x.amax(axis, keepdim=keep)
            self.argmax = lambda x, axis: x.argmax(axis)

    def logsumexp(self, x: Any, axes: Any) -> Any:
        """The stable log-sum-exp over `axes`: shifted by the maximum."""
        top = self.amax(x, axes, True)
        total = self.log(self.exp(x - top).sum(axes))
        return total + top.reshape(total.shape)


def methods(data: dict[str, Any], framework: str, precision: str) -> dict[str, Callable[[], Any]]:
    """Every method of every case, on arrays of `framework` in `precision`."""
    import tensorops as tops

    ops = Ops(framework, precision)
    start, transition = ops.array(data["start"]), ops.array(data["transition"])
    emissions = [ops.array(data["emission"][:, o]) for o in data["observed"]]
    hmm = (start, transition, emissions)
    arguments = chain_arguments(*hmm)
    path = forward_path(len(emissions))
    four = [ops.array(x) for x in data["four"]]
    return {
        "hmm loop/tensorops": functools.partial(_tops_loop, "logsumexp", *hmm),
        "hmm loop/broadcast+logsumexp": functools.partial(_broadcast_loop, ops.logsumexp, *hmm),
        "hmm loop/exp-matmul-log": functools.partial(_matmul_loop, ops, *hmm),
        "hmm chain/tensorops": lambda: tops.einsum(*arguments, semiring="logsumexp", strategy="dp"),
        "hmm chain (explicit path)/tensorops": lambda: tops.einsum(
            *arguments, semiring="logsumexp", strategy=path
        ),
        "viterbi loop/tensorops": functools.partial(_tops_loop, "max", *hmm),
        "viterbi loop/broadcast+max": functools.partial(_broadcast_loop, ops.amax, *hmm),
        "viterbi chain, decoded/tensorops": lambda: tops.einsum(
            *arguments, semiring="max", argmax=True, strategy="dp"
        )[0],
        "viterbi chain, decoded/broadcast+max": functools.partial(_decode, ops, *hmm),
        "4 operands/tensorops": lambda: tops.einsum("ab,bc,cd,de->ae", *four, semiring="logsumexp"),
        "4 operands/broadcast+logsumexp": lambda: _four_broadcast(ops, *four),
        "4 operands/exp-matmul-log": lambda: _shifted_chain(ops, four),
    }


def _tops_loop(semiring: str, start: Any, transition: Any, emissions: list[Any]) -> Any:
    """The forward pass (or Viterbi's scores), one tensorops call per step."""
    import tensorops as tops

    alpha = start + emissions[0]
    for e in emissions[1:]:
        alpha = tops.einsum("i,ij->j", alpha, transition, semiring=semiring) + e
    return tops.einsum("i->", alpha, semiring=semiring)


def _broadcast_loop(
    reduce: Callable[[Any, int], Any], start: Any, transition: Any, emissions: list[Any]
) -> Any:
    """The same by hand: each step broadcast to a matrix and reduced (logsumexp or max)."""
    alpha = start + emissions[0]
    for e in emissions[1:]:
        alpha = reduce(alpha[:, None] + transition, 0) + e
    return reduce(alpha, 0)


def _matmul_loop(ops: Ops, start: Any, transition: Any, emissions: list[Any]) -> Any:
    """The forward pass by max-shifted exp / matmul / log; exp(transition) made once."""
    column = ops.amax(transition, 0)
    probabilities = ops.exp(transition - column)
    alpha = start + emissions[0]
    for e in emissions[1:]:
        top = ops.amax(alpha, 0)
        alpha = ops.log(ops.exp(alpha - top) @ probabilities) + top + column + e
    return ops.logsumexp(alpha, 0)


def _decode(ops: Ops, start: Any, transition: Any, emissions: list[Any]) -> Any:
    """Viterbi by hand: a broadcast max per step, its back-pointers, then the backtrack."""
    v, pointers = start + emissions[0], []
    for e in emissions[1:]:
        block = v[:, None] + transition
        pointers.append(ops.argmax(block, 0))
        v = ops.amax(block, 0) + e
    path = [int(ops.argmax(v, 0))]
    for back in reversed(pointers):
        path.append(int(back[path[-1]]))
    return ops.amax(v, 0)


def _four_broadcast(ops: Ops, a: Any, b: Any, c: Any, d: Any) -> Any:
    block = a[:, :, None, None, None] + b[None, :, :, None, None]
    block = block + c[None, None, :, :, None] + d[None, None, None, :, :]
    return ops.logsumexp(block, (1, 2, 3))


def _shifted_chain(ops: Ops, matrices: list[Any]) -> Any:
    x = matrices[0]
    for y in matrices[1:]:
        top_x, top_y = ops.amax(x, 1, True), ops.amax(y, 0, True)
        x = ops.log(ops.exp(x - top_x) @ ops.exp(y - top_y)) + top_x + top_y
    return x


FRAMEWORKS = ("numpy", "torch")


def reference(data: dict[str, Any]) -> dict[str, float | np.ndarray]:
    """The float64 answers: the log-likelihood, the best path's score, the 4-operand result."""
    found = methods(data, "numpy", "float64")
    return {
        "hmm": float(found["hmm loop/exp-matmul-log"]()),
        "viterbi": float(found["viterbi loop/broadcast+max"]()),
        "4 operands": found["4 operands/broadcast+logsumexp"](),
    }


def _error(value: Any, expected: Any) -> float:
    got = np.asarray(value.detach() if hasattr(value, "detach") else value, dtype=np.float64)
    return float(np.max(np.abs(got - expected)))


def _resident() -> int:
    """Bytes of this process's resident memory now (Linux)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


def _peak_resident(function: Callable[[], Any]) -> int:
    """The most resident memory above the start while `function` runs, sampled each 0.2 ms.

    torch's kernels release the GIL, so the sampling thread runs beside them; a peak
    shorter than the interval can be missed. (``ru_maxrss`` is no help: on Linux it
    can carry the high-water mark of the process it was forked from.)
    """
    import threading

    before, peak, done = _resident(), [0], threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _resident())
            done.wait(0.0002)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        function()
    finally:
        done.set()
        sampler.join()
    return max(peak[0] - before, 0)


def run(
    framework: str, data: dict[str, Any], expected: dict[str, Any], only: str | None
) -> dict[str, Any]:
    """Per method: cold and warm seconds, peak bytes, max error (one method: its memory only)."""
    import tracemalloc

    import tensorops as tops

    calls = methods(data, framework, "float32")
    if only is not None:  # torch's memory: a fresh process per method, a warm call
        calls[only]()
        return {only: {"memory": _peak_resident(calls[only])}}
    results: dict[str, Any] = {}
    for name, method in calls.items():
        tops.clear_caches()
        start = time.perf_counter()
        value = method()
        cold = time.perf_counter() - start
        warm = math.inf
        for _ in range(ROUNDS - 1):
            start = time.perf_counter()
            method()
            warm = min(warm, time.perf_counter() - start)
        memory = math.nan
        if framework == "numpy":
            tracemalloc.start()
            method()
            memory = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        case = name.split("/")[0].split(" ")[0]
        error = _error(value, expected["4 operands" if case == "4" else case])
        results[name] = {"cold": cold, "warm": warm, "memory": memory, "error": error}
    return results


def _time(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _bytes(size: float) -> str:
    return "-" if math.isnan(size) else f"{size / 2**20:.1f} MiB"


#: The hand-written broadcast-and-reduce each case is measured against.
BASELINES = {
    "hmm": "hmm loop/broadcast+logsumexp",
    "viterbi loop": "viterbi loop/broadcast+max",
    "viterbi chain, decoded": "viterbi chain, decoded/broadcast+max",
    "4 operands": "4 operands/broadcast+logsumexp",
}


def table(framework: str, results: dict[str, Any]) -> str:
    """One row per method; speedup = the broadcast-and-reduce method's warm time / this one's."""
    lines = [
        f"### {framework}",
        "",
        "| case | method | cold | warm | speedup over broadcast | peak memory | max error |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, row in results.items():
        case, method = name.split("/")
        baseline = next(BASELINES[key] for key in BASELINES if case.startswith(key))
        speed = results[baseline]["warm"] / row["warm"]
        lines.append(
            f"| {case} | {method} | {_time(row['cold'])} | {_time(row['warm'])} | "
            f"{speed:.2f}x | {_bytes(row['memory'])} | {row['error']:.2e} |"
        )
    return "\n".join(lines)


def write_weight() -> str:
    """What an exp and a log of one element cost in FLOPs of a float64 matrix product."""
    from tensorops._einsum._semiring import LOGSUMEXP_WRITE_WEIGHT

    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((1000, 1000)), rng.standard_normal((1000, 1000))

    def seconds(function: Callable[[], Any]) -> float:
        function()
        start = time.perf_counter()
        for _ in range(5):
            function()
        return (time.perf_counter() - start) / 5

    flop = seconds(lambda: x @ y) / (2 * 1000**3)
    shifted = seconds(lambda: np.exp(x - x.max(1, keepdims=True)))
    logged = seconds(lambda: np.log(np.abs(x)) + x)
    return (
        f"NumPy float64: a shifted exp costs {shifted / 1e6 / flop:.0f} matmul FLOPs per "
        f"element, a log and the shift added back {logged / 1e6 / flop:.0f} "
        f"(the planner's weight per intermediate element is {LOGSUMEXP_WRITE_WEIGHT})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 states and steps")
    parser.add_argument("--worker", choices=(*FRAMEWORKS, "weight"), help=argparse.SUPPRESS)
    parser.add_argument("--method", help=argparse.SUPPRESS)
    parser.add_argument("--reference", help=argparse.SUPPRESS)
    parser.add_argument(
        "--threads",
        type=int,
        help="threads of NumPy's BLAS and torch's pool in the workers (default: theirs)",
    )
    args = parser.parse_args()
    size = 200 if args.quick else 1000
    data = hmm(size, size)
    data["four"] = [np.random.default_rng(1).standard_normal((24, 24)) for _ in range(4)]
    if args.worker == "weight":
        print(write_weight())
        return
    if args.worker:
        expected = dict(np.load(args.reference))
        results = run(args.worker, data, expected, args.method)
        print(json.dumps(results))
        return
    import tempfile

    threads = f"{args.threads} thread(s)" if args.threads else "the libraries' threads"
    print(
        f"HMM: {size} states, {size} steps; float32, {threads}; errors against float64; "
        "speedup = the hand-written broadcast-and-reduce's warm time / the method's\n"
    )
    with tempfile.TemporaryDirectory() as folder:
        path = f"{folder}/reference.npz"
        np.savez(path, **reference(data))
        for framework in FRAMEWORKS:
            command = [sys.executable, __file__, "--worker", framework, "--reference", path]
            command += ["--quick"] if args.quick else []
            results = json.loads(_output(command, args.threads))
            if framework == "torch":  # memory outside tracemalloc: one process per method
                for name in results:
                    one = json.loads(_output([*command, "--method", name], args.threads))
                    results[name]["memory"] = one[name]["memory"]
            print(table(framework, results))
            print()
    print(_output([sys.executable, __file__, "--worker", "weight"], args.threads), end="")


def _output(command: list[str], threads: int | None) -> str:
    environment = dict(os.environ)
    if "--method" in command:  # large blocks mapped and unmapped, as live memory
        environment["MALLOC_MMAP_THRESHOLD_"] = str(1 << 16)
    if threads:  # read by OpenBLAS / MKL and torch's OpenMP pool when they start
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            environment[name] = str(threads)
    run = subprocess.run(command, check=True, capture_output=True, text=True, env=environment)
    return run.stdout


if __name__ == "__main__":
    main()
