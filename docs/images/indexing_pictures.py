"""Pictures of get_at, set_at and add_at on a small image grid, for docs/indexing.md.

Every picture is drawn from the result of one tensorops call on NumPy arrays.
Needs matplotlib (the ``docs`` extra).

Usage: python docs/images/indexing_pictures.py [--out docs/images]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import matplotlib as mpl

mpl.use("Agg")  # files only, no window
import matplotlib.pyplot as plt
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run from a source checkout

import tensorops as tops

HEIGHT, WIDTH = 6, 8
# (row, column) of five pixels; the last one repeats the first, for add_at
POINTS = np.array([[1, 1], [4, 2], [2, 6], [5, 7], [1, 1]])


def image() -> np.ndarray:
    """A (6, 8, 3) picture: hue along the width, brightness down the height."""
    hue = np.linspace(0.0, 0.85, WIDTH)
    value = np.linspace(1.0, 0.45, HEIGHT)
    hsv = np.stack(np.broadcast_arrays(hue[None, :], 0.65, value[:, None]), axis=-1)
    return np.asarray(mpl.colors.hsv_to_rgb(hsv))


def _grid(axes: plt.Axes, picture: np.ndarray, title: str) -> None:
    axes.imshow(picture, interpolation="nearest", vmin=0, vmax=1)
    height, width = picture.shape[:2]
    axes.set_xticks(np.arange(-0.5, width, 1), minor=True)
    axes.set_yticks(np.arange(-0.5, height, 1), minor=True)
    axes.grid(which="minor", color="white", linewidth=1)
    axes.tick_params(which="both", length=0, labelsize=8)
    axes.set_xticks(range(width))
    axes.set_yticks(range(height))
    axes.set_title(title, fontsize=9, family="monospace")


def _mark(axes: plt.Axes, points: np.ndarray, positions: list[int] | None = None) -> None:
    """Write each point's position p in its cell (several in one cell: "0,1")."""
    labels: dict[tuple[int, int], list[str]] = {}
    for p, (row, column) in zip(positions or range(len(points)), points, strict=True):
        labels.setdefault((int(row), int(column)), []).append(str(p))
    for (row, column), names in labels.items():
        text = ",".join(names)
        axes.text(column, row, text, ha="center", va="center", fontsize=9, weight="bold")


def _save(figure: plt.Figure, call: str, path: Path) -> None:
    figure.suptitle(call, fontsize=9, family="monospace")
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)


def gather(out: Path) -> None:
    """Pixels of an image at (row, column) points."""
    picture = image()
    points = POINTS[:4]
    pixels = tops.get_at(picture, points, "[h w] c, p [2] -> p c")
    figure, (left, right) = plt.subplots(
        1, 2, figsize=(7.2, 2.6), gridspec_kw={"width_ratios": [WIDTH, 4]}
    )
    _grid(left, picture, "image: h w c; points: p [2]")
    _mark(left, points)
    _grid(right, pixels[None], "result: p c")
    right.set_yticks([])
    right.set_xlabel("p", fontsize=9)
    _save(figure, 'get_at(image, points, "[h w] c, p [2] -> p c")', out / "get_at.png")


def gather_rows(out: Path) -> None:
    """Each row of a batch read at its own positions."""
    picture = image()[:3]  # three rows: a batch of three sequences of length 8
    index = np.array([[0, 2, 7], [5, 5, 1], [3, 6, 4]])
    picked = tops.get_at(picture, index, "b [t] c, b p -> b p c")
    figure, (left, right) = plt.subplots(
        1, 2, figsize=(7.2, 1.9), gridspec_kw={"width_ratios": [WIDTH, 3]}
    )
    _grid(left, picture, "x: b t c; index: b p, a row each")
    cells = np.stack(np.broadcast_arrays(np.arange(3)[:, None], index), -1).reshape(-1, 2)
    _mark(left, cells, [0, 1, 2] * 3)
    _grid(right, picked, "result: b p c")
    right.set_xlabel("p", fontsize=9)
    _save(figure, 'get_at(x, index, "b [t] c, b p -> b p c")', out / "get_at_rows.png")


def scatter(out: Path) -> None:
    """Values written at points of a blank canvas."""
    canvas = np.full((HEIGHT, WIDTH, 3), 0.93)
    points = POINTS[:4]
    colors = np.array([[0.85, 0.2, 0.2], [0.2, 0.55, 0.85], [0.25, 0.7, 0.3], [0.95, 0.7, 0.1]])
    painted = tops.set_at(canvas, points, colors, "[h w] c, p [2], p c -> [h w] c")
    figure, (left, right) = plt.subplots(
        1, 2, figsize=(7.2, 2.6), gridspec_kw={"width_ratios": [4, WIDTH]}
    )
    _grid(left, colors[None], "values: p c")
    left.set_yticks([])
    left.set_xlabel("p", fontsize=9)
    _grid(right, painted, "result: h w c")
    _mark(right, points)
    call = 'set_at(canvas, points, values, "[h w] c, p [2], p c -> [h w] c")'
    _save(figure, call, out / "set_at.png")


def accumulate(out: Path) -> None:
    """Hits counted per pixel: repeated points add up."""
    hits = np.concatenate([POINTS, [[4, 2], [4, 2], [2, 6]]])
    counts = tops.add_at(np.zeros((HEIGHT, WIDTH)), hits, 1.0, "[h w], p [2], -> [h w]")
    figure, axes = plt.subplots(figsize=(4.8, 3.2))
    axes.imshow(counts, cmap="Blues", vmin=0, vmax=counts.max() + 1, interpolation="nearest")
    for (row, column), count in np.ndenumerate(counts):
        if count:
            axes.text(column, row, f"{count:.0f}", ha="center", va="center", fontsize=10)
    axes.set_xticks(range(WIDTH))
    axes.set_yticks(range(HEIGHT))
    axes.tick_params(length=0, labelsize=8)
    axes.set_title(
        'add_at(zeros, hits, 1.0, "[h w], p [2], -> [h w]")', fontsize=8, family="monospace"
    )
    figure.tight_layout()
    figure.savefig(out / "add_at.png", dpi=90)
    plt.close(figure)


def main() -> None:
    """Write the four pictures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for draw in (gather, gather_rows, scatter, accumulate):
        draw(args.out)
    print(f"wrote get_at.png, get_at_rows.png, set_at.png, add_at.png to {args.out}")


if __name__ == "__main__":
    main()
