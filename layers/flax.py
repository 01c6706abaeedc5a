"""Flax linen layers: Rearrange, Reduce, Repeat, EinMix, Softmax, LogSoftmax and Check.

The constructors take what the torch layers take (``Rearrange("b (h w) c -> b h w c",
h=4)``, ``Reduce(pattern=..., reduction="max")``), and also einops' Flax spelling, the
lengths as one dict ``sizes`` (positional after the pattern, the reduction or the
bias shape, or the keyword ``sizes=``). ``name``, ``parent`` and ``sizes`` are the
module's own arguments, so they cannot name axes here.

A layer checks its arguments when it is built, so a bad pattern fails when the model
is written, with a `tensorops.TensorOpsError`. The lengths are kept in a hashable
``sizes`` field, so the layers work under ``nn.jit`` and the other lifted
transforms.

EinMix's parameters are ``"weight"`` and ``"bias"`` with einops' shapes, so
parameters saved from ``einops.layers.flax.EinMix`` load. They are drawn uniformly
in ``±sqrt(3/fan_in)`` and ``±1/sqrt(fan_in)``, as einops' torch EinMix and
`tensorops.layers.torch.EinMix` draw them. (einops' Flax EinMix draws them in
``[0, bound)``: ``jax.nn.initializers.uniform`` has no negative half. From the same
key, the weight here is exactly ``2 * einops' - bound``.)

Examples:
    >>> import jax, jax.numpy as jnp
    >>> from flax import linen as nn
    >>> from tensorops.layers.flax import EinMix, Rearrange, Reduce
    >>> model = nn.Sequential([
    ...     Rearrange("b (h p1) (w p2) c -> b (h w) (p1 p2 c)", p1=4, p2=4),
    ...     EinMix("b n d -> b n e", weight_shape="d e", bias_shape="e", d=48, e=64),
    ...     Reduce("b n e -> b e", "mean"),
    ... ])
    >>> x = jnp.zeros((2, 32, 32, 3))
    >>> params = model.init(jax.random.key(0), x)
    >>> jax.tree.map(jnp.shape, params["params"]["layers_1"])
    {'bias': (1, 1, 64), 'weight': (48, 64)}
    >>> model.apply(params, x).shape
    (2, 64)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import jax
import jax.numpy as jnp
from flax import linen as nn
from flax.core import FrozenDict

from . import _jax
from ._description import Reduction
from ._family import Layer, describe_layer

__all__ = ["Check", "EinMix", "LogSoftmax", "Rearrange", "Reduce", "Repeat", "Softmax"]

#: The module's own keywords, passed to Flax as they are.
_FLAX_KEYWORDS = ("parent", "name")


def _read_arguments(
    layer: str, positional: tuple[str, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split a call into the named arguments (``positional`` and Flax's) and axis lengths.

    A keyword ``pattern=`` or ``reduction=`` is that argument when it was not given
    positionally, else the length of an axis of that name, as in einops. Flax builds
    a module again with every field a keyword, so the lengths in ``sizes`` may hold
    an axis named ``pattern``.
    """
    if len(args) > len(positional):
        raise TypeError(
            f"{layer}() takes at most {len(positional)} positional arguments "
            f"({', '.join(positional)}); {len(args)} given"
        )
    named = dict(zip(positional, args, strict=False))
    for keyword in (*positional, *_FLAX_KEYWORDS):
        if keyword not in kwargs:
            continue
        if keyword in named:
            if keyword in ("pattern", "reduction"):
                continue  # einops' rule: the length of an axis of that name
            raise TypeError(f"{layer}() got multiple values for argument {keyword!r}")
        named[keyword] = kwargs.pop(keyword)
    sizes = named.pop("sizes", None) or {}
    if not isinstance(sizes, Mapping):
        raise TypeError(f"{layer}(): sizes must be a dict of axis lengths, not {sizes!r}")
    return named, {**sizes, **kwargs}


class _Layer(Layer, nn.Module):
    """A Flax module read by the layer contract (`tensorops.layers._family`).

    Flax makes each subclass a dataclass whose ``__init__`` takes its fields; this
    wraps that ``__init__`` to read the arguments with the description (which also
    checks them) before the fields are set. Flax builds a module again from its
    fields whenever it binds it (``init``, ``apply``), and that runs the same code.
    """

    #: The fields taken positionally, in order.
    positional: ClassVar[tuple[str, ...]] = ("pattern", "sizes")

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.__init__ = _reading_arguments(cls, cls.__init__)  # type: ignore[method-assign]


def _reading_arguments(cls: type[_Layer], init: Callable[..., None]) -> Callable[..., None]:
    """`init` (Flax's) behind the reading of the arguments by the description."""
    layer = cls.__name__

    @functools.wraps(init)
    def reading_init(self: _Layer, *args: Any, **kwargs: Any) -> None:
        named, lengths = _read_arguments(layer, cls.positional, args, kwargs)
        given = tuple(named.get(name) for name in cls.positional[:-1])
        description = describe_layer(cls.kind, given, lengths, name=layer)
        # The fields Flax keeps: the arguments as read, the lengths in `sizes`.
        named.update(description.arguments, sizes=FrozenDict(description.lengths))
        init(self, **named)
        # Not a field: set past Flax's frozen-module check, and rebuilt with the module.
        object.__setattr__(self, "_description", description)

    return reading_init


class _PatternLayer(_Layer):
    """A module made of a pattern and axis lengths: calling it runs the layer's op."""

    pattern: str
    sizes: Mapping[str, Any] = FrozenDict()

    def __call__(self, x: jax.Array) -> jax.Array:
        """The layer's op on `x`."""
        return self._description(x)  # type: ignore[no-any-return]


class Rearrange(_PatternLayer):
    """`tensorops.rearrange` as a Flax linen module.

    Examples:
        >>> import jax.numpy as jnp
        >>> from tensorops.layers.flax import Rearrange
        >>> Rearrange("b (h w) c -> b h w c", sizes={"h": 2})  # einops' Flax spelling
        Rearrange('b (h w) c -> b h w c', h=2)
        >>> Rearrange("b (h w) c -> b h w c", h=2).apply({}, jnp.zeros((3, 8, 5))).shape
        (3, 2, 4, 5)
    """

    kind = "Rearrange"


class Reduce(_PatternLayer):
    """`tensorops.reduce` as a Flax linen module.

    Examples:
        >>> import jax.numpy as jnp
        >>> from tensorops.layers.flax import Reduce
        >>> pool = Reduce("b (h 2) (w 2) c -> b h w c", "max")
        >>> pool.apply({}, jnp.arange(16.0).reshape(1, 4, 4, 1))[..., 0]
        Array([[[ 5.,  7.],
                [13., 15.]]], dtype=float32)
        >>> Reduce("b hw -> b", "mean", {"hw": 6})  # einops' Flax spelling
        Reduce('b hw -> b', 'mean', hw=6)
    """

    kind = "Reduce"
    positional = ("pattern", "reduction", "sizes")
    # A default only because a field after `sizes` needs one: the reading always sets it.
    reduction: Reduction | None = None


class Repeat(_PatternLayer):
    """`tensorops.repeat` as a Flax linen module.

    Examples:
        >>> import jax, jax.numpy as jnp
        >>> from tensorops.layers.flax import Repeat
        >>> jax.jit(Repeat("b c -> b c r", r=3).apply)({}, jnp.zeros((2, 4))).shape
        (2, 4, 3)
    """

    kind = "Repeat"


class Softmax(_PatternLayer):
    """`tensorops.softmax` as a Flax linen module: normalize along the bracketed axes.

    Examples:
        >>> import jax.numpy as jnp
        >>> from tensorops.layers.flax import Softmax
        >>> Softmax("b h i [j]").apply({}, jnp.zeros((1, 2, 3, 4)))[0, 0, 0]
        Array([0.25, 0.25, 0.25, 0.25], dtype=float32)
    """

    kind = "Softmax"


class LogSoftmax(_PatternLayer):
    """`tensorops.log_softmax` as a Flax linen module.

    Examples:
        >>> import jax.numpy as jnp
        >>> from tensorops.layers.flax import LogSoftmax
        >>> jnp.exp(LogSoftmax("b [c]").apply({}, jnp.zeros((1, 4))))
        Array([[0.25, 0.25, 0.25, 0.25]], dtype=float32)
    """

    kind = "LogSoftmax"


class Check(_PatternLayer):
    """`tensorops.check` as a Flax linen module: returns its input, once its shape is checked.

    Examples:
        >>> import jax.numpy as jnp
        >>> from tensorops.layers.flax import Check
        >>> Check("b c", c=3).apply({}, jnp.zeros((2, 3))).shape
        (2, 3)
    """

    kind = "Check"


class EinMix(_Layer):
    """A learned einsum, as a Flax linen module with the parameters "weight" and "bias".

    The parameters are drawn when the module is initialized (``init``), from its
    ``"params"`` key; see the module's notes on einops' Flax EinMix.

    Examples:
        >>> import jax, jax.numpy as jnp
        >>> from tensorops.layers.flax import EinMix
        >>> mix = EinMix("b n (h c) -> b n (h e)", weight_shape="h c e", h=4, c=16, e=8)
        >>> mix
        EinMix('b n (h c) -> b n (h e)', weight_shape='h c e', h=4, c=16, e=8)
        >>> x = jnp.zeros((2, 5, 64))
        >>> params = mix.init(jax.random.key(0), x)
        >>> params["params"]["weight"].shape, mix.apply(params, x).shape
        ((4, 16, 8), (2, 5, 32))
    """

    kind = "EinMix"
    positional = ("pattern", "weight_shape", "bias_shape", "sizes")
    pattern: str
    weight_shape: str
    bias_shape: str | None = None
    sizes: Mapping[str, Any] = FrozenDict()

    @nn.compact  # type: ignore[untyped-decorator]  # flax is Any to mypy (pyproject.toml)
    def __call__(self, x: jax.Array) -> jax.Array:
        """Mix `x` with the weight (and add the bias)."""
        plan = self._description
        weight, bias = (
            None if shape is None else self.param(name, _jax.uniform, shape, bound, jnp.float32)
            for name, shape, bound in plan.parameters
        )
        return _jax.mix(plan, x, weight, bias)
