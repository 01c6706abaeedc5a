"""What the JAX families (``flax``, ``nnx``, ``equinox``) share: EinMix's draws and its call."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from ._einmix import EinMixPlan

__all__ = ["mix", "uniform"]


def uniform(key: jax.Array, shape: tuple[int, ...], bound: float, dtype: Any = float) -> jax.Array:
    """Values drawn from `key`, uniform in ``(-bound, bound)``: an EinMix parameter."""
    return jax.random.uniform(key, shape, dtype, -bound, bound)


def mix(plan: EinMixPlan, x: Any, weight: Any, bias: Any | None) -> jax.Array:
    """EinMix's output, on JAX arrays.

    Parameters restored from a checkpoint and inputs may be NumPy arrays (the
    frameworks' own linear layers take them too): tensorops mixes arrays of one family.
    """
    bias = None if bias is None else jnp.asarray(bias)
    output: jax.Array = plan(jnp.asarray(x), jnp.asarray(weight), bias)
    return output
