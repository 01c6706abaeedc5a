"""What the torch layers share: pattern tokens, the build-time check, reprs.

Kept apart from :mod:`tensorops.layers.torch` so that the layer modules import it
and not each other.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn

import tensorops as tops

#: A reduction: ``"sum" "mean" "max" "min" "prod" "any" "all"`` or ``f(x, axes) -> tensor``.
Reduction = str | Callable[[torch.Tensor, tuple[int, ...]], torch.Tensor]

# Names, integers, "...", and parentheses. Only used on patterns the ops accept,
# to build a probe input and EinMix's helper patterns; the ops do the validation.
_TOKEN = re.compile(r"\.\.\.|[()]|[^\s().]+")


def _dims(term: str) -> list[list[str]]:
    """The dimensions of a term, each as its tokens (names, integers, ``...``)."""
    dims: list[list[str]] = []
    group: list[str] | None = None
    for token in _TOKEN.findall(term):
        if token == "(":
            if group is None:
                group = []
        elif token == ")":
            if group is not None:
                dims.append(group)  # "()" is a unit axis: an empty group
                group = None
        elif group is not None:
            group.append(token)
        else:
            dims.append([token])
    if group is not None:
        dims.append(group)
    return dims


def _probe_shape(pattern: object, lengths: Mapping[str, Any]) -> tuple[int, ...]:
    """A shape that fits the left side of `pattern`; axes of unknown length get length 1."""
    if not isinstance(pattern, str):
        return ()
    shape = []
    for dim in _dims(pattern.split("->")[0].split(",")[0]):
        if dim == ["..."]:
            continue  # "..." may stand for no axes at all
        size = 1
        for token in dim:
            value = int(token) if token.isdigit() else lengths.get(token, 1)
            size *= value if type(value) is int and value > 0 else 1
        shape.append(size)
    return tuple(shape)


def _check(layer: nn.Module, run: Callable[[torch.Tensor], object], pattern: object) -> None:
    """Run `run` on a meta tensor that fits `pattern`, so a bad layer fails when it is built.

    Meta tensors carry shapes but no data: the check allocates nothing and
    registers the torch backend before any ``torch.compile``.
    """
    lengths: Mapping[str, Any] = getattr(layer, "lengths", {})
    probe = torch.empty(_probe_shape(pattern, lengths), device="meta")
    try:
        run(probe)
    except tops.TensorOpsError as error:
        error.op = type(layer).__name__
        error.inputs = ()  # the probe's shape would only confuse
        raise error from None


def _call_repr(layer: nn.Module, args: list[str], lengths: Mapping[str, Any]) -> str:
    shown = args + [f"{name}={value!r}" for name, value in lengths.items()]
    return f"{type(layer).__name__}({', '.join(shown)})"


def _reduction_repr(reduction: object) -> str:
    if isinstance(reduction, str):
        return repr(reduction)
    name = getattr(reduction, "__qualname__", None)
    if isinstance(name, str) and "<" not in name:
        return name  # a named function: its name reproduces the call where it is in scope
    return repr(reduction)
