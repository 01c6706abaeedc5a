"""The Flax nnx layers (`tensorops.layers.nnx`), in the flax test process.

Run with ``TENSOROPS_TEST_FRAMEWORK=flax`` (``tests/test_frameworks.py``). Oracles: NumPy,
the tensorops functions on NumPy arrays and ``nnx.Linear`` for EinMix's training step.
einops has no nnx layers: EinMix's initial parameters are checked against their bounds.
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

pytest.importorskip("flax")

import jax
import jax.numpy as jnp
from flax import nnx
from tensorops.layers.nnx import Check, EinMix, LogSoftmax, Rearrange, Reduce, Repeat, Softmax

import tensorops as tops
from tests._seed import derived, rng, tolerance


def amax_of(x, axes):  # a module-level callable reduction
    return jnp.max(x, axis=axes)


def softmax_of(x, axes):
    return np.exp(x) / np.exp(x).sum(axes, keepdims=True)


def rngs(*key: object) -> nnx.Rngs:
    return nnx.Rngs(derived("nnx", *key))


CASES = [
    (Rearrange("b c h w -> b h w c"), lambda x: x.transpose(0, 2, 3, 1)),
    (Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2), None),
    (Rearrange("b ... c -> b c ..."), lambda x: np.moveaxis(x, -1, 1)),
    (
        Reduce("b c (h 2) (w 2) -> b c h w", "max"),
        lambda x: x.reshape(2, 3, 2, 2, 3, 2).max((3, 5)),
    ),
    (Reduce(pattern="b c h w -> b c", reduction="mean"), lambda x: x.mean((2, 3))),
    (Reduce("b ... -> b", "logsumexp"), lambda x: np.log(np.exp(x).sum((1, 2, 3)))),
    (Reduce("b c h w -> b w", amax_of), lambda x: x.max((1, 2))),
    (Repeat("b c h w -> b c h w r", r=2), lambda x: np.repeat(x[..., None], 2, -1)),
    (Softmax("b c h [w]"), lambda x: softmax_of(x, -1)),
    (Softmax("b c [h w]"), lambda x: softmax_of(x, (2, 3))),
    (LogSoftmax("b [c] h w"), lambda x: np.log(softmax_of(x, 1))),
    (Check("b c (h 2) w", c=3), lambda x: x),
]


@pytest.mark.parametrize(("layer", "expected"), CASES, ids=[repr(c[0]) for c in CASES])
def test_layers_match_numpy(layer, expected):
    x = rng("nnx layers").standard_normal((2, 3, 4, 6)).astype(np.float32)
    want = layer._description(x) if expected is None else expected(x)
    got = np.asarray(layer(jnp.asarray(x)))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **tolerance(np.float32, terms=x.size))
    jitted = nnx.jit(lambda module, v: module(v))(layer, jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(jitted), got, **tolerance(np.float32, terms=x.size))


def patch_model(seed: object) -> nnx.Sequential:
    return nnx.Sequential(
        Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2),
        EinMix("b n d -> b n e", weight_shape="d e", bias_shape="e", d=12, e=5, rngs=rngs(seed)),
        Softmax("b n [e]"),
        Repeat("b n e -> b n e r", r=2),
        Reduce("b n e r -> b e", "mean"),
    )


def test_sequential_and_jit_match_numpy():
    model = patch_model("sequential")
    x = rng("nnx sequential").standard_normal((3, 3, 8, 8)).astype(np.float32)
    mix = model.layers[1]
    weight, bias = np.asarray(mix.weight[...]), np.asarray(mix.bias[...])
    patches = tops.rearrange(x, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2)
    expected = softmax_of(patches @ weight + bias, -1).mean(1)
    for run in (lambda m, v: m(v), nnx.jit(lambda m, v: m(v))):
        got = np.asarray(run(model, jnp.asarray(x)))
        np.testing.assert_allclose(got, expected, **tolerance(np.float32, terms=12))


def test_only_the_parameters_are_state():
    mix = EinMix("b (h w) c -> b h w e", "c e", "e", h=2, c=3, e=4, rngs=rngs("state"))
    state = nnx.state(mix)
    assert set(state.keys()) == {"weight", "bias"}
    assert state["weight"].shape == (3, 4)
    assert state["bias"].shape == (1, 1, 1, 4)
    assert nnx.state(EinMix("b c -> b d", "c d", c=3, d=2, rngs=rngs("no bias"))).keys() == {
        "weight"
    }
    assert jax.tree.leaves(nnx.state(Reduce("a b -> a", "max"))) == []


def test_einmix_matches_the_einsum():
    mix = EinMix("b n (h c) -> b n (h e)", "h c e", "h e", h=2, c=3, e=4, rngs=rngs("einsum"))
    x = rng("nnx einsum").standard_normal((5, 7, 6)).astype(np.float32)
    weight, bias = np.asarray(mix.weight[...]), np.asarray(mix.bias[...])
    expected = np.einsum("bnhc,hce->bnhe", x.reshape(5, 7, 2, 3), weight) + bias
    got = np.asarray(mix(jnp.asarray(x)))
    np.testing.assert_allclose(got, expected.reshape(5, 7, 8), **tolerance(np.float32, terms=3))
    scale = EinMix("b ... c -> b ... c", "c", c=3, rngs=rngs("scale"))
    y = rng("nnx scale").standard_normal((2, 4, 3)).astype(np.float32)
    np.testing.assert_allclose(scale(jnp.asarray(y)), y * np.asarray(scale.weight[...]))


def test_einmix_steps_as_linear():
    """One step of gradient descent changes EinMix's weights as nnx.Linear's."""
    mix = EinMix("b n d -> b n e", weight_shape="d e", bias_shape="e", d=6, e=5, rngs=rngs("step"))
    linear = nnx.Linear(6, 5, rngs=rngs("linear"))
    linear.kernel[...] = mix.weight[...]
    linear.bias[...] = mix.bias[...].reshape(5)
    generator = rng("nnx step")
    x = jnp.asarray(generator.standard_normal((4, 3, 6)), jnp.float32)
    target = jnp.asarray(generator.standard_normal((4, 3, 5)), jnp.float32)

    def step(module):
        grads = nnx.grad(lambda m: jnp.mean((m(x) - target) ** 2))(module)
        nnx.update(
            module, jax.tree.map(lambda p, g: p - 0.1 * g, nnx.state(module, nnx.Param), grads)
        )

    before = np.asarray(mix.weight[...])
    step(mix)
    step(linear)
    close = tolerance(np.float32, terms=12)
    np.testing.assert_allclose(mix.weight[...], linear.kernel[...], **close)
    np.testing.assert_allclose(mix.bias[...].reshape(5), linear.bias[...], **close)
    assert not np.allclose(mix.weight[...], before)


def test_split_merge_and_state_round_trip():
    model = patch_model("save")
    x = jnp.asarray(rng("nnx save").standard_normal((2, 3, 4, 4)), jnp.float32)
    graph, state = nnx.split(model)
    merged = nnx.merge(graph, state)
    np.testing.assert_array_equal(merged(x), model(x))
    assert repr(merged.layers[1]) == repr(model.layers[1])
    saved = jax.tree.map(np.asarray, nnx.state(model))  # as a checkpoint restores it: NumPy
    fresh = patch_model("other")
    assert not np.allclose(fresh(x), model(x))
    nnx.update(fresh, saved)
    np.testing.assert_array_equal(fresh(x), model(x))


def test_einmix_bounds_follow_fan_in():
    """einops has no nnx layers: the draws are checked against einops' bounds."""
    mix = EinMix("b h c -> b h e", "h c e", "h e", h=4, c=256, e=64, rngs=rngs("bounds"))
    assert mix.fan_in == 256  # h is kept in the output
    for values, bound in ((mix.weight[...], math.sqrt(3 / 256)), (mix.bias[...], 1 / 16)):
        values = np.asarray(values)
        assert values.min() >= -bound
        assert values.max() <= bound
        assert values.min() < -0.9 * bound
        assert values.max() > 0.9 * bound
        assert abs(values.mean()) < 4 * bound / math.sqrt(3 * values.size)
    # the weight and the bias come from keys of their own
    again = EinMix("b h c -> b h e", "h c e", "h e", h=4, c=256, e=64, rngs=rngs("bounds"))
    np.testing.assert_array_equal(again.weight[...], mix.weight[...])


RNGS = nnx.Rngs(0)

BAD = [
    (lambda: Rearrange("b c -> b d"), "Rearrange: axis 'c' is missing on the right"),
    (lambda: Rearrange("b (c -> c"), "Rearrange: unclosed parenthesis"),
    (lambda: Rearrange("b (h w) -> b h w", h=2, q=3), "'q' is not in the pattern"),
    (lambda: Reduce("b c -> b", "median"), "Reduce: unknown reduction 'median'"),
    (lambda: Repeat("b -> b c"), "Repeat: the length of new axis 'c' is not given"),
    (lambda: EinMix("b c -> b d", "c d", c=3, rngs=RNGS), "weight axis 'd' is not given"),
    (lambda: EinMix("b c -> b d", "c", c=3, rngs=RNGS), "output axis 'd' is neither"),
    (lambda: EinMix("b c -> b d", "(c d)", c=3, d=2, rngs=RNGS), "must be axis names"),
    (lambda: EinMix("b c -> b d", "c d", "x", c=3, d=2, rngs=RNGS), "bias axis 'x' is not"),
    (lambda: EinMix("b c -> b d", "c d", c=3, d=2, q=1, rngs=RNGS), "q=1 is not used"),
    (lambda: EinMix("b ... c -> b d", "c d", c=3, d=2, rngs=RNGS), "'...' must appear on both"),
    (lambda: Softmax("b h i j"), "Softmax: the axes to normalize must be in brackets"),
    (lambda: Check("b c -> c"), "Check: check patterns have no '->'"),
    (lambda: Rearrange(), "Rearrange: missing the argument 'pattern'"),
]


@pytest.mark.parametrize(("build", "message"), BAD, ids=[m for _, m in BAD])
def test_bad_layers_fail_when_built(build, message):
    with pytest.raises(tops.TensorOpsError) as info:
        build()
    assert message in str(info.value)
    assert "  input:" not in str(info.value)  # the internal probe is not reported


def test_bad_input_raises_the_functions_error():
    x = jnp.zeros((2, 3))
    with pytest.raises(tops.TensorOpsError) as ours:
        Rearrange("b c h -> b h c")(x)
    with pytest.raises(tops.TensorOpsError) as function:
        tops.rearrange(x, "b c h -> b h c")
    assert str(ours.value) == str(function.value)
    with pytest.raises(tops.TensorOpsError):
        nnx.jit(lambda m, v: m(v))(Reduce("b c h -> b", "sum"), x)


REPRS = [
    "Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=4, p2=4)",
    "Reduce('b c h w -> b c', 'mean')",
    "Reduce('b c -> b', amax_of)",
    "Repeat('b c -> b c r', r=3)",
    "Softmax('b h i [j]')",
    "LogSoftmax('b [c]')",
    "Check('b c', c=3)",
]


@pytest.mark.parametrize("text", REPRS)
def test_repr_reproduces_the_call(text):
    namespace = {**vars(importlib.import_module("tensorops.layers.nnx")), "amax_of": amax_of}
    assert repr(eval(text, namespace)) == text
    mix = EinMix("b n d -> b n e", weight_shape="d e", d=4, e=3, rngs=rngs("repr"))
    assert repr(mix) == "EinMix('b n d -> b n e', weight_shape='d e', d=4, e=3)"


def test_einmix_without_rngs_names_the_argument():
    with pytest.raises(tops.ArgumentError) as info:
        EinMix("b c -> b d", "c d", c=3, d=2)
    assert isinstance(info.value, TypeError)
    assert str(info.value).startswith("EinMix: missing the argument 'rngs'\n")
