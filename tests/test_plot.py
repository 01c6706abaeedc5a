"""ContractionPlan.plot: the contraction tree drawn with matplotlib, or a clear ImportError."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import tensorops as tops
from tensorops.__main__ import main
from tensorops._einsum.planning._plot import tree_of
from tests.test_progress import _lattice as lattice

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")

RING = "ab,bc,cd,de,ea->"
SHAPES = [(8, 8)] * 5


@pytest.fixture(autouse=True)
def _close_figures() -> None:
    yield
    plt.close("all")


def _check_layout(operands: int, path: list[tuple[int, ...]]) -> None:
    tree = tree_of(operands, path)
    assert len(tree.children) == operands + len(path)
    assert sorted(tree.x[:operands]) == list(range(operands))  # leaves side by side
    assert tree.y[:operands] == (0,) * operands
    for node, below in enumerate(tree.children):
        if below:  # above its highest child, centred over its children
            assert tree.y[node] == 1 + max(tree.y[c] for c in below)
            assert tree.x[node] == pytest.approx(np.mean([tree.x[c] for c in below]))
    assert sorted(c for below in tree.children for c in below) == list(
        range(len(path) + operands - 1)
    )


def test_layout_of_real_plans() -> None:
    _check_layout(3, [(0, 2), (0, 1)])
    plan = tops.einsum_path(RING, *SHAPES)
    _check_layout(5, plan.path)
    _check_layout(4, [(0, 1, 2, 3)])  # one step over every operand


def test_plot_draws_every_node_coloured_by_cost() -> None:
    plan = tops.einsum_path(RING, *SHAPES)
    ax = plan.plot(annotate=2)
    leaves, steps = ax.collections
    assert len(leaves.get_offsets()) == 5
    assert len(steps.get_offsets()) == len(plan.steps)
    expected = [math.log10(step.flops) for step in plan.steps]
    np.testing.assert_allclose(steps.get_array(), expected)
    assert len(ax.texts) == 2
    costliest = max(range(len(plan.steps)), key=lambda k: plan.steps[k].flops)
    assert ax.texts[0].get_text().startswith(f"step {costliest}:")
    assert f"{plan.flops:.3e} FLOPs" in ax.get_title()
    assert "sliced" not in ax.get_title()


def test_plot_on_given_axes_shows_sliced_axes() -> None:
    plan = tops.einsum_path(RING, *SHAPES, memory_limit=8)
    assert plan.sliced_axes
    _, ax = plt.subplots()
    assert plan.plot(ax, annotate=0) is ax
    assert f"sliced axes: {', '.join(plan.sliced_axes)} ({plan.slices:,} slices" in ax.get_title()
    assert len(ax.texts) == 0


def test_plot_of_a_large_network(tmp_path: Path) -> None:
    equation, shapes = lattice(7, 2)
    plan = tops.einsum_path(equation, *shapes)
    ax = plan.plot()
    ax.figure.savefig(tmp_path / "tree.png")
    assert (tmp_path / "tree.png").read_bytes()[:4] == b"\x89PNG"


def test_without_matplotlib_a_clear_import_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    plan = tops.einsum_path(RING, *SHAPES)
    with pytest.raises(ImportError, match=r"needs matplotlib.*pip install 'tensorops\[plot\]'"):
        plan.plot()


def test_cli_plot_writes_a_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "tree.png"
    assert (
        main(["path", RING, "--shapes", "x".join(["8"] * 2) + ",8x8" * 4, "--plot", str(out)]) == 0
    )
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert f"wrote {out}" in capsys.readouterr().out


def test_cli_plot_without_matplotlib(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    out = tmp_path / "tree.png"
    assert main(["path", "ij,jk,kl->il", "--shapes", "2x3,3x4,4x5", "--plot", str(out)]) == 2
    assert "needs matplotlib" in capsys.readouterr().err
    assert not out.exists()
