"""The contraction plans of one tensor network under every einsum strategy.

A ring of seven tensors with one open leg: the order of the pairwise
contractions decides the cost, and the strategies trade planning time for plan
quality (here greedy's plan costs several times the optimum).

Usage: python examples/einsum_paths.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a source checkout

import tensorops as tops

EQUATION = "ab,bc,cdj,de,ef,fg,ga->j"
SHAPES = [(16, 16), (16, 2), (2, 8, 8), (8, 32), (32, 16), (16, 16), (16, 16)]


def main() -> int:
    print(f"equation: {EQUATION}")
    print("shapes:   " + ", ".join("x".join(map(str, s)) for s in SHAPES))
    print()
    summary = []
    for strategy in ["optimal", "dp", "greedy", "auto"]:
        started = time.perf_counter()
        plan = tops.einsum_path(EQUATION, *SHAPES, strategy=strategy)
        planning = time.perf_counter() - started
        summary.append((strategy, plan.flops, plan.largest_intermediate, planning))
        print(f"--- strategy={strategy!r}: path {plan.path}")
        print(plan)
        print()
    limit = 32
    plan = tops.einsum_path(EQUATION, *SHAPES, strategy="optimal", memory_limit=limit)
    summary.append((f"optimal, memory_limit={limit}", plan.flops, plan.largest_intermediate, 0.0))
    print(f"--- strategy='optimal', memory_limit={limit}: path {plan.path}")
    print(plan)
    print()
    print(f"{'strategy':<28}{'flops':>14}{'largest':>10}{'planning':>12}")
    for strategy, flops, largest, planning in summary:
        shown = f"{planning * 1e3:.2f} ms" if planning else ""
        print(f"{strategy:<28}{flops:>14,}{largest:>10,}{shown:>12}")
    optimal = summary[0][1]
    assert all(flops >= optimal for _, flops, _, _ in summary), "optimal is the minimum"
    return 0


if __name__ == "__main__":
    sys.exit(main())
