"""The torch layers under ``torch.jit.script``: an interpreter of their script programs.

TorchScript compiles a module's ``forward`` from its source and runs no Python, so
the eager layers (which call `tensorops.rearrange` and friends) are not what it
compiles. ``torch.jit.script`` first asks each module for the module to compile
(``__prepare_scriptable__``); a torch layer answers with one of the modules below,
holding the layer's script program (`tensorops.layers._script_program`: its
NamedTuples as they are, the rest as plain attributes) and EinMix's parameters
themselves. Their ``forward`` reads every length from the input's shape at run time,
so a scripted layer runs at any size. Called eagerly, such a module runs the layer it
was made from.

Only the torch family imports this module. Run-time errors are raised here, as
TorchScript raises them (``torch.jit.Error``, a RuntimeError), each naming the layer,
its pattern and the dimension or axis at fault.
"""

from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from ._script_program import (
    CheckProgram,
    EinMixProgram,
    Program,
    SoftmaxProgram,
    TermProgram,
    TransformProgram,
    script_program,
)

__all__ = ["scriptable_module"]

# --- the interpreter: functions TorchScript compiles -------------------------------------------
# TorchScript reads no global ints: ``...`` is the one negative axis id (``DOTS``, -1).


def _position(slot: int, dots: int, n_dots: int) -> int:
    """Where a slot's dimension is in the input, ``...`` standing for `n_dots` dimensions."""
    if dots >= 0 and slot > dots:
        return slot + n_dots - 1
    return slot


def _positions(axes: list[int], wanted: list[int], n_dots: int) -> list[int]:
    """The positions of the ids `wanted` among `axes`, ``...`` opened to `n_dots` axes."""
    positions: list[int] = []
    for axis in wanted:
        position = 0
        for other in axes:
            if other == axis:
                break
            position += n_dots if other < 0 else 1
        if axis < 0:
            for i in range(n_dots):
                positions.append(position + i)
        else:
            positions.append(position)
    return positions


def _lengths(axes: list[int], sizes: list[int], dots_shape: list[int]) -> list[int]:
    """The lengths of the ids `axes`, ``...`` opened."""
    lengths: list[int] = []
    for axis in axes:
        if axis < 0:
            lengths.extend(dots_shape)
        else:
            lengths.append(sizes[axis])
    return lengths


def _product(values: list[int]) -> int:
    product = 1
    for value in values:
        product *= value
    return product


def _reduce(
    x: torch.Tensor, reduced: list[int], kept: list[int], reduction: str, where: str
) -> torch.Tensor:
    """`x` reduced along the positions `reduced`, its other axes in the order `kept`."""
    if reduction in ("sum", "mean", "max", "min", "logsumexp", "var", "std"):
        if reduction == "sum":
            x = x.sum(reduced)
        elif reduction == "mean":
            x = x.mean(reduced)
        elif reduction == "max":
            x = x.amax(reduced)
        elif reduction == "min":
            x = x.amin(reduced)
        elif reduction == "logsumexp":
            x = torch.logsumexp(x, reduced)
        elif reduction == "var":
            x = x.var(reduced, unbiased=False)
        else:
            x = x.std(reduced, unbiased=False)
        remaining = sorted(kept)
        order = [remaining.index(position) for position in kept]
        return x.permute(order) if order != list(range(len(order))) else x
    # The others reduce one axis: the reduced ones moved last and merged, in input order.
    shape = x.shape
    merged = [shape[p] for p in kept] + [_product([shape[p] for p in reduced])]
    x = x.permute(kept + reduced).reshape(merged)
    if reduction == "prod":
        return x.prod(-1)
    if reduction == "any":
        return x.any(-1)
    if reduction == "all":
        return x.all(-1)
    if reduction == "argmax":
        return x.argmax(-1)
    if reduction == "argmin":
        return x.argmin(-1)
    # Every name the eager layer accepts is one of the above; TorchScript wants a last word.
    raise ValueError(f"{where}: the reduction {reduction} cannot be scripted")


def _out_shape(
    out_dims: list[list[int]], out_dots: int, sizes: list[int], dots_shape: list[int]
) -> list[int]:
    shape: list[int] = []
    for slot, dim in enumerate(out_dims):
        if slot == out_dots:
            shape.extend(dots_shape)
        else:
            shape.append(_product(_lengths(dim, sizes, dots_shape)))
    return shape


def _composed(dims: list[list[int]], dots: int) -> bool:
    """Whether some dimension is not one axis: a composition, ``(...)`` or a unit axis."""
    return any(len(dim) != 1 or (dim == [-1] and slot != dots) for slot, dim in enumerate(dims))


# --- the modules torch.jit.script compiles ------------------------------------------------------


class _Scriptable(nn.Module):
    """What every scriptable module shares: called eagerly, the layer it was made from runs."""

    # In a tuple: an nn.Module attribute would be scripted as a submodule of its own.
    __jit_ignored_attributes__ = ("_eager",)
    if TYPE_CHECKING:  # not an annotation at run time: TorchScript reads those
        _eager: tuple[Any]

    def __init__(self, layer: Any) -> None:
        super().__init__()
        self._eager = (layer,)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._eager[0](*args, **kwargs)

    def __repr__(self) -> str:
        return repr(self._eager[0])


class _Term(nn.Module):
    """Reads an input's shape as a term says (`TermProgram`): a part of the modules below."""

    program: TermProgram

    def __init__(self, term: TermProgram) -> None:
        super().__init__()
        self.program = term

    def forward(self, shape: list[int]) -> tuple[list[int], int]:
        """Each axis id's length read from `shape`, and the number of dimensions under ``...``."""
        term = self.program
        rank = len(shape)
        fixed = len(term.dims) - 1 if term.dots >= 0 else len(term.dims)
        if rank < fixed or (term.dots < 0 and rank != fixed):
            wanted = str(fixed) + (" or more" if term.dots >= 0 else "")
            raise ValueError(f"{term.where}: the input has {rank} dimensions, the pattern {wanted}")
        n_dots = rank - fixed
        sizes = list(term.known)
        for slot in term.order:
            if slot == term.dots:
                continue
            position = _position(slot, term.dots, n_dots)
            length = shape[position]
            product = 1
            unknown = -1
            for axis in term.dims[slot]:
                if sizes[axis] < 0:
                    unknown = axis
                else:
                    product *= sizes[axis]
            where, text = term.where, term.texts[slot]
            if unknown >= 0:
                if product == 0 or length % product != 0:
                    raise ValueError(
                        f"{where}: dimension {position} ({text}) has length {length}, not a "
                        f"multiple of {product}: the length of axis {term.names[unknown]} "
                        "has no solution"
                    )
                sizes[unknown] = length // product
            elif length != product:
                raise ValueError(
                    f"{where}: dimension {position} ({text}) has length {length}, "
                    f"expected {product}"
                )
        return sizes, n_dots


class _Transform(_Scriptable):
    """A scripted Rearrange, Reduce or Repeat (and EinMix's rearranges)."""

    program: TransformProgram
    reshape_in: bool
    reshape_out: bool
    kept_at: list[int]
    reduced_at: list[int]
    added_at: list[int]
    permutes: bool

    def __init__(self, layer: Any, program: TransformProgram) -> None:
        super().__init__(layer)
        self.term = _Term(program.term)
        self.program = program
        self.reshape_in = _composed(program.term.dims, program.term.dots)
        self.reshape_out = _composed(program.out_dims, program.out_dots)
        # Where the input has no '...': the positions of every call, worked out here.
        self.kept_at = _positions(program.in_axes, program.kept, 0)
        self.reduced_at = _positions(program.in_axes, program.reduce, 0)
        self.added_at = sorted(_positions(program.out_axes, program.added, 0))
        self.permutes = self.kept_at != list(range(len(self.kept_at)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        program = self.program
        dots = program.term.dots
        shape = list(x.shape)
        sizes, n_dots = self.term(shape)
        start = max(dots, 0)  # no '...': n_dots is 0
        dots_shape = shape[start : start + n_dots]
        if self.reshape_in:
            x = x.reshape(_lengths(program.in_axes, sizes, dots_shape))
        if dots < 0:  # the positions are known: worked out once
            kept, reduced, added, permutes = (
                self.kept_at,
                self.reduced_at,
                self.added_at,
                self.permutes,
            )
        else:
            kept = _positions(program.in_axes, program.kept, n_dots)
            reduced = _positions(program.in_axes, program.reduce, n_dots)
            added = sorted(_positions(program.out_axes, program.added, n_dots))
            permutes = kept != list(range(len(kept)))
        if len(reduced) > 0:  # none where only '...' is reduced and stands for no axes
            x = _reduce(x, reduced, kept, program.reduction, program.term.where)
        elif permutes:
            x = x.permute(kept)
        if len(added) > 0:
            for position in added:
                x = x.unsqueeze(position)
            x = x.expand(_lengths(program.out_axes, sizes, dots_shape))
        if self.reshape_out:
            x = x.reshape(_out_shape(program.out_dims, program.out_dots, sizes, dots_shape))
        return x


class _Check(_Scriptable):
    """A scripted Check."""

    def __init__(self, layer: Any, program: CheckProgram) -> None:
        super().__init__(layer)
        self.term = _Term(program.term)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.term(list(x.shape))
        return x


class _Softmax(_Scriptable):
    """A scripted Softmax or LogSoftmax: torch's kernel along the marked dimensions."""

    dots: int
    marked: list[int]
    log: bool

    def __init__(self, layer: Any, program: SoftmaxProgram) -> None:
        super().__init__(layer)
        self.term = _Term(program.term)
        self.dots = program.term.dots
        self.marked, self.log = program.marked, program.log
        output = program.output
        self.output = nn.Identity() if output is None else _Transform(layer, output)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, n_dots = self.term(list(x.shape))
        axes: list[int] = []
        for slot in self.marked:
            if slot == self.dots:
                for i in range(n_dots):
                    axes.append(slot + i)
            else:
                axes.append(_position(slot, self.dots, n_dots))
        if len(axes) == 1:
            x = torch.log_softmax(x, axes[0]) if self.log else torch.softmax(x, axes[0])
        elif axes == list(range(axes[0], axes[-1] + 1)):
            flat = x.flatten(axes[0], axes[-1])
            flat = torch.log_softmax(flat, axes[0]) if self.log else torch.softmax(flat, axes[0])
            x = flat.view(x.shape)
        else:
            shifted = x - torch.logsumexp(x, axes, keepdim=True)
            x = shifted if self.log else torch.exp(shifted)
        output: torch.Tensor = self.output(x)
        return output


class _EinMix(_Scriptable):
    """A scripted EinMix: its rearranges, ``torch.einsum`` with the weight, the bias."""

    equation: str
    bias: torch.Tensor | None

    def __init__(self, layer: Any, program: EinMixProgram) -> None:
        super().__init__(layer)
        self.pre = nn.Identity() if program.pre is None else _Transform(layer, program.pre)
        self.post = nn.Identity() if program.post is None else _Transform(layer, program.post)
        self.equation = program.equation
        self.weight = layer.weight
        self.bias = layer.bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.einsum(self.equation, self.pre(x), self.weight)
        bias = self.bias
        if bias is not None:
            x = x + bias
        output: torch.Tensor = self.post(x)
        return output


def scriptable_module(layer: Any) -> nn.Module:
    """The module ``torch.jit.script`` compiles for the torch layer `layer`.

    Raises:
        TensorOpsError: the layer cannot run without Python (see
            `tensorops.layers._script_program.script_program`).
    """
    program: Program = script_program(layer._description)
    if isinstance(program, TransformProgram):
        return _Transform(layer, program)
    if isinstance(program, CheckProgram):
        return _Check(layer, program)
    if isinstance(program, SoftmaxProgram):
        return _Softmax(layer, program)
    return _EinMix(layer, program)
