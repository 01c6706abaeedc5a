"""Flax nnx layers: Rearrange, Reduce, Repeat, EinMix, Softmax, LogSoftmax and Check.

The constructors take what the torch layers take (``Rearrange("b (h w) c -> b h w c",
h=4)``, ``Reduce(pattern=..., reduction="max")``); EinMix also takes ``rngs``, as
``nnx.Linear`` does. A layer checks its arguments when it is built, so a bad pattern
fails when the model is written, with a `tensorops.TensorOpsError`.

The description of a layer is static data of the module (it holds no arrays), so
``nnx.split`` / ``nnx.merge``, ``nnx.state`` and ``nnx.jit`` see EinMix's
``weight`` and ``bias`` (``nnx.Param``, einops' shapes) and nothing else. They are
drawn uniformly in ``±sqrt(3/fan_in)`` and ``±1/sqrt(fan_in)``, as einops draws them.

Examples:
    >>> import jax.numpy as jnp
    >>> from flax import nnx
    >>> from tensorops.layers.nnx import EinMix, Rearrange, Reduce
    >>> model = nnx.Sequential(
    ...     Rearrange("b (h p1) (w p2) c -> b (h w) (p1 p2 c)", p1=4, p2=4),
    ...     EinMix("b n d -> b n e", weight_shape="d e", bias_shape="e", d=48, e=64,
    ...            rngs=nnx.Rngs(0)),
    ...     Reduce("b n e -> b e", "mean"),
    ... )
    >>> model(jnp.zeros((2, 32, 32, 3))).shape
    (2, 64)
"""

from __future__ import annotations

import jax
from flax import nnx

from . import _family, _jax

__all__ = ["Check", "EinMix", "LogSoftmax", "Rearrange", "Reduce", "Repeat", "Softmax"]


class _Layer(nnx.Module):
    """An nnx module: calling it runs the layer's description (`tensorops.layers._family`)."""

    def __call__(self, x: jax.Array) -> jax.Array:
        """The layer's op on `x`."""
        return self._description(x)  # type: ignore[no-any-return]


class Rearrange(_family.RearrangeLayer, _Layer):
    """`tensorops.rearrange` as an nnx module.

    Examples:
        >>> import jax.numpy as jnp
        >>> from tensorops.layers.nnx import Rearrange
        >>> layer = Rearrange("b (h w) c -> b h w c", h=2)
        >>> layer
        Rearrange('b (h w) c -> b h w c', h=2)
        >>> layer(jnp.zeros((3, 8, 5))).shape
        (3, 2, 4, 5)
    """


class Reduce(_family.ReduceLayer, _Layer):
    """`tensorops.reduce` as an nnx module.

    Examples:
        >>> import jax.numpy as jnp
        >>> from tensorops.layers.nnx import Reduce
        >>> pool = Reduce("b (h 2) (w 2) c -> b h w c", "max")
        >>> pool
        Reduce('b (h 2) (w 2) c -> b h w c', 'max')
        >>> pool(jnp.arange(16.0).reshape(1, 4, 4, 1))[..., 0]
        Array([[[ 5.,  7.],
                [13., 15.]]], dtype=float32)
    """


class Repeat(_family.RepeatLayer, _Layer):
    """`tensorops.repeat` as an nnx module.

    Examples:
        >>> import jax.numpy as jnp
        >>> from tensorops.layers.nnx import Repeat
        >>> Repeat("b c -> b c r", r=3)(jnp.zeros((2, 4))).shape
        (2, 4, 3)
    """


class Softmax(_family.SoftmaxLayer, _Layer):
    """`tensorops.softmax` as an nnx module: normalize along the bracketed axes.

    Examples:
        >>> import jax.numpy as jnp
        >>> from tensorops.layers.nnx import Softmax
        >>> Softmax("b h i [j]")(jnp.zeros((1, 2, 3, 4)))[0, 0, 0]
        Array([0.25, 0.25, 0.25, 0.25], dtype=float32)
    """


class LogSoftmax(_family.LogSoftmaxLayer, _Layer):
    """`tensorops.log_softmax` as an nnx module.

    Examples:
        >>> import jax.numpy as jnp
        >>> from tensorops.layers.nnx import LogSoftmax
        >>> jnp.exp(LogSoftmax("b [c]")(jnp.zeros((1, 4))))
        Array([[0.25, 0.25, 0.25, 0.25]], dtype=float32)
    """


class Check(_family.CheckLayer, _Layer):
    """`tensorops.check` as an nnx module: returns its input, once its shape is checked.

    Examples:
        >>> import jax.numpy as jnp
        >>> from tensorops.layers.nnx import Check
        >>> Check("b c", c=3)(jnp.zeros((2, 3))).shape
        (2, 3)
    """


class EinMix(_family.EinMixLayer, _Layer):
    """A learned einsum, as an nnx module.

    It also takes the keyword ``rngs``, an ``nnx.Rngs`` whose ``params`` stream draws
    the weight, then the bias, one key each, as ``nnx.Linear`` draws its own.

    Examples:
        >>> import jax.numpy as jnp
        >>> from flax import nnx
        >>> from tensorops.layers.nnx import EinMix
        >>> mix = EinMix("b n (h c) -> b n (h e)", weight_shape="h c e", h=4, c=16, e=8,
        ...              rngs=nnx.Rngs(0))
        >>> mix
        EinMix('b n (h c) -> b n (h e)', weight_shape='h c e', h=4, c=16, e=8)
        >>> mix.weight.shape, mix(jnp.zeros((2, 5, 64))).shape
        ((4, 16, 8), (2, 5, 32))
    """

    _draws_with = "rngs"

    weight: nnx.Param[jax.Array]
    # A data attribute even when there is no bias, as nnx.Linear's.
    bias: nnx.Param[jax.Array] | None = nnx.data()

    def _new_parameter(
        self, name: str, shape: tuple[int, ...], bound: float, draws: nnx.Rngs
    ) -> nnx.Param[jax.Array]:
        return nnx.Param(_jax.uniform(draws.params(), shape, bound))

    def __call__(self, x: jax.Array) -> jax.Array:
        """Mix `x` with the weight (and add the bias)."""
        bias = None if self.bias is None else self.bias[...]
        return _jax.mix(self._description, x, self.weight[...], bias)
