"""The ``"logsumexp"`` semiring's steps: log-space contraction through matrix products.

A pairwise step that sums axes, ``log sum_k exp(a[r, k] + b[k, c])``, is a log-space
matrix product (`tensorops._einsum.semirings._logmatmul.log_matmul`): the same permute / reshape /
``matmul`` as a sum of products on the shifted exps, so BLAS does the work, exact at any
magnitude (the positions where the shifted product underflows are recomputed exactly).

An axis summed by one operand alone, and a batched inner product, is the family's
stable ``logsumexp`` reduction; a step with nothing summed is an addition.

The shifted exps of an operand passed several times as the same object (an HMM's
transition matrix at every step of a chain), or a constant of an expression, are made
once and reused where the steps lay it out alike (`Exps`).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from tensorops._einsum.programs._execute import Pair, arrange_output
from tensorops._einsum.semirings._logmatmul import Side, log_matmul
from tensorops._types import Backend

__all__ = ["Exps", "logsumexp_pair", "logsumexp_reduce", "side"]

#: The sides of products made once: (operand's key, its sums, permutation, shape, axis) -> side.
Exps = dict[Hashable, Side]


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
    cap: int,
) -> Any:
    """One pairwise step in log space; `keys` name operands whose exps may be reused.

    A key is None for an operand that is not passed again in this call. The exact
    blocks of a product hold at most `cap` elements.
    """
    if pair.mode == "matmul":
        left = side(backend, a, pair.sum_left, pair.perm_left, pair.shape_left, -1, keys[0], exps)
        right = side(
            backend, b, pair.sum_right, pair.perm_right, pair.shape_right, -2, keys[1], exps
        )
        x = log_matmul(backend, left, right, cap)
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


def side(
    backend: Backend,
    x: Any,
    sums: tuple[int, ...],
    perm: tuple[int, ...] | None,
    shape: tuple[int, ...] | None,
    axis: int,
    key: Hashable = None,
    exps: Exps | None = None,
) -> Side:
    """One side of a product: its own sums, permutation and shape, its shifted exp.

    Kept in `exps` under `key` (with the layout and `axis`) unless `key` is None.
    """
    if key is not None and exps is not None:
        key = (key, sums, perm, shape, axis)
        found = exps.get(key)
        if found is not None:
            return found
    if sums:
        x = logsumexp_reduce(backend, x, sums)
    if perm is not None:
        x = backend.permute(x, perm)
    if shape is not None:
        x = backend.reshape(x, shape)
    exp, shift = backend.shifted_exp(x, axis)
    made = Side(x, exp, shift)
    if key is not None and exps is not None:
        exps[key] = made
    return made
