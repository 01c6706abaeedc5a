"""Einsum planning: equation + shapes + strategy -> a cached :class:`Compiled` recipe.

The cache key is (equation, shapes, strategy, memory_limit, lengths); a hit costs
one dictionary lookup. :class:`ContractionPlan` is the readable view of a recipe
that ``einsum_path`` returns.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tensorops._config import check_memory_limit
from tensorops._einsum._bind import Bound, bind_equation
from tensorops._einsum._cost import (
    Step,
    contraction_steps,
    largest_intermediate,
    naive_flops,
    total_flops,
)
from tensorops._einsum._execute import Program, build_program
from tensorops._einsum._notation import render_axes
from tensorops._einsum._paths import STRATEGIES, find_path
from tensorops._errors import TensorOpsError

__all__ = ["Compiled", "ContractionPlan", "compile_cached", "compile_einsum", "normalize_path"]

#: A strategy name, or an explicit path as a tuple of tuples.
Strategy = str | tuple[tuple[int, ...], ...]


@dataclass(frozen=True, slots=True)
class Compiled:
    """Everything einsum needs for one (equation, shapes, strategy, memory_limit, lengths)."""

    program: Program
    bound: Bound
    inputs: tuple[tuple[str, ...], ...]
    path: tuple[tuple[int, ...], ...]
    strategy: str


def normalize_path(path: Any) -> tuple[tuple[int, ...], ...]:
    """An explicit path (list of tuples, or NumPy's ``["einsum_path", ...]``) as a tuple."""
    entries = list(path)
    if entries and entries[0] == "einsum_path":
        entries = entries[1:]
    result: list[tuple[int, ...]] = []
    for number, entry in enumerate(entries):
        if isinstance(entry, (str, bytes)) or not isinstance(entry, Sequence):
            raise TensorOpsError(
                f"invalid contraction path: step {number} is {entry!r}, not a tuple of "
                "operand positions",
                hint="a path looks like [(0, 1), (0, 1)], as numpy.einsum_path returns",
            )
        result.append(tuple(entry))
    return tuple(result)


def _resolve_path(
    inputs: tuple[tuple[str, ...], ...],
    output: tuple[str, ...],
    sizes: dict[str, int],
    strategy: Strategy,
    memory_limit: int | None,
) -> tuple[tuple[tuple[int, ...], ...], str]:
    if isinstance(strategy, str):
        if strategy not in STRATEGIES:
            raise TensorOpsError(
                f"unknown einsum strategy {strategy!r}; valid strategies: "
                f"{', '.join(STRATEGIES)}, or an explicit path",
                hint="an explicit path looks like strategy=[(0, 1), (0, 1)]",
            )
        try:
            path = find_path(inputs, output, sizes, strategy, memory_limit)
        except ValueError as error:
            raise TensorOpsError(f"cannot plan the contraction: {error}") from None
        return tuple(tuple(entry) for entry in path), strategy
    try:
        steps = contraction_steps(inputs, output, sizes, strategy)
    except (ValueError, TypeError) as error:
        raise TensorOpsError(
            f"invalid contraction path {list(strategy)}: {error}",
            hint="a path lists operand positions per step; each step's result is appended",
        ) from None
    if memory_limit is not None and largest_intermediate(steps) > memory_limit:
        raise TensorOpsError(
            f"the explicit path needs an intermediate of {largest_intermediate(steps)} "
            f"elements, more than memory_limit={memory_limit}"
        )
    return strategy, "explicit"


def compile_einsum(
    equation: str,
    shapes: tuple[tuple[int, ...], ...],
    strategy: Strategy,
    memory_limit: int | None,
    lengths: tuple[tuple[str, int], ...],
) -> Compiled:
    """Parse, bind, plan and compile an einsum (uncached; see :data:`compile_cached`).

    Raises:
        TensorOpsError: Anything wrong with the equation, shapes, lengths or strategy.
    """
    check_memory_limit(memory_limit, op=None)
    try:
        bound = bind_equation(equation, shapes, lengths)
    except TypeError:  # unhashable shapes (torch SymInt under torch.compile): no cache
        bound = bind_equation.__wrapped__(equation, shapes, lengths)
    notation = bound.notation
    output = notation.output_axes
    inputs = tuple(tuple(dict.fromkeys(axes)) for axes in bound.axes)
    path, name = _resolve_path(inputs, output, bound.sizes, strategy, memory_limit)
    output_shape: tuple[int, ...] | None = None
    if any(len(dim) != 1 for dim in notation.output):
        output_shape = tuple(
            functools.reduce(lambda n, a: n * bound.sizes[a], dim, 1) for dim in notation.output
        )
    program = build_program(bound.axes, bound.shapes, output, output_shape, bound.sizes, path)
    return Compiled(program, bound, inputs, path, name)


compile_cached = functools.lru_cache(maxsize=4096)(compile_einsum)


@dataclass(frozen=True, slots=True)
class ContractionPlan:
    """How an einsum is contracted, and what it costs (FLOPs counted as opt_einsum does).

    Attributes:
        equation: The normalized equation (explicit output, ``...`` expanded).
        steps: One :class:`~tensorops._einsum._cost.Step` per path entry.
        strategy: The strategy that made the path (``"explicit"`` for a given path).
        naive_flops: The cost of contracting everything in one step.
        shapes: The input shapes.

    Examples:
        >>> import tensorops as tops
        >>> plan = tops.einsum_path("ij,jk,kl->il", (2, 30), (30, 40), (40, 50))
        >>> plan.path
        [(0, 1), (0, 1)]
        >>> plan.flops < plan.naive_flops
        True
    """

    equation: str
    steps: tuple[Step, ...]
    strategy: str
    naive_flops: int
    shapes: tuple[tuple[int, ...], ...]
    spaced: bool
    sizes: tuple[tuple[str, int], ...]

    @property
    def path(self) -> list[tuple[int, ...]]:
        """The path in the NumPy / opt_einsum convention."""
        return [step.operands for step in self.steps]

    @property
    def flops(self) -> int:
        """The cost of the path."""
        return total_flops(self.steps)

    @property
    def speedup(self) -> float:
        """``naive_flops / flops``."""
        return self.naive_flops / self.flops if self.flops else 1.0

    @property
    def largest_intermediate(self) -> int:
        """The number of elements of the largest step result."""
        return largest_intermediate(self.steps)

    def __str__(self) -> str:
        sizes = dict(self.sizes)
        spaced = self.spaced or any(len(axis) != 1 for axis in sizes)
        rows = []
        for number, step in enumerate(self.steps):
            comma, arrow = (", ", " -> ") if spaced else (",", "->")
            terms = comma.join(render_axes(axes, spaced) for axes in step.inputs)
            text = f"{terms}{arrow}{render_axes(step.result, spaced)}"
            shape = tuple(sizes[axis] for axis in step.result)
            rows.append((str(number), text, f"{step.flops:,}", str(shape), f"{step.size:,}"))
        header = ("step", "contraction", "FLOPs", "result shape", "elements")
        widths = [max(len(row[i]) for row in (header, *rows)) for i in range(5)]
        lines = [
            f"  Complete contraction:  {self.equation}",
            f"      Naive FLOP count:  {self.naive_flops:,}",
            f"  Optimized FLOP count:  {self.flops:,}",
            f"   Theoretical speedup:  {self.speedup:.3g}",
            f"  Largest intermediate:  {self.largest_intermediate:,} elements",
            f"              Strategy:  {self.strategy}",
            "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)),
            "  ".join("-" * w for w in widths),
        ]
        lines.extend(
            "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
        )
        return "\n".join(lines)


def describe(compiled: Compiled, shapes: tuple[tuple[int, ...], ...]) -> ContractionPlan:
    """The :class:`ContractionPlan` of a compiled einsum."""
    bound = compiled.bound
    output = bound.notation.output_axes
    steps = contraction_steps(compiled.inputs, output, bound.sizes, compiled.path)
    return ContractionPlan(
        bound.notation.normalized,
        steps,
        compiled.strategy,
        naive_flops(compiled.inputs, output, bound.sizes),
        shapes,
        bound.notation.spaced,
        tuple(bound.sizes.items()),
    )
