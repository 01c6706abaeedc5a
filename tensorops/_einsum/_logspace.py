"""The ``"logsumexp"`` semiring's steps: log-space contraction through matrix products.

A pairwise step that sums axes, ``log sum_k exp(a[r, k] + b[k, c])``, is computed as

    log( exp(a - ma) @ exp(b - mb) ) + ma + mb

with ``ma`` the maximum of ``a`` over ``k`` per row and ``mb`` that of ``b`` per
column: the same permute / reshape / ``matmul`` as a sum of products, so BLAS does
the work, and no ``exp`` overflows. A shift that is not finite (a row all ``-inf``,
a zero probability everywhere) is taken as 0, which gives ``-inf`` again rather than
``nan``. Terms far below their row's and column's maxima (by more than the
exponent range, about 700 in float64 and 85 in float32) underflow to 0 where the two
maxima do not fall on the same ``k``: the precision of any exp / matmul / log.

An axis summed by one operand alone, and a batched inner product, is the family's
stable ``logsumexp`` reduction; a step with nothing summed is an addition.

The shifted exps of an operand passed several times as the same object (an HMM's
transition matrix at every step of a chain) are made once per call and reused where
the steps lay it out alike (`Exps`).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from tensorops._einsum._execute import Pair, arrange_output
from tensorops._types import Backend

__all__ = ["Exps", "logsumexp_pair", "logsumexp_reduce"]

#: The cache of one call: (operand's key, its sums, permutation, shape, axis) -> exps, shift.
Exps = dict[Hashable, tuple[Any, Any]]


def logsumexp_reduce(backend: Backend, x: Any, axes: tuple[int, ...]) -> Any:
    """``log sum exp`` of ``x`` over `axes` (dropped), stable for large magnitudes."""
    return backend.reduce(x, "logsumexp", axes)


def logsumexp_pair(
    backend: Backend,
    a: Any,
    b: Any,
    pair: Pair,
    keys: tuple[Hashable, Hashable],
    exps: Exps,
) -> Any:
    """One pairwise step in log space; `keys` name operands whose exps may be reused.

    A key is None for an operand that is not passed again in this call.
    """
    if pair.mode == "matmul":
        left = (pair.sum_left, pair.perm_left, pair.shape_left)
        right = (pair.sum_right, pair.perm_right, pair.shape_right)
        ea, ma = _shifted(backend, a, left, -1, keys[0], exps)
        eb, mb = _shifted(backend, b, right, -2, keys[1], exps)
        x = backend.log(backend.matmul(ea, eb)) + ma + mb
    else:
        if pair.sum_left:
            a = logsumexp_reduce(backend, a, pair.sum_left)
        if pair.sum_right:
            b = logsumexp_reduce(backend, b, pair.sum_right)
        a = arrange_output(backend, a, pair.perm_left, pair.shape_left)
        b = arrange_output(backend, b, pair.perm_right, pair.shape_right)
        x = a + b
        if pair.mode == "dot":  # batched inner products: the summed axis is the last
            x = logsumexp_reduce(backend, x, (x.ndim - 1,))
    if pair.shape_out is not None:
        x = backend.reshape(x, pair.shape_out)
    return x


def _shifted(
    backend: Backend,
    x: Any,
    layout: tuple[tuple[int, ...], tuple[int, ...] | None, tuple[int, ...] | None],
    axis: int,
    key: Hashable,
    exps: Exps,
) -> tuple[Any, Any]:
    """One side of a matmul step: its own sums, its (permutation, shape), its shifted exp."""
    sums, perm, shape = layout
    if key is not None:
        key = (key, layout, axis)
        found = exps.get(key)
        if found is not None:
            return found
    if sums:
        x = logsumexp_reduce(backend, x, sums)
    x = arrange_output(backend, x, perm, shape)
    made = backend.shifted_exp(x, axis)
    if key is not None:
        exps[key] = made
    return made
