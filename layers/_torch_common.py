"""What the torch layers share: meta-tensor probes, the pattern-layer base, the reduction type.

Kept apart from `tensorops.layers.torch` so that the layer modules import it and
not each other. The arguments, checks and reprs are the description's
(`tensorops.layers._description`), shared with every other family.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, NoReturn

import torch
from torch import nn

from ._description import call_repr, describe

__all__ = ["PatternLayer", "Reduction", "meta_parameter", "meta_probe"]

#: A reduction: a name of `tensorops.reduce` (``"sum"``, ``"argmax"``, ...) or
#: ``f(x, axes) -> tensor``.
Reduction = str | Callable[[torch.Tensor, tuple[int, ...]], torch.Tensor]


def meta_probe(shape: tuple[int, ...]) -> torch.Tensor:
    """A meta tensor of `shape`.

    The build-time check allocates nothing on it, and registers the torch backend
    before any ``torch.compile``.
    """
    return torch.empty(shape, device="meta")


def meta_parameter(shape: tuple[int, ...]) -> nn.Parameter:
    """A meta parameter: the torch backend also learns the Parameter type before compiling."""
    return nn.Parameter(torch.empty(shape, device="meta"))


class PatternLayer(nn.Module):
    """A layer made of a pattern and axis lengths: its build-time check and its repr.

    A subclass names the op it calls in ``kind`` and defines ``forward``, which
    calls that op with ``self.pattern`` and ``self.lengths``; the description
    checks the op on a meta tensor when the layer is built.
    """

    #: The description's name of the op (``"Rearrange"``, ``"Softmax"``, ...).
    kind: ClassVar[str]

    def __init__(self, pattern: str | None = None, /, *extra: NoReturn, **lengths: Any) -> None:
        super().__init__()
        spec = describe(
            self.kind, (pattern, *extra), lengths, probe=meta_probe, name=type(self).__name__
        )
        self.pattern = spec.pattern
        self.lengths = dict(spec.lengths)

    def __repr__(self) -> str:
        return call_repr(type(self).__name__, [repr(self.pattern)], self.lengths)
