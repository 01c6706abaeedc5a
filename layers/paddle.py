"""Paddle layers: Rearrange, Reduce, Repeat, EinMix, Softmax, LogSoftmax and Check.

Each is a ``paddle.nn.Layer`` whose ``forward`` calls the tensorops function on
paddle tensors. The constructors take the arguments of `tensorops.layers.torch`
(einops' spellings ``pattern=`` and ``reduction=`` included); a bad pattern fails
when the layer is built, with a `tensorops.TensorOpsError`. The layers work in
``paddle.nn.Sequential``, under ``paddle.jit.to_static``, survive
``state_dict`` / ``set_state_dict`` round trips and ``pickle``, and EinMix draws
its parameters as einops' Paddle EinMix does: the same ``paddle.seed`` gives the
same initial weights.

Examples:
    >>> import paddle
    >>> from tensorops.layers.paddle import EinMix, Rearrange, Reduce
    >>> mix = EinMix("b n d -> b n e", weight_shape="d e", bias_shape="e", d=48, e=64)
    >>> sorted(mix.state_dict())
    ['bias', 'weight']
    >>> model = paddle.nn.Sequential(
    ...     Rearrange("b c h w -> b (h w) c"), mix, Reduce("b n e -> b e", "mean")
    ... )
    >>> list(model(paddle.zeros([2, 48, 4, 4])).shape)
    [2, 64]
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, TypeVar

import paddle

# relative: this directory is installed as tensorops.layers
from . import _family

_F = TypeVar("_F", bound=Callable[..., Any])

__all__ = ["Check", "EinMix", "LogSoftmax", "Rearrange", "Reduce", "Repeat", "Softmax"]


def _as_it_is(function: _F) -> _F:
    """Mark `function` so that ``to_static`` calls it as it is, as it calls paddle's API.

    The tensorops functions make paddle calls on whatever tensors they are given, so
    in a static program they record those calls. Left unmarked, ``to_static`` would
    rewrite their Python (``full_graph=True``: it fails on tensorops' signatures) or
    simulate their bytecode (SOT, the default: it fails on frozen dataclasses).
    ``paddle.jit.marker.unified`` marks for both (paddle >= 3.1); before it,
    ``not_to_static`` marks for the rewriting alone.
    """
    marker = getattr(paddle.jit, "marker", None)
    unified = getattr(marker, "unified", None)
    mark: Callable[[_F], _F] = unified if unified is not None else paddle.jit.not_to_static
    return mark(function)


class _Layer(paddle.nn.Layer):
    """A Paddle layer: ``forward`` runs the layer's description (`tensorops.layers._family`)."""

    def __init__(self) -> None:
        super().__init__()

        # A fresh function per layer, called by to_static as it is (see `_as_it_is`) with
        # tensors alone: SOT rebuilds the dataclasses among a call's arguments, which
        # fails for the frozen description, so the layer is in the closure (weakly: the
        # layer holds the function).
        layer = weakref.ref(self)

        @_as_it_is
        def run(*tensors: Any) -> Any:
            return layer()._description(*tensors)  # type: ignore[union-attr]

        self._run = run

    def forward(self, x: Any) -> Any:
        """The layer's op on `x`."""
        return self._run(x)

    def extra_repr(self) -> str:
        """Empty: the repr is the call itself."""
        return ""

    def __getstate__(self) -> dict[str, Any]:
        # A paddle.nn.Layer holds hooks and helpers that do not pickle: the description
        # and the parameters' values are the whole layer (as einops pickles its layers).
        parameters = {name: value.numpy() for name, value in self.state_dict().items()}
        return {"description": self._description, "parameters": parameters}

    def __setstate__(self, state: dict[str, Any]) -> None:
        _Layer.__init__(self)
        self._description = state["description"]
        if state["parameters"]:
            self._create_parameters(None)
            self.set_state_dict(state["parameters"])


class Rearrange(_family.RearrangeLayer, _Layer):
    """`tensorops.rearrange` as a Paddle layer.

    Examples:
        >>> import paddle
        >>> from tensorops.layers.paddle import Rearrange
        >>> Rearrange("b c h w -> b (h w) c")
        Rearrange('b c h w -> b (h w) c')
        >>> list(Rearrange("b c h w -> b (h w) c")(paddle.zeros([2, 3, 4, 5])).shape)
        [2, 20, 3]
    """


class Reduce(_family.ReduceLayer, _Layer):
    """`tensorops.reduce` as a Paddle layer.

    Examples:
        >>> import paddle
        >>> from tensorops.layers.paddle import Reduce
        >>> pool = Reduce("b c (h 2) (w 2) -> b c h w", "max")
        >>> pool
        Reduce('b c (h 2) (w 2) -> b c h w', 'max')
        >>> pool(paddle.arange(16, dtype="float32").reshape([1, 1, 4, 4])).numpy()
        array([[[[ 5.,  7.],
                 [13., 15.]]]], dtype=float32)
    """


class Repeat(_family.RepeatLayer, _Layer):
    """`tensorops.repeat` as a Paddle layer.

    Examples:
        >>> import paddle
        >>> from tensorops.layers.paddle import Repeat
        >>> list(Repeat("b h w -> b h w c", c=3)(paddle.zeros([2, 4, 4])).shape)
        [2, 4, 4, 3]
    """


class Softmax(_family.SoftmaxLayer, _Layer):
    """`tensorops.softmax` as a Paddle layer: normalize along the bracketed axes.

    Examples:
        >>> import paddle
        >>> from tensorops.layers.paddle import Softmax
        >>> Softmax("b [j]")(paddle.zeros([1, 4])).numpy()
        array([[0.25, 0.25, 0.25, 0.25]], dtype=float32)
    """


class LogSoftmax(_family.LogSoftmaxLayer, _Layer):
    """`tensorops.log_softmax` as a Paddle layer.

    Examples:
        >>> import paddle
        >>> from tensorops.layers.paddle import LogSoftmax
        >>> LogSoftmax("b [c]")(paddle.zeros([1, 4])).exp().numpy()
        array([[0.25, 0.25, 0.25, 0.25]], dtype=float32)
    """


class Check(_family.CheckLayer, _Layer):
    """`tensorops.check` as a Paddle layer: returns its input, once its shape is checked.

    Examples:
        >>> import paddle
        >>> from tensorops.layers.paddle import Check
        >>> x = paddle.zeros([2, 3, 4, 4])
        >>> Check("b c h w", c=3)(x) is x
        True
    """


class EinMix(_family.EinMixLayer, _Layer):
    """A learned einsum, as a Paddle layer.

    ``paddle.nn.initializer.Uniform`` draws the parameters: under one ``paddle.seed``
    they equal those of ``einops.layers.paddle.EinMix``.

    Examples:
        >>> import paddle
        >>> from tensorops.layers.paddle import EinMix
        >>> mix = EinMix("b n (h c) -> b h n e", weight_shape="h c e", h=4, c=16, e=8)
        >>> mix
        EinMix('b n (h c) -> b h n e', weight_shape='h c e', h=4, c=16, e=8)
        >>> list(mix.weight.shape), list(mix(paddle.zeros([2, 10, 64])).shape)
        ([4, 16, 8], [2, 4, 10, 8])
    """

    def _new_parameter(self, name: str, shape: tuple[int, ...], bound: float, draws: None) -> Any:
        uniform = paddle.nn.initializer.Uniform(-bound, bound)
        return self.create_parameter(list(shape), default_initializer=uniform)

    def forward(self, x: Any) -> Any:
        """Mix `x` with the weight (and add the bias)."""
        # The parameters by name: to_static's rewriting of Python fails on a call's *args.
        return self._run(x, self.weight, self.bias)
