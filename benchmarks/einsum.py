"""Einsum execution: tensorops against numpy.einsum, opt_einsum, torch.einsum and einops.

Each framework runs in its own subprocess: NumPy's and PyTorch's thread pools slow
each other down when they share a process. Within a case the calls take turns,
round by round, so a change in machine load hits them alike, and each reports its
fastest round. Prints a markdown table, the ratios (peer time / tensorops time:
above 1 means tensorops is faster) and their geometric means.

Usage::

    python benchmarks/einsum.py            # full run
    python benchmarks/einsum.py --quick    # under a minute
    python benchmarks/einsum.py --device cuda   # torch only, on the GPU (synchronized)
    python benchmarks/einsum.py --expressions [--quick]   # reusable expressions (NumPy)
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

# name -> (equation, shapes)
CASES: dict[str, tuple[str, list[tuple[int, ...]]]] = {
    "attention": ("bhid,bhjd->bhij", [(8, 8, 256, 64), (8, 8, 256, 64)]),
    "chain4": ("ij,jk,kl,lm->im", [(64, 512), (512, 32), (32, 400), (400, 128)]),
    "bilinear": ("bi,ij,bj->b", [(512, 256), (256, 256), (512, 256)]),
    "ijk,jkl->il": ("ijk,jkl->il", [(64, 48, 48), (48, 48, 64)]),
    "iij,jk->ik": ("iij,jk->ik", [(96, 96, 128), (128, 96)]),
    "chain3 8x8 (overhead)": ("ij,jk,kl->il", [(8, 8), (8, 8), (8, 8)]),
    "tiny abc,cd->abd": ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    "tiny ij,jk->ik 16": ("ij,jk->ik", [(16, 16), (16, 16)]),
    "tiny ij,ij->i 64": ("ij,ij->i", [(64, 64), (64, 64)]),
    "tiny i,j->ij": ("i,j->ij", [(16,), (32,)]),
}


def _spaced(equation: str) -> str:
    """``"ij,jk->ik"`` as einops writes it: ``"i j, j k -> i k"``."""
    inputs, output = equation.split("->")
    return ", ".join(" ".join(term) for term in inputs.split(",")) + " -> " + " ".join(output)


def _einops_call(einops: Any, equation: str, arrays: list[Any]) -> Callable[[], Any] | None:
    """einops.einsum on the case, for the two-operand ones (einops' einsum is a wrapper)."""
    if len(arrays) != 2:
        return None
    spaced = _spaced(equation)
    return lambda: einops.einsum(*arrays, spaced)


#: numpy.einsum(optimize=False) is skipped above this many FLOPs (it would take minutes).
NAIVE_LIMIT = 2 * 10**9


def measure(
    functions: dict[str, Callable[[], Any]], budget: float, sync: Callable[[], Any] = lambda: None
) -> dict[str, float]:
    """Seconds per call of each function: the fastest of 7 rounds in which they take turns.

    Each round times a batch of calls lasting about ``budget / 7`` per function;
    ``sync`` waits for a device's queued work before and after each batch.
    """
    numbers = {}
    for name, function in functions.items():
        function()
        sync()
        start = time.perf_counter()
        function()
        sync()
        once = max(time.perf_counter() - start, 1e-7)
        numbers[name] = max(1, int(budget / 7 / once))
    best = dict.fromkeys(functions, math.inf)
    for _ in range(7):
        for name, function in functions.items():
            sync()
            start = time.perf_counter()
            for _ in range(numbers[name]):
                function()
            sync()
            best[name] = min(best[name], (time.perf_counter() - start) / numbers[name])
    return best


def run_numpy(budget: float) -> dict[str, dict[str, float]]:
    import einops
    import numpy as np
    import opt_einsum

    import tensorops as tops

    rng = np.random.default_rng(0)
    results: dict[str, dict[str, float]] = {}
    for name, (equation, shapes) in CASES.items():
        arrays = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
        expected = np.einsum(equation, *arrays, optimize=True)
        np.testing.assert_allclose(tops.einsum(equation, *arrays), expected, rtol=2e-3, atol=1e-2)
        naive = tops.einsum_path(equation, *arrays).naive_flops
        calls: dict[str, Callable[[], Any]] = {
            "tensorops": lambda e=equation, a=arrays: tops.einsum(e, *a),
            "numpy optimize=True": lambda e=equation, a=arrays: np.einsum(e, *a, optimize=True),
            "opt_einsum": lambda e=equation, a=arrays: opt_einsum.contract(e, *a),
        }
        # A one-loop contraction of a long chain takes minutes: not measured.
        if naive <= NAIVE_LIMIT:
            calls["numpy optimize=False"] = lambda e=equation, a=arrays: np.einsum(
                e, *a, optimize=False
            )
        pair = _einops_call(einops, equation, arrays)
        if pair is not None:
            calls["einops"] = pair
        measured = measure(calls, budget)
        results[name] = {"numpy optimize=False": math.nan, "einops": math.nan, **measured}
    return results


def run_torch(budget: float, device: str = "cpu") -> dict[str, dict[str, float]]:
    import einops
    import torch

    import tensorops as tops

    torch.manual_seed(0)
    sync = torch.cuda.synchronize if device.startswith("cuda") else lambda: None
    results: dict[str, dict[str, float]] = {}
    with torch.inference_mode():
        for name, (equation, shapes) in CASES.items():
            arrays = [torch.randn(shape, device=device) for shape in shapes]
            expected = torch.einsum(equation, *arrays)
            torch.testing.assert_close(
                tops.einsum(equation, *arrays), expected, rtol=2e-3, atol=1e-2
            )
            calls: dict[str, Callable[[], Any]] = {
                "tensorops": lambda e=equation, a=arrays: tops.einsum(e, *a),
                "torch.einsum": lambda e=equation, a=arrays: torch.einsum(e, *a),
            }
            pair = _einops_call(einops, equation, arrays)
            if pair is not None:
                calls["einops"] = pair
            results[name] = {"einops": math.nan, **measure(calls, budget, sync)}
    return results


# name -> (case of CASES, positions of the operands that are constants, constants_first)
EXPRESSION_CONSTANTS: dict[str, tuple[str, tuple[int, ...], bool]] = {
    "chain4, constants 1-3": ("chain4", (1, 2, 3), False),
    "bilinear, constant W": ("bilinear", (1,), False),
    "chain3 8x8, constants 1-2": ("chain3 8x8 (overhead)", (1, 2), False),
    "chain3 8x8, constants 1-2, constants_first": ("chain3 8x8 (overhead)", (1, 2), True),
}


def run_expressions(budget: float) -> dict[str, dict[str, float]]:
    """tensorops.einsum_expression against opt_einsum.contract_expression and plain einsum."""
    import numpy as np
    import opt_einsum

    import tensorops as tops

    rng = np.random.default_rng(0)
    cases = {name: (case, (), False) for name, case in CASES.items()}
    cases.update(
        {name: (CASES[case], *rest) for name, (case, *rest) in EXPRESSION_CONSTANTS.items()}
    )
    results: dict[str, dict[str, float]] = {}
    for name, ((equation, shapes), fixed, first) in cases.items():
        arrays = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
        args = [x if i in fixed else x.shape for i, x in enumerate(arrays)]
        variables = [x for i, x in enumerate(arrays) if i not in fixed]
        ours = tops.einsum_expression(equation, *args, constants=fixed, constants_first=first)
        theirs = opt_einsum.contract_expression(equation, *args, constants=fixed)
        expected = np.einsum(equation, *arrays, optimize=True)
        np.testing.assert_allclose(ours(*variables), expected, rtol=2e-3, atol=1e-2)
        calls: dict[str, Callable[[], Any]] = {
            "tensorops": lambda f=ours, v=variables: f(*v),
            "opt_einsum contract_expression": lambda f=theirs, v=variables: f(*v),
            "tensorops.einsum": lambda e=equation, a=arrays: tops.einsum(e, *a),
        }
        results[name] = measure(calls, budget)
    return results


def _format(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    return f"{seconds * 1e3:.2f} ms"


def table(framework: str, results: dict[str, dict[str, float]]) -> str:
    peers = [peer for peer in next(iter(results.values())) if peer != "tensorops"]
    header = ["case", "tensorops", *(f"{peer} (ratio)" for peer in peers)]
    lines = [f"### {framework}", "", "| " + " | ".join(header) + " |"]
    lines.append("|" + "---|" * len(header))
    ratios: dict[str, list[float]] = {peer: [] for peer in peers}
    for name, times in results.items():
        row = [name, _format(times["tensorops"])]
        for peer in peers:
            if math.isnan(times[peer]):
                row.append("not run (minutes)" if "optimize=False" in peer else "-")
                continue
            ratio = times[peer] / times["tensorops"]
            ratios[peer].append(ratio)
            row.append(f"{_format(times[peer])} ({ratio:.2f}x)")
        lines.append("| " + " | ".join(row) + " |")
    means = [
        f"{math.exp(statistics.fmean(math.log(r) for r in ratios[peer])):.2f}x" for peer in peers
    ]
    lines.append("| geometric mean of ratios | | " + " | ".join(means) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short timings (< 60 s in all)")
    parser.add_argument("--device", default="cpu", help="torch's device; not cpu: torch only")
    parser.add_argument(
        "--expressions",
        action="store_true",
        help="einsum_expression calls against opt_einsum's contract_expression and einsum",
    )
    parser.add_argument("--worker", choices=list(WORKERS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    budget = 0.15 if args.quick else 1.0
    if args.worker:
        work = WORKERS[args.worker]
        results = run_torch(budget, args.device) if args.worker == "torch" else work(budget)
        print(json.dumps(results))
        return
    print(
        "ratio = peer time / tensorops time (above 1: tensorops is faster); "
        f"float32, {args.device}\n"
    )
    if args.expressions:
        frameworks: tuple[str, ...] = ("expressions",)
    else:
        frameworks = ("numpy", "torch") if args.device == "cpu" else ("torch",)
    for framework in frameworks:
        command = [sys.executable, __file__, "--worker", framework, "--device", args.device]
        if args.quick:
            command.append("--quick")
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        print(table(framework, json.loads(output)))
        print()


WORKERS = {"numpy": run_numpy, "torch": run_torch, "expressions": run_expressions}

if __name__ == "__main__":
    main()
