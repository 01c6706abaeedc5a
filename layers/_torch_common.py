"""What the torch layers share: the build-time check, reprs, the reduction type.

Kept apart from `tensorops.layers.torch` so that the layer modules import it
and not each other. Patterns are read with the grammar of tensorops (text only,
no tensors): the layers use the public API plus that one framework-free module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NoReturn

import torch
from torch import nn

import tensorops as tops
from tensorops._grammar import Anon, Axis, Bracket, Dots, Group, parse_concat

__all__ = [
    "PatternLayer",
    "Reduction",
    "call_repr",
    "check_when_built",
    "layer_pattern",
    "probe_shape",
    "reduction_repr",
]

#: A reduction: a name of `tensorops.reduce` (``"sum"``, ``"argmax"``, ...) or
#: ``f(x, axes) -> tensor``.
Reduction = str | Callable[[torch.Tensor, tuple[int, ...]], torch.Tensor]


def probe_shape(pattern: object, lengths: Mapping[str, Any]) -> tuple[int, ...]:
    """A shape that fits the first term of `pattern`; axes of unknown length get length 1.

    ``...`` stands for no axes; a concatenation ``(a + b)`` is its parts' lengths added.
    A pattern that does not parse gives ``()``: the op called on the probe then
    reports the syntax error.
    """
    if not isinstance(pattern, str):
        return ()
    try:
        term = parse_concat(pattern).inputs[0]
    except tops.TensorOpsError:
        return ()
    shape = []
    for element in term.elements:
        for inner in element.elements if isinstance(element, Bracket) else (element,):
            if isinstance(inner, Dots):
                continue
            if isinstance(inner, Group) and inner.parts:
                shape.append(sum(_probe_size(part, lengths) for part in inner.parts))
            else:
                shape.append(
                    _probe_size(inner.items if isinstance(inner, Group) else (inner,), lengths)
                )
    return tuple(shape)


def _probe_size(items: tuple[Any, ...], lengths: Mapping[str, Any]) -> int:
    """The length of axes composed: integers as written, names as given or 1."""
    size = 1
    for item in items:
        if isinstance(item, Anon):
            size *= item.length
        elif isinstance(item, Axis):
            value = lengths.get(item.name, 1)
            size *= value if type(value) is int and value > 0 else 1
    return size


def check_when_built(
    layer: nn.Module, run: Callable[[torch.Tensor], object], pattern: object
) -> None:
    """Run `run` on a meta tensor that fits `pattern`, so a bad layer fails when it is built.

    Meta tensors carry shapes but no data: the check allocates nothing and
    registers the torch backend before any ``torch.compile``. An error names the
    layer, not the op it calls, and leaves out the probe's shape, which would only
    confuse.
    """
    lengths: Mapping[str, Any] = getattr(layer, "lengths", {})
    probe = torch.empty(probe_shape(pattern, lengths), device="meta")
    try:
        run(probe)
    except tops.TensorOpsError as error:
        raise error.with_context(op=type(layer).__name__, inputs=()) from None


def layer_pattern(layer: nn.Module, pattern: str | None, lengths: dict[str, Any]) -> str:
    """The pattern `layer` is built with: positional, else einops' keyword ``pattern=``.

    When the pattern was given positionally, a keyword ``pattern=`` stays in
    `lengths`: the length of an axis named ``pattern``.
    """
    if pattern is None:
        pattern = lengths.pop("pattern", None)
        if pattern is None:
            name = type(layer).__name__
            raise tops.ArgumentError(
                "missing the argument 'pattern'",
                op=name,
                hint=f"pass the pattern first, or as the keyword: {name}(pattern='...')",
            )
    return pattern


def call_repr(layer: nn.Module, args: list[str], lengths: Mapping[str, Any]) -> str:
    """``Name(arg, ..., axis=length, ...)``: the call that builds `layer` again."""
    shown = args + [f"{name}={value!r}" for name, value in lengths.items()]
    return f"{type(layer).__name__}({', '.join(shown)})"


def reduction_repr(reduction: object) -> str:
    """A reduction as it is written in the call: a quoted name, or a function's name."""
    if isinstance(reduction, str):
        return repr(reduction)
    name = getattr(reduction, "__qualname__", None)
    if isinstance(name, str) and "<" not in name:
        return name  # a named function: its name reproduces the call where it is in scope
    return repr(reduction)


class PatternLayer(nn.Module):
    """A layer made of a pattern and axis lengths: its build-time check and its repr.

    A subclass defines ``forward``, which calls the op with ``self.pattern`` and
    ``self.lengths``; the check runs it on a meta tensor when the layer is built.
    """

    def __init__(self, pattern: str | None = None, /, *extra: NoReturn, **lengths: Any) -> None:
        super().__init__()
        if extra:  # here, not in the signature: Python's message would name PatternLayer
            raise TypeError(
                f"{type(self).__name__}() takes the pattern positionally and axis lengths "
                f"as keywords; {len(extra)} more positional argument(s) given"
            )
        pattern = layer_pattern(self, pattern, lengths)
        self.pattern = pattern
        self.lengths = lengths
        check_when_built(self, self.forward, pattern)

    def __repr__(self) -> str:
        return call_repr(self, [repr(self.pattern)], self.lengths)
