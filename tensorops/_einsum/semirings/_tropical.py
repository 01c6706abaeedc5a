"""The ``"max"`` and ``"min"`` semirings' steps: max-plus and min-plus, block by block.

A pairwise step that takes the maximum over axes, ``max_k a[r, k] + b[k, c]``, has no
BLAS: it adds a broadcast block ``a[r, k, 1] + b[1, k, c]`` and reduces it with the
framework's fused ``max``. The block is made in pieces of at most ``cap`` elements
(the memory limit, else `tensorops._einsum.equations._semiring.BLOCK_CAP`), over rows, columns
and batches, and over ``k`` itself with a running maximum when one row of it is too
large. An axis reduced by one operand alone is the framework's ``max``; a step with
nothing reduced is an addition.

With back-pointers asked for (``argmax=True``), every reduction also records where
its optimum is: the position over its reduced axes, flattened in their order. Ties
go to the first position, as ``argmax`` has it: a running maximum replaces its
value only by a strictly better one.
"""

from __future__ import annotations

from typing import Any

from tensorops._axes import product
from tensorops._einsum.equations._semiring import pieces
from tensorops._einsum.programs._execute import Pair, arrange_output
from tensorops._types import Backend

__all__ = ["Pointers", "Tropical"]


class Pointers:
    """The back-pointers of one run, for `tensorops._einsum.semirings._backtrack`.

    Attributes:
        prepare: Operand slot -> where the optimum of its own reduced axes is.
        pairs: Per pairwise step: those of its left and right operands' own reduced
            axes, and its own (None where nothing is reduced).
    """

    __slots__ = ("pairs", "prepare")

    def __init__(self) -> None:
        self.prepare: dict[int, Any] = {}
        self.pairs: list[tuple[Any, Any, Any]] = []


class Tropical:
    """The steps of ``"max"`` or ``"min"`` with blocks of at most `cap` elements."""

    __slots__ = ("arg", "cap", "name")

    def __init__(self, name: str, cap: int) -> None:
        self.name, self.cap = name, cap
        self.arg = "argmax" if name == "max" else "argmin"

    def better(self, new: Any, old: Any) -> Any:
        """Where `new` strictly beats `old` (a tie keeps the first)."""
        return new > old if self.name == "max" else new < old

    def merge(self, backend: Backend, old: Any, new: Any) -> Any:
        """The semiring's addition of two results (the slices of a sliced contraction)."""
        return backend.maximum(old, new) if self.name == "max" else backend.minimum(old, new)

    def reduce(
        self, backend: Backend, x: Any, axes: tuple[int, ...], pointers: bool
    ) -> tuple[Any, Any]:
        """The maximum (minimum) over `axes`, and where it is if `pointers`, else None."""
        values = backend.reduce(x, self.name, axes)
        return values, backend.reduce(x, self.arg, axes) if pointers else None

    def pair(self, backend: Backend, a: Any, b: Any, pair: Pair, pointers: Pointers | None) -> Any:
        """One pairwise step; its back-pointers are appended to `pointers` when given."""
        found = pointers is not None
        own_a = own_b = step = None
        if pair.sum_left:
            a, own_a = self.reduce(backend, a, pair.sum_left, found)
        if pair.sum_right:
            b, own_b = self.reduce(backend, b, pair.sum_right, found)
        a = arrange_output(backend, a, pair.perm_left, pair.shape_left)
        b = arrange_output(backend, b, pair.perm_right, pair.shape_right)
        if pair.mode == "multiply":
            x = a + b
        else:
            sizes = backend.sizes(a)  # not a.shape: a graph on PyTensor
            batch = sizes[:-2] if pair.mode == "matmul" else sizes[:-1]
            x, step = self._product(backend, a, b, pair.mode, batch, found)
        if pair.shape_out is not None:
            x = backend.reshape(x, pair.shape_out)
            step = None if step is None else backend.reshape(step, pair.shape_out)
        if pointers is not None:
            pointers.pairs.append((own_a, own_b, step))
        return x

    def _product(
        self, backend: Backend, a: Any, b: Any, mode: str, batch: tuple[int, ...], found: bool
    ) -> tuple[Any, Any]:
        """``max_k a[..., r, k] + b[..., k, c]`` (a batched inner product: no r, no c)."""
        count = product(batch)
        inner = backend.sizes(a)[-1]
        rows, columns = (backend.sizes(a)[-2], backend.sizes(b)[-1]) if mode == "matmul" else (1, 1)
        a = backend.reshape(a, (count, rows, inner))
        b = backend.reshape(b, (count, inner, columns))
        values, where = self._blocks(backend, a, b, found)
        made = (*batch, rows, columns) if mode == "matmul" else batch
        values = backend.reshape(values, made)
        return values, None if where is None else backend.reshape(where, made)

    def _blocks(self, backend: Backend, a: Any, b: Any, found: bool) -> tuple[Any, Any]:
        """The product of ``(n, r, k)`` by ``(n, k, c)`` blocks, assembled as ``(n, r, c)``."""
        n, rows, inner = backend.sizes(a)
        columns = backend.sizes(b)[2]
        cap = self.cap
        if n * rows * inner * columns <= cap:
            return self._over_inner(backend, a, b, found, inner)
        k = min(inner, cap)
        c = min(columns, max(1, cap // k))
        r = min(rows, max(1, cap // (k * c)))
        m = min(n, max(1, cap // (k * c * r)))
        outer: list[tuple[Any, Any]] = []
        for batch in pieces(n, m):
            middle: list[tuple[Any, Any]] = []
            for rows_piece in pieces(rows, r):
                left = a[batch, rows_piece, :]
                parts = [
                    self._over_inner(backend, left, b[batch, :, columns_piece], found, k)
                    for columns_piece in pieces(columns, c)
                ]
                middle.append(_joined(backend, parts, 2))
            outer.append(_joined(backend, middle, 1))
        return _joined(backend, outer, 0)

    def _over_inner(self, backend: Backend, a: Any, b: Any, found: bool, k: int) -> tuple[Any, Any]:
        """One output block, its inner axis taken `k` at a time with a running optimum."""
        inner = backend.sizes(a)[2]
        if k >= inner:
            return self._block(backend, a, b, found)
        best = where = None
        for piece in pieces(inner, k):
            values, at = self._block(backend, a[:, :, piece], b[:, piece, :], found)
            if best is None:
                best, where = values, at
                continue
            if not found:
                best = self.merge(backend, best, values)
                continue
            better = self.better(values, best)
            best = backend.where(better, values, best)
            where = backend.where(better, at + piece.start, where)
        return best, where

    def _block(self, backend: Backend, a: Any, b: Any, found: bool) -> tuple[Any, Any]:
        """One block ``a[n, r, k, 1] + b[n, 1, k, c]``, reduced over ``k``."""
        n, rows, inner = backend.sizes(a)
        left = backend.reshape(a, (n, rows, inner, 1))
        block = left + backend.reshape(b, (n, 1, inner, backend.sizes(b)[2]))
        return self.reduce(backend, block, (2,), found)


def _joined(backend: Backend, parts: list[tuple[Any, Any]], axis: int) -> tuple[Any, Any]:
    """Blocks (values, back-pointers) concatenated along `axis`."""
    if len(parts) == 1:
        return parts[0]
    values = backend.concat([v for v, _ in parts], axis)
    if parts[0][1] is None:
        return values, None
    return values, backend.concat([w for _, w in parts], axis)
