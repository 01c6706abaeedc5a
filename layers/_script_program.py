"""A layer's script program: the layer read once into plain ints, lists and strings.

This module knows no framework. TorchScript runs no Python: a scripted torch layer
(`tensorops.layers._torchscript`) cannot call `tensorops.rearrange`, which plans from
the pattern text. So each layer's description is read here, once, into a program of
plain values that a small interpreter written in TorchScript's subset of Python runs.
Every program starts from a `TermProgram`, how the input's shape is read:

* each elementary axis gets an id: a name keeps one id wherever it appears, an
  integer literal above 1 and ``_`` get their own; ``names`` and ``known`` give each
  id its name and length (``-1`` where the input gives it at run time);
* ``dims`` lists the axis ids of each dimension of the pattern (a *slot*): ``[]`` is a
  unit dimension (``1``, ``()``), ``[DOTS]`` is ``...``, the dimensions it stands for
  counted from the input's rank at run time;
* ``order`` is the order in which the slots are bound, each with at most one id
  unknown at its turn: that one is the dimension's length divided by the product of
  the others (which must divide it).

A `TransformProgram` (Rearrange, Reduce, Repeat, and EinMix's rearranges) adds the
elementary axes in input order, those reduced, those kept in output order, those
added (Repeat), and the output's dimensions. A `SoftmaxProgram` marks the slots to
normalize; a `CheckProgram` only binds; an `EinMixProgram` is an einsum between two
transforms.

`TermProgram` and `TransformProgram` are NamedTuples, and this module's annotations are
not postponed: a scripted module holds such a program as it is, and TorchScript reads
a NamedTuple's field types from its annotations.

Examples:
    >>> from tensorops.layers._description import describe
    >>> from tensorops.layers._script_program import script_program
    >>> program = script_program(describe("Reduce", ("b (h 2) c -> b c h", "max"), {}))
    >>> program.term.names, program.term.known, program.term.dims
    (['b', 'h', '2', 'c'], [-1, -1, 2, -1], [[0], [1, 2], [3]])
    >>> program.reduce, program.kept, program.out_dims
    ([2], [0, 3, 1], [[0], [3], [1]])
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import tensorops as tops
from tensorops._grammar import Anon, Axis, Bracket, Dots, Group, Skip, Term, parse_pattern

from ._description import LayerSpec
from ._einmix import EinMixPlan

__all__ = [
    "DOTS",
    "CheckProgram",
    "EinMixProgram",
    "Program",
    "SoftmaxProgram",
    "TermProgram",
    "TransformProgram",
    "script_program",
]

#: The id of ``...`` in a program's lists of axis ids.
DOTS = -1


class TermProgram(NamedTuple):
    """How an input's shape is read: see the module's docstring.

    Attributes:
        where: the layer as its repr writes it, which every run-time error names.
        names, known: each axis id's name and length (``-1``: read from the input).
        dims: each slot's axis ids (``[]``: a unit dimension, ``[DOTS]``: ``...``).
        texts: each slot as the pattern writes it, for messages.
        order: the slots in the order they are bound.
        dots: the slot of ``...``, or ``-1``.
    """

    where: str
    names: list[str]
    known: list[int]
    dims: list[list[int]]
    texts: list[str]
    order: list[int]
    dots: int


class TransformProgram(NamedTuple):
    """A rearrange, reduce or repeat: the input term, then what becomes of its axes.

    Attributes:
        term: how the input is read.
        in_axes: the input's elementary axis ids, in order (``DOTS`` once).
        reduce: the ids reduced, in input order.
        kept: the ids kept, in output order.
        out_axes: the output's elementary axis ids, in order (added ones included).
        added: the ids new in the output (Repeat), their lengths known.
        out_dims: each output dimension's axis ids.
        out_dots: the output slot of ``...`` standing alone (not ``(...)``), or ``-1``.
        reduction: the reduction's name (``"rearrange"``: none).
    """

    term: TermProgram
    in_axes: list[int]
    reduce: list[int]
    kept: list[int]
    out_axes: list[int]
    added: list[int]
    out_dims: list[list[int]]
    out_dots: int
    reduction: str


@dataclass(frozen=True)
class CheckProgram:
    """Check: the input is bound against the term, and returned."""

    term: TermProgram


@dataclass(frozen=True)
class SoftmaxProgram:
    """Softmax and LogSoftmax: the marked slots normalized, then an optional rearrange."""

    term: TermProgram
    marked: list[int]
    log: bool
    output: TransformProgram | None


@dataclass(frozen=True)
class EinMixProgram:
    """EinMix: a rearrange (or none), the einsum with the weight, the bias, a rearrange."""

    pre: TransformProgram | None
    equation: str
    post: TransformProgram | None


Program = TransformProgram | CheckProgram | SoftmaxProgram | EinMixProgram


def _refuse(where: str, reason: str) -> tops.ArgumentError:
    return tops.ArgumentError(
        f"{where} cannot be scripted: {reason}",
        op="torch.jit.script",
        hint="torch.jit.trace and torch.export run every layer",
    )


class _Reader:
    """Gives axis ids to the items of terms, one id per name."""

    def __init__(self, where: str, pattern: str, lengths: Mapping[str, Any]) -> None:
        self.where, self.pattern, self.lengths = where, pattern, lengths
        self.names: list[str] = []
        self.known: list[int] = []
        self.ids: dict[str, int] = {}

    def new(self, name: str, length: int) -> int:
        self.names.append(name)
        self.known.append(length)
        return len(self.names) - 1

    def item(self, item: object) -> list[int]:
        """The axis ids of one item: none for a unit axis."""
        if isinstance(item, Dots):
            return [DOTS]
        if isinstance(item, Anon):
            return [] if item.length == 1 else [self.new(str(item.length), item.length)]
        if isinstance(item, Skip):
            return [self.new("_", -1)]
        if not isinstance(item, Axis):
            raise _refuse(self.where, f"{type(item).__name__.lower()} in the pattern")
        if item.name not in self.ids:
            length = self.lengths.get(item.name, -1)
            if type(length) is not int:
                raise _refuse(self.where, f"the length of {item.name!r} is not an int")
            self.ids[item.name] = self.new(item.name, length)
        return [self.ids[item.name]]

    def dims(self, term: Term) -> tuple[list[list[int]], list[str], list[int], int]:
        """Each slot's axis ids and text, the slots marked by brackets, the slot of a lone '...'."""
        dims: list[list[int]] = []
        texts: list[str] = []
        marked: list[int] = []
        dots = -1
        for element in term.elements:
            if isinstance(element, Dots):
                dots = len(dims)
            inner = element.elements if isinstance(element, Bracket) else (element,)
            for part in inner:
                if isinstance(element, Bracket):
                    marked.append(len(dims))
                items = part.items if isinstance(part, Group) else (part,)
                dims.append([i for item in items for i in self.item(item)])
                texts.append(self.pattern[part.span[0] : part.span[1]])
        return dims, texts, marked, dots

    def term(self, dims: list[list[int]], texts: list[str]) -> TermProgram:
        for dim, text in zip(dims, texts, strict=True):
            if len(set(dim)) != len(dim):
                raise _refuse(self.where, f"an axis repeated inside {text!r}")
        known = {i for i, length in enumerate(self.known) if length >= 0}
        order: list[int] = []
        waiting = list(range(len(dims)))
        while waiting:
            ready = [s for s in waiting if len(set(dims[s]) - known - {DOTS}) <= 1]
            if not ready:
                raise _refuse(self.where, f"the lengths in {texts[waiting[0]]!r} cannot be solved")
            for slot in ready:
                order.append(slot)
                known.update(set(dims[slot]) - {DOTS})
            waiting = [s for s in waiting if s not in ready]
        dots = next((s for s, dim in enumerate(dims) if DOTS in dim), -1)
        if dots >= 0 and dims[dots] != [DOTS]:
            raise _refuse(self.where, "'...' inside parentheses on the input side")
        return TermProgram(self.where, list(self.names), list(self.known), dims, texts, order, dots)


def _parse(where: str, pattern: str) -> tuple[Term, Term | None]:
    try:
        parsed = parse_pattern(pattern)
    except tops.TensorOpsError:
        raise _refuse(where, "a concatenation '+' in the pattern") from None
    output = parsed.outputs[0] if parsed.outputs else None
    return parsed.inputs[0], output


def _transform(
    where: str, pattern: str, lengths: Mapping[str, Any], reduction: str
) -> TransformProgram:
    """The program of a rearrange, reduce or repeat of one input."""
    left, right = _parse(where, pattern)
    assert right is not None
    reader = _Reader(where, pattern, lengths)
    dims, texts, _, _ = reader.dims(left)
    out_dims, _, _, out_dots = reader.dims(right)
    term = reader.term(dims, texts)  # the output's new axes are in its tables too
    in_axes = [i for dim in dims for i in dim]
    out_axes = [i for dim in out_dims for i in dim]
    added = [i for i in out_axes if i not in in_axes]
    unknown = [reader.names[i] for i in added if reader.known[i] < 0]
    if unknown:
        raise _refuse(where, f"the length of the new axis {unknown[0]!r} is not given")
    return TransformProgram(
        term=term,
        in_axes=in_axes,
        reduce=[i for i in in_axes if i not in out_axes],
        kept=[i for i in out_axes if i in in_axes],
        out_axes=out_axes,
        added=added,
        out_dims=out_dims,
        out_dots=out_dots,
        reduction=reduction,
    )


def _pattern_program(spec: LayerSpec) -> Program:
    where = repr(spec)
    if spec.kind in ("Rearrange", "Repeat"):
        return _transform(where, spec.pattern, spec.lengths, "rearrange")
    if spec.kind == "Reduce":
        reduction = spec.reduction
        if not isinstance(reduction, str):
            raise _refuse(where, "a reduction given as a Python function")
        named = "rearrange" if reduction == "repeat" else reduction
        return _transform(where, spec.pattern, spec.lengths, named)
    left, right = _parse(where, spec.pattern)
    reader = _Reader(where, spec.pattern, spec.lengths)
    dims, texts, marked, _ = reader.dims(left)
    term = reader.term(dims, texts)
    if spec.kind == "Check":
        return CheckProgram(term)
    output = None
    if right is not None:  # the same axes, brackets dropped: a rearrange of the result
        text = spec.pattern.replace("[", " ").replace("]", " ")
        output = _transform(where, text, spec.lengths, "rearrange")
    return SoftmaxProgram(term, marked, spec.kind == "LogSoftmax", output)


def script_program(description: LayerSpec | EinMixPlan) -> Program:
    """The script program of a layer's description (see the module's docstring).

    Raises:
        TensorOpsError: the layer cannot run without Python: a reduction given as
            a function, a concatenation ``(a + b)``, a length that is not an int.
    """
    if isinstance(description, LayerSpec):
        return _pattern_program(description)
    where = repr(description)
    pre = post = None
    if description.pre is not None:
        pre = _transform(where, description.pre, description.pre_lengths, "rearrange")
    if description.post is not None:
        post = _transform(where, description.post, {}, "rearrange")
    return EinMixProgram(pre, description.einsum_pattern, post)
