"""Einsum planning and programs: equation + shapes + settings -> a path, then a program.

Two stages:

* `plan_einsum` binds the equation to the shapes and finds the contraction
  path: an `EinsumPlan` (cached by `plan_einsum_cached`). ``einsum_path`` stops
  here and describes it as a `ContractionPlan`, whose step table is worked out
  only when it is read.
* `einsum_program` turns a plan into a `BuiltProgram` of primitive
  calls (`tensorops._einsum.programs._execute`); ``einsum``'s dispatch keeps it inside the
  executor it caches.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from tensorops._axes import product
from tensorops._config import Settings
from tensorops._einsum.equations._arguments import Extras
from tensorops._einsum.equations._bind import Bound, bind_equation
from tensorops._einsum.equations._notation import render_axes
from tensorops._einsum.equations._semiring import write_weight
from tensorops._einsum.planning._cost import (
    SlicedSteps,
    Step,
    contraction_steps,
    largest_intermediate,
    naive_flops,
    sliced_contraction_steps,
)
from tensorops._einsum.planning._paths import PLANNERS, plan_contraction, slice_path
from tensorops._einsum.planning._store import active_store
from tensorops._einsum.programs._execute import (
    Network,
    Program,
    build_program,
    pair_equations,
    promote,
    run_program,
)
from tensorops._einsum.programs._sliced import Slicing, plan_slicing, run_sliced
from tensorops._errors import ArgumentError, ShapeError, unknown_option
from tensorops._staging.sizes import is_run_time, mode_of
from tensorops._types import Backend

__all__ = [
    "BuiltProgram",
    "ContractionPlan",
    "EinsumPlan",
    "einsum_program",
    "plan_einsum",
    "plan_einsum_cached",
]

#: A strategy name, or an explicit path as a tuple of tuples.
Strategy = str | tuple[tuple[int, ...], ...]
Lengths = tuple[tuple[str, Any], ...]


class EinsumPlan(NamedTuple):
    """An equation bound to shapes, with its contraction path and the axes it slices.

    Attributes:
        bound: The equation bound to the shapes.
        path: The path, in the NumPy / opt_einsum convention (of one slice if sliced).
        strategy: The strategy that made it (``"explicit"`` for a given path).
        sliced_axes: The axes contracted slice by slice to keep within the memory
            limit; empty when the contraction runs in one piece.
        semiring: What the contraction adds and multiplies (``"sum"``: sums of products).
    """

    bound: Bound
    path: tuple[tuple[int, ...], ...]
    strategy: str
    sliced_axes: tuple[str, ...]
    semiring: str = "sum"

    @property
    def inputs(self) -> tuple[tuple[str, ...], ...]:
        """Per operand its distinct elementary axes (what the path contracts)."""
        return _distinct(self.bound.axes)


def _distinct(axes: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
    """Each operand's axes with a repeated one (a diagonal) kept once, in order."""
    return tuple(tuple(dict.fromkeys(term)) for term in axes)


def _find(
    inputs: tuple[tuple[str, ...], ...],
    output: tuple[str, ...],
    sizes: dict[str, int],
    settings: Settings,
) -> tuple[tuple[tuple[int, ...], ...], tuple[str, ...], str]:
    """The path, the sliced axes and the name of what made the path (`_nominal` lengths)."""
    strategy, memory_limit, max_time, minimize = settings[:4]
    sizes, run_time = _nominal(sizes)
    weight = write_weight(settings.semiring)
    if isinstance(strategy, str):
        _check_strategy(strategy)
        max_time = max_time if strategy == "hyper" else None
        # symbolic and run-time sizes are not kept: plans of ints only
        concrete = len(inputs) > 2 and not run_time and all(type(n) is int for n in sizes.values())
        store = active_store() if concrete else None
        key: tuple[Any, ...] = (strategy, memory_limit, max_time, minimize)
        if settings.semiring != "sum":  # the plans of sums keep their stored keys
            key += (settings.semiring,)
        distinct = _distinct(inputs)
        stored = None if store is None else store.load(distinct, output, sizes, key)
        if stored is not None:
            return stored[0], stored[1], strategy
        try:
            planned = plan_contraction(
                inputs,
                output,
                sizes,
                strategy,
                memory_limit,
                max_time=max_time,
                minimize=minimize,
                write_weight=weight,
            )
        except ValueError as error:
            raise ArgumentError(f"cannot plan the contraction: {error}") from None
        if store is not None:
            store.save(distinct, output, sizes, key, (planned.path, planned.sliced_axes))
        _check_sliced(planned.sliced_axes, run_time)
        return planned.path, planned.sliced_axes, strategy
    inputs = _distinct(inputs)  # the planners above take repeated axes; the checks not
    try:
        contraction_steps(inputs, output, sizes, strategy)
    except (ValueError, TypeError) as error:
        raise ArgumentError(
            f"invalid contraction path {list(strategy)}: {error}",
            hint="a path lists operand positions per step; each step's result is appended",
        ) from None
    if memory_limit is None or any(len(entry) > 2 for entry in strategy):
        return strategy, (), "explicit"
    planned = slice_path(
        inputs, output, sizes, strategy, memory_limit, minimize=minimize, write_weight=weight
    )
    _check_sliced(planned.sliced_axes, run_time)
    return planned.path, planned.sliced_axes, "explicit"


def _check_strategy(strategy: str) -> None:
    if strategy not in PLANNERS:
        raise unknown_option(
            "einsum strategy",
            strategy,
            PLANNERS,
            "or an explicit path",
            hint="an explicit path looks like strategy=[(0, 1), (0, 1)]",
        )


#: The length a planner assumes for an axis whose length is known only when the graph runs.
NOMINAL_LENGTH = 64


def _nominal(sizes: dict[str, Any]) -> tuple[dict[str, int], dict[str, str]]:
    """`sizes` with each run-time length `NOMINAL_LENGTH`, and the axes that had one.

    The path is chosen while the graph is built, for any length it will meet. The axes
    come with what builds the graph (`mode_of`), for messages.
    """
    run_time = {axis: mode_of(size) for axis, size in sizes.items() if is_run_time(size)}
    if not run_time:
        return sizes, run_time
    return {axis: NOMINAL_LENGTH if is_run_time(n) else n for axis, n in sizes.items()}, run_time


def _check_sliced(sliced: tuple[str, ...], run_time: dict[str, str]) -> None:
    """Refuse to slice an axis whose length the graph knows only when it runs."""
    for axis in sliced:
        if axis in run_time:
            raise ShapeError(
                f"memory_limit would slice axis {axis!r}, whose length is known only when the "
                f"graph runs ({run_time[axis]}): the number of slices must be known while "
                "it is built",
                hint="give that length in the input's static shape, or leave memory_limit out",
            )


def plan_einsum(
    equation: str,
    shapes: tuple[tuple[int, ...], ...],
    lengths: Lengths,
    spaced: bool | None,
    settings: Settings,
) -> EinsumPlan:
    """Bind and plan an einsum (uncached; see `plan_einsum_cached`).

    Raises:
        TensorOpsError: Anything wrong with the equation, shapes, lengths or strategy.
    """
    bound = bind_equation(equation, shapes, lengths, spaced)
    # the planners take an axis repeated within an operand (a diagonal) once
    path, sliced, name = _find(bound.axes, bound.output, bound.sizes, settings)
    return EinsumPlan(bound, path, name, sliced, settings.semiring)


plan_einsum_cached = functools.lru_cache(maxsize=1024)(plan_einsum)


class BuiltProgram(NamedTuple):
    """An einsum's program of primitive calls (or its slicing); `run` is its executor."""

    program: Program | None
    slicing: Slicing | None

    def run(
        self,
        backend: Backend,
        operands: Sequence[Any],
        extras: Extras | None,
        einsums: Sequence[Callable[[Any, Any], Any]] | None = None,
    ) -> Any:
        """Run on `operands`, promoted to one dtype where the family needs it.

        `extras` are NumPy's ``dtype=``, ``casting=``, ``out=`` and ``order=``;
        `einsums` the pairwise steps as the adapter's einsum calls (`by_einsums`).
        """
        operands = cast_operands(backend, operands, extras)
        if self.slicing is not None:
            result = run_sliced(backend, operands, self.slicing)
        else:
            assert self.program is not None
            result = run_program(backend, operands, self.program, einsums)
        if extras is None:
            return result
        return finish(backend, result, operands, extras)

    def by_einsums(
        self, backend: Backend, output: tuple[str, ...]
    ) -> Callable[[Sequence[Any], Extras | None], Any] | None:
        """`run` with each pairwise step one call of `backend`'s einsum (`Backend.einsummer`).

        For the adapters whose every call costs much (``einsum_pairs``); None where the
        program has no pairwise step, slices, or the adapter offers no einsum.
        """
        if self.program is None:
            return None
        equations = pair_equations(self.program, output)
        if equations is None:
            return None
        einsums = []
        for equation in equations:
            einsum = backend.einsummer(equation)
            if einsum is None:
                return None
            einsums.append(einsum)
        return functools.partial(self.run, backend, einsums=einsums)


def cast_operands(backend: Backend, operands: Sequence[Any], extras: Extras | None) -> Any:
    """The operands in ``dtype=`` (by ``casting=``), else promoted where the family needs it."""
    if extras is not None and extras.dtype is not None:
        casting = extras.casting or "safe"
        return [backend.astype(x, extras.dtype, casting) for x in operands]
    if backend.name != "numpy" and len(operands) > 1:
        dtype = operands[0].dtype
        if any(x.dtype != dtype for x in operands):
            return promote(backend, operands)
    return operands


def finish(backend: Backend, result: Any, operands: Sequence[Any], extras: Extras) -> Any:
    """The result laid out by ``order=`` and written into ``out=``, as NumPy does."""
    order = extras.order
    if order == "A":  # NumPy's rule: F if every operand is F-ordered, else C
        fortran = all(_fortran(x) for x in operands)
        order = "F" if fortran else "C" if hasattr(operands[0], "flags") else "K"
    if order != "K":
        result = backend.ordered(result, order)
    if extras.out is not None:  # written as `out[...] = result` is, unless casting= says
        return backend.write(extras.out, result, extras.casting or "unsafe")
    return result


def _fortran(x: Any) -> bool:
    """Whether `x` is a Fortran-ordered array (NumPy's flags; False where there are none)."""
    flags = getattr(x, "flags", None)
    return flags is not None and bool(flags.f_contiguous) and not flags.c_contiguous


def einsum_program(plan: EinsumPlan) -> BuiltProgram:
    """The program of primitive calls that runs `plan` (slice by slice if it slices)."""
    bound = plan.bound
    sizes = bound.sizes
    output_shape: tuple[int, ...] | None = None
    if bound.output_dims is not None:
        output_shape = tuple(product(sizes[axis] for axis in dim) for dim in bound.output_dims)
    network = Network(bound.axes, bound.shapes, bound.output, output_shape, sizes)
    if plan.sliced_axes:
        return BuiltProgram(None, plan_slicing(network, plan.path, plan.sliced_axes))
    program = build_program(network, plan.path)
    return BuiltProgram(program, None)


#: What the table says of a semiring's kernels beside the FLOPs
#: (`tensorops._einsum.equations._semiring`).
_KERNELS = {
    "logsumexp": " (BLAS on shifted exps; an exp and a log per intermediate element)",
    "max": " (no BLAS: the FLOPs are the broadcast blocks)",
    "min": " (no BLAS: the FLOPs are the broadcast blocks)",
}


class ContractionPlan:
    """How an einsum is contracted, and what it costs (FLOPs counted as opt_einsum does).

    ``str(plan)`` is a table of the steps. The steps and the counts are worked out
    from the path when first read.

    Attributes:
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

    __slots__ = ("_plan", "_sliced", "shapes", "strategy")

    def __init__(self, plan: EinsumPlan, shapes: tuple[tuple[int, ...], ...]) -> None:
        self._plan = plan
        self._sliced: SlicedSteps | None = None
        self.strategy = plan.strategy
        self.shapes = shapes

    def _cost(self) -> SlicedSteps:
        if self._sliced is None:
            plan = self._plan
            output = plan.bound.output
            sizes = plan.bound.sizes
            self._sliced = sliced_contraction_steps(
                plan.inputs, output, sizes, plan.path, plan.sliced_axes
            )
        return self._sliced

    @property
    def equation(self) -> str:
        """The normalized equation (explicit output, ``...`` expanded)."""
        return self._plan.bound.normalized

    @property
    def semiring(self) -> str:
        """The semiring: ``"sum"``, ``"logsumexp"``, ``"max"`` or ``"min"``.

        ``"sum"`` sums products; the others take the log-sum-exp, maximum or minimum of sums.
        """
        return self._plan.semiring

    @property
    def steps(self) -> tuple[Step, ...]:
        """One `Step` per path entry (of one slice)."""
        return self._cost().steps

    @property
    def sliced_axes(self) -> tuple[str, ...]:
        """The axes contracted slice by slice to keep within the memory limit (none: ``()``)."""
        return self._plan.sliced_axes

    @property
    def slices(self) -> int:
        """How many slices run: the product of the sliced axes' sizes (1 when unsliced)."""
        return self._cost().slices

    @property
    def path(self) -> list[tuple[int, ...]]:
        """The path in the NumPy / opt_einsum convention."""
        return list(self._plan.path)

    @property
    def flops(self) -> int:
        """The cost of the path, every slice counted."""
        return self._cost().flops

    @property
    def naive_flops(self) -> int:
        """The cost of contracting everything in one step."""
        plan = self._plan
        return naive_flops(plan.inputs, plan.bound.output, plan.bound.sizes)

    @property
    def speedup(self) -> float:
        """``naive_flops / flops``."""
        return self.naive_flops / self.flops if self.flops else 1.0

    @property
    def largest_intermediate(self) -> int:
        """The number of elements of the largest step result.

        When the plan slices, the largest intermediate of one slice, the final result
        of a slice excepted: what the memory limit caps.
        """
        if self._plan.sliced_axes:
            return self._cost().largest_intermediate
        return largest_intermediate(self.steps)

    def plot(self, ax: Any = None, *, annotate: int = 3, cmap: str = "viridis") -> Any:
        """Draw the contraction tree with matplotlib (the ``plot`` extra).

        Operands are the leaves; each step is a dot above the operands it
        contracts, coloured by its FLOPs (log10) and sized by its result's
        elements; the costliest steps are labelled with both, and the title gives
        the totals and the sliced axes.

        Args:
            ax: The matplotlib ``Axes`` to draw on (None: a new figure).
            annotate: How many of the costliest steps to label.
            cmap: The colour map of the steps' FLOPs.

        Returns:
            The ``Axes`` (``ax.figure.savefig("tree.png")`` writes it).

        Raises:
            ImportError: matplotlib is not installed.

        Examples:
            >>> import matplotlib
            >>> matplotlib.use("Agg")
            >>> import tensorops as tops
            >>> plan = tops.einsum_path("ab,bc,cd,da->", (8, 8), (8, 8), (8, 8), (8, 8))
            >>> ax = plan.plot()
            >>> len(ax.collections)  # operands, steps
            2
        """
        from tensorops._einsum.planning._plot import plot_tree

        return plot_tree(self, ax, annotate, cmap)

    def _extra_lines(self) -> list[str]:
        lines = []
        if self.semiring != "sum":
            lines.append(f"              Semiring:  {self.semiring}{_KERNELS[self.semiring]}")
        if self._plan.sliced_axes:
            axes = ", ".join(self._plan.sliced_axes)
            lines.append(
                f"          Sliced axes:  {axes} ({self.slices:,} slices; steps are per slice)"
            )
        return lines

    def _key(self) -> tuple[Any, ...]:
        plan = self._plan
        return (
            self.equation,
            plan.path,
            plan.sliced_axes,
            self.strategy,
            self.shapes,
            tuple(plan.bound.sizes.items()),
            plan.semiring,
        )

    def __eq__(self, other: object) -> bool:
        if type(other) is not ContractionPlan:
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"ContractionPlan({self.equation!r}, path={self.path}, flops={self.flops})"

    def __str__(self) -> str:
        sizes = self._plan.bound.sizes
        spaced = self._plan.bound.spaced or any(len(axis) != 1 for axis in sizes)
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
            *self._extra_lines(),
            "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)),
            "  ".join("-" * w for w in widths),
        ]
        lines.extend(
            "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows
        )
        return "\n".join(lines)
