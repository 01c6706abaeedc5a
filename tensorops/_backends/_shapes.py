"""An adapter whose arrays are shapes: it runs a plan's calls on shapes and writes each down.

`tensorops.explain` uses it to show what an op does for the ops whose plans are
executors (softmax, the element-wise ops, the ops along axes, concatenation and
splitting): it makes the op's executor for this adapter, exactly as the dispatch
makes it for NumPy or torch, runs it on `Shaped` stand-ins and lists the calls
the executor made, with the shape after each. Nothing is computed and nothing is
allocated, whatever the shapes.

Only the calls of those plans are known here; any other raises `ArgumentError`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from tensorops._errors import ArgumentError
from tensorops._types import Executor

__all__ = ["ShapeBackend", "Shaped"]


class Shaped(NamedTuple):
    """An array that is only a shape (and a dtype kind, for integer results)."""

    shape: tuple[int, ...]
    dtype: str = "float"

    @property
    def ndim(self) -> int:
        return len(self.shape)


class ShapeBackend:
    """An adapter of `Shaped` arrays that records every call: ``(call, result shapes)``."""

    name = "shapes"

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[tuple[int, ...], ...]]] = []

    def _note(self, call: str, *results: Shaped) -> None:
        self.calls.append((call, tuple(result.shape for result in results)))

    def __getattr__(self, name: str) -> Any:
        raise ArgumentError(f"explain cannot show the call {name!r} of this op's plan")

    # -- the calls -----------------------------------------------------------------------
    def sizes(self, x: Shaped) -> tuple[int, ...]:
        return x.shape

    def traced(self, shapes: Any) -> bool:
        return False

    def reshape(self, x: Shaped, shape: tuple[int, ...]) -> Shaped:
        out = Shaped(_fill(tuple(shape), math.prod(x.shape)), x.dtype)
        self._note("reshape", out)
        return out

    def permute(self, x: Shaped, axes: tuple[int, ...]) -> Shaped:
        out = Shaped(tuple(x.shape[i] for i in axes), x.dtype)
        self._note(f"permute {_axes(axes)}", out)
        return out

    def expand(self, x: Shaped, shape: tuple[int, ...]) -> Shaped:
        out = Shaped(tuple(shape), x.dtype)
        self._note("expand (no copy)", out)
        return out

    def reduce(self, x: Shaped, reduction: str, axes: tuple[int, ...]) -> Shaped:
        out = Shaped(tuple(n for i, n in enumerate(x.shape) if i not in axes), x.dtype)
        self._note(f"{reduction} over axes {_axes(axes)}", out)
        return out

    def stack(self, xs: Sequence[Shaped]) -> Shaped:
        out = Shaped((len(xs), *xs[0].shape), xs[0].dtype)
        self._note(f"stack {len(xs)} arrays", out)
        return out

    def concat(self, xs: Sequence[Shaped], axis: int) -> Shaped:
        shape = list(xs[0].shape)
        shape[axis] = sum(x.shape[axis] for x in xs)
        out = Shaped(tuple(shape), xs[0].dtype)
        self._note(f"concatenate {len(xs)} along axis {axis}", out)
        return out

    def split(self, x: Shaped, sizes: Sequence[int], axis: int) -> list[Shaped]:
        pieces = []
        for size in sizes:
            shape = list(x.shape)
            shape[axis] = size
            pieces.append(Shaped(tuple(shape), x.dtype))
        self._note(f"split axis {axis} into {tuple(sizes)} (views)", *pieces)
        return pieces

    # -- the executors of one call ---------------------------------------------------------
    def permuter(self, axes: tuple[int, ...]) -> Executor:
        return lambda x, arg: self.permute(x, axes)

    def reshaper(self, shape: tuple[int, ...]) -> Executor:
        return lambda x, arg: self.reshape(x, shape)

    def reducer(self, reduction: str, axes: tuple[int, ...]) -> Executor:
        return lambda x, arg: self.reduce(x, reduction, axes)

    def _along(self, call: str, dtype: str | None = None) -> Executor:
        def run(x: Shaped, arg: Any) -> Shaped:
            out = Shaped(x.shape, dtype or x.dtype)
            self._note(call, out)
            return out

        return run

    def softmaxer(self, axes: tuple[int, ...], log: bool) -> Executor:
        return self._along(f"{'log_softmax' if log else 'softmax'} over axes {_axes(axes)}")

    def flipper(self, axes: tuple[int, ...]) -> Executor:
        return self._along(f"flip axes {_axes(axes)}")

    def roller(self, shifts: tuple[int, ...], axes: tuple[int, ...]) -> Executor:
        return self._along(f"roll axes {_axes(axes)} by {shifts}")

    def sorter(self, axis: int, descending: bool, indices: bool) -> Executor:
        call = f"{'argsort' if indices else 'sort'} along axis {axis}"
        call += " (descending)" if descending else ""
        return self._along(call, "int" if indices else None)

    def cumsummer(self, axis: int) -> Executor:
        return self._along(f"cumsum along axis {axis}")

    def elementwiser(self, name: str, numbers: tuple[int, ...]) -> Callable[..., Any]:
        def run(*operands: Any) -> Shaped:
            shapes = [x.shape for x in operands if isinstance(x, Shaped)]
            out = Shaped(_broadcast(shapes))
            self._note(f"{name} (broadcasting)", out)
            return out

        return run


def _axes(axes: Sequence[int]) -> str:
    return "(" + ",".join(str(axis) for axis in axes) + ")"


def _fill(shape: tuple[int, ...], size: int) -> tuple[int, ...]:
    """`shape` with a ``-1`` replaced by what the size leaves for it."""
    if -1 not in shape:
        return shape
    known = math.prod(n for n in shape if n != -1)
    return tuple(size // known if known and n == -1 else n for n in shape)


def _broadcast(shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    rank = max((len(shape) for shape in shapes), default=0)
    out = [1] * rank
    for shape in shapes:
        for i, n in enumerate(shape, rank - len(shape)):
            out[i] = max(out[i], n)
    return tuple(out)
