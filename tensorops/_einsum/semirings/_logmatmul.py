"""The log-space matrix product, exact at any magnitude: BLAS where that is exact.

``log sum_k exp(a[n, r, k] + b[n, k, c])`` is computed first as BLAS does it fastest,

    log( exp(a - ma) @ exp(b - mb) ) + (ma + mb)

with ``ma`` the maximum of ``a`` over ``k`` per row and ``mb`` that of ``b`` per column.
Every term of that shifted product is at most 1. Where the two maxima fall on different
``k``, the terms can all be tiny, and underflow to 0, though the true value is finite.
Where the shifted product ``p`` is at least ``exp(-spread(k))``, every term that matters
lies within ``spread(k) + log k`` of the shifts, and the result is within
``(3 spread + log k + k + 6) u + 2 |result| u`` of the truth (``u`` the unit roundoff:
the rounding of the shifted values, the exps, the sum of ``k`` positive terms, the log
and the two additions). `spread` keeps that within 4 ulps of ``max(1, |result|)`` per
summed term, and at most `MAX_SPREAD`, so that those terms are normal numbers in float32.

Positions below the floor (zeros included) are recomputed exactly, as the broadcast
``log sum_k exp(a[r, k] + b[k, c])`` shifted by its own maximum, in blocks of at most
the memory limit (`tensorops._einsum.equations._semiring.BLOCK_CAP` without one) and only in the
tiles of the output that hold such a position: the fast product's flags are read
(`Backend.known`). Where values are not known as the step runs (a staged graph, a lazy
family), every tile is computed exactly. A position whose every term is ``-inf`` is
``-inf``, with a gradient of 0, never ``nan``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from tensorops._axes import product
from tensorops._einsum.equations._semiring import pieces
from tensorops._types import Backend

__all__ = [
    "DENSE",
    "EVERY_AXIS",
    "MAX_SPREAD",
    "SPARSE_TILE",
    "Side",
    "exact_product",
    "floor",
    "log_matmul",
    "spread",
    "underflowed",
]

#: Every axis of an array of each rank.
EVERY_AXIS = tuple(tuple(range(rank)) for rank in range(33))

#: The widest gap, in nats, between a kept shifted product and 1 (see the module's text).
MAX_SPREAD = 60.0

#: The elements of one block of the exact path where few positions are flagged: tiles
#: small enough that few positions are recomputed for nothing. Where many are, blocks
#: are as large as the memory limit allows: few calls, each of which a framework may
#: spread over its threads.
SPARSE_TILE = 1 << 14
#: The share of flagged positions from which the blocks are as large as allowed.
DENSE = 0.125


class Side(NamedTuple):
    """One operand of a product, arranged as ``(..., r, k)`` or ``(..., k, c)``."""

    values: Any  # the log-values
    exps: Any  # exp(values - shift)
    shift: Any  # the maximum over k (0 where it is not finite), kept as an axis of size 1


def spread(inner: int) -> float:
    """How far below 1 a shifted product of `inner` terms may be and still be exact.

    Examples:
        >>> round(spread(2), 2), round(spread(16), 2), spread(1024)
        (1.77, 33.74, 60.0)
    """
    return min(MAX_SPREAD, (7 * inner - math.log(inner) - 8) / 3)


def floor(inner: int) -> float:
    """The least shifted product of `inner` terms kept (``inf``: none is, too few terms)."""
    least = _FLOORS.get(inner)
    if least is None:
        gap = spread(inner)
        least = _FLOORS[inner] = math.exp(-gap) if gap > 0 else math.inf
    return least


#: `floor` of every inner length met (a few per model).
_FLOORS: dict[int, float] = {}


def log_matmul(backend: Backend, left: Side, right: Side, cap: int) -> Any:
    """``log(exp(left) @ exp(right))`` exact at any magnitude, in blocks of at most `cap`."""
    sizes = backend.sizes(left.values)
    inner = sizes[-1]
    least = floor(inner) if type(inner) is int else math.inf  # not a number: staged anyway
    if least == math.inf:
        return exact_product(backend, left.values, right.values, cap, None)
    products = backend.matmul(left.exps, right.exps)
    shift = left.shift + right.shift
    lowest = backend.known(backend.reduce(products, "min", EVERY_AXIS[len(sizes)]))
    if lowest is not None and lowest >= least:  # (not with a nan among them: see below)
        return backend.log(products) + shift
    return underflowed(backend, left, right, (products, shift, lowest, least), cap)


def underflowed(
    backend: Backend, left: Side, right: Side, made: tuple[Any, Any, Any, float], cap: int
) -> Any:
    """`log_matmul` where `made` (its products, shift, their least, the floor) says it must.

    The least product is None where values cannot be read: every tile is exact. Else
    the positions below the floor are flagged (a nan is not) and their tiles recomputed.
    """
    products, shift, lowest, least = made
    if lowest is None:
        return exact_product(backend, left.values, right.values, cap, None)
    low = products < least

    def fast() -> Any:  # the flagged positions' products made 1: no log(0) or 1 / 0 there
        kept = backend.where(low, backend.full((), 1, products), products)
        return backend.log(kept) + shift

    return exact_product(backend, left.values, right.values, cap, (fast, backend.known(low)))


def exact_product(
    backend: Backend, a: Any, b: Any, cap: int, fast: tuple[Callable[[], Any], Any] | None
) -> Any:
    """``log sum_k exp(a + b)`` by broadcast blocks; `fast`: (what makes the fast result, flags).

    With `fast`, only the tiles that hold a flagged position are computed (of
    `SPARSE_TILE` elements where few are flagged, else of `cap`), and the rest taken
    from the fast result; without, every tile, in blocks of at most `cap`.
    """
    sizes_a, sizes_b = backend.sizes(a), backend.sizes(b)
    batch, (rows, inner), columns = sizes_a[:-2], sizes_a[-2:], sizes_b[-1]
    count = product(batch)
    a = backend.reshape(a, (count, rows, inner))
    b = backend.permute(backend.reshape(b, (count, inner, columns)), (0, 2, 1))
    if any(type(size) is not int for size in (count, rows, inner, columns)):
        # lengths known only when a staged graph runs: one block, as no loop can be made
        return backend.reshape(_broadcast_logsumexp(backend, a, b), (*batch, rows, columns))
    flags = whole = None
    if fast is None:
        steps = _tiles((count, rows, columns), inner, cap)
    else:
        make, mask = fast
        mask = mask.reshape(count, rows, columns)
        tile = cap if mask.mean() >= DENSE else min(cap, SPARSE_TILE)
        steps = _tiles((count, rows, columns), inner, tile)
        flags = _tile_flags(mask, steps[:3])
        if not flags.all():
            whole = backend.reshape(make(), (count, rows, columns))

    def exact(index: tuple[slice, slice, slice]) -> Any:
        batches, rows_piece, columns_piece = index
        return _exact_block(
            backend, a[batches, rows_piece, :], b[batches, columns_piece, :], steps[3]
        )

    grid = [pieces(size, step) for size, step in zip((count, rows, columns), steps, strict=False)]
    result = _assemble(backend, grid, flags, whole, exact, ())
    return backend.reshape(result, (*batch, rows, columns))


def _tiles(shape: tuple[int, int, int], inner: int, budget: int) -> tuple[int, int, int, int]:
    """Tile lengths over (batch, rows, columns) and the inner axis, within `budget` elements."""
    count, rows, columns = shape
    k = max(1, min(inner, budget))
    room = max(1, budget // k)
    c = min(columns, max(1, math.isqrt(room)))
    r = min(rows, max(1, room // c))
    c = min(columns, max(1, room // r))
    n = min(count, max(1, room // (r * c)))
    return n, r, c, k


def _tile_flags(mask: Any, steps: tuple[int, int, int]) -> Any:
    """Per tile of `steps`, whether `mask` (a NumPy array) holds a flagged position in it."""
    padded = [-size % step for size, step in zip(mask.shape, steps, strict=True)]
    mask = np.pad(mask, [(0, pad) for pad in padded])
    tiled = mask.reshape(
        mask.shape[0] // steps[0], steps[0], mask.shape[1] // steps[1], steps[1], -1, steps[2]
    )
    return tiled.any(axis=(1, 3, 5))


def _assemble(
    backend: Backend,
    grid: list[list[slice]],
    flags: Any,
    fast: Any,
    exact: Callable[[Any], Any],
    index: tuple[slice, ...],
) -> Any:
    """The result over the tiles of `grid` below `index`: exact where `flags` say, else fast.

    Runs of tiles without a flag are taken from `fast` as one slice.
    """
    axis = len(index)
    parts = []
    start: int | None = None  # the first tile of a run taken from `fast`
    tiles = grid[axis]
    for number, piece in enumerate(tiles):
        sub = None if flags is None else flags[number]
        if sub is not None and not sub.any():
            start = piece.start if start is None else start
            continue
        if start is not None:
            parts.append(fast[(*index, slice(start, piece.start))])
            start = None
        here = (*index, piece)
        last = axis == len(grid) - 1
        parts.append(exact(here) if last else _assemble(backend, grid, sub, fast, exact, here))
    if start is not None:
        parts.append(fast[(*index, slice(start, tiles[-1].stop))])
    return parts[0] if len(parts) == 1 else backend.concat(parts, axis)


def _exact_block(backend: Backend, a: Any, b: Any, step: int) -> Any:
    """``log sum_k exp(a[n, r, k] + b[n, c, k])``, the inner axis `step` at a time."""
    inner = backend.sizes(a)[2]
    result = None
    for piece in pieces(inner, step):
        part = _broadcast_logsumexp(backend, a[:, :, piece], b[:, :, piece])
        result = part if result is None else backend.logaddexp(result, part)
    return result


def _broadcast_logsumexp(backend: Backend, a: Any, b: Any) -> Any:
    """One block ``a[n, r, 1, k] + b[n, 1, c, k]``, its log-sum-exp over ``k`` (the last axis).

    Every term -inf: the sum is 0, its log is taken of 1 instead, so that the gradient
    is 0 there rather than 0 / 0, and the result is set to -inf.
    """
    n, rows, inner = backend.sizes(a)
    columns = backend.sizes(b)[1]
    block = backend.reshape(a, (n, rows, 1, inner)) + backend.reshape(b, (n, 1, columns, inner))
    exps, top = backend.shifted_exp(block, 3)
    total = backend.reduce(exps, "sum", (3,))
    empty = total <= 0  # not ==, which compares PyTensor's variables themselves
    total = backend.where(empty, backend.full((), 1, total), total)
    result = backend.log(total) + backend.reshape(top, (n, rows, columns))
    return backend.where(empty, backend.full((), -math.inf, result), result)
