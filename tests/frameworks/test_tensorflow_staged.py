"""Every op in TensorFlow's graph modes with unknown lengths, einops run beside.

Each call of `tests._staged.CASES` is traced once by ``tf.function`` with an input
signature whose unknown lengths are ``None`` (AutoGraph on and off, and under XLA), and
saved as a SavedModel, loaded and called; the graph is then called at other sizes and
compared with the eager result. einops' version of the call, where einops has it, runs in
the same mode: tensorops works wherever it does.
"""

from __future__ import annotations

from typing import Any

import pytest
import tensorflow as tf

import tensorops as tops
from tests._staged import CASES, EINOPS, SIZES, Case, assert_same, case_ids, einops_beside


def _signature(case: Case) -> list[tf.TensorSpec]:
    return [tf.TensorSpec(list(x.shape), tf.as_dtype(x.dtype)) for x in case.inputs]


def _function(case: Case, ops: Any, **options: Any) -> Any:
    return tf.function(lambda *xs: case.run(ops, *xs), input_signature=_signature(case), **options)


def _run_at_sizes(f: Any, case: Case) -> None:
    for n in SIZES:
        arrays = [tf.constant(a) for a in case.arrays(n)]
        assert_same(f(*arrays), case.expected(n), lambda t: t.numpy())


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
@pytest.mark.parametrize(
    "options",
    [{}, {"autograph": False}, {"jit_compile": True}],
    ids=["function", "no-autograph", "xla"],
)
def test_every_op_in_tf_function_with_unknown_lengths(case: Case, options: dict[str, Any]) -> None:
    _run_at_sizes(_function(case, tops, **options), case)
    einops_beside(case, lambda: _run_at_sizes(_function(case, EINOPS, **options), case))


def test_saved_model_round_trip(tmp_path: Any) -> None:
    module = tf.Module()
    chosen = [
        case
        for case in CASES
        if case.name in ("attention", "max pool", "pack unpack", "concat", "get_at")
    ]
    for i, case in enumerate(chosen):
        setattr(module, f"call{i}", _function(case, tops))
    tf.saved_model.save(module, str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    for i, case in enumerate(chosen):
        _run_at_sizes(getattr(loaded, f"call{i}"), case)


def test_a_mismatch_known_only_when_the_graph_runs_is_a_graph_assertion() -> None:
    f = tf.function(
        lambda a, b: tops.einsum("bi,bj->ij", a, b),
        input_signature=[tf.TensorSpec([None, 3]), tf.TensorSpec([None, 4])],
    )
    f(tf.zeros((5, 3)), tf.zeros((5, 4)))
    # the eager error's text, placed in the graph; TensorFlow escapes its quotes
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"einsum: axis .{1,3}b.{1,3} has"):
        f(tf.zeros((5, 3)), tf.zeros((6, 4)))


def test_an_unknown_rank_is_refused_with_the_mode() -> None:
    f = tf.function(
        lambda x: tops.rearrange(x, "a b -> b a"), input_signature=[tf.TensorSpec(None)]
    )
    with pytest.raises(tops.TensorOpsError, match="unknown rank"):
        f.get_concrete_function()
