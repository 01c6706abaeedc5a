"""The Keras 3 layers (`tensorops.layers.keras`) on the Keras backend of this process.

Run once per backend, each in its own process (``tests/test_frameworks.py``)::

    TENSOROPS_TEST_FRAMEWORK=keras_jax KERAS_BACKEND=jax \
        python -m pytest tests/frameworks/test_keras.py

Oracles: the tensorops functions on NumPy arrays, NumPy itself, and ``keras.layers.Dense``
for EinMix's training step.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

keras = pytest.importorskip("keras")

from tensorops.layers.keras import (  # noqa: E402
    Check,
    EinMix,
    LogSoftmax,
    Rearrange,
    Reduce,
    Repeat,
    Softmax,
)

import tensorops as tops  # noqa: E402
from tests._seed import rng, tolerance  # noqa: E402

BACKEND = keras.backend.backend()

pytestmark = [
    pytest.mark.filterwarnings(
        # Keras' own Variable.__array__ (keras/src/backend/common/variables.py) and its torch
        # backend's convert_to_numpy call NumPy 2 without the `copy` keyword; get_weights and
        # model.save go through them.
        "ignore:__array__ implementation doesn't accept a copy keyword:DeprecationWarning"
    ),
    pytest.mark.filterwarnings(
        # jit_compile=True on the torch backend is torch.compile, whose first use imports
        # torch._inductor; its torch.utils.mkldnn still defines script methods
        r"ignore:`torch\.jit\.script_method` is deprecated:DeprecationWarning"
    ),
]


@keras.saving.register_keras_serializable("tensorops_tests")
def max_of(x, axes):
    """A callable reduction written with keras.ops: it runs on every backend and saves."""
    return keras.ops.max(x, axis=axes)


def numpy_of(x) -> np.ndarray:
    return tops.asnumpy(x)


# --- the layers compute what the functions compute ----------------------------------------------


def max_pool_2x2(x: np.ndarray) -> np.ndarray:
    return x.reshape(2, 3, 2, 2, 3, 2).max((3, 5))


def logsumexp_but_first(x: np.ndarray) -> np.ndarray:
    return np.log(np.exp(x).sum((1, 2, 3)))


CASES = [
    (lambda: Rearrange("b c h w -> b h w c"), lambda x: tops.rearrange(x, "b c h w -> b h w c")),
    (
        lambda: Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2),
        lambda x: tops.rearrange(x, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2),
    ),
    (lambda: Rearrange("b ... c -> b c ..."), lambda x: tops.rearrange(x, "b ... c -> b c ...")),
    (lambda: Reduce("b c (h 2) (w 2) -> b c h w", "max"), max_pool_2x2),
    (lambda: Reduce("b c h w -> b c", "mean"), lambda x: x.mean((2, 3))),
    (lambda: Reduce(pattern="b ... -> b", reduction="logsumexp"), logsumexp_but_first),
    (lambda: Reduce("b c h w -> b w", max_of), lambda x: x.max((1, 2))),
    (lambda: Repeat("b c h w -> b c h w r", r=2), lambda x: np.repeat(x[..., None], 2, -1)),
    (lambda: Softmax("b c h [w]"), lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    (lambda: Softmax("b c [h w]"), lambda x: np.exp(x) / np.exp(x).sum((2, 3), keepdims=True)),
    (lambda: LogSoftmax("b [c] h w"), lambda x: x - np.log(np.exp(x).sum(1, keepdims=True))),
    (lambda: Check("b c (h 2) w", c=3), lambda x: x),
]


@pytest.mark.parametrize(("make", "expected"), CASES)
def test_layers_match_the_functions(make, expected):
    x = rng("keras layers").standard_normal((2, 3, 4, 6)).astype(np.float32)
    got = numpy_of(make()(x))
    want = np.asarray(expected(x), dtype=np.float32)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **tolerance(np.float32, terms=x.size))


@pytest.mark.parametrize("dtype", ["float16", "float32", "int32", "bool"])
def test_pattern_layers_keep_the_input_dtype(dtype):
    x = (rng("keras dtypes").standard_normal((2, 3, 4)) > 0).astype(dtype)
    for layer in (Rearrange("a b c -> c (a b)"), Repeat("a b c -> a b c r", r=2), Check("a b c")):
        out = layer(x)
        assert keras.backend.standardize_dtype(out.dtype) == dtype
        np.testing.assert_array_equal(numpy_of(out), numpy_of(layer._description(x)))


# --- symbolic shapes: Sequential, functional models, compute_output_shape ------------------------


@pytest.mark.parametrize(
    ("layer", "given", "expected"),
    [
        (Rearrange("b (h k) c -> b h (c k)", k=2), (None, None, 6), (None, None, 12)),
        (Rearrange("b (h k) c -> b h (c k)", k=2), (None, 8, 6), (None, 4, 12)),
        (Rearrange("b c h w -> b (c h w)"), (None, 3, 4, 5), (None, 60)),
        (Rearrange("b c h w -> b (c h w)"), (None, 3, None, 5), (None, None)),
        (Rearrange("b ... c -> c b ..."), (None, None, 7, 3), (3, None, None, 7)),
        (Reduce("b c (h h2) (w w2) -> b c h w", "max", h2=2, w2=2), (None,) * 4, (None,) * 4),
        (Reduce("b c h w -> b ()", "sum"), (None, 3, None, None), (None, 1)),
        (Repeat("b c -> b c r", r=3), (None, 4), (None, 4, 3)),
        (Repeat("b c -> (b r) c", r=3), (None, 4), (None, 4)),
        (Softmax("b h i [j]"), (None, 2, None, 5), (None, 2, None, 5)),
        (EinMix("b c1 -> (b c2)", weight_shape="c1 c2", c1=6, c2=4), (None, 6), (None,)),
        (EinMix("(b c2) -> b c3", weight_shape="c2 c3", c2=4, c3=5), (None,), (None, 5)),
        (
            EinMix("b (h w) c -> b h w e", weight_shape="c e", h=2, c=3, e=4),
            (None, None, 3),
            (None, 2, None, 4),
        ),
    ],
)
def test_output_shapes_with_unknown_dimensions(layer, given, expected):
    assert layer.compute_output_shape(given) == expected
    assert tuple(layer(keras.Input(given[1:], batch_size=given[0])).shape) == expected


def test_reductions_report_their_dtype_symbolically():
    spec = Reduce("b c -> b", "argmax").compute_output_spec(keras.KerasTensor((None, 3)))
    assert keras.backend.standardize_dtype(spec.dtype).startswith("int")
    spec = Reduce("b c -> b", "any").compute_output_spec(keras.KerasTensor((None, 3), "bool"))
    assert keras.backend.standardize_dtype(spec.dtype) == "bool"


def small_model() -> keras.Sequential:
    """Patches -> EinMix -> Softmax -> Repeat -> Reduce, on images of (b, 8, 8, 3)."""
    return keras.Sequential(
        [
            keras.Input((8, 8, 3)),
            Rearrange("b (h p1) (w p2) c -> b (h w) (p1 p2 c)", p1=2, p2=2),
            EinMix("b n d -> b n e", weight_shape="d e", bias_shape="e", d=12, e=5),
            Softmax("b n [e]"),
            Repeat("b n e -> b n e r", r=2),
            Reduce("b n e r -> b e", "mean"),
        ]
    )


def small_model_in_numpy(model: keras.Sequential, x: np.ndarray) -> np.ndarray:
    mix = model.layers[1]
    weight, bias = numpy_of(mix.weight.value), numpy_of(mix.bias.value)
    patches = x.reshape(-1, 4, 2, 4, 2, 3).transpose(0, 1, 3, 2, 4, 5).reshape(-1, 16, 12)
    mixed = patches @ weight + bias
    soft = np.exp(mixed) / np.exp(mixed).sum(-1, keepdims=True)
    return soft.mean(1)


def test_sequential_model_matches_numpy():
    model = small_model()
    assert model.output_shape == (None, 5)
    x = rng("keras sequential").standard_normal((3, 8, 8, 3)).astype(np.float32)
    want = small_model_in_numpy(model, x)
    np.testing.assert_allclose(numpy_of(model(x)), want, **tolerance(np.float32, terms=12))
    np.testing.assert_allclose(model.predict(x, verbose=0), want, **tolerance(np.float32, 12))


# --- training: compiled, and EinMix's step equals Dense's ---------------------------------------


def _train_one_step(model, x, y, jit_compile):
    model.compile(
        optimizer=keras.optimizers.SGD(learning_rate=0.5), loss="mse", jit_compile=jit_compile
    )
    model.fit(x, y, batch_size=len(x), epochs=1, verbose=0, shuffle=False)
    return [numpy_of(v.value) for v in model.trainable_variables]


def test_fit_one_step_compiled_equals_eager():
    data = rng("keras fit")
    x = data.standard_normal((6, 8, 8, 3)).astype(np.float32)
    y = data.uniform(size=(6, 5)).astype(np.float32)
    eager, compiled = small_model(), small_model()
    compiled.set_weights(eager.get_weights())
    before = [w.copy() for w in eager.get_weights()]
    after_eager = _train_one_step(eager, x, y, jit_compile=False)
    after_compiled = _train_one_step(compiled, x, y, jit_compile=True)
    for start, a, b in zip(before, after_eager, after_compiled, strict=True):
        assert not np.allclose(start, a)  # the step changed every weight
        np.testing.assert_allclose(b, a, **tolerance(np.float32, terms=6 * 16 * 12))


@pytest.mark.parametrize("jit_compile", [False, True])
def test_einmix_steps_as_dense(jit_compile):
    data = rng("keras dense", jit_compile)
    x = data.standard_normal((16, 7)).astype(np.float32)
    y = data.standard_normal((16, 4)).astype(np.float32)
    mix = keras.Sequential(
        [keras.Input((7,)), EinMix("b d -> b e", weight_shape="d e", bias_shape="e", d=7, e=4)]
    )
    dense = keras.Sequential([keras.Input((7,)), keras.layers.Dense(4)])
    weight, bias = mix.get_weights()
    assert bias.shape == (1, 4)  # einops' bias shape: broadcastable against the output
    dense.set_weights([weight, bias.reshape(4)])
    np.testing.assert_allclose(numpy_of(mix(x)), numpy_of(dense(x)), **tolerance(np.float32, 7))
    got = _train_one_step(mix, x, y, jit_compile)
    want = _train_one_step(dense, x, y, jit_compile)
    assert not np.allclose(got[0], weight)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a.reshape(b.shape), b, **tolerance(np.float32, terms=16 * 7))


def test_mixed_precision_einmix_computes_in_float16():
    mix = EinMix("b d -> b e", weight_shape="d e", bias_shape="e", d=3, e=2, dtype="mixed_float16")
    out = mix(np.ones((2, 3), np.float32))
    assert keras.backend.standardize_dtype(out.dtype) == "float16"
    assert keras.backend.standardize_dtype(mix.weight.dtype) == "float32"


# --- saving and loading ------------------------------------------------------------------------


def test_keras_file_round_trip(tmp_path):
    model = small_model()
    model.add(Reduce("b e -> b", max_of, name="pooled"))
    x = rng("keras save").standard_normal((2, 8, 8, 3)).astype(np.float32)
    path = tmp_path / "model.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    assert [repr(layer) for layer in loaded.layers] == [repr(layer) for layer in model.layers]
    assert loaded.layers[-1].name == "pooled"
    np.testing.assert_array_equal(numpy_of(loaded(x)), numpy_of(model(x)))
    weights = tmp_path / "model.weights.h5"
    model.save_weights(weights)
    fresh = small_model()
    fresh.add(Reduce("b e -> b", max_of))
    fresh.load_weights(weights)
    np.testing.assert_array_equal(numpy_of(fresh(x)), numpy_of(model(x)))


@pytest.mark.parametrize(
    "layer",
    [
        Rearrange("b (h w) -> b h w", h=2, name="split"),
        Reduce("b c -> b", "max", trainable=False),
        Reduce(pattern="b c -> b", reduction=max_of),
        Repeat("b -> b r", r=3),
        Softmax("b [c]"),
        LogSoftmax("b [c] -> [c] b"),
        Check("b c", c=3),
        EinMix("b n d -> b n e", weight_shape="d e", bias_shape="e", d=4, e=3, name="mix"),
        EinMix("b d -> b d", weight_shape="d", d=3),
    ],
)
def test_config_round_trip(layer):
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert repr(clone) == repr(layer)
    assert clone.get_config() == config
    assert keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))


def test_reprs_reproduce_the_call():
    assert repr(Reduce("b c (h 2) -> b c h", "max")) == "Reduce('b c (h 2) -> b c h', 'max')"
    assert repr(Reduce("b c -> b", max_of, name="x")) == "Reduce('b c -> b', max_of)"
    text = "EinMix('b n d -> b n e', weight_shape='d e', bias_shape='e', d=4, e=3)"
    assert repr(eval(text, {"EinMix": EinMix})) == text


# --- EinMix's parameters -----------------------------------------------------------------------


def test_einmix_parameters_follow_fan_in_and_keras_seeds():
    keras.utils.set_random_seed(7)
    mix = EinMix("b h c -> b h e", weight_shape="h c e", bias_shape="h e", h=4, c=256, e=64)
    assert tuple(mix.weight.shape) == (4, 256, 64)
    assert tuple(mix.bias.shape) == (1, 4, 64)
    assert mix.fan_in == 256  # h is kept in the output, so fan_in is c alone
    # einops' bounds: sqrt(3 / fan_in) for the weight, 1 / sqrt(fan_in) for the bias
    for parameter, bound in ((mix.weight, math.sqrt(3 / 256)), (mix.bias, 1 / math.sqrt(256))):
        values = numpy_of(parameter.value)
        assert np.abs(values).max() <= bound
        assert np.abs(values).max() > 0.9 * bound
        assert abs(values.mean()) < 0.1 * bound
    keras.utils.set_random_seed(7)
    again = EinMix("b h c -> b h e", weight_shape="h c e", bias_shape="h e", h=4, c=256, e=64)
    np.testing.assert_array_equal(numpy_of(again.weight.value), numpy_of(mix.weight.value))
    np.testing.assert_array_equal(numpy_of(again.bias.value), numpy_of(mix.bias.value))
    keras.utils.set_random_seed(8)
    other = EinMix("b h c -> b h e", weight_shape="h c e", h=4, c=256, e=64)
    assert not np.array_equal(numpy_of(other.weight.value), numpy_of(mix.weight.value))
    assert other.bias is None
    assert len(other.trainable_variables) == 1


@pytest.mark.skipif(BACKEND != "tensorflow", reason="einops' Keras layers are TensorFlow's")
def test_einmix_has_einops_shapes_and_outputs():
    """Checkpoints of einops' Keras EinMix load; its random initializer is TensorFlow's own,
    so the initial values are compared through their bounds (above), not under one seed."""
    einops_keras = pytest.importorskip("einops.layers.keras")
    cases = [
        ("b n d -> b n e", "d e", "e", {"d": 4, "e": 3}, (2, 5, 4)),
        ("b (h w) c -> b h w c2", "c c2", "c2", {"h": 2, "c": 3, "c2": 5}, (2, 4, 3)),
        ("t b (g c) -> t b (g e)", "g c e", "g e", {"g": 2, "c": 3, "e": 4}, (2, 5, 6)),
    ]
    for pattern, weight_shape, bias_shape, lengths, shape in cases:
        x = rng("keras einops", pattern).standard_normal(shape).astype(np.float32)
        theirs = einops_keras.EinMix(pattern, weight_shape, bias_shape, **lengths)
        theirs(x)  # einops builds its parameters on the first call
        ours = EinMix(pattern, weight_shape=weight_shape, bias_shape=bias_shape, **lengths)
        ours.set_weights(theirs.get_weights())
        np.testing.assert_allclose(numpy_of(ours(x)), numpy_of(theirs(x)), rtol=1e-6, atol=1e-6)


# --- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Rearrange("b c -> b d"), "Rearrange: axis 'c' is missing on the right"),
        (lambda: Rearrange("b (c -> c"), "Rearrange: unclosed parenthesis"),
        (lambda: Rearrange("b (h w) -> b h w", h=2, q=3), "'q' is not in the pattern"),
        (lambda: Reduce("b c -> b", "median"), "Reduce: unknown reduction 'median'"),
        (lambda: Repeat("b -> b c"), "Repeat: the length of new axis 'c' is not given"),
        (lambda: EinMix("b c -> b d", weight_shape="c d", c=3), "weight axis 'd' is not given"),
        (lambda: EinMix("b c -> b d", weight_shape="c", c=3), "output axis 'd' is neither"),
        (lambda: EinMix("b c -> b d", "(c d)", c=3, d=2), "must be axis names"),
        (lambda: EinMix("b c -> b d", "c d", "x", c=3, d=2), "bias axis 'x' is not in the output"),
        (lambda: EinMix("b c -> b d", "c d", c=3, d=2, q=1), "q=1 is not used"),
        (lambda: EinMix("b c", "c d", c=3, d=2), "one 'left -> right'"),
        (lambda: Softmax("b h i j"), "Softmax: the axes to normalize must be in brackets"),
        (lambda: Check("b c -> c"), "Check: check patterns have no '->'"),
        (lambda: Rearrange(), "Rearrange: missing the argument 'pattern'"),
    ],
)
def test_bad_layers_fail_when_built(build, message):
    with pytest.raises(tops.TensorOpsError) as info:
        build()
    assert message in str(info.value)
    assert "  input:" not in str(info.value)  # the internal probe is not reported


def _without_inputs(error: BaseException) -> list[str]:
    """The message's lines but those describing the inputs (they name the backend)."""
    return [line for line in str(error).splitlines() if not line.startswith("  input")]


BAD_CALLS = [
    (Rearrange("b c h w -> b h w c"), lambda x: tops.rearrange(x, "b c h w -> b h w c")),
    (Rearrange("b (h k) -> b h k", k=4), lambda x: tops.rearrange(x, "b (h k) -> b h k", k=4)),
    (Reduce("b c h -> b c", "max"), lambda x: tops.reduce(x, "b c h -> b c", "max")),
    (Softmax("b h [j]"), lambda x: tops.softmax(x, "b h [j]")),
    (Check("b 5"), lambda x: tops.check(x, "b 5")),
]


@pytest.mark.parametrize(("layer", "function"), BAD_CALLS)
def test_bad_input_raises_the_functions_error(layer, function):
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(tops.TensorOpsError) as expected:
        function(x)
    with pytest.raises(type(expected.value)) as eager:
        layer(x)
    assert _without_inputs(eager.value) == _without_inputs(expected.value)
    with pytest.raises(type(expected.value)) as symbolic:  # Keras' shape inference
        layer(keras.Input((3,), batch_size=2))
    assert _without_inputs(symbolic.value) == _without_inputs(expected.value)
    with pytest.raises(type(expected.value)) as compiled:
        _compiled(layer)(keras.ops.convert_to_tensor(x))
    assert _without_inputs(compiled.value) == _without_inputs(expected.value)


def _compiled(layer):
    """`layer` under the backend's compiler (XLA for JAX and TensorFlow, Dynamo for torch)."""
    if BACKEND == "jax":
        import jax

        return jax.jit(layer)
    if BACKEND == "tensorflow":
        import tensorflow as tf

        return tf.function(layer, jit_compile=True)
    import torch

    return torch.compile(layer, backend="eager")
