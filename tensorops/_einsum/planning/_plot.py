"""A picture of a contraction tree (matplotlib, the optional ``plot`` extra).

Leaves are the operands, in the order a depth-first walk from the root meets them;
each step is a node above its operands, as high as the longest chain of steps
below it. A step's dot is coloured by its FLOPs (log10) and sized by the elements
of its result; the costliest steps are labelled; the title gives the totals and
the sliced axes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

__all__ = ["Tree", "plot_tree", "tree_of"]

_MISSING = (
    "ContractionPlan.plot needs matplotlib, which is not installed: "
    "pip install 'tensorops[plot]' (or matplotlib>=3.7)"
)


class Tree(NamedTuple):
    """Where each node of a contraction tree goes.

    Attributes:
        children: Per node, the nodes it contracts (leaves: none); the operands
            are nodes ``0`` to ``n - 1``, step ``k`` is node ``n + k``.
        x: Per node, its horizontal place.
        y: Per node, its height (leaves 0).
    """

    children: tuple[tuple[int, ...], ...]
    x: tuple[float, ...]
    y: tuple[int, ...]


def tree_of(operands: int, path: Sequence[Sequence[int]]) -> Tree:
    """Lay out the tree of a path in the NumPy / opt_einsum convention.

    Examples:
        >>> tree_of(3, [(0, 2), (0, 1)])
        Tree(children=((), (), (), (0, 2), (1, 3)), x=(1.0, 0.0, 2.0, 1.5, 0.75), y=(0, 0, 0, 1, 2))
    """
    alive = list(range(operands))
    children: list[tuple[int, ...]] = [()] * operands
    for entry in path:
        picked = tuple(alive[p] for p in entry)
        for p in sorted(entry, reverse=True):
            del alive[p]
        alive.append(len(children))
        children.append(picked)
    x = [0.0] * len(children)
    y = [0] * len(children)
    order = 0
    stack: list[tuple[int, bool]] = [(node, False) for node in reversed(alive)]
    while stack:  # depth first, without recursion: trees can be hundreds deep
        node, done = stack.pop()
        below = children[node]
        if not below:
            x[node], order = float(order), order + 1
        elif done:
            x[node] = sum(x[c] for c in below) / len(below)
            y[node] = 1 + max(y[c] for c in below)
        else:
            stack.append((node, True))
            stack.extend((c, False) for c in reversed(below))
    return Tree(tuple(children), tuple(x), tuple(y))


def _pyplot() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(_MISSING) from None
    return plt


def plot_tree(plan: Any, ax: Any = None, annotate: int = 3, cmap: str = "viridis") -> Any:
    """Draw ``plan``'s contraction tree on ``ax`` (None: a new figure); return ``ax``.

    See `ContractionPlan.plot`.
    """
    plt = _pyplot()
    steps = plan.steps
    n = len(plan.shapes)
    tree = tree_of(n, plan.path)
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6.0, 0.2 * n), 4.5), layout="constrained")
    for node, below in enumerate(tree.children):
        for child in below:
            ax.plot([tree.x[child], tree.x[node]], [tree.y[child], tree.y[node]], color="0.7", lw=1)
    ax.scatter(tree.x[:n], tree.y[:n], s=12, color="0.4", zorder=2, label="operand")
    cost = [math.log10(max(step.flops, 1)) for step in steps]
    sizes = [18 + 10 * math.log2(max(step.size, 1)) for step in steps]
    dots = ax.scatter(tree.x[n:], tree.y[n:], s=sizes, c=cost, cmap=cmap, zorder=3)
    ax.figure.colorbar(dots, ax=ax, label="log10 FLOPs of the step (dot area: result size)")
    _label_costliest(ax, plan, tree, annotate)
    ax.set_title(_title(plan), fontsize=9)
    ax.set_ylabel("height (steps)")
    ax.set_xticks([])
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    return ax


def _label_costliest(ax: Any, plan: Any, tree: Tree, count: int) -> None:
    steps = plan.steps
    n = len(plan.shapes)
    ranked = sorted(range(len(steps)), key=lambda k: -steps[k].flops)[:count]
    for rank, k in enumerate(ranked):  # a list in the top right corner: labels never overlap
        step = steps[k]
        ax.annotate(
            f"step {k}: {step.flops:.2e} FLOPs, {step.size:,} elements",
            (tree.x[n + k], tree.y[n + k]),
            xytext=(0.7, 0.96 - 0.07 * rank),
            textcoords="axes fraction",
            fontsize=7,
            va="center",
            arrowprops={"arrowstyle": "-", "color": "tab:red", "lw": 0.5},
        )


def _title(plan: Any) -> str:
    lines = [
        f"{len(plan.shapes)} operands, {plan.flops:.3e} FLOPs "
        f"(log10 {math.log10(max(plan.flops, 1)):.2f}), largest intermediate "
        f"{plan.largest_intermediate:,} elements, strategy {plan.strategy}"
    ]
    if plan.sliced_axes:
        axes = ", ".join(plan.sliced_axes)
        lines.append(f"sliced axes: {axes} ({plan.slices:,} slices; step costs are per slice)")
    return "\n".join(lines)
