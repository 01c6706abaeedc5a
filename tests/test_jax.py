"""JAX through the array-API adapter: inside jax.jit and under jax.grad."""

from __future__ import annotations

import numpy as np
import pytest

import tensorops as tops

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


def test_ops_inside_jit_match_eager() -> None:
    def f(x: object, w: object) -> object:
        y = tops.rearrange(x, "b c (h k) w -> b h w (c k)", k=2)
        y = tops.reduce(y, "b h w c -> b h c", "max")
        y = tops.repeat(y, "b h c -> b h c r", r=2)
        return tops.einsum("b h c r, c d -> b h d r", y, w)

    x = jnp.arange(2 * 3 * 4 * 5, dtype=jnp.float32).reshape(2, 3, 4, 5)
    w = jnp.ones((6, 7), dtype=jnp.float32)
    eager = f(x, w)
    jitted = jax.jit(f)(x, w)
    assert isinstance(jitted, jax.Array)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(eager), rtol=1e-6)
    reference = np.einsum(
        "bhcr,cd->bhdr",
        np.repeat(
            np.asarray(x)
            .reshape(2, 3, 2, 2, 5)
            .transpose(0, 2, 4, 1, 3)
            .reshape(2, 2, 5, 6)
            .max(2)[..., None],
            2,
            axis=-1,
        ),
        np.ones((6, 7)),
    )
    np.testing.assert_allclose(np.asarray(eager), reference, rtol=1e-6)


def test_gradients_flow_through_jax_grad() -> None:
    def loss(x: object) -> object:
        y = tops.rearrange(x, "a (b c) -> b a c", c=2)
        z = tops.einsum("b a c, b a c ->", y, y)
        return z + tops.reduce(x, "a b ->", "sum")

    x = jnp.arange(12.0, dtype=jnp.float32).reshape(3, 4)
    grad = jax.grad(loss)(x)
    np.testing.assert_allclose(np.asarray(grad), 2 * np.asarray(x) + 1, rtol=1e-6)


def test_max_reduction_gradient_under_jit() -> None:
    def loss(x: object) -> object:
        return tops.reduce(tops.reduce(x, "(a 2) b -> a b", "max"), "a b ->", "sum")

    x = jnp.array([[1.0, 5.0], [3.0, 2.0]], dtype=jnp.float32)
    grad = jax.jit(jax.grad(loss))(x)
    np.testing.assert_array_equal(np.asarray(grad), [[0.0, 1.0], [1.0, 0.0]])
