"""One log-space product of two operands, run with its layout resolved once.

An HMM's forward step, ``einsum("i,ij->j", alpha, log_transition, semiring="logsumexp")``,
is a plan of one product and nothing else. Its executor makes the framework calls of
`tensorops._einsum.semirings._logspace.side` (without sums or keys) and of the head of
`tensorops._einsum.semirings._logmatmul.log_matmul` itself, and hands anything else (NumPy's
keywords, dtypes to convert, a product with a ``nan``) to the general executor: on small
arrays the general path's own calls would cost as much as the framework's
(``benchmarks/semiring.py``, "small call").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from tensorops._axes import product
from tensorops._einsum.programs._execute import Pair, Program
from tensorops._einsum.semirings._logmatmul import EVERY_AXIS, Side, floor, underflowed
from tensorops._einsum.semirings._operands import TAKEN_AS_THEY_ARE
from tensorops._types import Backend

if TYPE_CHECKING:
    from tensorops._einsum.semirings._run_semiring import SemiringProgram

__all__ = ["single_executor"]

#: Runs the arrays of a call, and NumPy's keywords (None when there are none).
General = Callable[[Sequence[Any], Any], Any]


def single_executor(
    run: SemiringProgram,
    backend: Backend,
    general: General,
    constant: tuple[int, Side] | None = None,
) -> General | None:
    """The executor of `run` if it is one product (else None); `general` runs the rest.

    With `constant` (the slot of a constant operand, its side laid out), a call passes
    the other operand alone (an expression's call).
    """
    least = _floor(run)
    pair, program = run.single, run.built.program
    if least is None or pair is None or program is None:
        return None
    cap, matmul, known, log = run.cap, backend.matmul, backend.known, backend.log
    least_of = backend.reducer("min", EVERY_AXIS[len(pair.shape_left or program.axes[pair.left])])
    arranged, finished = _arranger(backend, pair), _finisher(backend, pair, program)
    fixed = None if constant is None else constant[1]
    dtype = None if fixed is None else fixed.values.dtype
    at_left = constant is None or constant[0] != pair.left  # the call's array is the left side
    plain: set[Any] = set()  # the dtypes the general path took as they are

    def execute(operands: Sequence[Any], extras: Any) -> Any:
        first = operands[0]
        if extras is not None or first.dtype not in plain:
            if extras is None and (backend, run.semiring, first.dtype) in TAKEN_AS_THEY_ARE:
                plain.add(first.dtype)
            return general(operands, extras)
        if fixed is None:
            second = operands[pair.right]
            if second.dtype != first.dtype:
                return general(operands, extras)
            one, other = arranged(operands[pair.left], 0), arranged(second, 1)
        elif first.dtype != dtype:
            return general(operands, extras)
        elif at_left:
            one, other = arranged(first, 0), fixed
        else:
            one, other = fixed, arranged(first, 1)
        # inlined log_matmul: a step at 16 states (benchmarks/semiring.py, "small call")
        products = matmul(one.exps, other.exps)
        shift = one.shift + other.shift
        lowest = known(least_of(products, None))
        if lowest is not None and lowest >= least:
            return finished(log(products) + shift)
        if lowest != lowest:  # nan: a maximum not finite (the exps are unguarded), or a nan
            return general(operands, extras)
        made = (products, shift, lowest, least)
        return finished(underflowed(backend, one, other, made, cap))

    return execute


def _floor(run: SemiringProgram) -> float | None:
    """The floor of the one product's shifted values; None where there is no such product.

    None too where its inner length is not a number (a graph whose sizes are known when
    it runs: staged anyway) or too short for the shifted product to be exact.
    """
    pair, program = run.single, run.built.program
    if pair is None or program is None:
        return None
    left, right = program.axes[pair.left], program.axes[pair.right]
    summed = [axis for axis in left if axis in right and axis not in program.axes[pair.out]]
    inner = product(run.sizes[axis] for axis in summed)
    if type(inner) is not int or floor(inner) == math.inf:
        return None
    return floor(inner)


def _arranger(backend: Backend, pair: Pair) -> Callable[[Any, int], Side]:
    """``arranged(x, 0 or 1)``: the left or right operand laid out, its shifted exp.

    Unguarded: a maximum that is not finite makes the product ``nan``, and the call goes
    the general way.
    """
    layouts = ((pair.perm_left, pair.shape_left, -1), (pair.perm_right, pair.shape_right, -2))

    def arranged(x: Any, at: int) -> Side:
        perm, shape, axis = layouts[at]
        if perm is not None:
            x = backend.permute(x, perm)
        if shape is not None:
            x = backend.reshape(x, shape)
        return Side(x, *backend.shifted_exp_unguarded(x, axis))

    return arranged


def _finisher(backend: Backend, pair: Pair, program: Program) -> Callable[[Any], Any]:
    """What lays the product out as the output: its shape, the permutation, compositions."""
    shape_out, perm, shape = pair.shape_out, program.perm, program.shape
    if perm is None and shape is not None:  # one reshape for both
        shape_out = None

    def finished(x: Any) -> Any:
        if shape_out is not None:
            x = backend.reshape(x, shape_out)
        if perm is not None:
            x = backend.permute(x, perm)
        return x if shape is None else backend.reshape(x, shape)

    return finished
