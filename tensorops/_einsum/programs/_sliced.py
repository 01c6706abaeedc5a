"""Contraction slice by slice, when no path keeps every intermediate under the memory limit.

The planner names axes to slice (`tensorops._einsum.planning._paths.plan_contraction`).
For every combination of their values, each operand holding a sliced axis is
indexed at that value (the axis goes), and the smaller network is contracted by
the same `Program`. The results are added up
over sliced axes that are summed, and stacked along sliced axes of the output,
then moved to their place. Only one slice's intermediates live at a time; on Dask
each slice is a separate branch of the task graph, so the slices run as
independent tasks, on a cluster too.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from tensorops._axes import product
from tensorops._einsum.planning._progress import progress_bar
from tensorops._einsum.programs._execute import (
    Network,
    Program,
    arrange_output,
    build_program,
    moved,
    run_program,
)
from tensorops._types import Backend

__all__ = ["Slicing", "assemble", "each_slice", "plan_slicing", "run_sliced"]


class Slicing(NamedTuple):
    """How to run a program slice by slice.

    Attributes:
        program: The program of one slice (the network without the sliced axes).
        shapes: Per operand, the reshape to its elementary axes first (None: none).
        positions: Per operand, per sliced axis, its positions in the operand (an
            axis repeated in an operand is a diagonal: every position is indexed).
        sizes: The size of each sliced axis.
        placed: The sliced axes that are output axes (indices into ``sizes``).
        perm: The permutation from (placed axes, the slice's output) to the output.
        shape: The reshape of output compositions (None: none).
    """

    program: Program
    shapes: tuple[tuple[int, ...] | None, ...]
    positions: tuple[tuple[tuple[int, ...], ...], ...]
    sizes: tuple[int, ...]
    placed: tuple[int, ...]
    perm: tuple[int, ...] | None
    shape: tuple[int, ...] | None


def plan_slicing(
    network: Network, path: Sequence[tuple[int, ...]], sliced: tuple[str, ...]
) -> Slicing:
    """The `Slicing` of a contraction along `path`, slicing the axes `sliced`."""
    axes, shapes, output, output_shape, sizes = network
    kept = tuple(tuple(a for a in term if a not in sliced) for term in axes)
    rest = tuple(a for a in output if a not in sliced)
    program = build_program(Network(kept, (None,) * len(axes), rest, None, sizes), path)
    positions = tuple(
        tuple(tuple(i for i, a in enumerate(term) if a == axis) for axis in sliced) for term in axes
    )
    placed = tuple(k for k, axis in enumerate(sliced) if axis in output)
    current = [sliced[k] for k in placed] + list(rest)
    perm = tuple(current.index(a) for a in output)
    return Slicing(
        program,
        shapes,
        positions,
        tuple(sizes[a] for a in sliced),
        placed,
        moved(perm),
        output_shape,
    )


def _index(x: Any, positions: tuple[tuple[int, ...], ...], values: tuple[int, ...]) -> Any:
    """`x` at `values` of the sliced axes it holds (basic indexing: a view)."""
    at = {i: value for axis, value in zip(positions, values, strict=True) for i in axis}
    if not at:
        return x
    key = tuple(at.get(i, slice(None)) for i in range(max(at) + 1))
    index = (*key, Ellipsis)
    return x[index]


def run_sliced(backend: Backend, operands: Sequence[Any], slicing: Slicing) -> Any:
    """Contract `operands` slice by slice (see the module docstring)."""
    parts: dict[tuple[int, ...], Any] = {}
    for values, pieces in each_slice(backend, operands, slicing):
        part = run_program(backend, pieces, slicing.program)
        key = tuple(values[k] for k in slicing.placed)
        parts[key] = part + parts[key] if key in parts else part
    return assemble(backend, [parts[key] for key in sorted(parts)], slicing)


def each_slice(
    backend: Backend, operands: Sequence[Any], slicing: Slicing
) -> Iterator[tuple[tuple[int, ...], list[Any]]]:
    """Per slice, the values of the sliced axes and the operands indexed at them.

    Shows progress while the slices are run (`tensorops._einsum.planning._progress`).
    """
    whole = [
        x if shape is None else backend.reshape(x, shape)
        for x, shape in zip(operands, slicing.shapes, strict=True)
    ]
    bar = progress_bar(product(slicing.sizes), "einsum slices", "slice")
    try:
        for values in itertools.product(*(range(n) for n in slicing.sizes)):
            yield (
                values,
                [_index(x, p, values) for x, p in zip(whole, slicing.positions, strict=True)],
            )
            if bar is not None:
                bar.update()
    finally:
        if bar is not None:
            bar.close()


def assemble(backend: Backend, results: Sequence[Any], slicing: Slicing) -> Any:
    """The output from the slices' results, one per value of the placed axes, in order."""
    x = results[0]
    if slicing.placed:
        stacked = backend.stack(results)
        lead = tuple(slicing.sizes[k] for k in slicing.placed)
        x = backend.reshape(stacked, (*lead, *backend.sizes(stacked)[1:]))
    return arrange_output(backend, x, slicing.perm, slicing.shape)
