"""The table of tensorops' optimizer inside cotengra and quimb (einsum_planning.py --tools).

Per network, the whole call a cotengra or quimb user makes for a contraction tree:

* cotengra's default: ``cotengra.array_contract_tree(inputs, output, size_dict=...,
  optimize=cotengra.HyperOptimizer(parallel=False))`` (128 trials; its default
  methods, greedy and KaHyPar, and its default optimiser library, optuna), or
  quimb's ``tn.contraction_tree(optimize=...)`` for the circuits;
* the same call with ``optimize=tensorops.PathOptimizer("hyper", max_time=T)``, T
  being cotengra's time on that network (equal time) and a tenth of it.

Cost is log10 of the tree's FLOPs as opt_einsum counts them (the other tables'
count). Networks: cotengra's generators (the partitioning table's) and amplitudes of
random quantum circuits on a grid of qubits (random single-qubit gates, then CZ on
one of four edge patterns in turn, as in random circuit sampling), simplified by
quimb as ``Circuit.amplitude`` does before contracting.
"""

from __future__ import annotations

import math
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import tensorops as tops
from tensorops._einsum.planning._cost import contraction_steps, total_flops

# cotengra's generators (the partitioning table's ISSUE_NETWORKS) used here
GENERATED = (
    "random 3-regular, 100 tensors",
    "random 3-regular, 200 tensors",
    "10x10 lattice, bonds 2-4",
    "5x5x5 lattice, bonds 2-3",
    "random, hyper-indices, 120 tensors",
)
CIRCUITS = {  # rows, columns, cycles
    "circuit 4x4, 12 cycles": (4, 4, 12),
    "circuit 4x5, 14 cycles": (4, 5, 14),
    "circuit 5x5, 12 cycles": (5, 5, 12),
    "circuit 5x6, 14 cycles": (5, 6, 14),
}
QUICK = ("random 3-regular, 100 tensors", "circuit 4x4, 12 cycles")


def _grid_circuit(rows: int, columns: int, cycles: int, seed: int = 1) -> Any:
    import quimb.tensor as qtn

    rng = np.random.default_rng(seed)
    qubit = {(r, c): r * columns + c for r in range(rows) for c in range(columns)}
    patterns = [
        [((r, c), (r, c + 1)) for (r, c) in qubit if c + 1 < columns and c % 2 == 0],
        [((r, c), (r, c + 1)) for (r, c) in qubit if c + 1 < columns and c % 2 == 1],
        [((r, c), (r + 1, c)) for (r, c) in qubit if r + 1 < rows and r % 2 == 0],
        [((r, c), (r + 1, c)) for (r, c) in qubit if r + 1 < rows and r % 2 == 1],
    ]
    circuit = qtn.Circuit(rows * columns)
    for cycle in range(cycles):
        for q in qubit.values():
            circuit.apply_gate("U3", *rng.uniform(0, 2 * np.pi, 3), q)
        for a, b in patterns[cycle % 4]:
            circuit.apply_gate("CZ", qubit[a], qubit[b])
    return circuit.amplitude_tn("0" * (rows * columns))


def _network(
    name: str, generate: Callable[[str], Any]
) -> tuple[list[tuple[Any, ...]], tuple[Any, ...], dict[Any, int]]:
    if name in CIRCUITS:
        inputs, output, sizes = _grid_circuit(*CIRCUITS[name]).get_inputs_output_size_dict()
        return [tuple(t) for t in inputs], tuple(output), dict(sizes)
    inputs, output, sizes = generate(name)
    return [tuple(t) for t in inputs], tuple(output), dict(sizes)


def _tree(name: str, optimize: Any, generate: Callable[[str], Any]) -> tuple[float, float]:
    """Seconds and log10 FLOPs of the tree cotengra (or quimb, for a circuit) makes."""
    import cotengra as ctg

    circuit = _grid_circuit(*CIRCUITS[name]) if name in CIRCUITS else None
    inputs, output, sizes = _network(name, generate)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if circuit is not None:
            tree = circuit.contraction_tree(optimize=optimize)
        else:
            tree = ctg.array_contract_tree(inputs, output, size_dict=sizes, optimize=optimize)
    seconds = time.perf_counter() - start
    inputs, output, sizes = [tuple(t) for t in tree.inputs], tuple(tree.output), tree.size_dict
    names = {label: str(i) for i, label in enumerate(dict.fromkeys(a for t in inputs for a in t))}
    network = (
        [tuple(names[a] for a in t) for t in inputs],
        tuple(names[a] for a in output),
        {names[a]: n for a, n in sizes.items() if a in names},
    )
    flops = total_flops(contraction_steps(*network, [tuple(s) for s in tree.get_path()]))
    return seconds, math.log10(flops)


def print_tools(quick: bool, generate: Callable[[str], Any], log: Callable[[str], None]) -> None:
    """The table: tensorops' optimizer inside cotengra / quimb against cotengra's default.

    ``generate(name)`` makes the network of a name in `GENERATED`.
    """
    import cotengra as ctg

    names = QUICK if quick else (*GENERATED, *CIRCUITS)
    print("\n### tensorops' optimizer inside cotengra and quimb: log10 FLOPs (planning time)\n")
    print(
        "| network (tensors) | cotengra default | tensorops, equal time | tensorops, 1/10 time "
        "| cost / default, equal | cost / default, 1/10 |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    equal, tenth = [], []
    for name in names:
        default = _tree(name, ctg.HyperOptimizer(parallel=False, progbar=False), generate)
        same = _tree(name, tops.PathOptimizer("hyper", max_time=default[0]), generate)
        fast = _tree(name, tops.PathOptimizer("hyper", max_time=default[0] / 10), generate)
        equal.append(same[1] - default[1])
        tenth.append(fast[1] - default[1])
        cells = [f"{cost:.2f} ({seconds:.3g} s)" for seconds, cost in (default, same, fast)]
        tensors = len(_network(name, generate)[0])
        print(
            f"| {name} ({tensors}) | " + " | ".join(cells)
            + f" | {10 ** equal[-1]:.2f} | {10 ** tenth[-1]:.2f} |"
        )  # fmt: skip
        log(f"  measured {name}")
    print(
        f"\ncost / cotengra default: equal time geometric mean {10 ** statistics.fmean(equal):.2f} "
        f"(worst {10 ** max(equal):.2f}); a tenth of the time geometric mean "
        f"{10 ** statistics.fmean(tenth):.2f} (worst {10 ** max(tenth):.2f})."
    )
    sys.stdout.flush()
