"""A JAX / Flax model: jax.numpy's einsum under three spellings, Flax layers of both libraries."""

import flax.linen as nn
import jax
import jax.numpy as jnp
from einops.layers.flax import Rearrange as Flatten
from jax import numpy as jn
from tensorops.layers.flax import Reduce


def attention(q: jax.Array, k: jax.Array, v: jax.Array) -> jax.Array:
    logits = jnp.einsum("...qhd,...khd->...hqk", q, k) / jnp.sqrt(q.shape[-1])
    weights = jax.nn.softmax(logits, axis=-1)
    return jn.einsum("...hqk,...khd->...qhd", weights, v)


def bilinear(x: jax.Array, w: jax.Array, y: jax.Array) -> jax.Array:
    return jax.numpy.einsum("bi,ioj,bj->bo", x, w, y)


class MLP(nn.Module):
    features: int = 16

    @nn.compact
    def __call__(self, images: jax.Array) -> jax.Array:
        x = Flatten("b h w c -> b (h w c)")(images)
        x = nn.relu(nn.Dense(self.features)(x))
        tokens = jnp.einsum("bf,ft->bt", x, jnp.ones((self.features, 4)))
        return Reduce("b (t s) -> b t", "mean", sizes={"s": 2})(tokens)
