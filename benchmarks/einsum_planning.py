"""Benchmark einsum path planning against opt_einsum and cotengra.

Four tables, printed as markdown:

1. **Random networks** (``opt_einsum.testing.rand_equation(n, 3, n_out=2)``, fixed
   seeds) of 3 to 300 operands, per strategy: the whole public call, cold
   (``tops.einsum_path(eq, *shapes, strategy=...)`` on an equation never seen
   before: each timed call names the axes anew) beside
   ``opt_einsum.contract_path(eq, *shapes, shapes=True, optimize=...)``;
   the bare path functions (tensorops' ``plan_contraction``, opt_einsum's path function
   on index sets); the share of the cold call spent in the planner; the cost of
   the plan over opt_einsum's for the same strategy, and for ``auto`` over ``dp``.
2. **Large networks** from cotengra's generators (30 to 300 tensors): planning
   time and log10 of the cost (FLOPs, opt_einsum's count) for tensorops ``greedy``,
   ``auto`` and ``hyper`` against opt_einsum's greedy and ``RandomGreedy(128)`` and
   cotengra's ``HyperOptimizer(max_repeats=64)`` (default methods: greedy and
   kahypar; default subtree reconfiguration; one process). ``hyper`` gets a tenth
   of cotengra's time on the same network (``--quick``: one second, no cotengra).
3. **Slicing**: a ring of six 256 x 256 matrices under ``memory_limit=4096``.
4. **Plan store** (``--store``): a ``hyper`` search planned in a fresh process with
   the persistent plan store on, then the same network planned by a second fresh
   process, which reads the stored plan (the fastest of three such processes; time
   of the ``einsum_path`` call only, interpreter start-up and import excluded).
5. **tensorops' optimizer inside cotengra and quimb** (``--tools``): the contraction
   tree cotengra (or quimb, for random quantum circuits) makes with
   ``optimize=tensorops.PathOptimizer("hyper", max_time=...)`` at cotengra's default
   HyperOptimizer's time and at a tenth of it, against that default
   (``benchmarks/_planner_in_tools.py``).
6. **Combo factor** (``--combo``): the time of matrix products of many shapes
   fitted as ``a * flops + b * writes``; ``b / a`` is what writing an element
   costs in FLOPs on this machine (``COMBO_WRITE_WEIGHT`` is chosen from it).

Usage::

    python benchmarks/einsum_planning.py [--quick] [--combo] [--store] [--tools]
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import math
import random
import statistics
import string
import sys
import time
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

try:
    import tensorops as tops
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import tensorops as tops

import numpy as np
import opt_einsum as oe
from opt_einsum.testing import rand_equation

from tensorops._einsum.planning._cost import (
    contraction_steps,
    sliced_contraction_steps,
    total_flops,
)
from tensorops._einsum.planning._paths import plan_contraction

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _planner_in_tools import print_tools

SIZES = (3, 5, 8, 10, 12, 15, 20, 30, 50, 100, 200, 300)
QUICK_SIZES = (3, 5, 10, 20, 50, 100, 300)
OE_OPTIMAL_MAX = 8  # opt_einsum's optimal takes seconds beyond this
OUR_OPTIMAL_MAX = 10
DP_MAX = 20  # dp (ours and opt_einsum's) up to this many operands
ROUNDS = 4  # the cold call and contract_path are timed in this many alternating rounds

Network = tuple[list[tuple[str, ...]], tuple[str, ...], dict[str, int]]


def _path(*network: Any, **options: Any) -> Any:
    """tensorops' path search alone: `plan_contraction`'s path."""
    return plan_contraction(*network, **options).path


def _best_time(fn: Callable[[], Any], budget: float) -> tuple[float, Any]:
    """Return the fastest of repeated calls within ``budget`` seconds, and a result."""
    best, result, spent, runs = math.inf, None, 0.0, 0
    while runs < 3 or spent < budget:
        start = time.perf_counter()
        result = fn()
        elapsed = time.perf_counter() - start
        best, spent, runs = min(best, elapsed), spent + elapsed, runs + 1
        if elapsed > budget:
            break
    return best, result


def _gmean(values: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values)) if values else math.nan


def _parse(eq: str) -> tuple[list[tuple[str, ...]], tuple[str, ...]]:
    lhs, out = eq.split("->")
    return [tuple(term) for term in lhs.split(",")], tuple(out)


def _cost(network: Network, path: Any) -> int:
    return total_flops(contraction_steps(*network, path))


_renamings = itertools.count()
_BATCH = 64  # renamed equations made at a time, before they are timed


def _best_cold(network: Network, shapes: Any, strategy: str, budget: float) -> float:
    """The fastest ``einsum_path`` call on an equation it has never seen.

    Each timed call gets the network under new axis names, so that nothing of it
    is in tensorops' caches, while the code is as warm as opt_einsum's is when
    ``contract_path`` is called again. The names are made in batches before the
    calls are timed, so that making them does not run between two timed calls.
    """
    best, spent, runs = math.inf, 0.0, 0
    while runs < 3 or spent < budget:
        batch = [_tops_equation(network, next(_renamings)) for _ in range(_BATCH)]
        for eq in batch:
            start = time.perf_counter()
            tops.einsum_path(eq, *shapes, strategy=strategy)
            elapsed = time.perf_counter() - start
            best, spent, runs = min(best, elapsed), spent + elapsed, runs + 1
            if elapsed > budget or (runs >= 3 and spent >= budget):
                return best
    return best


def _strategies(n: int) -> list[str]:
    names = ["auto", "greedy"]
    names += ["dp"] if n <= DP_MAX else []
    names += ["optimal"] if n <= OUR_OPTIMAL_MAX else []
    return names


def _measure_random(n: int, seeds: range, budget: float) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, list[float]]] = {}
    for seed in seeds:
        raw, _, raw_sizes = rand_equation(n, 3, n_out=2, seed=seed, return_size_dict=True)
        inputs, output = _parse(raw)
        network = (inputs, output, {axis: int(size) for axis, size in raw_sizes.items()})
        eq, shapes = _oe_equation(network)
        size_dict = network[2]
        costs: dict[str, int] = {}
        for strategy in _strategies(n):
            row = rows.setdefault(strategy, {})
            peer = not (strategy == "optimal" and n > OE_OPTIMAL_MAX)
            contract = partial(oe.contract_path, eq, *shapes, shapes=True, optimize=strategy)
            # the two calls alternate in rounds: a change of the machine's speed
            # (frequency, neighbours) during the measurement reaches both
            cold = theirs = math.inf
            for _ in range(ROUNDS):
                cold = min(cold, _best_cold(network, shapes, strategy, budget / ROUNDS))
                if peer:
                    theirs = min(theirs, _best_time(contract, budget / ROUNDS)[0])
            bare, path = _best_time(partial(_path, *network, strategy), budget)
            costs[strategy] = _cost(network, path)
            row.setdefault("cold", []).append(cold)
            row.setdefault("bare", []).append(bare)
            row.setdefault("share", []).append(min(1.0, bare / cold))
            if not peer:
                continue
            _, info = contract()
            fn = oe.paths.get_path_fn(strategy)
            sets = [frozenset(term) for term in inputs]
            their_fn, _ = _best_time(partial(fn, sets, frozenset(output), size_dict), budget)
            row.setdefault("oe", []).append(theirs)
            row.setdefault("oe_fn", []).append(their_fn)
            row.setdefault("ratio", []).append(costs[strategy] / int(info.opt_cost))
        if "dp" in costs:
            rows["auto"].setdefault("auto_dp", []).append(costs["auto"] / costs["dp"])
    return [{"n": n, "strategy": name, **data} for name, data in rows.items()]


def _ms(values: list[float]) -> str:
    return f"{1e3 * _gmean(values):.3g}" if values else "-"


def _ratio(values: list[float], digits: int = 3) -> str:
    return f"{_gmean(values):.{digits}f}" if values else "-"


def _print_random(results: list[dict[str, Any]], seeds: int) -> None:
    print("### Random networks: the whole cold call and the bare path functions\n")
    print(
        "| n | strategy | einsum_path cold (ms) | contract_path (ms) | cold / contract_path "
        "| plan_contraction (ms) | opt_einsum path fn (ms) | planner share of cold call "
        "| cost ours/oe | auto/dp cost |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in results:
        vs = f"{_gmean(row['cold']) / _gmean(row['oe']):.2f}" if row.get("oe") else "-"
        print(
            f"| {row['n']} | {row['strategy']} | {_ms(row['cold'])} | {_ms(row.get('oe', []))} "
            f"| {vs} | {_ms(row['bare'])} | {_ms(row.get('oe_fn', []))} "
            f"| {100 * statistics.fmean(row['share']):.0f} % | {_ratio(row.get('ratio', []))} "
            f"| {_ratio(row.get('auto_dp', []))} |"
        )
    print(
        f"\n{seeds} networks per n; each time is the fastest of repeated runs (each cold call "
        "is on the network under new axis names, which no cache holds), geometric mean "
        "over the networks."
    )


def _large_networks(quick: bool) -> dict[str, Callable[[], Any]]:
    import cotengra as ctg

    utils = ctg.utils
    networks: dict[str, Callable[[], Any]] = {
        "random 3-regular, 100 tensors": lambda: utils.randreg_equation(100, 3, seed=1),
        "10x10 lattice, bonds 2-4": lambda: utils.lattice_equation([10, 10], d_max=4, seed=1),
    }
    if quick:
        return networks
    networks |= {
        "random 3-regular, 200 tensors": lambda: utils.randreg_equation(200, 3, seed=1),
        "random 3-regular, 300 tensors": lambda: utils.randreg_equation(300, 3, seed=1),
        "random 4-regular, 60 tensors": lambda: utils.randreg_equation(60, 4, seed=1),
        "4x4x4 lattice, bonds 2-3": lambda: utils.lattice_equation([4, 4, 4], seed=1),
        "random, hyper-indices, 150 tensors": lambda: utils.rand_equation(
            150, 3, n_out=2, n_hyper_in=2, n_hyper_out=1, seed=1
        ),
        "random 4-regular-ish, 100 tensors": lambda: utils.rand_equation(100, 4, n_out=3, seed=1),
    }
    return networks


def _tops_equation(network: Network, renaming: int = 0) -> str:
    """The network in tensorops' notation: compact up to 52 axes, else spaced names.

    ``renaming`` picks other names for the same network (0: a, b, c, ... or x0, x1, ...).
    """
    inputs, output, _ = network
    names = dict.fromkeys([a for t in inputs for a in t] + list(output))
    if len(names) <= len(string.ascii_letters):
        letters = list(string.ascii_letters)
        if renaming:
            random.Random(renaming).shuffle(letters)
        symbols = dict(zip(names, letters, strict=False))
        return (
            ",".join("".join(symbols[a] for a in t) for t in inputs)
            + "->"
            + "".join(symbols[a] for a in output)
        )
    suffix = f"r{renaming}" if renaming else ""
    symbols = {axis: f"x{i}{suffix}" for i, axis in enumerate(names)}
    terms = ", ".join(" ".join(symbols[a] for a in t) for t in inputs)
    return terms + " -> " + " ".join(symbols[a] for a in output)


def _oe_equation(network: Network) -> tuple[str, list[tuple[int, ...]]]:
    inputs, output, sizes = network
    symbols: dict[str, str] = {}
    for axis in [a for t in inputs for a in t] + list(output):
        symbols.setdefault(axis, oe.get_symbol(len(symbols)))
    eq = ",".join("".join(symbols[a] for a in t) for t in inputs)
    return eq + "->" + "".join(symbols[a] for a in output), [
        tuple(sizes[a] for a in t) for t in inputs
    ]


def _timed_cost(network: Network, plan: Callable[[], Any]) -> tuple[float, float]:
    start = time.perf_counter()
    path = plan()
    return time.perf_counter() - start, math.log10(_cost(network, path))


def _measure_large(quick: bool) -> list[tuple[str, dict[str, tuple[float, float]]]]:
    import cotengra as ctg

    rows = []
    for name, make in _large_networks(quick).items():
        contraction = make()
        network: Network = (
            [tuple(t) for t in contraction.inputs],
            tuple(contraction.output),
            dict(contraction.size_dict),
        )
        eq, shapes = _oe_equation(network)
        row: dict[str, tuple[float, float]] = {}
        if not quick:

            def cotengra_path(network: Network = network) -> Any:
                optimizer = ctg.HyperOptimizer(max_repeats=64, parallel=False, progbar=False)
                return optimizer.search(*network).get_path()

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                row["cotengra"] = _timed_cost(network, cotengra_path)
        hyper_time = row["cotengra"][0] / 10 if "cotengra" in row else 1.0
        row["greedy"] = _timed_cost(network, partial(_path, *network, "greedy"))
        row["auto"] = _timed_cost(network, partial(_path, *network, "auto"))
        hyper = partial(_path, *network, "hyper", max_time=hyper_time)
        row["hyper"] = _timed_cost(network, hyper)
        for label, optimize in (("oe greedy", "greedy"), ("oe rg128", None)):
            chosen = optimize or oe.RandomGreedy(max_repeats=128)
            contract = partial(oe.contract_path, eq, *shapes, shapes=True, optimize=chosen)
            row[label] = _timed_cost(network, lambda contract=contract: contract()[0])
        rows.append((f"{name} ({len(network[0])})", row))
        print(f"  measured {name}", file=sys.stderr, flush=True)
    return rows


def _print_large(rows: list[tuple[str, dict[str, tuple[float, float]]]]) -> None:
    columns = ["greedy", "auto", "hyper", "oe greedy", "oe rg128", "cotengra"]
    print("\n### Large networks: log10 of the cost (planning time)\n")
    print(
        "| network | tensorops greedy | tensorops auto | tensorops hyper | opt_einsum greedy "
        "| opt_einsum RandomGreedy(128) | cotengra HyperOptimizer(64) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, row in rows:
        cells = [f"{row[c][1]:.2f} ({row[c][0]:.3g} s)" if c in row else "-" for c in columns]
        print(f"| {name} | " + " | ".join(cells) + " |")
    auto = [row["auto"][1] - row["oe rg128"][1] for _, row in rows]
    speed = [row["auto"][0] / row["oe rg128"][0] for _, row in rows]
    print(
        f"\nauto vs RandomGreedy(128): mean log10 cost difference {statistics.fmean(auto):+.2f} "
        f"(geometric mean cost ratio {10 ** statistics.fmean(auto):.3g}), time ratio "
        f"{_gmean(speed):.3f} (geometric mean)."
    )
    with_ctg = [row for _, row in rows if "cotengra" in row]
    if with_ctg:
        gaps = [row["hyper"][1] - row["cotengra"][1] for row in with_ctg]
        print(
            f"hyper vs cotengra: cost ratio {', '.join(f'{10**g:.2f}' for g in gaps)}; hyper "
            "ran for a tenth of cotengra's time on each network."
        )


ISSUE_NETWORKS: dict[str, tuple[str, tuple[Any, ...], dict[str, Any]]] = {
    "random 3-regular, 100 tensors": ("randreg_equation", (100, 3), {"seed": 1}),
    "random 3-regular, 200 tensors": ("randreg_equation", (200, 3), {"seed": 1}),
    "random 3-regular, 250 tensors": ("randreg_equation", (250, 3), {"seed": 1}),
    "10x10 lattice, bonds 2-4": ("lattice_equation", ([10, 10],), {"d_max": 4, "seed": 1}),
    "12x12 lattice, bonds 2-4": ("lattice_equation", ([12, 12],), {"d_max": 4, "seed": 1}),
    "16x16 lattice, bonds 2-4": ("lattice_equation", ([16, 16],), {"d_max": 4, "seed": 1}),
    "5x5x5 lattice, bonds 2-3": ("lattice_equation", ([5, 5, 5],), {"seed": 1}),
    "random, hyper-indices, 120 tensors": (
        "rand_equation",
        (120, 3),
        {"n_out": 2, "n_hyper_in": 2, "n_hyper_out": 1, "seed": 1},
    ),
}
"""The networks of the partitioning comparison (``--cotengra-default``): cotengra's
generator, its arguments and keywords."""


def _issue_network(name: str) -> Network:
    import cotengra as ctg

    function, args, kwargs = ISSUE_NETWORKS[name]
    contraction = getattr(ctg.utils, function)(*args, **kwargs)
    inputs = [tuple(t) for t in contraction.inputs]
    return inputs, tuple(contraction.output), dict(contraction.size_dict)


def _cotengra_runs(
    cache: Path | None, max_time: float | None, greedy_driven: bool
) -> dict[str, dict[str, tuple[float, float]]]:
    """Time and log10 cost of cotengra's default (and greedy-driven) HyperOptimizer.

    With ``cache``, runs already in that JSON file are read from it, and new ones
    written to it as they finish (a long measurement survives an interruption).
    ``max_time`` caps each search (None: the default 128 trials, however long).
    """
    import cotengra as ctg

    runs: dict[str, dict[str, tuple[float, float]]] = {}
    if cache is not None and cache.exists():
        for name, row in json.loads(cache.read_text()).items():
            runs[name] = {label: (run[0], run[1]) for label, run in row.items()}
    optimizers = {
        "default": lambda: ctg.HyperOptimizer(max_time=max_time, parallel=False, progbar=False)
    }
    if greedy_driven:
        optimizers["greedy-driven"] = lambda: ctg.HyperOptimizer(
            methods=["greedy"], max_repeats=64, parallel=False, progbar=False
        )
    for name in ISSUE_NETWORKS:
        network = _issue_network(name)
        row = runs.setdefault(name, {})
        for label, make in optimizers.items():
            if label in row:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                row[label] = _timed_cost(
                    network, lambda make=make, net=network: make().search(*net).get_path()
                )
            print(f"  cotengra {label}: {name} {row[label]}", file=sys.stderr, flush=True)
            if cache is not None:
                cache.write_text(json.dumps(runs, indent=1))
    return runs


def _print_partitioning(args: argparse.Namespace) -> None:
    """The issue's networks: ``hyper`` at a tenth of cotengra's default HyperOptimizer's time."""
    runs = _cotengra_runs(args.cotengra_cache, args.cotengra_max_time, args.cotengra_greedy)
    print("\n### Partitioning: hyper at a tenth of cotengra's default HyperOptimizer\n")
    print(
        "| network | cotengra default (time) | cotengra greedy-driven (time) "
        "| tensorops hyper at 1/10 (time) | tensorops auto (time) | hyper / default cost |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    gaps = []
    for name in ISSUE_NETWORKS:
        network = _issue_network(name)
        row = dict(runs[name])
        limit = row["default"][0] / 10
        row["hyper"] = _timed_cost(network, partial(_path, *network, "hyper", max_time=limit))
        row["auto"] = _timed_cost(network, partial(_path, *network, "auto"))
        gaps.append(row["hyper"][1] - row["default"][1])
        cells = [
            f"{row[c][1]:.2f} ({row[c][0]:.3g} s)" if c in row else "-"
            for c in ("default", "greedy-driven", "hyper", "auto")
        ]
        print(f"| {name} ({len(network[0])}) | " + " | ".join(cells) + f" | {10 ** gaps[-1]:.2f} |")
        print(f"  measured {name}", file=sys.stderr, flush=True)
    print(
        f"\nhyper / cotengra default cost: geometric mean {10 ** statistics.fmean(gaps):.2f}, "
        f"worst {10 ** max(gaps):.2f}."
    )


def _print_slicing() -> None:
    inputs = [(f"x{i}", f"x{(i + 1) % 6}") for i in range(6)]
    sizes = {f"x{i}": 256 for i in range(6)}
    network = (inputs, (), sizes)
    eq, shapes = _oe_equation(network)
    print("\n### Slicing: a ring of six 256 x 256 matrices, memory_limit=4096\n")
    print(
        "| planner | sliced axes | slices | FLOPs | x unsliced | largest intermediate | time (ms) |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for strategy in ("auto", "greedy", "dp", "optimal", "hyper"):
        unsliced = _cost(network, _path(*network, strategy))
        plan_it = partial(plan_contraction, *network, strategy, memory_limit=4096)
        elapsed, planned = _best_time(plan_it, 0.05)
        plan = sliced_contraction_steps(*network, planned.path, planned.sliced_axes)
        print(
            f"| tensorops {strategy} | {', '.join(planned.sliced_axes)} | {plan.slices} "
            f"| {plan.flops:.3g} | {plan.flops / unsliced:.2f} | {plan.largest_intermediate} "
            f"| {1e3 * elapsed:.2g} |"
        )
    _, info = oe.contract_path(eq, *shapes, shapes=True, optimize="greedy", memory_limit=4096)
    unsliced = _cost(network, _path(*network, "greedy"))
    print(
        f"| opt_einsum greedy | (none: one step over all) | 1 | {int(info.opt_cost):.3g} "
        f"| {int(info.opt_cost) / unsliced:.3g} | {int(info.largest_intermediate)} | - |"
    )


def _print_combo_fit() -> None:
    rng = np.random.default_rng(0)
    rows = []
    for m, k, n in [
        (m, k, n)
        for k in (1, 2, 4, 16, 64, 256, 1024)
        for m, n in ((256, 256), (512, 512), (1024, 1024))
    ]:
        a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
        elapsed, _ = _best_time(lambda a=a, b=b: np.matmul(a, b), 0.05)
        rows.append((m * k * n * (2 if k > 1 else 1), m * n, elapsed))
    design = np.array([[f, w, 1.0] for f, w, _ in rows]) / np.array([t for *_, t in rows])[:, None]
    coef, *_ = np.linalg.lstsq(design, np.ones(len(rows)), rcond=None)
    print("\n### Combo factor: matrix products fitted as a * flops + b * writes + c\n")
    print(
        f"a = {coef[0]:.3g} s per FLOP ({1e-9 / coef[0]:.1f} GFLOP/s), b = {coef[1]:.3g} s per "
        f"element written, c = {1e6 * coef[2]:.1f} µs: writing an element costs "
        f"{coef[1] / coef[0]:.0f} FLOPs (NumPy {np.__version__}, float64, {len(rows)} shapes)."
    )


_STORE_SCRIPT = """
import sys, time, random, tensorops as tops
side, seed, directory, max_time = int(sys.argv[1]), 1, sys.argv[2], sys.argv[3]
rng, terms, sizes = random.Random(seed), [], {}
def bond(a, b):
    name = f"b{min(a, b)}_{max(a, b)}"
    sizes.setdefault(name, rng.randint(2, 4))
    return name
for i in range(side * side):
    r, c = divmod(i, side)
    last = side - 1
    pairs = ((i - side, r), (i + side, r < last), (i - 1, c), (i + 1, c < last))
    near = [j for j, ok in pairs if ok]
    terms.append([bond(i, j) for j in near])
eq = ", ".join(" ".join(t) for t in terms) + " ->"
shapes = [tuple(sizes[a] for a in t) for t in terms]
options = {} if max_time == "none" else {"max_time": float(max_time)}
with tops.config(plan_store=directory):
    start = time.perf_counter()
    plan = tops.einsum_path(eq, *shapes, strategy="hyper", **options)
    print(time.perf_counter() - start, plan.flops)
"""


def _print_store(quick: bool) -> None:
    import subprocess
    import tempfile

    print("\n### Plan store: `hyper` planned by a first process, read by a second\n")
    print("| network | search | first process | second process | speedup | same plan |")
    print("|---|---|---|---|---|---|")
    cases = [(10, "none")] if quick else [(10, "none"), (16, "none"), (16, "10")]
    for side, max_time in cases:
        with tempfile.TemporaryDirectory() as directory:
            runs = []
            for _ in range(4):
                command = [sys.executable, "-c", _STORE_SCRIPT, str(side), directory, max_time]
                text = subprocess.run(command, capture_output=True, text=True, check=True).stdout
                seconds, flops = text.split()
                runs.append((float(seconds), int(flops)))
        search = "default work" if max_time == "none" else f"max_time={max_time}"
        (first, cost), *later = runs
        second, again = min(later)
        print(
            f"| {side}x{side} lattice, bonds 2-4 | {search} | {1e3 * first:.0f} ms "
            f"| {1e3 * second:.2f} ms | {first / second:,.0f}x | {cost == again} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer networks, no cotengra")
    parser.add_argument("--combo", action="store_true", help="also fit the combo factor")
    parser.add_argument("--store", action="store_true", help="only the plan store's second run")
    parser.add_argument(
        "--cotengra-default",
        action="store_true",
        help="only the partitioning table: hyper against cotengra's default HyperOptimizer",
    )
    parser.add_argument(
        "--cotengra-cache", type=Path, help="JSON file keeping cotengra's runs between calls"
    )
    parser.add_argument(
        "--cotengra-max-time", type=float, help="seconds each cotengra search may take at most"
    )
    parser.add_argument(
        "--cotengra-greedy",
        action="store_true",
        help="with --cotengra-default: also cotengra's greedy-driven HyperOptimizer(64)",
    )
    parser.add_argument(
        "--tools",
        action="store_true",
        help="only the table of tensorops' PathOptimizer inside cotengra and quimb",
    )
    args = parser.parse_args()
    if args.tools:
        log = partial(print, file=sys.stderr, flush=True)
        print_tools(args.quick, _issue_network, log)
        return
    if args.store:
        _print_store(args.quick)
        return
    if args.cotengra_default:
        _print_partitioning(args)
        return
    start = time.perf_counter()
    tops.einsum_path("ij,jk->ik", (2, 2), (2, 2))  # load the einsum stack once
    seeds = range(2) if args.quick else range(4)
    results: list[dict[str, Any]] = []
    for n in QUICK_SIZES if args.quick else SIZES:
        results.extend(_measure_random(n, seeds, 0.01 if args.quick else 0.05))
        print(f"  measured n={n}", file=sys.stderr, flush=True)
    _print_random(results, len(seeds))
    if importlib.util.find_spec("cotengra") is None:
        print("\n(cotengra is not installed: no large-network table; pip install cotengra)")
    else:
        _print_large(_measure_large(args.quick))
    _print_slicing()
    if args.combo:
        _print_combo_fit()
    print(f"\ntotal {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
