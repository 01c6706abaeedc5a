"""The Equinox layers (`tensorops.layers.equinox`), in the equinox test process.

Run with ``TENSOROPS_TEST_FRAMEWORK=equinox`` (``tests/test_frameworks.py``). Oracles:
NumPy, the tensorops functions on NumPy arrays and ``eqx.nn.Linear`` for EinMix's training
step. einops has no Equinox layers: EinMix's initial parameters are checked against their
bounds.
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

pytest.importorskip("equinox")

import equinox as eqx
import jax
import jax.numpy as jnp
from tensorops.layers.equinox import (
    Check,
    EinMix,
    LogSoftmax,
    Rearrange,
    Reduce,
    Repeat,
    Softmax,
)

import tensorops as tops
from tests._seed import derived, rng, tolerance


def amax_of(x, axes):  # a module-level callable reduction
    return jnp.max(x, axis=axes)


def softmax_of(x, axes):
    return np.exp(x) / np.exp(x).sum(axes, keepdims=True)


def key(*name: object) -> jax.Array:
    return jax.random.key(derived("equinox", *name))


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
    x = rng("equinox layers").standard_normal((2, 3, 4, 6)).astype(np.float32)
    want = layer._description(x) if expected is None else expected(x)
    got = np.asarray(layer(jnp.asarray(x)))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **tolerance(np.float32, terms=x.size))
    assert jax.tree.leaves(layer) == []  # no leaves: the description is static
    jitted = jax.jit(lambda module, v: module(v))(layer, jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(jitted), got, **tolerance(np.float32, terms=x.size))


def patch_model(seed: object) -> eqx.nn.Sequential:
    return eqx.nn.Sequential(
        [
            Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2),
            EinMix("b n d -> b n e", weight_shape="d e", bias_shape="e", d=12, e=5, key=key(seed)),
            Softmax("b n [e]"),
            Repeat("b n e -> b n e r", r=2),
            Reduce("b n e r -> b e", "mean"),
        ]
    )


def test_sequential_and_jit_match_numpy():
    model = patch_model("sequential")
    x = rng("equinox sequential").standard_normal((3, 3, 8, 8)).astype(np.float32)
    mix = model.layers[1]
    weight, bias = np.asarray(mix.weight), np.asarray(mix.bias)
    patches = tops.rearrange(x, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2)
    expected = softmax_of(patches @ weight + bias, -1).mean(1)
    for run in (lambda m, v: m(v), eqx.filter_jit(lambda m, v: m(v))):
        got = np.asarray(run(model, jnp.asarray(x)))
        np.testing.assert_allclose(got, expected, **tolerance(np.float32, terms=12))


def test_einmix_matches_the_einsum():
    mix = EinMix("b n (h c) -> b n (h e)", "h c e", "h e", h=2, c=3, e=4, key=key("einsum"))
    x = rng("equinox einsum").standard_normal((5, 7, 6)).astype(np.float32)
    weight, bias = np.asarray(mix.weight), np.asarray(mix.bias)
    expected = np.einsum("bnhc,hce->bnhe", x.reshape(5, 7, 2, 3), weight) + bias
    got = np.asarray(mix(jnp.asarray(x)))
    np.testing.assert_allclose(got, expected.reshape(5, 7, 8), **tolerance(np.float32, terms=3))
    assert [leaf.shape for leaf in jax.tree.leaves(mix)] == [(2, 3, 4), (1, 1, 2, 4)]
    no_bias = EinMix("b c -> b d", "c d", c=3, d=2, key=key("no bias"))
    assert no_bias.bias is None
    assert [leaf.shape for leaf in jax.tree.leaves(no_bias)] == [(3, 2)]


def test_einmix_steps_as_linear():
    """One step of gradient descent changes EinMix's weights as eqx.nn.Linear's."""
    mix = EinMix("b d -> b e", weight_shape="d e", bias_shape="e", d=6, e=5, key=key("step"))
    linear = eqx.nn.Linear(6, 5, key=key("linear"))  # weight (out, in): ours transposed
    linear = eqx.tree_at(lambda m: (m.weight, m.bias), linear, (mix.weight.T, mix.bias[0]))
    generator = rng("equinox step")
    x = jnp.asarray(generator.standard_normal((12, 6)), jnp.float32)
    target = jnp.asarray(generator.standard_normal((12, 5)), jnp.float32)

    def step(module, call):
        grads = eqx.filter_grad(lambda m: jnp.mean((call(m, x) - target) ** 2))(module)
        return jax.tree.map(lambda p, g: p - 0.1 * g, module, grads)

    ours = step(mix, lambda m, v: m(v))
    theirs = step(linear, lambda m, v: jax.vmap(m)(v))
    close = tolerance(np.float32, terms=12)
    np.testing.assert_allclose(ours.weight, theirs.weight.T, **close)
    np.testing.assert_allclose(ours.bias[0], theirs.bias, **close)
    assert not np.allclose(ours.weight, mix.weight)
    assert repr(ours) == repr(mix)


def test_serialise_and_deserialise_leaves(tmp_path):
    model = patch_model("save")
    x = jnp.asarray(rng("equinox save").standard_normal((2, 3, 4, 4)), jnp.float32)
    path = tmp_path / "model.eqx"
    eqx.tree_serialise_leaves(path, model)
    fresh = patch_model("other")
    assert not np.allclose(fresh(x), model(x))
    loaded = eqx.tree_deserialise_leaves(path, fresh)
    np.testing.assert_array_equal(loaded(x), model(x))
    assert repr(loaded.layers[1]) == repr(model.layers[1])


def test_einmix_bounds_follow_fan_in():
    """einops has no Equinox layers: the draws are checked against einops' bounds."""
    mix = EinMix("b h c -> b h e", "h c e", "h e", h=4, c=256, e=64, key=key("bounds"))
    assert mix.fan_in == 256  # h is kept in the output
    for values, bound in ((mix.weight, math.sqrt(3 / 256)), (mix.bias, 1 / 16)):
        values = np.asarray(values)
        assert values.min() >= -bound
        assert values.max() <= bound
        assert values.min() < -0.9 * bound
        assert values.max() > 0.9 * bound
        assert abs(values.mean()) < 4 * bound / math.sqrt(3 * values.size)


KEY = jax.random.key(0)

BAD = [
    (lambda: Rearrange("b c -> b d"), "Rearrange: axis 'c' is missing on the right"),
    (lambda: Rearrange("b (c -> c"), "Rearrange: unclosed parenthesis"),
    (lambda: Rearrange("b (h w) -> b h w", h=2, q=3), "'q' is not in the pattern"),
    (lambda: Reduce("b c -> b", "median"), "Reduce: unknown reduction 'median'"),
    (lambda: Repeat("b -> b c"), "Repeat: the length of new axis 'c' is not given"),
    (lambda: EinMix("b c -> b d", "c d", c=3, key=KEY), "weight axis 'd' is not given"),
    (lambda: EinMix("b c -> b d", "c", c=3, key=KEY), "output axis 'd' is neither"),
    (lambda: EinMix("b c -> b d", "(c d)", c=3, d=2, key=KEY), "must be axis names"),
    (lambda: EinMix("b c -> b d", "c d", "x", c=3, d=2, key=KEY), "bias axis 'x' is not"),
    (lambda: EinMix("b c -> b d", "c d", c=3, d=2, q=1, key=KEY), "q=1 is not used"),
    (lambda: EinMix("b ... c -> b d", "c d", c=3, d=2, key=KEY), "'...' must appear on both"),
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
        eqx.filter_jit(lambda m, v: m(v))(Reduce("b c h -> b", "sum"), x)


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
    namespace = {**vars(importlib.import_module("tensorops.layers.equinox")), "amax_of": amax_of}
    layer = eval(text, namespace)
    assert repr(layer) == text
    assert eval(text, namespace) == layer
    mix = EinMix("b n d -> b n e", weight_shape="d e", d=4, e=3, key=key("repr"))
    assert repr(mix) == "EinMix('b n d -> b n e', weight_shape='d e', d=4, e=3)"


def test_einmix_without_a_key_names_the_argument():
    with pytest.raises(tops.ArgumentError) as info:
        EinMix("b c -> b d", "c d", c=3, d=2)
    assert isinstance(info.value, TypeError)
    assert str(info.value).startswith("EinMix: missing the argument 'key'\n")
