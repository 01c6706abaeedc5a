"""Draw docs/images/einsum_tree.png: the contraction tree of a 50-tensor network.

A 5 x 10 lattice with bonds of 2 to 4 (seed 1), planned by ``hyper`` under a
memory limit of 2**9 elements, so that some axes are sliced.

Usage: python docs/images/einsum_tree.py
"""

from __future__ import annotations

import random
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import tensorops as tops

ROWS, COLUMNS = 5, 10


def lattice() -> tuple[str, list[tuple[int, ...]]]:
    """The lattice's equation (spaced names) and shapes."""
    rng = random.Random(1)
    sizes: dict[str, int] = {}
    terms = []
    for i in range(ROWS * COLUMNS):
        r, c = divmod(i, COLUMNS)
        near = (
            (i - COLUMNS, r > 0),
            (i + COLUMNS, r < ROWS - 1),
            (i - 1, c > 0),
            (i + 1, c < COLUMNS - 1),
        )
        term = []
        for j, ok in near:
            if ok:
                name = f"b{min(i, j)}_{max(i, j)}"
                sizes.setdefault(name, rng.randint(2, 4))
                term.append(name)
        terms.append(term)
    equation = ", ".join(" ".join(t) for t in terms) + " ->"
    return equation, [tuple(sizes[a] for a in t) for t in terms]


def main() -> None:
    """Plan the lattice and write the picture beside this script."""
    equation, shapes = lattice()
    plan = tops.einsum_path(equation, *shapes, strategy="hyper", memory_limit=2**9)
    ax = plan.plot()
    out = Path(__file__).with_name("einsum_tree.png")
    ax.figure.savefig(out, dpi=120)
    print(f"wrote {out}: {plan.flops:.3e} FLOPs, sliced {plan.sliced_axes}")


if __name__ == "__main__":
    main()
