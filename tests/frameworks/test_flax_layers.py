"""The Flax linen layers (`tensorops.layers.flax`), in the flax test process.

Run with ``TENSOROPS_TEST_FRAMEWORK=flax`` (``tests/test_frameworks.py``). Oracles: NumPy,
the tensorops functions on NumPy arrays, ``nn.Dense`` for EinMix's training step and
einops' Flax EinMix for its initial parameters.
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

pytest.importorskip("flax")

import flax
import jax
import jax.numpy as jnp
from flax import linen as nn
from tensorops.layers.flax import (
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
    (Reduce("b c h w -> b c", "mean", {"h": 4}), lambda x: x.mean((2, 3))),  # einops' sizes
    (Repeat("b c h w -> b c h w r", r=2), lambda x: np.repeat(x[..., None], 2, -1)),
    (Softmax("b c h [w]"), lambda x: softmax_of(x, -1)),
    (Softmax("b c [h w]"), lambda x: softmax_of(x, (2, 3))),
    (LogSoftmax("b [c] h w"), lambda x: np.log(softmax_of(x, 1))),
    (Check("b c (h 2) w", c=3), lambda x: x),
]


@pytest.mark.parametrize(("layer", "expected"), CASES, ids=[repr(c[0]) for c in CASES])
def test_layers_match_numpy(layer, expected):
    x = rng("flax layers").standard_normal((2, 3, 4, 6)).astype(np.float32)
    # the function on NumPy is the oracle where NumPy has no one-liner
    want = layer._description(x) if expected is None else expected(x)
    got = np.asarray(layer.apply({}, jnp.asarray(x)))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **tolerance(np.float32, terms=x.size))
    jitted = jax.jit(layer.apply)({}, jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(jitted), got, **tolerance(np.float32, terms=x.size))


def test_keyword_lengths_and_einops_sizes_build_the_same_layer():
    assert Rearrange("b (h w) -> b h w", h=2) == Rearrange("b (h w) -> b h w", sizes={"h": 2})
    assert Rearrange("b (h w) -> b h w", {"h": 2}) == Rearrange(pattern="b (h w) -> b h w", h=2)
    # a keyword pattern= after a positional pattern is the length of an axis named 'pattern'
    layer = Rearrange("b (pattern c) -> b c pattern", pattern=3)
    assert layer.apply({}, jnp.zeros((2, 6))).shape == (2, 2, 3)
    assert repr(Reduce("b hw -> b", "mean", {"hw": 6})) == "Reduce('b hw -> b', 'mean', hw=6)"
    with pytest.raises(TypeError, match="multiple values for argument 'sizes'"):
        Rearrange("b c -> c b", {}, sizes={})


def patch_model():
    return nn.Sequential(
        [
            Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2),
            EinMix("b n d -> b n e", weight_shape="d e", bias_shape="e", d=12, e=5),
            Softmax("b n [e]"),
            Repeat("b n e -> b n e r", r=2),
            Reduce("b n e r -> b e", "mean"),
        ]
    )


def test_sequential_and_jit_match_numpy():
    model = patch_model()
    x = rng("flax sequential").standard_normal((3, 3, 8, 8)).astype(np.float32)
    params = model.init(jax.random.key(derived("flax sequential")), jnp.asarray(x))
    mix = params["params"]["layers_1"]
    weight, bias = np.asarray(mix["weight"]), np.asarray(mix["bias"])
    patches = tops.rearrange(x, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2)
    expected = softmax_of(patches @ weight + bias, -1).mean(1)
    for run in (model.apply, jax.jit(model.apply)):
        got = np.asarray(run(params, jnp.asarray(x)))
        np.testing.assert_allclose(got, expected, **tolerance(np.float32, terms=12))


def test_layers_are_hashable_and_lift_with_nn_jit():
    class Model(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.jit(EinMix)("b (h w) c -> b h w e", "c e", "e", h=2, c=3, e=4)(x)
            return nn.jit(Reduce)("b h w e -> b e", "max")(x)

    x = jnp.asarray(rng("flax nn.jit").standard_normal((2, 6, 3)), jnp.float32)
    params = Model().init(jax.random.key(0), x)
    mix = params["params"]["JitEinMix_0"]
    expected = (x.reshape(2, 2, 3, 3) @ mix["weight"] + mix["bias"]).max((1, 2))
    np.testing.assert_allclose(Model().apply(params, x), expected, **tolerance(np.float32, 3))
    assert hash(Reduce("a b -> a", "max")) == hash(Reduce("a b -> a", "max"))


@pytest.mark.parametrize(
    ("pattern", "weight_shape", "bias_shape", "lengths", "shape", "equation"),
    [
        ("b n d -> b n e", "d e", "e", {"d": 6, "e": 5}, (4, 3, 6), "bnd,de->bne"),
        ("b (h w) c -> b h w e", "c e", None, {"h": 2, "c": 3, "e": 4}, (2, 6, 3), None),
        ("b n (h c) -> b n (h e)", "h c e", "h e", {"h": 2, "c": 3, "e": 4}, (5, 7, 6), None),
        ("b ... c -> b ... d", "c d", "d", {"c": 3, "d": 2}, (2, 4, 5, 3), "b...c,cd->b...d"),
    ],
)
def test_einmix_matches_the_einsum(pattern, weight_shape, bias_shape, lengths, shape, equation):
    mix = EinMix(pattern, weight_shape, bias_shape, **lengths)
    x = rng("flax einmix", pattern).standard_normal(shape).astype(np.float32)
    params = mix.init(jax.random.key(derived("flax einmix", pattern)), jnp.asarray(x))
    weight = np.asarray(params["params"]["weight"])
    bias = params["params"].get("bias")
    if equation is None:  # composed axes: the spaced einsum of tensorops on NumPy
        left, right = pattern.split("->")
        expected = tops.einsum(f"{left}, {weight_shape} -> {right}", x, weight, **lengths)
        assert bias is None or bias_shape == "h e"
        if bias is not None:
            expected = expected + tops.rearrange(np.asarray(bias), "1 1 h e -> 1 1 (h e)")
    else:
        expected = np.einsum(equation, x, weight) + (0 if bias is None else np.asarray(bias))
    got = np.asarray(mix.apply(params, jnp.asarray(x)))
    np.testing.assert_allclose(got, expected, **tolerance(np.float32, terms=math.prod(shape)))


def test_einmix_steps_as_dense():
    """One step of gradient descent changes EinMix's weights as nn.Dense's."""
    mix = EinMix("b n d -> b n e", weight_shape="d e", bias_shape="e", d=6, e=5)
    generator = rng("flax step")
    x = jnp.asarray(generator.standard_normal((4, 3, 6)), jnp.float32)
    target = jnp.asarray(generator.standard_normal((4, 3, 5)), jnp.float32)
    params = mix.init(jax.random.key(derived("flax step")), x)
    dense = nn.Dense(5)
    dense_params = {
        "params": {
            "kernel": params["params"]["weight"],
            "bias": params["params"]["bias"].reshape(5),
        }
    }

    def step(module, variables):
        loss = lambda v: jnp.mean((module.apply(v, x) - target) ** 2)  # noqa: E731
        return jax.tree.map(lambda p, g: p - 0.1 * g, variables, jax.grad(loss)(variables))

    ours, theirs = step(mix, params)["params"], step(dense, dense_params)["params"]
    close = tolerance(np.float32, terms=12)
    np.testing.assert_allclose(ours["weight"], theirs["kernel"], **close)
    np.testing.assert_allclose(ours["bias"].reshape(5), theirs["bias"], **close)
    assert not np.allclose(ours["weight"], params["params"]["weight"])


def test_params_serialize_and_load():
    model = patch_model()
    x = jnp.asarray(rng("flax save").standard_normal((2, 3, 4, 4)), jnp.float32)
    params = model.init(jax.random.key(1), x)
    saved = flax.serialization.to_bytes(params)
    fresh = model.init(jax.random.key(2), x)
    assert not np.allclose(model.apply(fresh, x), model.apply(params, x))
    loaded = flax.serialization.from_bytes(fresh, saved)
    np.testing.assert_array_equal(model.apply(loaded, x), model.apply(params, x))


@pytest.mark.parametrize(
    ("pattern", "weight_shape", "bias_shape", "lengths", "shape"),
    [
        ("b t c -> b t d", "c d", "d", {"c": 32, "d": 48}, (2, 3, 32)),
        ("b h c -> b h e", "h c e", "h e", {"h": 4, "c": 16, "e": 8}, (2, 4, 16)),
        ("b (h w) c -> b h w e", "c e", None, {"h": 2, "w": 3, "c": 5, "e": 7}, (2, 6, 5)),
        ("b n c -> b c n2", "n n2", "n2", {"n": 6, "n2": 9}, (2, 6, 4)),
    ],
)
def test_einmix_draws_from_einops_stream(pattern, weight_shape, bias_shape, lengths, shape):
    """einops' Flax EinMix draws u * bound, u in [0, 1); this one 2 * u * bound - bound.

    The same key gives the same u: the parameters are einops' mapped onto the
    symmetric interval, with einops' names and shapes (its checkpoints load).
    """
    einops_flax = pytest.importorskip("einops.layers.flax")
    x = jnp.zeros(shape)
    key = jax.random.key(derived("flax einops init", pattern))
    theirs = einops_flax.EinMix(pattern, weight_shape, bias_shape, sizes=lengths).init(key, x)
    ours_layer = EinMix(pattern, weight_shape, bias_shape, **lengths)
    ours = ours_layer.init(key, x)
    assert jax.tree.map(jnp.shape, ours) == jax.tree.map(jnp.shape, theirs)
    plan = ours_layer._description
    for name, bound in (("weight", plan.weight_bound), ("bias", plan.bias_bound)):
        if name not in theirs["params"]:
            continue
        bound32 = np.float32(bound)
        expected = np.float32(2) * np.asarray(theirs["params"][name]) - bound32
        # one rounding each side: XLA may fuse u * 2b - b into one multiply-add
        close = {"rtol": 0, "atol": 2 * float(np.finfo(np.float32).eps) * bound}
        np.testing.assert_allclose(np.asarray(ours["params"][name]), expected, **close)
    # einops' parameters load and compute what einops computes
    data = jnp.asarray(rng("flax einops", pattern).standard_normal(shape), jnp.float32)
    ours_out = ours_layer.apply(theirs, data)
    theirs_out = einops_flax.EinMix(pattern, weight_shape, bias_shape, sizes=lengths).apply(
        theirs, data
    )
    np.testing.assert_allclose(ours_out, theirs_out, **tolerance(np.float32, terms=64))


def test_einmix_bounds_follow_fan_in():
    mix = EinMix("b h c -> b h e", weight_shape="h c e", bias_shape="h e", h=4, c=256, e=64)
    params = mix.init(jax.random.key(derived("flax bounds")), jnp.zeros((1, 4, 256)))["params"]
    assert mix._description.fan_in == 256  # h is kept in the output
    for name, bound in (("weight", math.sqrt(3 / 256)), ("bias", 1 / math.sqrt(256))):
        values = np.asarray(params[name])
        assert values.min() >= -bound
        assert values.max() <= bound
        # uniform on (-bound, bound): the extremes come near both ends, the mean near 0
        assert values.min() < -0.9 * bound
        assert values.max() > 0.9 * bound
        assert abs(values.mean()) < 4 * bound / math.sqrt(3 * values.size)


BAD = [
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
    (lambda: EinMix("b ... c -> b d", "c d", c=3, d=2), "'...' must appear on both sides"),
    (lambda: Softmax("b h i j"), "Softmax: the axes to normalize must be in brackets"),
    (lambda: Check("b c -> c"), "Check: check patterns have no '->'"),
    (lambda: Rearrange(), "Rearrange: missing the argument 'pattern'"),
    (lambda: EinMix(pattern="b w -> b d", d=2), "EinMix: missing the argument 'weight_shape'"),
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
        Rearrange("b c h -> b h c").apply({}, x)
    with pytest.raises(tops.TensorOpsError) as function:
        tops.rearrange(x, "b c h -> b h c")
    assert str(ours.value) == str(function.value)
    with pytest.raises(tops.TensorOpsError):
        jax.jit(Reduce("b c h -> b", "sum").apply)({}, x)


REPRS = [
    "Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=4, p2=4)",
    "Reduce('b c h w -> b c', 'mean')",
    "Reduce('b c -> b', amax_of)",
    "Repeat('b c -> b c r', r=3)",
    "EinMix('b n d -> b n e', weight_shape='d e', bias_shape='e', d=4, e=3)",
    "Softmax('b h i [j]')",
    "LogSoftmax('b [c]')",
    "Check('b c', c=3)",
]


@pytest.mark.parametrize("text", REPRS)
def test_repr_reproduces_the_call(text):
    namespace = {**vars(importlib.import_module("tensorops.layers.flax")), "amax_of": amax_of}
    layer = eval(text, namespace)
    assert repr(layer) == text
    assert eval(text, namespace) == layer
