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

from collections.abc import Mapping
from typing import Any, ClassVar, NoReturn

import jax
import jax.numpy as jnp
from flax import nnx

from ._description import EinMixPlan, Reduction, describe, describe_einmix

__all__ = ["Check", "EinMix", "LogSoftmax", "Rearrange", "Reduce", "Repeat", "Softmax"]


class _PatternLayer(nnx.Module):
    """A layer made of a pattern and axis lengths: the description does the work."""

    #: The description's name of the op (``"Rearrange"``, ``"Softmax"``, ...).
    kind: ClassVar[str]

    def __init__(self, pattern: str | None = None, /, *extra: NoReturn, **lengths: Any) -> None:
        self._description = describe(
            self.kind, (pattern, *extra), lengths, name=type(self).__name__
        )

    @property
    def pattern(self) -> str:
        """The layer's pattern."""
        return self._description.pattern

    @property
    def lengths(self) -> Mapping[str, Any]:
        """The axis lengths the layer was built with."""
        return self._description.lengths

    def __call__(self, x: jax.Array) -> jax.Array:
        """The layer's op on `x`."""
        return self._description(x)  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return repr(self._description)


class Rearrange(_PatternLayer):
    """`tensorops.rearrange` as a layer.

    Examples:
        >>> import jax.numpy as jnp
        >>> from tensorops.layers.nnx import Rearrange
        >>> layer = Rearrange("b (h w) c -> b h w c", h=2)
        >>> layer
        Rearrange('b (h w) c -> b h w c', h=2)
        >>> layer(jnp.zeros((3, 8, 5))).shape
        (3, 2, 4, 5)
    """

    kind = "Rearrange"


class Repeat(_PatternLayer):
    """`tensorops.repeat` as a layer.

    Examples:
        >>> import jax.numpy as jnp
        >>> from tensorops.layers.nnx import Repeat
        >>> Repeat("b c -> b c r", r=3)(jnp.zeros((2, 4))).shape
        (2, 4, 3)
    """

    kind = "Repeat"


class Softmax(_PatternLayer):
    """`tensorops.softmax` as a layer: normalize along the bracketed axes.

    Examples:
        >>> import jax.numpy as jnp
        >>> from tensorops.layers.nnx import Softmax
        >>> Softmax("b h i [j]")(jnp.zeros((1, 2, 3, 4)))[0, 0, 0]
        Array([0.25, 0.25, 0.25, 0.25], dtype=float32)
    """

    kind = "Softmax"


class LogSoftmax(_PatternLayer):
    """`tensorops.log_softmax` as a layer.

    Examples:
        >>> import jax.numpy as jnp
        >>> from tensorops.layers.nnx import LogSoftmax
        >>> jnp.exp(LogSoftmax("b [c]")(jnp.zeros((1, 4))))
        Array([[0.25, 0.25, 0.25, 0.25]], dtype=float32)
    """

    kind = "LogSoftmax"


class Check(_PatternLayer):
    """`tensorops.check` as a layer: returns its input, once its shape is checked.

    Examples:
        >>> import jax.numpy as jnp
        >>> from tensorops.layers.nnx import Check
        >>> Check("b c", c=3)(jnp.zeros((2, 3))).shape
        (2, 3)
    """

    kind = "Check"


class Reduce(_PatternLayer):
    """`tensorops.reduce` as a layer: any reduction of `tensorops.reduce`, or ``f(x, axes)``.

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

    kind = "Reduce"

    def __init__(
        self, pattern: str | None = None, reduction: Reduction | None = None, /, **lengths: Any
    ) -> None:
        self._description = describe(
            "Reduce", (pattern, reduction), lengths, name=type(self).__name__
        )

    @property
    def reduction(self) -> Reduction | None:
        """The layer's reduction."""
        return self._description.reduction


class EinMix(nnx.Module):
    """A learned einsum (see `tensorops.layers.torch.EinMix`); ``rngs`` draws the parameters.

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

    weight: nnx.Param[jax.Array]
    bias: nnx.Param[jax.Array] | None

    def __init__(
        self,
        pattern: str | None = None,
        /,
        weight_shape: str | None = None,
        bias_shape: str | None = None,
        *,
        rngs: nnx.Rngs,
        **lengths: Any,
    ) -> None:
        plan = describe_einmix(pattern, weight_shape, bias_shape, lengths, name=type(self).__name__)
        self._description: EinMixPlan = plan
        # The draws in einops' order, weight then bias, each from its own key as nnx.Linear's.
        bound = plan.weight_bound
        self.weight = nnx.Param(
            jax.random.uniform(rngs.params(), plan.weight_dims, minval=-bound, maxval=bound)
        )
        bias = None
        if plan.bias_dims is not None:
            bound = plan.bias_bound
            bias = nnx.Param(
                jax.random.uniform(rngs.params(), plan.bias_dims, minval=-bound, maxval=bound)
            )
        # A data attribute even when there is no bias, as nnx.Linear's.
        self.bias = nnx.data(bias)

    @property
    def fan_in(self) -> int:
        """The number of input elements each output element mixes."""
        return self._description.fan_in

    def __call__(self, x: jax.Array) -> jax.Array:
        """Mix `x` with the weight (and add the bias)."""
        # Parameters set from a restored state and inputs may be NumPy arrays (nnx.Linear
        # takes them too): tensorops mixes arrays of one family only.
        bias = None if self.bias is None else jnp.asarray(self.bias[...])
        return self._description.mix(jnp.asarray(x), jnp.asarray(self.weight[...]), bias)  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return repr(self._description)
