"""Every op in TensorFlow's graph modes with unknown lengths, einops run beside.

Each call of `tests._staged.CASES` is traced once by ``tf.function`` with an input
signature whose unknown lengths are ``None`` (AutoGraph on and off, and under XLA), and
saved as a SavedModel, loaded and called; the graph is then called at other sizes and
compared with the eager result. einops' version of the call, where einops has it, runs in
the same mode: tensorops works wherever it does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
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


def _model(ops: Any) -> Any:
    """Patches, attention, max-pooling, pack and unpack (tests/test_onnx.py's, in TensorFlow)."""
    weight = tf.constant(np.linspace(-1, 1, 12 * 8, dtype=np.float32).reshape(12, 8))

    def model(x: Any) -> Any:
        patches = ops.rearrange(x, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2)
        q = ops.rearrange(
            ops.einsum(patches, weight, "b n c, c e -> b n e"), "b n (h d) -> b h n d", h=2
        )
        scores = ops.einsum(q, q, "b h i d, b h j d -> b h i j")
        mixed = ops.einsum(tf.nn.softmax(scores), q, "b h i j, b h j d -> b h i d")
        tokens = ops.rearrange(mixed, "b h n d -> b n (h d)")
        packed, shapes = ops.pack([tokens[:, 0], tokens], "b * d")
        first, rest = ops.unpack(packed, shapes, "b * d")
        pooled = ops.reduce(x, "b c (h 2) (w 2) -> b c h w", "max")
        return (
            first
            + ops.reduce(rest, "b n d -> b d", "mean")
            + ops.reduce(pooled, "b c h w -> b", "mean")[:, None]
        )

    return model


def graph_operations(ops: Any) -> int:
    """How many operations the model's graph holds, traced with an unknown batch."""
    spec = tf.TensorSpec([None, 3, 8, 8], tf.float32)
    return len(tf.function(_model(ops)).get_concrete_function(spec).graph.get_operations())


def test_the_graph_is_no_larger_than_einops() -> None:
    ours = tf.function(_model(tops), input_signature=[tf.TensorSpec([None, 3, 8, 8], tf.float32)])
    for n in (1, 3):
        x = np.random.default_rng(n).standard_normal((n, 3, 8, 8)).astype(np.float32)
        want = _model(tops)(tf.constant(x)).numpy()
        np.testing.assert_allclose(ours(tf.constant(x)).numpy(), want, rtol=1e-5, atol=1e-5)
    assert graph_operations(tops) <= graph_operations(EINOPS)


def test_a_call_that_needs_a_length_as_a_number_names_the_mode_and_the_axis() -> None:
    def sliced(a: Any, b: Any, c: Any) -> Any:  # slicing needs the number of slices: c's
        return tops.einsum("ab,bc,cd->ad", a, b, c, memory_limit=100)

    signature = [tf.TensorSpec([2, 64]), tf.TensorSpec([64, None]), tf.TensorSpec([None, 2])]
    f = tf.function(sliced, input_signature=signature)
    with pytest.raises(tops.TensorOpsError, match=r"slice axis 'c'.*\(inside tf\.function\)"):
        f.get_concrete_function()
