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
    >>> model = paddle.nn.Sequential(
    ...     Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=4, p2=4),
    ...     EinMix("b n d_in -> b n d_out", weight_shape="d_in d_out", bias_shape="d_out",
    ...            d_in=48, d_out=64),
    ...     Reduce("b n d -> b d", "mean"),
    ... )
    >>> list(model(paddle.zeros([2, 3, 32, 32])).shape)
    [2, 64]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import paddle

# relative: this directory is installed as tensorops.layers
from ._description import EinMixPlan, LayerSpec, Reduction, describe, describe_einmix

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


def _runner(run: Callable[..., Any]) -> Callable[..., Any]:
    """``run``, called by ``to_static`` as it is (see `_as_it_is`) with tensors alone.

    A fresh function per layer: SOT rebuilds the dataclasses among a call's arguments,
    which fails for the frozen description, so the description is in the closure.
    """

    @_as_it_is
    def call(*tensors: Any) -> Any:
        return run(*tensors)

    return call


class _PatternLayer(paddle.nn.Layer):
    """A layer made of a `LayerSpec`: a pattern, axis lengths (and Reduce's reduction)."""

    _LAYER: ClassVar[str]

    def __init__(self, pattern: str | None = None, /, *extra: Any, **lengths: Any) -> None:
        super().__init__()
        self.spec: LayerSpec = describe(
            self._LAYER, (pattern, *extra), lengths, name=type(self).__name__
        )
        self._run = _runner(self.spec)

    def forward(self, x: Any) -> Any:
        """The layer's op on `x`."""
        return self._run(x)

    def extra_repr(self) -> str:
        """Empty: the repr is the call itself."""
        return ""

    def __repr__(self) -> str:
        return repr(self.spec)

    def __getstate__(self) -> dict[str, Any]:
        # A paddle.nn.Layer holds hooks and helpers that do not pickle; the spec is
        # the whole layer (as einops pickles its layers: by their arguments).
        return {"spec": self.spec}

    def __setstate__(self, state: dict[str, Any]) -> None:
        paddle.nn.Layer.__init__(self)
        self.spec = state["spec"]
        self._run = _runner(self.spec)


class Rearrange(_PatternLayer):
    """`tensorops.rearrange` as a Paddle layer.

    Args:
        pattern: ``"left -> right"``, e.g. ``"b c h w -> b h w c"``; ``...`` stands
            for any number of axes.
        **lengths: lengths of axes that cannot be inferred from the input shape.

    Raises:
        TensorOpsError: when built, if the pattern is malformed or the lengths do
            not fit it; when called, if the input does not fit the pattern.

    Examples:
        >>> import paddle
        >>> from tensorops.layers.paddle import Rearrange
        >>> layer = Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=4, p2=4)
        >>> layer
        Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=4, p2=4)
        >>> list(layer(paddle.zeros([2, 3, 32, 32])).shape)
        [2, 64, 48]
    """

    _LAYER = "Rearrange"


class Reduce(_PatternLayer):
    """`tensorops.reduce` as a Paddle layer.

    Args:
        pattern: e.g. ``"b c (h 2) (w 2) -> b c h w"``; axes missing on the right
            are reduced.
        reduction: a name of `tensorops.reduce` (``"sum"``, ``"mean"``, ``"max"``,
            ``"argmax"``, ``"logsumexp"``, ...), or a callable ``f(x, axes)``.
            Positional, or the keyword ``reduction=`` as in einops.
        **lengths: lengths of axes that cannot be inferred from the input shape.

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

    _LAYER = "Reduce"

    def __init__(
        self, pattern: str | None = None, reduction: Reduction | None = None, /, **lengths: Any
    ) -> None:
        super().__init__(pattern, reduction, **lengths)


class Repeat(_PatternLayer):
    """`tensorops.repeat` as a Paddle layer.

    Args:
        pattern: e.g. ``"b h w -> b h w c"``; every axis new on the right needs a
            length, as a keyword or an integer literal.
        **lengths: lengths of new axes and of axes that cannot be inferred.

    Examples:
        >>> import paddle
        >>> from tensorops.layers.paddle import Repeat
        >>> list(Repeat("b h w -> b h w c", c=3)(paddle.zeros([2, 4, 4])).shape)
        [2, 4, 4, 3]
    """

    _LAYER = "Repeat"


class Softmax(_PatternLayer):
    """`tensorops.softmax` as a Paddle layer: normalize along the bracketed axes.

    Args:
        pattern: the input's axes, those to normalize in brackets, e.g. ``"b h i [j]"``.
        **lengths: lengths of axes that cannot be inferred from the input shape.

    Examples:
        >>> import paddle
        >>> from tensorops.layers.paddle import Softmax
        >>> Softmax("b [j]")(paddle.zeros([1, 4])).numpy()
        array([[0.25, 0.25, 0.25, 0.25]], dtype=float32)
    """

    _LAYER = "Softmax"


class LogSoftmax(_PatternLayer):
    """`tensorops.log_softmax` as a Paddle layer.

    Args:
        pattern: the input's axes, those to normalize in brackets, e.g. ``"b [c]"``.
        **lengths: lengths of axes that cannot be inferred from the input shape.

    Examples:
        >>> import paddle
        >>> from tensorops.layers.paddle import LogSoftmax
        >>> LogSoftmax("b [c]")(paddle.zeros([1, 4])).exp().numpy()
        array([[0.25, 0.25, 0.25, 0.25]], dtype=float32)
    """

    _LAYER = "LogSoftmax"


class Check(_PatternLayer):
    """`tensorops.check` as a Paddle layer: returns its input, once its shape is checked.

    Args:
        pattern: the input's axes, e.g. ``"b c h w"``, as in `tensorops.check`.
        **lengths: the lengths the axes must have, e.g. ``c=3``.

    Examples:
        >>> import paddle
        >>> from tensorops.layers.paddle import Check
        >>> x = paddle.zeros([2, 3, 4, 4])
        >>> Check("b c h w", c=3)(x) is x
        True
    """

    _LAYER = "Check"


class EinMix(paddle.nn.Layer):
    """A learned einsum: the input is mixed with a weight whose axes a pattern names.

    The arguments, shapes and semantics are those of `tensorops.layers.torch.EinMix`
    (and einops'). The weight is drawn uniform in ``±sqrt(3/fan_in)``, then the bias
    in ``±1/sqrt(fan_in)``, by ``paddle.nn.initializer.Uniform``: under one
    ``paddle.seed`` the parameters equal those of ``einops.layers.paddle.EinMix``,
    whose checkpoints load.

    Args:
        pattern: ``"left -> right"``: the input's axes and the output's.
        weight_shape: the weight's axes, names separated by spaces.
        bias_shape: the bias's axes, a subset of the output's, or ``None``.
        **lengths: the lengths of the weight and bias axes, and of input axes that
            cannot be inferred.

    Raises:
        TensorOpsError: when built, if the patterns do not fit together or a
            length is missing; when called, if the input does not fit.

    Examples:
        >>> import paddle
        >>> from tensorops.layers.paddle import EinMix
        >>> mix = EinMix("b n (h c) -> b h n e", weight_shape="h c e", h=4, c=16, e=8)
        >>> mix
        EinMix('b n (h c) -> b h n e', weight_shape='h c e', h=4, c=16, e=8)
        >>> list(mix.weight.shape), list(mix(paddle.zeros([2, 10, 64])).shape)
        ([4, 16, 8], [2, 4, 10, 8])
    """

    def __init__(
        self,
        pattern: str | None = None,
        /,
        weight_shape: str | None = None,
        bias_shape: str | None = None,
        **lengths: Any,
    ) -> None:
        super().__init__()
        self.plan: EinMixPlan = describe_einmix(
            pattern, weight_shape, bias_shape, lengths, name=type(self).__name__
        )
        self._create_parameters()

    def _create_parameters(self) -> None:
        """The weight, then the bias: einops' order of draws, so one seed gives its values."""
        self._run = _runner(self.plan.mix)
        plan, uniform = self.plan, paddle.nn.initializer.Uniform
        self.weight = self.create_parameter(
            list(plan.weight_dims),
            default_initializer=uniform(-plan.weight_bound, plan.weight_bound),
        )
        self.bias = None
        if plan.bias_dims is not None:
            self.bias = self.create_parameter(
                list(plan.bias_dims),
                default_initializer=uniform(-plan.bias_bound, plan.bias_bound),
            )

    def forward(self, x: Any) -> Any:
        """Mix `x` with the weight (and add the bias)."""
        return self._run(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        """Empty: the repr is the call itself."""
        return ""

    @property
    def einsum_pattern(self) -> str:
        """The einsum of the flat terms, one letter per axis (einops' attribute)."""
        return self.plan.einsum_pattern

    def __repr__(self) -> str:
        return repr(self.plan)

    def __getstate__(self) -> dict[str, Any]:
        # The plan and the parameters' values (a paddle.nn.Layer itself does not pickle).
        parameters = {name: value.numpy() for name, value in self.state_dict().items()}
        return {"plan": self.plan, "parameters": parameters}

    def __setstate__(self, state: dict[str, Any]) -> None:
        paddle.nn.Layer.__init__(self)
        self.plan = state["plan"]
        self._create_parameters()
        self.set_state_dict(state["parameters"])
