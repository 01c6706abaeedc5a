"""Benchmark the einsum path planners against opt_einsum.

For random tensor networks (``opt_einsum.testing.rand_equation``, fixed seeds) of
3 to 100 operands, prints a markdown table with, per operand count and strategy:
our planning time, opt_einsum's (``contract_path(..., shapes=True)``, and its bare
path function), the speedups, the geometric mean of our cost over opt_einsum's
cost for the same strategy, and for ``auto`` the geometric mean of its cost over
our ``dp`` cost.

Usage::

    python benchmarks/einsum_planning.py [--quick]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:
    import tensorops  # noqa: F401
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import opt_einsum as oe
from opt_einsum.testing import rand_equation

from tensorops._einsum._cost import contraction_steps, total_flops
from tensorops._einsum._paths import find_path

SIZES = (3, 5, 8, 10, 12, 15, 20, 30, 50, 100)
QUICK_SIZES = (3, 5, 8, 10, 12, 15, 20, 50, 100)
OE_OPTIMAL_MAX = 8  # opt_einsum's optimal takes seconds beyond this
OUR_OPTIMAL_MAX = 12
DP_MAX = {False: 30, True: 20}  # dp (ours and opt_einsum's) up to this many operands


def _network(n: int, seed: int) -> tuple[str, list[tuple[int, ...]], dict[str, int]]:
    eq, shapes, size_dict = rand_equation(n, 3, n_out=2, seed=seed, return_size_dict=True)
    return eq, shapes, size_dict


def _parse(eq: str) -> tuple[list[tuple[str, ...]], tuple[str, ...]]:
    lhs, out = eq.split("->")
    return [tuple(term) for term in lhs.split(",")], tuple(out)


def _best_time(fn: Callable[[], Any], budget: float) -> tuple[float, Any]:
    """Return the fastest of repeated calls within ``budget`` seconds, and a result."""
    best = math.inf
    result = None
    spent = 0.0
    runs = 0
    while runs < 3 or spent < budget:
        start = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - start
        best = min(best, elapsed)
        spent += elapsed
        runs += 1
        if elapsed > budget:
            break
    return best, result


def _gmean(values: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else math.nan


def _strategies(n: int, quick: bool) -> list[str]:
    names = ["auto", "greedy"]
    if n <= DP_MAX[quick]:
        names.append("dp")
    if n <= OUR_OPTIMAL_MAX:
        names.append("optimal")
    return names


def _oe_allowed(strategy: str, n: int) -> bool:
    return strategy != "optimal" or n <= OE_OPTIMAL_MAX


def _time_ours(inputs: Any, output: Any, size_dict: Any, strategy: str, budget: float) -> Any:
    return _best_time(lambda: find_path(inputs, output, size_dict, strategy), budget)


def _time_oe(eq: str, shapes: Any, strategy: str, budget: float) -> Any:
    return _best_time(lambda: oe.contract_path(eq, *shapes, shapes=True, optimize=strategy), budget)


def _time_oe_fn(inputs: Any, output: Any, size_dict: Any, strategy: str, budget: float) -> float:
    fn = oe.paths.get_path_fn(strategy)
    sets = [frozenset(term) for term in inputs]
    return _best_time(lambda: fn(sets, frozenset(output), size_dict), budget)[0]


def _measure(n: int, seeds: range, budget: float, quick: bool) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, list[float]]] = {}
    for seed in seeds:
        eq, shapes, size_dict = _network(n, seed)
        inputs, output = _parse(eq)
        costs: dict[str, int] = {}
        for strategy in _strategies(n, quick):
            row = rows.setdefault(strategy, {"ours": [], "oe": [], "oe_fn": [], "ratio": []})
            ours, path = _time_ours(inputs, output, size_dict, strategy, budget)
            cost = total_flops(contraction_steps(inputs, output, size_dict, path))
            costs[strategy] = cost
            row["ours"].append(ours)
            if not _oe_allowed(strategy, n):
                continue
            theirs, (_, info) = _time_oe(eq, shapes, strategy, budget)
            row["oe"].append(theirs)
            row["oe_fn"].append(_time_oe_fn(inputs, output, size_dict, strategy, budget))
            row["ratio"].append(cost / int(info.opt_cost))
        if "dp" in costs:
            rows["auto"].setdefault("auto_dp", []).append(costs["auto"] / costs["dp"])
    return [{"n": n, "strategy": name, **data} for name, data in rows.items()]


def _fmt_ms(values: list[float]) -> str:
    return f"{1e3 * _gmean(values):.3g}" if values else "-"


def _fmt_ratio(values: list[float]) -> str:
    return f"{_gmean(values):.3f}" if values else "-"


def _print_table(results: list[dict[str, Any]]) -> None:
    print(
        "| n | strategy | ours (ms) | opt_einsum contract_path (ms) | speedup "
        "| opt_einsum path fn (ms) | speedup vs fn | cost ours/oe | auto/dp cost |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for row in results:
        ours = _gmean(row["ours"])
        speed = f"{_gmean(row['oe']) / ours:.1f}x" if row["oe"] else "-"
        speed_fn = f"{_gmean(row['oe_fn']) / ours:.1f}x" if row["oe_fn"] else "-"
        print(
            f"| {row['n']} | {row['strategy']} | {_fmt_ms(row['ours'])} | {_fmt_ms(row['oe'])} "
            f"| {speed} | {_fmt_ms(row['oe_fn'])} | {speed_fn} | {_fmt_ratio(row['ratio'])} "
            f"| {_fmt_ratio(row.get('auto_dp', []))} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer networks, about a minute")
    args = parser.parse_args()
    sizes = QUICK_SIZES if args.quick else SIZES
    seeds = range(3) if args.quick else range(6)
    budget = 0.01 if args.quick else 0.05
    start = time.perf_counter()
    results: list[dict[str, Any]] = []
    for n in sizes:
        results.extend(_measure(n, seeds, budget, args.quick))
    _print_table(results)
    print(f"\n{len(seeds)} networks per n (rand_equation(n, 3, n_out=2, seed)); times are the")
    print(
        f"geometric mean of each network's fastest run; total {time.perf_counter() - start:.0f} s"
    )


if __name__ == "__main__":
    main()
