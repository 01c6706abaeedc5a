"""Equinox layers: Rearrange, Reduce, Repeat, EinMix, Softmax, LogSoftmax and Check.

The constructors take what the torch layers take (``Rearrange("b (h w) c -> b h w c",
h=4)``, ``Reduce(pattern=..., reduction="max")``); EinMix also takes ``key``, as
``eqx.nn.Linear`` does. A layer checks its arguments when it is built, so a bad
pattern fails when the model is written, with a `tensorops.TensorOpsError`.

A layer's description is a static field (it holds no arrays), so the layers are
pytrees whose only leaves are EinMix's ``weight`` and ``bias`` (einops' shapes):
``eqx.filter_jit``, ``eqx.filter_grad`` and ``eqx.tree_serialise_leaves`` see those
and nothing else. They are drawn uniformly in ``±sqrt(3/fan_in)`` and
``±1/sqrt(fan_in)``, as einops draws them. Like Equinox's own layers, ``__call__``
takes an optional ``key``, which they do not use, so they work in ``eqx.nn.Sequential``.

Examples:
    >>> import jax, jax.numpy as jnp
    >>> import equinox as eqx
    >>> from tensorops.layers.equinox import EinMix, Rearrange, Reduce
    >>> model = eqx.nn.Sequential([
    ...     Rearrange("b (h p1) (w p2) c -> b (h w) (p1 p2 c)", p1=4, p2=4),
    ...     EinMix("b n d -> b n e", weight_shape="d e", bias_shape="e", d=48, e=64,
    ...            key=jax.random.key(0)),
    ...     Reduce("b n e -> b e", "mean"),
    ... ])
    >>> model(jnp.zeros((2, 32, 32, 3))).shape
    (2, 64)
"""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax

from . import _family, _jax

__all__ = ["Check", "EinMix", "LogSoftmax", "Rearrange", "Reduce", "Repeat", "Softmax"]


class _Layer(eqx.Module):
    """An Equinox module: calling it runs the layer's description (`tensorops.layers._family`)."""

    # The description (`Description`), a static field: it holds no arrays.
    _description: Any = eqx.field(static=True)

    def __init__(self) -> None:
        # Nothing to do: the mixin reads the call (else Equinox would make an __init__).
        pass

    def __call__(self, x: jax.Array, *, key: jax.Array | None = None) -> jax.Array:
        """The layer's op on `x` (`key` is not used)."""
        return self._description(x)  # type: ignore[no-any-return]


class Rearrange(_family.RearrangeLayer, _Layer):
    """`tensorops.rearrange` as an Equinox module.

    Examples:
        >>> import jax, jax.numpy as jnp
        >>> from tensorops.layers.equinox import Rearrange
        >>> layer = Rearrange("(h w) c -> h w c", h=2)  # one example: vmap maps the batch
        >>> jax.vmap(layer)(jnp.zeros((3, 8, 5))).shape
        (3, 2, 4, 5)
        >>> jax.tree.leaves(layer)  # no arrays: the description is static
        []
    """


class Reduce(_family.ReduceLayer, _Layer):
    """`tensorops.reduce` as an Equinox module.

    Examples:
        >>> import jax, jax.numpy as jnp
        >>> from tensorops.layers.equinox import Reduce
        >>> pool = Reduce("(h 2) (w 2) c -> h w c", "max")
        >>> pool
        Reduce('(h 2) (w 2) c -> h w c', 'max')
        >>> jax.vmap(pool)(jnp.arange(16.0).reshape(1, 4, 4, 1))[0, ..., 0]
        Array([[ 5.,  7.],
               [13., 15.]], dtype=float32)
    """


class Repeat(_family.RepeatLayer, _Layer):
    """`tensorops.repeat` as an Equinox module.

    Examples:
        >>> import equinox as eqx, jax.numpy as jnp
        >>> from tensorops.layers.equinox import Repeat
        >>> eqx.filter_jit(Repeat("c -> c r", r=3))(jnp.zeros(4)).shape
        (4, 3)
    """


class Softmax(_family.SoftmaxLayer, _Layer):
    """`tensorops.softmax` as an Equinox module: normalize along the bracketed axes.

    Examples:
        >>> import jax.numpy as jnp
        >>> from tensorops.layers.equinox import Softmax
        >>> Softmax("h i [j]")(jnp.zeros((2, 3, 4)))[0, 0]
        Array([0.25, 0.25, 0.25, 0.25], dtype=float32)
    """


class LogSoftmax(_family.LogSoftmaxLayer, _Layer):
    """`tensorops.log_softmax` as an Equinox module.

    Examples:
        >>> import jax, jax.numpy as jnp
        >>> from tensorops.layers.equinox import LogSoftmax
        >>> jnp.exp(jax.vmap(LogSoftmax("[c]"))(jnp.zeros((1, 4))))
        Array([[0.25, 0.25, 0.25, 0.25]], dtype=float32)
    """


class Check(_family.CheckLayer, _Layer):
    """`tensorops.check` as an Equinox module: returns its input, once its shape is checked.

    Examples:
        >>> import equinox as eqx, jax.numpy as jnp
        >>> from tensorops.layers.equinox import Check
        >>> model = eqx.nn.Sequential([Check("c", c=3), eqx.nn.Lambda(jnp.sum)])
        >>> model(jnp.ones(3))
        Array(3., dtype=float32)
    """


class EinMix(_family.EinMixLayer, _Layer):
    """A learned einsum, as an Equinox module.

    It also takes the keyword ``key``, a JAX key split in two, the weight's and the
    bias's, as ``eqx.nn.Linear`` splits its own.

    Examples:
        >>> import jax, jax.numpy as jnp
        >>> from tensorops.layers.equinox import EinMix
        >>> mix = EinMix("n (h c) -> n (h e)", weight_shape="h c e", h=4, c=16, e=8,
        ...              key=jax.random.key(0))
        >>> mix
        EinMix('n (h c) -> n (h e)', weight_shape='h c e', h=4, c=16, e=8)
        >>> [leaf.shape for leaf in jax.tree.leaves(mix)]  # the weight alone: no bias
        [(4, 16, 8)]
        >>> jax.vmap(mix)(jnp.zeros((2, 5, 64))).shape
        (2, 5, 32)
    """

    _draws_with = "key"

    weight: jax.Array
    bias: jax.Array | None

    def _new_parameter(
        self, name: str, shape: tuple[int, ...], bound: float, draws: jax.Array
    ) -> jax.Array:
        key = jax.random.split(draws)[0 if name == "weight" else 1]
        return _jax.uniform(key, shape, bound)

    def __call__(self, x: jax.Array, *, key: jax.Array | None = None) -> jax.Array:
        """Mix `x` with the weight (and add the bias); `key` is not used."""
        return _jax.mix(self._description, x, self.weight, self.bias)
