"""Einsum over ``"logsumexp"``, ``"max"`` or ``"min"``: the executor of a plan.

The program is the sum's (`tensorops._einsum.programs._execute.build_program`: the same
per-operand preparation, pairwise steps along the path, final arrangement) or its
slicing (`tensorops._einsum.programs._sliced`); only the reductions and the pairwise steps
change (`tensorops._einsum.semirings._logspace`,
`tensorops._einsum.semirings._tropical`), and the results of slices are combined by the
semiring's addition (logaddexp, maximum, minimum).
The operands' dtypes are checked by `tensorops._einsum.semirings._operands`; a plan of one
log-space product runs through `tensorops._einsum.semirings._single`.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, NamedTuple

from tensorops._axes import product
from tensorops._einsum.equations._arguments import Extras
from tensorops._einsum.equations._semiring import BLOCK_CAP, ZEROS
from tensorops._einsum.programs._execute import Pair, Program, arrange_output, diagonal_view
from tensorops._einsum.programs._program import BuiltProgram, EinsumPlan, einsum_program
from tensorops._einsum.programs._sliced import Slicing, assemble, each_slice
from tensorops._einsum.semirings._backtrack import decode
from tensorops._einsum.semirings._logspace import Exps, logsumexp_pair, logsumexp_reduce
from tensorops._einsum.semirings._operands import checked, finished
from tensorops._einsum.semirings._single import single_executor
from tensorops._einsum.semirings._tropical import Pointers, Tropical
from tensorops._errors import ArgumentError
from tensorops._staging.sizes import known_as
from tensorops._types import Backend, Executor

__all__ = [
    "SemiringProgram",
    "prepare_slots",
    "run_semiring",
    "run_steps",
    "semiring_executor",
    "semiring_program",
]


class SemiringProgram(NamedTuple):
    """What a run needs besides the operands (made once per plan)."""

    built: BuiltProgram
    semiring: str
    tropical: Tropical | None
    cap: int  # the most elements of a block: the memory limit, else BLOCK_CAP
    sizes: dict[str, int]
    output: tuple[str, ...]  # elementary output axes
    shape: tuple[int, ...]  # the output's shape (compositions merged)
    empty: bool  # some axis has length 0: no step runs
    sliced: tuple[str, ...]  # the axes run slice by slice
    single: Pair | None  # the one step, a log-space product of the two operands as they are


def semiring_executor(plan: EinsumPlan, backend: Backend, memory_limit: int | None) -> Executor:
    """The executor ``run(operands, extras)`` of `plan` over its semiring on `backend`."""
    run = semiring_program(plan, memory_limit)
    general = functools.partial(run_semiring, run, backend)
    return single_executor(run, backend, general) or general


def semiring_program(plan: EinsumPlan, memory_limit: int | None) -> SemiringProgram:
    """What runs `plan` over its semiring, whatever the family."""
    bound = plan.bound
    sizes = bound.sizes
    dims = bound.output_dims or tuple((axis,) for axis in bound.output)
    shape = tuple(product(sizes[axis] for axis in dim) for dim in dims)
    cap = memory_limit or BLOCK_CAP
    tropical = Tropical(plan.semiring, cap) if plan.semiring in ("max", "min") else None
    empty = any(known_as(size, 0) for size in sizes.values())
    built = einsum_program(plan)
    single = None
    program = built.program
    if plan.semiring == "logsumexp" and program is not None and not empty:
        (single,) = program.pairs if len(program.pairs) == 1 else (None,)
        if single is None or single.mode != "matmul" or any(program.prepare):
            single = None
    return SemiringProgram(
        built,
        plan.semiring,
        tropical,
        cap,
        sizes,
        bound.output,
        shape,
        empty,
        plan.sliced_axes,
        single,
    )


def run_semiring(
    run: SemiringProgram, backend: Backend, operands: Sequence[Any], extras: Extras | None
) -> Any:
    """Contract `operands` over the semiring of `run`: the values (and indices with argmax)."""
    argmax = extras is not None and extras.argmax
    keys = _repeated(operands, run)
    operands, narrow = checked(backend, operands, run.semiring, extras)
    built = run.built
    if run.empty:
        values, indices = _empty(backend, operands, run, argmax)
    elif built.slicing is not None:
        values, indices = _sliced(backend, operands, run, built.slicing, keys, argmax)
    else:
        assert built.program is not None
        pointers = Pointers() if argmax else None
        values = _contract(backend, operands, built.program, run, keys, pointers)
        indices = None
        if pointers is not None:
            found = decode(backend, built.program, pointers, run.sizes, run.output, values)
            indices = _shaped(backend, found, run, run.output, built.program.shape)
    values = finished(backend, values, narrow, operands, extras)
    return (values, indices) if argmax else values


def _repeated(operands: Sequence[Any], run: SemiringProgram) -> dict[int, Hashable] | None:
    """Per operand passed again as the same object, a key under which its exps are reused."""
    if run.semiring != "logsumexp" or len({id(x) for x in operands}) == len(operands):
        return None
    counts: dict[int, int] = {}
    for x in operands:
        counts[id(x)] = counts.get(id(x), 0) + 1
    built = run.built
    positions: tuple[Any, ...] = (None,) * len(operands)
    if built.slicing is None:
        assert built.program is not None
        program = built.program
    else:  # a slice indexes an operand where its axes are sliced: the same object, other data
        program, positions = built.slicing.program, built.slicing.positions
    return {
        i: (id(x), program.prepare[i], positions[i])
        for i, x in enumerate(operands)
        if counts[id(x)] > 1
    }


def _contract(
    backend: Backend,
    operands: Sequence[Any],
    program: Program,
    run: SemiringProgram,
    keys: dict[int, Hashable] | None,
    pointers: Pointers | None,
) -> Any:
    """Run `program` over the semiring; back-pointers go to `pointers` when given."""
    slots = list(operands)
    prepare_slots(backend, slots, range(len(slots)), program, run, pointers)
    slots.extend([None] * len(program.pairs))
    run_steps(backend, slots, program.pairs, run, keys, {}, pointers)
    x = slots[program.final]
    del slots
    return arrange_output(backend, x, program.perm, program.shape)


def prepare_slots(
    backend: Backend,
    slots: list[Any],
    positions: Iterable[int],
    program: Program,
    run: SemiringProgram,
    pointers: Pointers | None = None,
) -> None:
    """The operands at `positions` reshaped, their diagonals taken and own axes reduced."""
    for i in positions:
        step = program.prepare[i]
        if step is not None:
            x = diagonal_view(backend, slots[i], step)
            if step.summed:
                x = _reduce(backend, x, step.summed, run, pointers, i)
            slots[i] = x


def run_steps(
    backend: Backend,
    slots: list[Any],
    pairs: Sequence[Pair],
    run: SemiringProgram,
    keys: dict[int, Hashable] | None,
    exps: Exps,
    pointers: Pointers | None = None,
) -> None:
    """Run pairwise steps on `slots` in place; `keys` name slots whose exps `exps` keeps."""
    for pair in pairs:
        a, b = slots[pair.left], slots[pair.right]
        slots[pair.left] = slots[pair.right] = None
        if run.tropical is not None:
            x = run.tropical.pair(backend, a, b, pair, pointers)
        elif keys:
            both = (keys.get(pair.left), keys.get(pair.right))
            x = logsumexp_pair(backend, a, b, pair, both, exps, run.cap)
        else:
            x = logsumexp_pair(backend, a, b, pair, (None, None), exps, run.cap)
        slots[pair.out] = x
        del a, b


def _reduce(
    backend: Backend,
    x: Any,
    axes: tuple[int, ...],
    run: SemiringProgram,
    pointers: Pointers | None,
    slot: int,
) -> Any:
    """An operand's own axes reduced by the semiring's addition (and where, if asked)."""
    if run.tropical is None:
        return logsumexp_reduce(backend, x, axes)
    x, where = run.tropical.reduce(backend, x, axes, pointers is not None)
    if pointers is not None:
        pointers.prepare[slot] = where
    return x


def _shaped(
    backend: Backend,
    indices: dict[str, Any],
    run: SemiringProgram,
    output: tuple[str, ...],
    shape: tuple[int, ...] | None,
) -> dict[str, Any]:
    """Indices broadcast to the elementary output `output` (and reshaped to `shape`)."""
    full = tuple(run.sizes[axis] for axis in output)
    shaped = {}
    for axis in sorted(indices, key=list(run.sizes).index):
        index = indices[axis]
        index = index + backend.full(full, 0, index)
        shaped[axis] = index if shape is None else backend.reshape(index, shape)
    return shaped


def _sliced(
    backend: Backend,
    operands: Sequence[Any],
    run: SemiringProgram,
    slicing: Slicing,
    keys: dict[int, Hashable] | None,
    argmax: bool,
) -> tuple[Any, dict[str, Any] | None]:
    """Slice by slice; the slices' results combined by the semiring's addition."""
    sliced = run.sliced
    rest = tuple(axis for axis in run.output if axis not in sliced)
    program = slicing.program
    parts: dict[tuple[int, ...], tuple[Any, Any]] = {}
    for values, pieces in each_slice(backend, operands, slicing):
        pointers = Pointers() if argmax else None
        result = _contract(backend, pieces, program, run, keys, pointers)
        found = None
        if pointers is not None:
            found = decode(backend, program, pointers, run.sizes, rest, result)
            at = backend.arange(1, result)
            for k, axis in enumerate(sliced):
                if axis not in run.output:
                    found[axis] = backend.full((), values[k], at)
            found = _shaped(backend, found, run, rest, None)
        key = tuple(values[k] for k in slicing.placed)
        parts[key] = _merged(backend, run, parts.get(key), (result, found))
    ordered = [parts[key] for key in sorted(parts)]
    merged = assemble(backend, [part[0] for part in ordered], slicing)
    if not argmax:
        return merged, None
    names = ordered[0][1]
    return merged, {
        axis: assemble(backend, [part[1][axis] for part in ordered], slicing) for axis in names
    }


def _merged(
    backend: Backend, run: SemiringProgram, old: tuple[Any, Any] | None, new: tuple[Any, Any]
) -> tuple[Any, Any]:
    """Two slices' (values, indices) added by the semiring: the better one's indices kept."""
    if old is None:
        return new
    if run.tropical is None:
        return backend.logaddexp(old[0], new[0]), None
    if new[1] is None:
        return run.tropical.merge(backend, old[0], new[0]), None
    better = run.tropical.better(new[0], old[0])
    values = backend.where(better, new[0], old[0])
    return values, {axis: backend.where(better, new[1][axis], old[1][axis]) for axis in old[1]}


def _empty(
    backend: Backend, operands: Sequence[Any], run: SemiringProgram, argmax: bool
) -> tuple[Any, dict[str, Any] | None]:
    """The result where some axis has length 0: empty, or the semiring's zero everywhere."""
    contracted = [axis for axis, size in run.sizes.items() if size == 0 and axis not in run.output]
    like = operands[0]
    dtype = backend.result_type(operands) if len(operands) > 1 else like.dtype
    if like.dtype != dtype:
        like = backend.astype(like, dtype)
    if contracted and (argmax or backend.dtype_kind(dtype) != "f"):
        what = "no position" if argmax else f"no {run.semiring} among integers"
        raise ArgumentError(
            f"axis {contracted[0]!r} has length 0: a {run.semiring} over it has {what}",
            hint="the semiring's zero (-inf or +inf) is the result for floating operands",
        )
    values = backend.full(run.shape, ZEROS[run.semiring] if contracted else 0, like)
    if not argmax:
        return values, None
    index = backend.full(run.shape, 0, backend.arange(1, like))
    return values, {axis: index for axis in run.sizes if axis not in run.output}
