"""Expressions over another semiring: constants prepared once per family and device.

An `tensorops._einsum._expression.EinsumExpression` with ``semiring=`` runs the steps
that read only constants once (`prepare_constants`), as a sum's expression does, and
keeps more: for ``"logsumexp"``, every side of a product of the remaining steps that a
constant (or what its steps made) supplies, laid out, shifted and exponentiated
(`tensorops._einsum.semirings._logmatmul.Side`). A call (`run_with_constants`) then makes only the
exps of its own arrays: an HMM's step ``"i,ij->j"`` with the transition matrix constant
is one matrix product and work in proportion to the states.

With ``argmax=True``, or a sliced plan, the constants are kept converted and every step
runs per call (the back-pointers of every reduction are needed).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, NamedTuple

from tensorops._einsum.equations._arguments import Extras
from tensorops._einsum.programs._execute import arrange_output, promote_slots
from tensorops._einsum.semirings._logspace import Exps, side
from tensorops._einsum.semirings._operands import checked, finished
from tensorops._einsum.semirings._run_semiring import SemiringProgram, prepare_slots, run_steps
from tensorops._einsum.semirings._single import single_executor
from tensorops._types import Backend

__all__ = ["Prepared", "prepare_constants", "run_with_constants"]


class Prepared(NamedTuple):
    """What the constants of an expression give every call, for one family and device.

    Attributes:
        slots: The slots a call reads that hold constants or what their steps made.
        exps: Those slots' sides of the call's products (``"logsumexp"``).
        keys: Slot -> the key of its sides in `exps`.
        like: A 0-d array of the constants' dtype (the result's dtype is found with it).
        widened: Whether the constants are computed in a wider dtype than `like`'s.
        call: Where the plan is one product of a constant and the call's array: what
            runs a call (`tensorops._einsum.semirings._single`), else None.
    """

    slots: dict[int, Any]
    exps: Exps
    keys: dict[int, Hashable]
    like: Any
    widened: bool
    call: Callable[[Sequence[Any], Extras | None], Any] | None = None


def prepare_constants(
    run: SemiringProgram, backend: Backend, constants: dict[int, Any], split: Any
) -> Prepared:
    """Run `split`'s steps on `constants` (position -> array) and lay out what calls read."""
    program = run.built.program
    assert program is not None
    operands, narrow = checked(backend, list(constants.values()), run.semiring, None)
    like = backend.full((), 0, operands[0])
    if narrow is not None:
        like = backend.astype(like, narrow)
    slots: list[Any] = [None] * (len(program.prepare) + len(program.pairs))
    for position, x in zip(constants, operands, strict=True):
        slots[position] = x
    prepare_slots(backend, slots, constants, program, run)
    run_steps(backend, slots, split.ahead, run, None, {})
    kept = {slot: slots[slot] for slot in split.kept}
    keys: dict[int, Hashable] = {slot: ("constant", slot) for slot in kept}
    exps: Exps = {}
    if run.tropical is None:
        for pair in split.rest:
            if pair.mode != "matmul":
                continue
            if pair.left in kept:
                x, key = kept[pair.left], keys[pair.left]
                side(backend, x, pair.sum_left, pair.perm_left, pair.shape_left, -1, key, exps)
            if pair.right in kept:
                x, key = kept[pair.right], keys[pair.right]
                side(backend, x, pair.sum_right, pair.perm_right, pair.shape_right, -2, key, exps)
    prepared = Prepared(kept, exps, keys, like, narrow is not None)
    return prepared._replace(call=_single_call(run, backend, prepared, split))


def _single_call(
    run: SemiringProgram, backend: Backend, prepared: Prepared, split: Any
) -> Callable[[Sequence[Any], Extras | None], Any] | None:
    """The one-product executor of a call, where the plan is a product with one constant."""
    pair = run.single
    if pair is None or prepared.widened or len(prepared.slots) != 1:
        return None
    (slot,) = prepared.slots
    if slot not in (pair.left, pair.right):  # every operand constant: the product made ahead
        return None
    if slot == pair.left:
        key, variable = (pair.sum_left, pair.perm_left, pair.shape_left, -1), pair.right
    else:
        key, variable = (pair.sum_right, pair.perm_right, pair.shape_right, -2), pair.left
    constant = prepared.exps[(prepared.keys[slot], *key)]

    def general(operands: Sequence[Any], extras: Extras | None) -> Any:
        return run_with_constants(run, backend, {variable: operands[0]}, prepared, split, extras)

    return single_executor(run, backend, general, (slot, constant))


def run_with_constants(
    run: SemiringProgram,
    backend: Backend,
    variables: dict[int, Any],
    prepared: Prepared,
    split: Any,
    extras: Extras | None,
) -> Any:
    """Contract the arrays of a call (position -> array) with the prepared constants."""
    program = run.built.program
    assert program is not None
    given = list(variables.values())
    operands, narrow = checked(backend, given, run.semiring, extras)
    slots: list[Any] = [None] * (len(program.prepare) + len(program.pairs))
    for position, x in zip(variables, operands, strict=True):
        slots[position] = x
    prepare_slots(backend, slots, variables, program, run)
    keys: dict[int, Hashable] | None = prepared.keys
    exps = dict(prepared.exps)
    for slot, value in prepared.slots.items():
        slots[slot] = value
    if backend.name != "numpy" and promote_slots(backend, slots, (*variables, *prepared.slots)):
        keys, exps = None, {}  # the prepared exps are of another dtype
    run_steps(backend, slots, split.rest, run, keys, exps)
    result = arrange_output(backend, slots[program.final], program.perm, program.shape)
    if narrow is not None or prepared.widened:  # the dtype of the operands as given
        narrow = backend.result_type([*(backend.floating(x) for x in given), prepared.like])
    return finished(backend, result, narrow, operands, extras)
