"""PyTorch layers: Rearrange, Reduce, Repeat, EinMix, Softmax, LogSoftmax and Check.

Their constructors take einops' arguments, positionally or as keywords
(``Rearrange(pattern=...)``, ``Reduce(pattern=..., reduction=...)``): a keyword
``pattern=`` is the pattern when none was given positionally, else the length of an
axis named ``pattern``.

Each layer checks its pattern when it is built, on meta tensors, so a bad pattern
fails when the model is constructed, with a `tensorops.TensorOpsError`; ``forward``
only calls the op. The layers are thin: they take exactly what the functions take
(every reduction, callables, ``...`` standing for any number of axes), work in
``nn.Sequential``, and survive ``state_dict`` round trips, ``pickle``,
``copy.deepcopy``, ``torch.compile(fullgraph=True)``, ``torch.export``,
``torch.jit.trace`` and ``torch.jit.script`` (`tensorops.layers._torchscript`).

Examples:
    >>> import torch
    >>> from tensorops.layers.torch import EinMix, Rearrange, Reduce
    >>> model = torch.nn.Sequential(
    ...     Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=4, p2=4),
    ...     EinMix("b n d_in -> b n d_out", weight_shape="d_in d_out", bias_shape="d_out",
    ...            d_in=48, d_out=64),
    ...     Reduce("b n d -> b d", "mean"),
    ... )
    >>> model(torch.zeros(2, 3, 32, 32)).shape
    torch.Size([2, 64])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import torch
from torch import nn

# relative: this directory is installed as tensorops.layers
from . import _family
from ._description import Probe
from ._torchscript import scriptable_module

__all__ = ["Check", "EinMix", "LogSoftmax", "Rearrange", "Reduce", "Repeat", "Softmax"]


def _meta_probe(shape: tuple[int, ...]) -> torch.Tensor:
    """A meta tensor of `shape`.

    The build-time check allocates nothing on it, and registers the torch backend
    before any ``torch.compile``.
    """
    return torch.empty(shape, device="meta")


def _meta_parameter(shape: tuple[int, ...]) -> nn.Parameter:
    """A meta parameter: the torch backend also learns the Parameter type before compiling."""
    return nn.Parameter(torch.empty(shape, device="meta"))


class _Layer(nn.Module):
    """A torch layer: ``forward`` runs the layer's description (`tensorops.layers._family`)."""

    _probe: ClassVar[Probe | None] = _meta_probe
    _parameter_probe: ClassVar[Probe | None] = _meta_parameter

    if TYPE_CHECKING:  # the mixin's (nn.Module types an attribute it does not know as a Tensor)
        _description: Any

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The layer's op on `x`."""
        # The description's call, inlined: a frame less, 0.3 us of a 6 us Repeat.
        description = self._description
        output: torch.Tensor = description.op(x, *description.args, **description.lengths)
        return output

    def __prepare_scriptable__(self) -> nn.Module:
        """The module ``torch.jit.script`` compiles in place of this layer.

        It runs the layer's script program (`tensorops.layers._torchscript`), reading
        every length from the input at run time; called eagerly, it runs this layer.
        """
        return scriptable_module(self)


class Rearrange(_family.RearrangeLayer, _Layer):
    """`tensorops.rearrange` as a layer.

    Examples:
        >>> import torch
        >>> from tensorops.layers.torch import Rearrange
        >>> layer = Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=4, p2=4)
        >>> layer
        Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=4, p2=4)
        >>> layer(torch.zeros(2, 3, 32, 32)).shape
        torch.Size([2, 64, 48])
        >>> Rearrange("b ... c -> b c ...")(torch.zeros(2, 5, 6, 7, 3)).shape
        torch.Size([2, 3, 5, 6, 7])
    """


class Reduce(_family.ReduceLayer, _Layer):
    """`tensorops.reduce` as a layer.

    A layer whose reduction is a module-level function pickles; one with a lambda or
    a local function does not (``copy.deepcopy`` works for both).

    Examples:
        >>> import torch
        >>> from tensorops.layers.torch import Reduce
        >>> Reduce("b c h w -> b c", "mean")
        Reduce('b c h w -> b c', 'mean')
        >>> pool = Reduce("b c (h 2) (w 2) -> b c h w", "max")
        >>> pool(torch.arange(16.0).reshape(1, 1, 4, 4))
        tensor([[[[ 5.,  7.],
                  [13., 15.]]]])
        >>> Reduce("b ... -> b", torch.logsumexp)(torch.zeros(2, 3, 4)).shape
        torch.Size([2])
        >>> Reduce(pattern="b ... -> (b s) ...", reduction="repeat", s=4)(torch.zeros(2, 3)).shape
        torch.Size([8, 3])
    """


class Repeat(_family.RepeatLayer, _Layer):
    """`tensorops.repeat` as a layer.

    The new axes are a broadcast view (``Tensor.expand``, no copy) where they can
    be; copy the output before writing into it.

    Examples:
        >>> import torch
        >>> from tensorops.layers.torch import Repeat
        >>> Repeat("b h w -> b h w c", c=3)
        Repeat('b h w -> b h w c', c=3)
        >>> Repeat("b h w -> b h w c", c=3)(torch.zeros(2, 4, 4)).stride()  # a view: stride 0
        (16, 4, 1, 0)
    """


class Softmax(_family.SoftmaxLayer, _Layer):
    """`tensorops.softmax` as a layer: normalize along the bracketed axes.

    Examples:
        >>> import torch
        >>> from tensorops.layers.torch import Softmax
        >>> layer = Softmax("b h i [j]")
        >>> layer
        Softmax('b h i [j]')
        >>> layer(torch.zeros(1, 2, 3, 4))[0, 0, 0]
        tensor([0.2500, 0.2500, 0.2500, 0.2500])
    """


class LogSoftmax(_family.LogSoftmaxLayer, _Layer):
    """`tensorops.log_softmax` as a layer (e.g. before a negative log-likelihood loss).

    Examples:
        >>> import torch
        >>> from tensorops.layers.torch import LogSoftmax
        >>> LogSoftmax("b [c]")(torch.zeros(1, 4)).exp()
        tensor([[0.2500, 0.2500, 0.2500, 0.2500]])
    """


class Check(_family.CheckLayer, _Layer):
    """`tensorops.check` as a layer: returns its input, once its shape is checked.

    Examples:
        >>> import torch
        >>> from tensorops.layers.torch import Check
        >>> model = torch.nn.Sequential(Check("b c", c=3), torch.nn.Linear(3, 2), Check("b 2"))
        >>> model(torch.zeros(4, 3)).shape
        torch.Size([4, 2])
        >>> model[0]
        Check('b c', c=3)
    """


class EinMix(_family.EinMixLayer, _Layer):
    """A learned einsum: the input is mixed with a weight whose axes a pattern names.

    Under one seed, its initial parameters are those of ``einops.layers.torch.EinMix``;
    ``reset_parameters`` draws them again.

    Examples:
        >>> import torch
        >>> from tensorops.layers.torch import EinMix
        >>> mix = EinMix("b n d_in -> b n d_out", weight_shape="d_in d_out",
        ...              bias_shape="d_out", d_in=48, d_out=64)
        >>> mix  # doctest: +NORMALIZE_WHITESPACE
        EinMix('b n d_in -> b n d_out', weight_shape='d_in d_out', bias_shape='d_out',
               d_in=48, d_out=64)
        >>> mix(torch.zeros(2, 16, 48)).shape
        torch.Size([2, 16, 64])
        >>> heads = EinMix("b n (h c) -> b h n e", weight_shape="h c e", h=4, c=16, e=8)
        >>> heads(torch.zeros(2, 16, 64)).shape
        torch.Size([2, 4, 16, 8])
    """

    weight: nn.Parameter
    bias: nn.Parameter | None

    def _new_parameter(
        self, name: str, shape: tuple[int, ...], bound: float, draws: None
    ) -> nn.Parameter:
        parameter = nn.Parameter(torch.empty(shape))
        nn.init.uniform_(parameter, -bound, bound)
        return parameter

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Mix `x` with the weight (and add the bias)."""
        output: torch.Tensor = self._description(x, self.weight, self.bias)
        return output

    def reset_parameters(self) -> None:
        """Draw the weight in ``±sqrt(3/fan_in)``, then the bias in ``±1/sqrt(fan_in)`` (uniform).

        The bounds and the order of the draws are einops': the same seed gives the
        same initial parameters as ``einops.layers.torch.EinMix``.
        """
        for parameter, (_, _, bound) in zip(
            self._parameter_values(), self._description.parameters, strict=True
        ):
            if parameter is not None:
                nn.init.uniform_(parameter, -bound, bound)
