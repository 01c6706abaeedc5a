"""``mx.compile(shapeless=True)``: a function compiled once and called at other shapes.

MLX traces a shapeless function once, with the shapes of its first call, and replays the
trace for every other shape; a length the trace read as a number stays that number. Each
call of `tests._staged.CASES` is compiled so beside einops' version of it: wherever
einops' compiled call gives the eager results at every size, tensorops' does too.
"""

from __future__ import annotations

from typing import Any

import mlx.core as mx
import numpy as np

import tensorops as tops
from tests._staged import CASES, EINOPS, SIZES, Case, assert_same, flatten


def _compiled(case: Case, ops: Any) -> Any:
    return mx.compile(lambda *xs: flatten(case.run(ops, *xs)), shapeless=True)


def _works(compiled: Any, case: Case) -> bool:
    try:
        for n in SIZES:
            assert_same(
                compiled(*(mx.array(a) for a in case.arrays(n))), case.expected(n), np.asarray
            )
    except Exception:  # a length read as a number, or a call MLX cannot trace shapeless
        return False
    return True


def test_shapeless_compile_wherever_einops_works() -> None:
    working = [case.name for case in CASES if case.einops and _works(_compiled(case, EINOPS), case)]
    # einops' transposes, reductions along kept axes and einsums of whole axes replay
    assert {"attention", "chain", "var"} & set(working)
    failing = [name for name in working if not _works(_compiled(_case(name), tops), _case(name))]
    assert not failing, f"einops' call runs shapeless and tensorops' does not: {failing}"


def _case(name: str) -> Case:
    return next(case for case in CASES if case.name == name)
