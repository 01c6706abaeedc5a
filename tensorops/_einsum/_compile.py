"""Einsum planning and compiling: equation + shapes + settings -> a path, then a program.

Two stages, each cached on what it depends on:

* :func:`plan_einsum` binds the equation to the shapes and finds the contraction
  path: an :class:`EinsumPlan`. ``einsum_path`` stops here and describes it as a
  :class:`ContractionPlan`, whose step table is worked out only when it is read.
* :func:`compile_einsum` turns a plan into a :class:`Compiled` program of primitive
  calls (:mod:`tensorops._einsum._execute`) and is what ``einsum``'s dispatch caches.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

from tensorops._axes import product
from tensorops._config import check_memory_limit
from tensorops._einsum._bind import Bound, bind_equation
from tensorops._einsum._cost import (
    Step,
    contraction_steps,
    largest_intermediate,
    naive_flops,
    total_flops,
)
from tensorops._einsum._execute import Program, build_program, promote, run_program
from tensorops._einsum._notation import render_axes
from tensorops._einsum._paths import STRATEGIES, find_path
from tensorops._errors import ArgumentError, ShapeError, unknown_option
from tensorops._types import Backend

__all__ = [
    "Compiled",
    "ContractionPlan",
    "EinsumPlan",
    "compile_einsum",
    "normalize_path",
    "plan_einsum",
    "plan_einsum_cached",
]

#: A strategy name, or an explicit path as a tuple of tuples.
Strategy = str | tuple[tuple[int, ...], ...]
Lengths = tuple[tuple[str, Any], ...]


class EinsumPlan(NamedTuple):
    """An equation bound to shapes, with its contraction path.

    Attributes:
        bound: The equation bound to the shapes.
        inputs: Per operand its distinct elementary axes (what the path contracts).
        path: The path, in the NumPy / opt_einsum convention.
        strategy: The strategy that made it (``"explicit"`` for a given path).
    """

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
            raise ArgumentError(
                f"invalid contraction path: step {number} is {entry!r}, not a tuple of "
                "operand positions",
                hint="a path looks like [(0, 1), (0, 1)], as numpy.einsum_path returns",
            )
        result.append(tuple(entry))
    return tuple(result)


def _find(
    inputs: tuple[tuple[str, ...], ...],
    output: tuple[str, ...],
    sizes: dict[str, int],
    strategy: Strategy,
    memory_limit: int | None,
) -> tuple[tuple[tuple[int, ...], ...], str]:
    """The path and the name of what made it."""
    if isinstance(strategy, str):
        if strategy not in STRATEGIES:
            raise unknown_option(
                "einsum strategy",
                strategy,
                STRATEGIES,
                "or an explicit path",
                hint="an explicit path looks like strategy=[(0, 1), (0, 1)]",
            )
        try:
            path = find_path(inputs, output, sizes, strategy, memory_limit)
        except ValueError as error:
            raise ArgumentError(f"cannot plan the contraction: {error}") from None
        return tuple(tuple(entry) for entry in path), strategy
    try:
        steps = contraction_steps(inputs, output, sizes, strategy)
    except (ValueError, TypeError) as error:
        raise ArgumentError(
            f"invalid contraction path {list(strategy)}: {error}",
            hint="a path lists operand positions per step; each step's result is appended",
        ) from None
    if memory_limit is not None and largest_intermediate(steps) > memory_limit:
        raise ShapeError(
            f"the explicit path needs an intermediate of {largest_intermediate(steps)} "
            f"elements, more than memory_limit={memory_limit}"
        )
    return strategy, "explicit"


def plan_einsum(
    equation: str,
    shapes: tuple[tuple[int, ...], ...],
    lengths: Lengths,
    spaced: bool | None,
    strategy: Strategy,
    memory_limit: int | None,
) -> EinsumPlan:
    """Bind and plan an einsum (uncached; see :data:`plan_einsum_cached`).

    Raises:
        TensorOpsError: Anything wrong with the equation, shapes, lengths or strategy.
    """
    check_memory_limit(memory_limit, op=None)
    try:
        bound = bind_equation(equation, shapes, lengths, spaced)
    except TypeError:  # unhashable shapes (torch SymInt under torch.compile): no cache
        bound = bind_equation.__wrapped__(equation, shapes, lengths, spaced)
    inputs = tuple(tuple(dict.fromkeys(axes)) for axes in bound.axes)
    output = bound.notation.output_axes
    path, name = _find(inputs, output, dict(bound.sizes), strategy, memory_limit)
    return EinsumPlan(bound, inputs, path, name)


plan_einsum_cached = functools.lru_cache(maxsize=1024)(plan_einsum)


class Compiled(NamedTuple):
    """An einsum's program of primitive calls; :meth:`run` is its executor."""

    program: Program

    def run(self, backend: Backend, operands: Sequence[Any], options: Any) -> Any:
        """Run the program on `operands`, promoted to one dtype where the family needs it."""
        if backend.name != "numpy" and len(operands) > 1:
            dtype = operands[0].dtype
            if any(x.dtype != dtype for x in operands):
                operands = promote(backend, operands)
        return run_program(backend, operands, self.program)


def compile_einsum(plan: EinsumPlan) -> Compiled:
    """The program of primitive calls that runs `plan`."""
    bound = plan.bound
    notation = bound.notation
    sizes = dict(bound.sizes)
    output_shape: tuple[int, ...] | None = None
    if any(len(dim.slots) != 1 for dim in notation.output):
        output_shape = tuple(
            product(sizes[slot.name or ""] for slot in dim.slots) for dim in notation.output
        )
    program = build_program(
        bound.axes, bound.shapes, notation.output_axes, output_shape, sizes, plan.path
    )
    return Compiled(program)


class ContractionPlan:
    """How an einsum is contracted, and what it costs (FLOPs counted as opt_einsum does).

    ``str(plan)`` is a table of the steps. The steps and the counts are worked out
    from the path when first read.

    Attributes:
        equation: The normalized equation (explicit output, ``...`` expanded).
        strategy: The strategy that made the path (``"explicit"`` for a given path).
        shapes: The input shapes.

    Examples:
        >>> import tensorops as tops
        >>> plan = tops.einsum_path("ij,jk,kl->il", (2, 30), (30, 40), (40, 50))
        >>> plan.path
        [(0, 1), (0, 1)]
        >>> plan.flops < plan.naive_flops
        True
    """

    __slots__ = ("_plan", "_steps", "equation", "shapes", "strategy")

    def __init__(self, plan: EinsumPlan, shapes: tuple[tuple[int, ...], ...]) -> None:
        self._plan = plan
        self._steps: tuple[Step, ...] | None = None
        self.equation = plan.bound.notation.normalized
        self.strategy = plan.strategy
        self.shapes = shapes

    @property
    def steps(self) -> tuple[Step, ...]:
        """One :class:`~tensorops._einsum._cost.Step` per path entry."""
        if self._steps is None:
            plan = self._plan
            output = plan.bound.notation.output_axes
            sizes = dict(plan.bound.sizes)
            self._steps = contraction_steps(plan.inputs, output, sizes, plan.path)
        return self._steps

    @property
    def path(self) -> list[tuple[int, ...]]:
        """The path in the NumPy / opt_einsum convention."""
        return list(self._plan.path)

    @property
    def flops(self) -> int:
        """The cost of the path."""
        return total_flops(self.steps)

    @property
    def naive_flops(self) -> int:
        """The cost of contracting everything in one step."""
        plan = self._plan
        return naive_flops(plan.inputs, plan.bound.notation.output_axes, dict(plan.bound.sizes))

    @property
    def speedup(self) -> float:
        """``naive_flops / flops``."""
        return self.naive_flops / self.flops if self.flops else 1.0

    @property
    def largest_intermediate(self) -> int:
        """The number of elements of the largest step result."""
        return largest_intermediate(self.steps)

    def _key(self) -> tuple[Any, ...]:
        return (self.equation, self._plan.path, self.strategy, self.shapes, self._plan.bound.sizes)

    def __eq__(self, other: object) -> bool:
        if type(other) is not ContractionPlan:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"ContractionPlan({self.equation!r}, path={self.path}, flops={self.flops})"

    def __str__(self) -> str:
        sizes = dict(self._plan.bound.sizes)
        spaced = self._plan.bound.notation.spaced or any(len(axis) != 1 for axis in sizes)
        comma, arrow = (", ", " -> ") if spaced else (",", "->")
        rows = []
        for number, step in enumerate(self.steps):
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
