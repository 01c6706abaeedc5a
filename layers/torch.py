"""PyTorch layers: Rearrange, Reduce, Repeat, EinMix, Softmax, LogSoftmax and Check.

Their constructors take einops' arguments, positionally or as keywords
(``Rearrange(pattern=...)``, ``Reduce(pattern=..., reduction=...)``): a keyword
``pattern=`` is the pattern when none was given positionally, else the length of an
axis named ``pattern``.

Each layer checks its pattern when it is built, so a bad pattern fails when the
model is constructed, with a `tensorops.TensorOpsError`; ``forward`` only
calls the op. The layers are thin: they take exactly what the functions take
(every reduction, callables, ``...`` standing for any number of axes), work in
``nn.Sequential``, and survive ``state_dict`` round trips, ``pickle``,
``copy.deepcopy``, ``torch.compile(fullgraph=True)``, ``torch.export`` and
``torch.jit.trace``.

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

from typing import Any

import torch
from torch import nn

import tensorops as tops

# relative: this directory is installed as tensorops.layers
from ._description import call_repr, describe, reduction_repr
from ._einmix import EinMix
from ._torch_common import PatternLayer, Reduction, meta_probe

__all__ = ["Check", "EinMix", "LogSoftmax", "Rearrange", "Reduce", "Repeat", "Softmax"]

# EinMix is defined in a module of its own; pickles and reprs name it by its public home.
EinMix.__module__ = __name__


class Rearrange(PatternLayer):
    """`tensorops.rearrange` as a layer.

    Args:
        pattern: ``"left -> right"``, e.g. ``"b c h w -> b h w c"``; ``...`` stands
            for any number of axes.
        **lengths: lengths of axes that cannot be inferred from the input shape.

    Raises:
        TensorOpsError: when built, if the pattern is malformed or the lengths do
            not fit it; when called, if the input does not fit the pattern (the
            wrong rank, an axis that does not divide).

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

    kind = "Rearrange"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Rearrange `x` by the layer's pattern."""
        return tops.rearrange(x, self.pattern, **self.lengths)


class Reduce(nn.Module):
    """`tensorops.reduce` as a layer.

    Args:
        pattern: e.g. ``"b c (h 2) (w 2) -> b c h w"``; axes missing on the right
            are reduced.
        reduction: ``"sum"``, ``"mean"``, ``"max"``, ``"min"``, ``"prod"``,
            ``"any"``, ``"all"``, ``"argmax"``, ``"argmin"``, ``"logsumexp"``,
            ``"var"``, ``"std"``, ``"rearrange"`` (no reduction) or ``"repeat"``
            (the axes new on the right are repeated, as in einops), or a callable
            ``f(x, axes)`` reducing the tuple
            of dims ``axes`` of ``x`` and dropping them. A layer with a module-level
            function pickles; one with a lambda or a local function does not
            (``copy.deepcopy`` works for both). Positional, or the keyword
            ``reduction=`` as in einops.
        **lengths: lengths of axes that cannot be inferred from the input shape.

    Raises:
        TensorOpsError: when built, if the pattern, the reduction or the lengths
            are invalid; when called, if the input does not fit the pattern.

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

    def __init__(
        self, pattern: str | None = None, reduction: Reduction | None = None, /, **lengths: Any
    ) -> None:
        super().__init__()
        spec = describe(
            "Reduce", (pattern, reduction), lengths, probe=meta_probe, name=type(self).__name__
        )
        self.pattern = spec.pattern
        self.reduction = spec.reduction
        self.lengths = dict(spec.lengths)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Reduce `x` by the layer's pattern and reduction."""
        return tops.reduce(x, self.pattern, self.reduction, **self.lengths)

    def __repr__(self) -> str:
        args = [repr(self.pattern), reduction_repr(self.reduction)]
        return call_repr(type(self).__name__, args, self.lengths)


class Repeat(PatternLayer):
    """`tensorops.repeat` as a layer.

    The new axes are a broadcast view (``Tensor.expand``, no copy) where they can
    be; copy the output before writing into it.

    Args:
        pattern: e.g. ``"b h w -> b h w c"``; every axis new on the right needs a
            length, as a keyword or an integer literal.
        **lengths: lengths of new axes and of axes that cannot be inferred.

    Raises:
        TensorOpsError: when built, if the pattern is malformed or a new axis has
            no length; when called, if the input does not fit the pattern.

    Examples:
        >>> import torch
        >>> from tensorops.layers.torch import Repeat
        >>> layer = Repeat("b h w -> b h w c", c=3)
        >>> layer
        Repeat('b h w -> b h w c', c=3)
        >>> layer(torch.zeros(2, 4, 4)).shape
        torch.Size([2, 4, 4, 3])
    """

    kind = "Repeat"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Repeat `x` by the layer's pattern."""
        return tops.repeat(x, self.pattern, **self.lengths)


class Softmax(PatternLayer):
    """`tensorops.softmax` as a layer: normalize along the bracketed axes.

    Args:
        pattern: the input's axes, those to normalize in brackets, e.g.
            ``"b h i [j]"`` (attention weights); several are normalized jointly;
            ``-> ...`` rearranges the result.
        **lengths: lengths of axes that cannot be inferred from the input shape.

    Raises:
        TensorOpsError: when built, if the pattern is malformed or marks no axis;
            when called, if the input does not fit the pattern.

    Examples:
        >>> import torch
        >>> from tensorops.layers.torch import Softmax
        >>> layer = Softmax("b h i [j]")
        >>> layer
        Softmax('b h i [j]')
        >>> layer(torch.zeros(1, 2, 3, 4))[0, 0, 0]
        tensor([0.2500, 0.2500, 0.2500, 0.2500])
    """

    kind = "Softmax"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The softmax of `x` along the layer's bracketed axes."""
        return tops.softmax(x, self.pattern, **self.lengths)


class LogSoftmax(PatternLayer):
    """`tensorops.log_softmax` as a layer (e.g. before a negative log-likelihood loss).

    Args:
        pattern: the input's axes, those to normalize in brackets, e.g. ``"b [c]"``.
        **lengths: lengths of axes that cannot be inferred from the input shape.

    Examples:
        >>> import torch
        >>> from tensorops.layers.torch import LogSoftmax
        >>> LogSoftmax("b [c]")(torch.zeros(1, 4)).exp()
        tensor([[0.2500, 0.2500, 0.2500, 0.2500]])
    """

    kind = "LogSoftmax"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The log-softmax of `x` along the layer's bracketed axes."""
        return tops.log_softmax(x, self.pattern, **self.lengths)


class Check(PatternLayer):
    """`tensorops.check` as a layer: returns its input, once its shape is checked.

    Args:
        pattern: the input's axes, e.g. ``"b c h w"``; integers, ``_``, ``...``
            and groups ``(h w)`` as in `tensorops.check`.
        **lengths: the lengths the axes must have, e.g. ``c=3``.

    Raises:
        TensorOpsError: when built, if the pattern is malformed; when called, if
            the input's shape does not fit (unless ``tops.config.checks`` is off).

    Examples:
        >>> import torch
        >>> from tensorops.layers.torch import Check
        >>> layer = Check("b c h w", c=3)
        >>> layer
        Check('b c h w', c=3)
        >>> x = torch.zeros(2, 3, 4, 4)
        >>> layer(x) is x
        True
    """

    kind = "Check"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """`x` itself, once its shape is checked against the layer's pattern."""
        return tops.check(x, self.pattern, **self.lengths)
