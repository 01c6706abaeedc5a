"""Every op under ``torch.jit.trace``: traced at one size, run at others, einops beside.

A traced graph records each length a call reads from its inputs (``aten::size``), as
einops' traced graphs do: tensorops reads every length of a traced call as a run-time
size, so no length of the sizes it was traced at becomes a constant.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import tensorops as tops  # noqa: E402
from tests._staged import (  # noqa: E402
    CASES,
    EINOPS,
    SIZES,
    Case,
    assert_same,
    case_ids,
    einops_beside,
    flatten,
)


def _traced(case: Case, ops: Any) -> Any:
    example = [torch.from_numpy(a) for a in case.arrays(SIZES[0])]
    with warnings.catch_warnings():
        # torch >= 2.14 says torch.jit.trace is deprecated: the mode is tested all the same
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        # the results as a tuple: a traced list warns that its length might change
        call = lambda *xs: tuple(flatten(case.run(ops, *xs)))  # noqa: E731
        return torch.jit.trace(call, example, check_trace=False)


def _run_at_sizes(traced: Any, case: Case) -> None:
    for n in SIZES:
        got = traced(*(torch.from_numpy(a) for a in case.arrays(n)))
        assert_same(got, case.expected(n), lambda t: t.numpy())


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_every_op_traced_at_one_size_runs_at_others(case: Case) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", torch.jit.TracerWarning)  # nothing baked in
        traced = _traced(case, tops)
    _run_at_sizes(traced, case)

    def einops_traced() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", torch.jit.TracerWarning)
            _run_at_sizes(_traced(case, EINOPS), case)

    einops_beside(case, einops_traced)
