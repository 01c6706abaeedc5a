"""Einsum over other semirings: tensorops against hand-written NumPy and PyTorch, in one run.

Cases (float32; the error of each method against a float64 reference):

* small call: one HMM step, ``"i,ij->j"`` at 16 states: ``tops.einsum``, and an
  ``einsum_expression`` with the transition matrix constant, against the hand-written
  max-shifted ``exp`` / matmul / ``log`` (both exps per call, and exp(transition) kept);
* HMM per step: the forward pass at 256 states over 256 steps, a loop of such steps (the
  expression with the transition constant; ``tops.einsum``), against the loop of broadcast
  and ``logsumexp`` and the hand-written loop that keeps exp(transition);
* HMM chain: the forward pass at 1,000 states over 1,000 steps as one einsum over the
  chain (2,000 operands in the sublist format, the step-by-step path given), against the
  broadcast-and-``logsumexp`` loop;
* CRF: a linear-chain CRF's log-partition function, batch 32, 128 steps, 64 tags (a loop
  of ``"bi,ij->bj"`` steps, and one einsum over the sequence), against the
  broadcast-``logsumexp`` recursion CRF libraries use: forward, and (torch) forward and
  backward through autograd, the gradients of the emissions and the transitions; the
  hand-written step (shifted exps, matmul, log, no check of its exactness) shows what
  that way of computing a step can reach;
* Viterbi per step: the best path's score at 256 states over 256 steps, a loop of
  max-plus steps (no BLAS), against the loop of broadcast and ``max``;
* exact path: ``"ij,jk->ik"`` at 256 x 256 x 256 with log-values spread over 1e4, where the
  shifted matrix product underflows almost everywhere and every position is recomputed
  exactly, against the broadcast ``logsumexp`` (which is exact).

Each case times the whole public call of every method interleaved, round after round, in
one process per framework (others' load on a shared machine hits all alike): the median
of the rounds, and "cold" the first call (planning included). Speedup = the reference's
median / the method's.

Usage::

    python benchmarks/semiring.py            # full run (a few minutes)
    python benchmarks/semiring.py --quick    # fewer rounds, smaller chain
    python benchmarks/semiring.py --threads 1   # one thread per library (a busy machine)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

FRAMEWORKS = ("numpy", "torch")


class Ops:
    """The few calls the hand-written methods make, in NumPy or torch."""

    def __init__(self, framework: str) -> None:
        self.framework = framework
        if framework == "numpy":
            self.array: Callable[[Any], Any] = lambda x: np.ascontiguousarray(x, np.float32)
            self.exp, self.log = np.exp, np.log
            self.amax: Callable[..., Any] = lambda x, axis, keep=False: x.max(axis, keepdims=keep)
        else:
            import torch

            self.array = lambda x: torch.from_numpy(np.ascontiguousarray(x, np.float32))
            self.exp, self.log = torch.exp, torch.log
            self.amax = lambda x, axis, keep=False: x.amax(axis, keepdim=keep)

    def logsumexp(self, x: Any, axis: int) -> Any:
        """The stable log-sum-exp over `axis`: torch's own, NumPy's shifted by the maximum."""
        if self.framework == "torch":
            import torch

            return torch.logsumexp(x, axis)
        top = x.max(axis, keepdims=True)
        return np.log(np.exp(x - top).sum(axis)) + top.squeeze(axis)


# --- the cases -----------------------------------------------------------------------------


def hmm(states: int, steps: int, seed: int = 0) -> dict[str, Any]:
    """Log-parameters of a random HMM and the log-emissions of a sequence (float64)."""
    rng = np.random.default_rng(seed)
    symbols = 50
    emission = np.log(rng.dirichlet(np.full(symbols, 0.5), size=states))
    observed = rng.integers(0, symbols, size=steps)
    return {
        "start": np.log(rng.dirichlet(np.ones(states))),
        "transition": np.log(rng.dirichlet(np.full(states, 0.5), size=states)),
        "emissions": [np.ascontiguousarray(emission[:, o]) for o in observed],
    }


def small_call(ops: Ops, data: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    """One HMM step at 16 states: the two-operand call, and the expression's."""
    import tensorops as tops

    alpha, transition = ops.array(data["start"]), ops.array(data["transition"])
    step = tops.einsum_expression(
        "i,ij->j", tuple(alpha.shape), transition, constants=[1], semiring="logsumexp"
    )
    column = ops.amax(transition, 0)
    kept = ops.exp(transition - column)

    def hand() -> Any:
        top, column = ops.amax(alpha, 0), ops.amax(transition, 0)
        return ops.log(ops.exp(alpha - top) @ ops.exp(transition - column)) + (top + column)

    def hand_kept() -> Any:
        top = ops.amax(alpha, 0)
        return ops.log(ops.exp(alpha - top) @ kept) + (top + column)

    return {
        "shifted exp / matmul / log": hand,
        "tensorops einsum": lambda: tops.einsum("i,ij->j", alpha, transition, semiring="logsumexp"),
        "the same, exp(transition) kept": hand_kept,
        "tensorops expression, transition constant": lambda: step(alpha),
    }


def per_step(ops: Ops, data: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    """The forward pass as a loop of steps: the log-likelihood."""
    import tensorops as tops

    start, transition = ops.array(data["start"]), ops.array(data["transition"])
    emissions = [ops.array(e) for e in data["emissions"]]
    step = tops.einsum_expression(
        "i,ij->j", tuple(start.shape), transition, constants=[1], semiring="logsumexp"
    )
    column = ops.amax(transition, 0)
    kept = ops.exp(transition - column)

    def loop(advance: Callable[[Any], Any]) -> Any:
        alpha = start + emissions[0]
        for e in emissions[1:]:
            alpha = advance(alpha) + e
        return ops.logsumexp(alpha, 0)

    def by_hand(alpha: Any) -> Any:
        top = ops.amax(alpha, 0)
        return ops.log(ops.exp(alpha - top) @ kept) + (top + column)

    return {
        "broadcast + logsumexp": lambda: loop(
            lambda alpha: ops.logsumexp(alpha[:, None] + transition, 0)
        ),
        "tensorops expression, transition constant": lambda: loop(step),
        "tensorops einsum per step": lambda: loop(
            lambda alpha: tops.einsum("i,ij->j", alpha, transition, semiring="logsumexp")
        ),
        "shifted exp / matmul / log, exp(transition) kept": lambda: loop(by_hand),
    }


def viterbi(ops: Ops, data: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    """The best path's score as a loop of max-plus steps (no matrix product)."""
    import tensorops as tops

    start, transition = ops.array(data["start"]), ops.array(data["transition"])
    emissions = [ops.array(e) for e in data["emissions"]]

    def loop(advance: Callable[[Any], Any]) -> Any:
        score = start + emissions[0]
        for e in emissions[1:]:
            score = advance(score) + e
        return ops.amax(score, 0)

    return {
        "broadcast + max": lambda: loop(lambda score: ops.amax(score[:, None] + transition, 0)),
        "tensorops einsum per step": lambda: loop(
            lambda score: tops.einsum("i,ij->j", score, transition, semiring="max")
        ),
    }


def chain(ops: Ops, data: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    """The forward pass as one einsum over the chain, in the sublist format."""
    import tensorops as tops

    start, transition = ops.array(data["start"]), ops.array(data["transition"])
    emissions = [ops.array(e) for e in data["emissions"]]
    arguments: list[Any] = [start, [0], emissions[0], [0]]
    for t in range(1, len(emissions)):
        arguments += [transition, [t - 1, t], emissions[t], [t]]
    arguments.append([])
    path = [(0, 1)] + [(0, k) for k in range(2 * len(emissions) - 2, 0, -1)]

    def loop() -> Any:
        alpha = start + emissions[0]
        for e in emissions[1:]:
            alpha = ops.logsumexp(alpha[:, None] + transition, 0) + e
        return ops.logsumexp(alpha, 0)

    return {
        "broadcast + logsumexp": loop,
        "tensorops, one einsum over the chain": lambda: tops.einsum(
            *arguments, semiring="logsumexp", strategy=path
        ),
    }


def crf(ops: Ops, data: dict[str, Any], backward: bool) -> dict[str, Callable[[], Any]]:
    """A linear-chain CRF's log-partition function per sequence, summed over the batch.

    With `backward` (torch), each call also takes the gradients of the emissions and the
    transitions.
    """
    import tensorops as tops

    emissions, transition = ops.array(data["emissions"]), ops.array(data["transition"])
    start = ops.array(data["start"])
    if backward:
        emissions.requires_grad_()
        transition.requires_grad_()

    def recursion(advance: Callable[[Any], Any]) -> Any:
        alpha = start + emissions[:, 0]
        for t in range(1, emissions.shape[1]):
            alpha = advance(alpha) + emissions[:, t]
        total = ops.logsumexp(alpha, 1).sum()
        if backward:
            emissions.grad = transition.grad = None
            total.backward()
        return total

    steps = emissions.shape[1]
    path = [(0, 1)] + [(0, k) for k in range(2 * steps - 2, 0, -1)]

    def sequence() -> Any:  # start(t0) e0(b t0) T(t0 t1) e1(b t1) ... -> (b)
        arguments: list[Any] = [start, [1], emissions[:, 0], [0, 1]]
        for t in range(1, steps):
            arguments += [transition, [t, t + 1], emissions[:, t], [0, t + 1]]
        total = tops.einsum(*arguments, [0], semiring="logsumexp", strategy=path).sum()
        if backward:
            emissions.grad = transition.grad = None
            total.backward()
        return total

    def constant() -> Any:  # inference: the transitions' exps made once, ahead
        return recursion(step)

    if not backward:
        shape = tuple(emissions[:, 0].shape)
        step = tops.einsum_expression(
            "bi,ij->bj", shape, transition, constants=[1], semiring="logsumexp"
        )

    def by_hand(alpha: Any) -> Any:  # the step's shifted exps, matmul and log, no checks
        top, column = ops.amax(alpha, 1, True), ops.amax(transition, 0)
        return ops.log(ops.exp(alpha - top) @ ops.exp(transition - column)) + (top + column)

    return {
        "broadcast + logsumexp": lambda: recursion(
            lambda alpha: ops.logsumexp(alpha[:, :, None] + transition, 1)
        ),
        "shifted exp / matmul / log per step": lambda: recursion(by_hand),
        "tensorops einsum per step": lambda: recursion(
            lambda alpha: tops.einsum("bi,ij->bj", alpha, transition, semiring="logsumexp")
        ),
        "tensorops, one einsum over the sequence": sequence,
        **({} if backward else {"tensorops expression, transition constant": constant}),
    }


def exact_path(ops: Ops, data: dict[str, Any]) -> dict[str, Callable[[], Any]]:
    """A product whose every position underflows in the shifted product."""
    import tensorops as tops

    a, b = ops.array(data["a"]), ops.array(data["b"])
    return {
        "broadcast + logsumexp": lambda: ops.logsumexp(a[:, :, None] + b[None], 1),
        "tensorops einsum": lambda: tops.einsum("ij,jk->ik", a, b, semiring="logsumexp"),
    }


def cases(quick: bool) -> dict[str, tuple[Callable[..., Any], dict[str, Any], tuple[Any, ...]]]:
    """Case -> (methods' maker, its data, extra arguments); the first method is the reference."""
    rng = np.random.default_rng(1)
    size = 300 if quick else 1000
    crf_data = {
        "emissions": rng.standard_normal((32, 128, 64)),
        "transition": rng.standard_normal((64, 64)),
        "start": rng.standard_normal(64),
    }
    spread = {
        "a": 1e4 * rng.standard_normal((256, 256)),
        "b": 1e4 * rng.standard_normal((256, 256)),
    }
    return {
        "small call (16 states)": (small_call, hmm(16, 1), ()),
        "HMM per step (256 states, 256 steps)": (per_step, hmm(256, 256), ()),
        "Viterbi per step (256 states, 256 steps)": (viterbi, hmm(256, 256), ()),
        f"HMM chain ({size} states, {size} steps)": (chain, hmm(size, size), ()),
        "CRF partition (32 x 128 steps x 64 tags), forward": (crf, crf_data, (False,)),
        "CRF partition, forward and backward": (crf, crf_data, (True,)),
        "exact path (256^3, spread 1e4)": (exact_path, spread, ()),
    }


# --- timing --------------------------------------------------------------------------------


def measure(methods: dict[str, Callable[[], Any]], seconds: float) -> dict[str, dict[str, Any]]:
    """Cold (first) call, then the methods interleaved round by round: median seconds."""
    import tensorops as tops

    results: dict[str, dict[str, Any]] = {}
    for name, method in methods.items():
        tops.clear_caches()
        start = time.perf_counter()
        value = method()
        results[name] = {"cold": time.perf_counter() - start, "value": _number(value)}
    per_round = sum(row["cold"] for row in results.values())
    rounds = max(3, min(400, int(seconds / max(per_round, 1e-6))))
    times: dict[str, list[float]] = {name: [] for name in methods}
    names = list(methods)
    for number in range(rounds):
        for name in names if number % 2 == 0 else names[::-1]:
            start = time.perf_counter()
            methods[name]()
            times[name].append(time.perf_counter() - start)
    for name, row in results.items():
        row["warm"] = statistics.median(times[name])
        row["rounds"] = rounds
    return results


def _number(value: Any) -> float:
    """The first element of a result (a float)."""
    if hasattr(value, "detach"):
        value = value.detach()
    return float(np.asarray(value, np.float64).reshape(-1)[0])


def references(quick: bool) -> dict[str, float]:
    """Each case's first output in float64 (NumPy, broadcast and logsumexp)."""
    found = {}
    for case, (maker, data, extra) in cases(quick).items():
        if "backward" in case:
            continue
        methods = maker(_Float64(), data, *extra)
        found[case] = _number(next(iter(methods.values()))())
    return found


class _Float64(Ops):
    """NumPy's calls in float64: the reference."""

    def __init__(self) -> None:
        super().__init__("numpy")
        self.array = lambda x: np.ascontiguousarray(x, np.float64)


def run(framework: str, quick: bool, seconds: float) -> dict[str, Any]:
    """Every case's results on `framework` (CRF's backward on torch only)."""
    ops = Ops(framework)
    found = {}
    for case, (maker, data, extra) in cases(quick).items():
        if "backward" in case and framework != "torch":
            continue
        found[case] = measure(maker(ops, data, *extra), seconds)
    return found


def table(framework: str, found: dict[str, Any], expected: dict[str, float]) -> str:
    lines = [
        f"### {framework}",
        "",
        "| case | method | cold | warm | speedup | error |",
        "|---|---|---|---|---|---|",
    ]
    for case, rows in found.items():
        reference = next(iter(rows.values()))["warm"]
        want = expected.get(case.replace(", forward and backward", ", forward"))
        for method, row in rows.items():
            error = "-" if want is None else f"{abs(row['value'] - want):.1e}"
            lines.append(
                f"| {case} | {method} | {_time(row['cold'])} | {_time(row['warm'])} | "
                f"{reference / row['warm']:.2f}x | {error} |"
            )
    return "\n".join(lines)


def _time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def write_weight() -> str:
    """What an exp and a log of one element cost in FLOPs of a float64 matrix product."""
    from tensorops._einsum.equations._semiring import LOGSUMEXP_WRITE_WEIGHT

    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((1000, 1000)), rng.standard_normal((1000, 1000))

    def seconds(function: Callable[[], Any]) -> float:
        function()
        return min(_timed(function) for _ in range(5))

    flop = seconds(lambda: x @ y) / (2 * 1000**3)
    shifted = seconds(lambda: np.exp(x - x.max(1, keepdims=True)))
    logged = seconds(lambda: np.log(np.abs(x)) + x)
    return (
        f"NumPy float64: a shifted exp costs {shifted / 1e6 / flop:.0f} matmul FLOPs per "
        f"element, a log and the shift added back {logged / 1e6 / flop:.0f} "
        f"(the planner's weight per intermediate element is {LOGSUMEXP_WRITE_WEIGHT})"
    )


def _timed(function: Callable[[], Any]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, smaller chain")
    parser.add_argument("--worker", choices=FRAMEWORKS, help=argparse.SUPPRESS)
    parser.add_argument(
        "--threads",
        type=int,
        help="threads of NumPy's BLAS and torch's pool in the workers (default: theirs)",
    )
    args = parser.parse_args()
    seconds = 2.0 if args.quick else 15.0
    if args.worker:
        if args.worker == "torch" and args.threads:
            import torch

            torch.set_num_threads(args.threads)
        print(json.dumps(run(args.worker, args.quick, seconds)))
        return
    threads = f"{args.threads} thread(s)" if args.threads else "the libraries' threads"
    print(f"float32, {threads}; the median of interleaved rounds; errors against float64\n")
    expected = references(args.quick)
    for framework in FRAMEWORKS:
        command = [sys.executable, __file__, "--worker", framework]
        command += ["--quick"] if args.quick else []
        command += ["--threads", str(args.threads)] if args.threads else []
        print(table(framework, json.loads(_output(command, args.threads)), expected))
        print()
    print(write_weight())


def _output(command: list[str], threads: int | None) -> str:
    environment = dict(os.environ)
    if threads:  # read by OpenBLAS / MKL and torch's OpenMP pool when they start
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            environment[name] = str(threads)
    done = subprocess.run(command, check=True, capture_output=True, text=True, env=environment)
    return done.stdout


if __name__ == "__main__":
    main()
