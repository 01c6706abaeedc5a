"""TensorFlow beyond the suite: tf.function (XLA too), unknown dimensions, GradientTape,
dtypes, errors, variables and conversions. NumPy and TensorFlow's own ops are the oracles."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import tensorflow as tf

import tensorops as tops
from tensorops._backends import get_backend
from tensorops._backends._tensorflow_autograph import install

RNG = np.random.default_rng(20240601)
X = RNG.standard_normal((2, 6, 4))
W = RNG.standard_normal((4, 3))
INDEX = np.array([[0, 5, 2], [1, 1, 4]])


def _tolerance(dtype: Any, terms: int = 1) -> float:
    """A relative tolerance for a result summing `terms` rounded values of `dtype`."""
    return float(8 * np.finfo(dtype).eps * np.sqrt(terms))


#: (name, f(x) on tensorops, the same computed with tf's own ops); x is X as float64.
OPS: list[tuple[str, Callable[[Any], Any], Callable[[Any], Any]]] = [
    (
        "rearrange",
        lambda x: tops.rearrange(x, "b (h w) c -> b c h w", h=2),
        lambda x: tf.transpose(tf.reshape(x, (2, 2, 3, 4)), (0, 3, 1, 2)),
    ),
    (
        "reduce_sum",
        lambda x: tops.reduce(x, "b t c -> c", "sum"),
        lambda x: tf.reduce_sum(x, (0, 1)),
    ),
    (
        "reduce_mean",
        lambda x: tops.reduce(x, "b (t 2) c -> b t c", "mean"),
        lambda x: tf.reduce_mean(tf.reshape(x, (2, 3, 2, 4)), 2),
    ),
    ("reduce_max", lambda x: tops.reduce(x, "b t c -> b c", "max"), lambda x: tf.reduce_max(x, 1)),
    (
        "reduce_prod",
        lambda x: tops.reduce(x, "b t c -> t", "prod"),
        lambda x: tf.reduce_prod(x, (0, 2)),
    ),
    (
        "logsumexp",
        lambda x: tops.reduce(x, "b t c -> b", "logsumexp"),
        lambda x: tf.reduce_logsumexp(x, (1, 2)),
    ),
    (
        "var",
        lambda x: tops.reduce(x, "b t c -> c", "var"),
        lambda x: tf.math.reduce_variance(x, (0, 1)),
    ),
    ("std", lambda x: tops.reduce(x, "b t c -> b", "std"), lambda x: tf.math.reduce_std(x, (1, 2))),
    (
        "repeat",
        lambda x: tops.repeat(x, "b t c -> b t c r", r=2),
        lambda x: tf.repeat(x[..., None], 2, axis=3),
    ),
    (
        "einsum",
        lambda x: tops.einsum("btc,cd->bdt", x, tf.constant(W)),
        lambda x: tf.einsum("btc,cd->bdt", x, tf.constant(W)),
    ),
    (
        "einsum_spaced",
        lambda x: tops.einsum(x, x, "b t c, b s c -> b t s"),
        lambda x: tf.linalg.matmul(x, x, transpose_b=True),
    ),
    ("softmax", lambda x: tops.softmax(x, "b [t] c"), lambda x: tf.nn.softmax(x, 1)),
    (
        "softmax_two_axes",
        lambda x: tops.softmax(x, "b [t c]"),
        lambda x: tf.reshape(tf.nn.softmax(tf.reshape(x, (2, 24)), 1), (2, 6, 4)),
    ),
    ("log_softmax", lambda x: tops.log_softmax(x, "b t [c]"), lambda x: tf.nn.log_softmax(x, 2)),
    (
        "get_at",
        lambda x: tops.get_at(x, tf.constant(INDEX), "b [t] c, b p -> b p c"),
        lambda x: tf.gather(x, INDEX, axis=1, batch_dims=1),
    ),
    (
        "add_at",
        lambda x: tops.add_at(x, tf.constant(INDEX), x[:, :3], "b [t] c, b p, b p c -> b [t] c"),
        lambda x: (
            x
            + tf.scatter_nd(
                [[[0, 0], [0, 5], [0, 2]], [[1, 1], [1, 1], [1, 4]]], x[:, :3], (2, 6, 4)
            )
        ),
    ),
    (
        "multiply",
        lambda x: tops.multiply(x, tf.constant(W[:, 0]), "b t c, c -> b t c"),
        lambda x: x * tf.constant(W[:, 0]),
    ),
    (
        "logaddexp",
        lambda x: tops.logaddexp(x, x * 2, "b t c, b t c -> c b t"),
        lambda x: tf.transpose(tf.reduce_logsumexp(tf.stack([x, x * 2]), 0), (2, 0, 1)),
    ),
    ("flip", lambda x: tops.flip(x, "b [t] c"), lambda x: tf.reverse(x, [1])),
    ("roll", lambda x: tops.roll(x, "b [t] c", shift=2), lambda x: tf.roll(x, 2, 1)),
    ("sort", lambda x: tops.sort(x, "b [t] c"), lambda x: tf.sort(x, 1)),
    ("cumsum", lambda x: tops.cumsum(x, "b [t] c"), lambda x: tf.cumsum(x, 1)),
    (
        "pack",
        lambda x: tops.pack([x, x[:, :, 0]], "b t *")[0],
        lambda x: tf.concat([x, x[:, :, :1]], 2),
    ),
    (
        "concat",
        lambda x: tops.rearrange([x, x[..., :1]], "b t c1, b t c2 -> b t (c1 + c2)"),
        lambda x: tf.concat([x, x[..., :1]], 2),
    ),
]
IDS = [name for name, _, _ in OPS]


@pytest.mark.parametrize(("name", "op", "reference"), OPS, ids=IDS)
@pytest.mark.parametrize("mode", ["eager", "function", "jit_compile"])
def test_ops_eager_traced_and_compiled(
    name: str, op: Callable[[Any], Any], reference: Callable[[Any], Any], mode: str
) -> None:
    x = tf.constant(X)
    run = op if mode == "eager" else tf.function(op, jit_compile=mode == "jit_compile")
    got = run(x)
    assert isinstance(got, tf.Tensor)
    assert got.dtype == tf.float64
    assert got.device == x.device
    np.testing.assert_allclose(got.numpy(), reference(x).numpy(), rtol=_tolerance(np.float64, 24))


@pytest.mark.parametrize(("name", "op", "reference"), OPS, ids=IDS)
def test_gradients_match_tensorflow_own(
    name: str, op: Callable[[Any], Any], reference: Callable[[Any], Any]
) -> None:
    x = tf.Variable(X)
    weights = tf.constant(RNG.standard_normal(reference(x).shape))  # a random cotangent
    grads = []
    for f in (op, reference):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.cast(f(x), tf.float64) * weights)
        grads.append(tape.gradient(loss, x))
    assert grads[0] is not None
    np.testing.assert_allclose(grads[0].numpy(), grads[1].numpy(), rtol=1e-10, atol=1e-12)


def test_gradient_against_finite_differences() -> None:
    x = tf.Variable(X[:, :2, :2])

    def f(v: Any) -> Any:
        y = tops.einsum(v, v, "b t c, b s c -> b t s")
        return tops.reduce(tops.softmax(y, "b t [s]"), "b t s -> ", "logsumexp")

    with tf.GradientTape() as tape:
        value = f(x)
    analytic = tape.gradient(value, x).numpy()
    step = 1e-6
    numeric = np.zeros_like(X[:, :2, :2])
    for i in np.ndindex(numeric.shape):
        delta = np.zeros_like(numeric)
        delta[i] = step
        up, down = f(tf.constant(X[:, :2, :2] + delta)), f(tf.constant(X[:, :2, :2] - delta))
        numeric[i] = (up.numpy() - down.numpy()) / (2 * step)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


# -- unknown dimensions ------------------------------------------------------------------------

UNKNOWN = [tf.TensorSpec([None, 4, 6], tf.float32)]


@pytest.mark.parametrize(
    ("pattern", "lengths", "expected"),
    [
        ("b h w -> b (h w)", {}, lambda a: a.reshape(a.shape[0], 24)),
        ("b h w -> (b h) w", {}, lambda a: a.reshape(-1, 6)),
        (
            "b h (w1 w2) -> b w1 h w2",
            {"w1": 2},
            lambda a: a.reshape(-1, 4, 2, 3).transpose(0, 2, 1, 3),
        ),
        ("b ... -> ... b", {}, lambda a: a.transpose(1, 2, 0)),
        ("b h w -> b h w 1", {}, lambda a: a[..., None]),
    ],
)
def test_unknown_dims_rearrange(pattern: str, lengths: dict[str, int], expected: Any) -> None:
    run = tf.function(lambda x: tops.rearrange(x, pattern, **lengths), input_signature=UNKNOWN)
    for batch in (1, 3):
        a = RNG.standard_normal((batch, 4, 6)).astype(np.float32)
        np.testing.assert_array_equal(run(tf.constant(a)).numpy(), expected(a))


def test_unknown_dims_split_with_the_other_part_given() -> None:
    signature = [tf.TensorSpec([None, 6], tf.float32)]
    run = tf.function(
        lambda x: tops.rearrange(x, "(b h) w -> b h w", h=2), input_signature=signature
    )
    a = np.arange(48, dtype=np.float32).reshape(8, 6)
    np.testing.assert_array_equal(run(tf.constant(a)).numpy(), a.reshape(4, 2, 6))


def test_unknown_dims_other_ops() -> None:
    def f(x: Any) -> Any:
        total = tops.reduce(x, "b h w -> h", "sum")
        tiled = tops.repeat(x, "b h w -> b h w r", r=2)
        mixed = tops.einsum("bhw,wk->bhk", x, tf.ones((6, 3)))
        shape = tops.parse_shape(x, "b _ w")
        packed, _ = tops.pack([x, x[:, :, 0]], "b h *")
        return total, tiled, mixed, shape["w"], tops.softmax(x, "b h [w]"), packed

    run = tf.function(f, input_signature=UNKNOWN)
    a = RNG.standard_normal((5, 4, 6)).astype(np.float32)
    total, tiled, mixed, w, soft, packed = run(tf.constant(a))
    np.testing.assert_allclose(total.numpy(), a.sum((0, 2)), rtol=_tolerance(np.float32, 30))
    np.testing.assert_array_equal(tiled.numpy(), np.repeat(a[..., None], 2, 3))
    np.testing.assert_allclose(mixed.numpy(), a @ np.ones((6, 3)), rtol=_tolerance(np.float32, 6))
    assert int(w) == 6
    np.testing.assert_allclose(soft.numpy().sum(-1), 1, rtol=_tolerance(np.float32, 6))
    assert packed.shape == (5, 4, 7)


def test_unknown_dims_that_cannot_be_resolved_raise() -> None:
    @tf.function(input_signature=UNKNOWN)
    def two_unknowns(x: Any) -> Any:
        return tops.rearrange(x, "(b1 b2) h w -> b1 b2 h w")

    with pytest.raises(tops.ShapeError, match="cannot infer the lengths of b1 and b2"):
        two_unknowns(tf.zeros((2, 4, 6)))

    @tf.function(input_signature=[tf.TensorSpec(None, tf.float32)])
    def unknown_rank(x: Any) -> Any:
        return tops.rearrange(x, "a b -> b a")

    with pytest.raises(tops.BackendError, match="unknown rank"):
        unknown_rank(tf.zeros((2, 3)))


# -- dtypes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype", [tf.float16, tf.bfloat16, tf.float32, tf.int32, tf.int8, tf.uint8, tf.bool]
)
def test_dtypes_are_kept(dtype: Any) -> None:
    a = (np.arange(24).reshape(2, 3, 4) % 5).astype(np.float32)
    x = tf.cast(tf.constant(a), dtype)
    moved = tops.rearrange(x, "a b c -> c (a b)")
    assert moved.dtype == dtype
    np.testing.assert_array_equal(
        tf.cast(moved, tf.float32).numpy(),
        a.transpose(2, 0, 1).reshape(4, 6).astype(bool)
        if dtype == tf.bool
        else a.transpose(2, 0, 1).reshape(4, 6),
    )
    assert tops.reduce(x, "a b c -> a c", "max").dtype == dtype
    assert tops.repeat(x, "a b c -> a b c r", r=2).dtype == dtype
    product = tops.einsum("abc,adc->abd", x, x)
    assert product.dtype == dtype
    expected = np.einsum("abc,adc->abd", *(tf.cast(x, tf.float64).numpy(),) * 2)
    if dtype == tf.bool:
        expected = expected > 0
    elif dtype in (tf.int8, tf.uint8):
        expected = expected.astype(dtype.as_numpy_dtype)  # NumPy's wrap-around
    rtol = _tolerance(dtype.as_numpy_dtype, 4) if dtype.is_floating else 0
    np.testing.assert_allclose(
        tf.cast(product, tf.float64).numpy(), expected.astype(np.float64), rtol=rtol
    )


def test_mixed_dtypes_promote_as_numpy() -> None:
    got = tops.add(tf.constant([1, 2], tf.int32), tf.constant([0.5, 0.5], tf.float64), "i, i")
    assert got.dtype == tf.float64
    assert tops.add(tf.constant([1, 2], tf.int8), 1, "i, ").dtype == tf.int8
    assert tops.multiply(tf.constant([1.0], tf.float16), 2.5, "i, ").dtype == tf.float16


# -- errors ----------------------------------------------------------------------------------

ERRORS: list[tuple[Callable[[Any], Any], tuple[int, ...]]] = [
    (lambda x: tops.rearrange(x, "a b -> b a"), (2, 3, 4)),
    (lambda x: tops.rearrange(x, "a (b c) -> a b c", c=4), (2, 6)),
    (lambda x: tops.reduce(x, "a b -> a", "median"), (2, 3)),
    (lambda x: tops.repeat(x, "a b -> a b c"), (2, 3)),
    (lambda x: tops.einsum("ij,jk->ik", x, x), (2, 3)),
    (lambda x: tops.softmax(x, "a [b] c"), (2, 3)),
    (lambda x: tops.check(x, "a b", b=4), (2, 3)),
]


def _without_inputs(message: str) -> list[str]:
    return [line for line in message.splitlines() if not line.lstrip().startswith("input")]


@pytest.mark.parametrize(("call", "shape"), ERRORS)
def test_errors_read_as_on_numpy(call: Callable[[Any], Any], shape: tuple[int, ...]) -> None:
    a = np.zeros(shape, np.float32)
    with pytest.raises(tops.TensorOpsError) as on_numpy:
        call(a)
    with pytest.raises(type(on_numpy.value)) as eager:
        call(tf.constant(a))
    with pytest.raises(type(on_numpy.value)) as traced:
        tf.function(call)(tf.constant(a))
    with pytest.raises(type(on_numpy.value)) as compiled:
        tf.function(call, jit_compile=True)(tf.constant(a))
    for error in (eager, traced, compiled):
        assert _without_inputs(str(error.value)) == _without_inputs(str(on_numpy.value))
        assert str(error.value) == str(on_numpy.value).replace(
            "backend=numpy", "backend=tensorflow"
        )


def test_out_of_range_index_eager() -> None:
    x, index = np.zeros((2, 6, 4)), INDEX + 2
    with pytest.raises(tops.ShapeError) as on_numpy:
        tops.get_at(x, index, "b [t] c, b p -> b p c")
    with pytest.raises(tops.ShapeError) as eager:
        tops.get_at(tf.constant(x), tf.constant(index), "b [t] c, b p -> b p c")
    assert (
        eager.value.reason
        == on_numpy.value.reason
        == "index 7 is out of range for axis t of length 6"
    )


def test_autograph_rules_are_installed() -> None:
    from tensorflow.python.autograph.core import config

    assert install(tf)
    assert install(tf)  # twice: one rule
    assert (
        sum(getattr(rule, "_prefix", None) == "tensorops" for rule in config.CONVERSION_RULES) == 1
    )


def test_without_the_autograph_rule_known_shapes_still_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tensorflow.python.autograph.core import config

    kept = tuple(r for r in config.CONVERSION_RULES if getattr(r, "_prefix", None) != "tensorops")
    monkeypatch.setattr(config, "CONVERSION_RULES", kept)
    run = tf.function(lambda x: tops.rearrange(x, "b (h w) c -> b c h w", h=3))
    np.testing.assert_array_equal(
        run(tf.constant(X)).numpy(), X.reshape(2, 3, 2, 4).transpose(0, 3, 1, 2)
    )


# -- inputs, variables, conversion -----------------------------------------------------------


def test_inputs_are_left_unchanged_and_variables_work() -> None:
    v = tf.Variable(X)
    x = tf.constant(X)
    target = tf.Variable(np.zeros((2, 6, 4)))
    tops.set_at(v, tf.constant(INDEX), 7.0, "b [t] c, b p, -> b [t] c")
    tops.add_at(x, tf.constant(INDEX), 1.0, "b [t] c, b p, -> b [t] c")
    tops.rearrange(v, "b t c -> c t b")
    np.testing.assert_array_equal(v.numpy(), X)
    np.testing.assert_array_equal(x.numpy(), X)
    assert isinstance(tops.reduce(v, "b t c -> b", "sum"), tf.Tensor)
    out = tops.einsum("btc,btc->btc", x, x, out=target)
    assert out is target
    np.testing.assert_allclose(target.numpy(), X * X)


def test_numpy_buffers_not_aligned_for_tensorflow_are_copied() -> None:
    """TensorFlow aborts the process on a DLPack buffer its kernels cannot read aligned
    (opt_einsum's own tests pass such arrays to ``backend="tensorflow"``)."""
    raw = np.zeros(64 + 8 * 40, dtype=np.uint8)
    start = (-raw.ctypes.data) % 64 + 16  # 16 bytes past a 64-byte boundary
    a = raw[start : start + 8 * 40].view(np.float64).reshape(5, 8)
    a[...] = np.arange(40).reshape(5, 8)
    assert a.ctypes.data % 64 == 16
    np.testing.assert_array_equal(tops.convert(a, "tensorflow").numpy(), a)
    expression = tops.einsum_expression("ij,jk->ik", (5, 8), (8, 3))
    got = expression(a, np.ones((8, 3)), backend="tensorflow")
    np.testing.assert_allclose(got, a @ np.ones((8, 3)), rtol=1e-12)


def test_to_numpy_and_from_numpy() -> None:
    x = tf.constant(X)
    adapter = get_backend(x)
    a = tops.asnumpy(x)
    assert type(a) is np.ndarray
    assert not a.flags.writeable
    np.testing.assert_array_equal(a, X)
    np.testing.assert_array_equal(adapter.to_numpy(tf.Variable(X)), X)
    back = adapter.from_numpy(np.array(X), None)  # type: ignore[attr-defined]
    assert isinstance(back, tf.Tensor)
    assert back.dtype == tf.float64
    np.testing.assert_array_equal(back.numpy(), X)
    frozen = np.array(X)
    frozen.flags.writeable = False
    np.testing.assert_array_equal(adapter.from_numpy(frozen, "/CPU:0").numpy(), X)  # type: ignore[attr-defined]

    @tf.function
    def inside(t: Any) -> Any:
        return adapter.to_numpy(t)

    with pytest.raises(tops.BackendError, match="symbolic"):
        inside(x)


@pytest.mark.parametrize(
    ("equation", "shapes", "pairs"),
    [
        ("ij,jk,kl->li", [(5, 6), (6, 7), (7, 8)], 2),
        ("bij,bjk,k->ib", [(2, 3, 4), (2, 4, 5), (5,)], 2),
        ("ab,bc,cd,de->ea", [(3, 4), (4, 5), (5, 6), (6, 2)], 3),
        ("iij,jk,k->i", [(3, 3, 4), (4, 5), (5,)], 2),  # a diagonal first, then the pairs
    ],
)
def test_each_pair_is_one_tensorflow_einsum(
    equation: str, shapes: list[tuple[int, ...]], pairs: int
) -> None:
    """A planned einsum runs its pairwise steps as tf.einsum, the output's order included:
    no Transpose or MatMul in the graph (each eager op costs ~100 us)."""
    arrays = [RNG.standard_normal(shape) for shape in shapes]
    traced = tf.function(lambda *xs: tops.einsum(equation, *xs))
    graph = traced.get_concrete_function(*map(tf.constant, arrays)).graph
    kinds = [op.type for op in graph.get_operations()]
    assert kinds.count("Einsum") == pairs, kinds
    assert not {"MatMul", "BatchMatMulV2", "BatchMatMulV3"} & set(kinds), kinds
    terms = equation.split("->")[0].split(",")
    if all(len(set(term)) == len(term) for term in terms):  # a diagonal moves its axes
        assert "Transpose" not in kinds, kinds
    expected = np.einsum(equation, *arrays)
    got = tops.einsum(equation, *map(tf.constant, arrays))
    np.testing.assert_allclose(got.numpy(), expected, rtol=_tolerance(np.float64, 8 * 7))
    np.testing.assert_allclose(traced(*arrays).numpy(), expected, rtol=_tolerance(np.float64, 56))


def _spread_apart() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Log-values 1e4 apart (each row's maximum where the columns are low), and the truth."""
    rng = np.random.default_rng(3)
    a, b = 1e4 * rng.standard_normal((4, 5)), 1e4 * rng.standard_normal((5, 3))
    block = a[:, :, None] + b[None]
    top = block.max(1)
    return a, b, np.log(np.exp(block - top[:, None]).sum(1)) + top


def test_logsumexp_einsum_is_exact_eager_and_in_a_graph() -> None:
    a, b, want = _spread_apart()
    contract = lambda x, y: tops.einsum("ij,jk->ik", x, y, semiring="logsumexp")  # noqa: E731
    for run in (contract, tf.function(contract), tf.function(contract, jit_compile=True)):
        got = run(tf.constant(a), tf.constant(b)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-13)
