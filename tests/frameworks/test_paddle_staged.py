"""Every op in ``paddle.jit.to_static`` programs with unknown lengths, einops beside.

Each call of `tests._staged.CASES` is converted with an ``InputSpec`` whose unknown
lengths are ``None`` (paddle's ``-1``), in both modes (``full_graph=True``, the AST
conversion, and the default SOT), run at several sizes and compared with the eager result;
a few are saved with ``paddle.jit.save``, loaded and run again. einops' version, where
einops has the call, runs in the same mode.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

with warnings.catch_warnings():  # paddle warns on import where ccache is not installed
    warnings.filterwarnings("ignore", "No ccache found", UserWarning)
    paddle = pytest.importorskip("paddle")

from paddle.static import InputSpec

import tensorops as tops
from tests._staged import (
    CASES,
    EINOPS,
    SIZES,
    Case,
    assert_same,
    case_ids,
    einops_beside,
    flatten,
)


def _call(case: Case, ops: Any) -> Any:
    """The call as a function of named parameters (to_static reads their names)."""

    def run(*xs: Any) -> Any:
        return tuple(flatten(case.run(ops, *xs)))

    def one(a: Any) -> Any:
        return run(a)

    def two(a: Any, b: Any) -> Any:
        return run(a, b)

    def three(a: Any, b: Any, c: Any) -> Any:
        return run(a, b, c)

    return (one, two, three)[len(case.inputs) - 1]


# The first to_static that converts a call walks the members of every module ignored by
# paddle.jit.ignore_module (tensorops among them), and through them of torch where it is
# imported; inspecting torch.distributed's deprecated reduce_op warns (once a process).
pytestmark = pytest.mark.filterwarnings(
    r"ignore:`torch\.distributed\.reduce_op` is deprecated:FutureWarning"
)


def _static(case: Case, ops: Any, full_graph: bool) -> Any:
    if not full_graph:  # SOT takes no input_spec: it makes a length dynamic once it changes
        return paddle.jit.to_static(_call(case, ops), full_graph=False)
    specs = [InputSpec(list(x.shape), x.dtype) for x in case.inputs]
    return paddle.jit.to_static(_call(case, ops), input_spec=specs, full_graph=True)


def _run_at_sizes(function: Any, case: Case) -> None:
    for n in SIZES:
        got = function(*(paddle.to_tensor(a) for a in case.arrays(n)))
        assert_same(got, case.expected(n), lambda t: t.numpy())


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
@pytest.mark.parametrize("full_graph", [True, False], ids=["full-graph", "sot"])
def test_every_op_in_to_static_with_unknown_lengths(case: Case, full_graph: bool) -> None:
    tops.clear_caches()  # planned inside the program, not found cached from an eager call
    _run_at_sizes(_static(case, tops, full_graph), case)
    einops_beside(case, lambda: _run_at_sizes(_static(case, EINOPS, full_graph), case))


# the calls hold no parameters, which paddle.jit.save says it found none of
@pytest.mark.filterwarnings("ignore:no variable in your model:UserWarning")
@pytest.mark.parametrize("name", ["attention", "max pool", "pack unpack", "concat", "get_at"])
def test_jit_save_and_load(tmp_path: Any, name: str) -> None:
    case = next(case for case in CASES if case.name == name)
    layer = paddle.nn.Layer()
    specs = [InputSpec(list(x.shape), x.dtype) for x in case.inputs]
    layer.forward = paddle.jit.to_static(_call(case, tops), input_spec=specs, full_graph=True)
    path = str(tmp_path / "model")
    paddle.jit.save(layer, path, input_spec=specs)
    loaded = paddle.jit.load(path)
    for n in SIZES:
        got = loaded(*(paddle.to_tensor(a) for a in case.arrays(n)))
        assert_same(got, case.expected(n), lambda t: np.asarray(t))
