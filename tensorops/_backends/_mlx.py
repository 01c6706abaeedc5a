"""The MLX adapter: the array-API adapter, where MLX departs from the standard.

MLX (``mlx.core``) is an array-API namespace with a few differences, each handled here
by overriding one method of `ArrayApiBackend`:

* no ``device=`` (its arrays live in unified memory: a stream, not the array, says
  where work runs);
* ``var`` / ``std`` take ``ddof`` (0 by default), ``sort`` / ``argsort`` have no
  ``descending=`` and ``stable=`` (they sort stably, ascending), argmax / argmin /
  argsort give ``uint32``;
* ``matmul`` multiplies floating dtypes only;
* no ``linalg.diagonal`` (NumPy's ``diagonal``);
* its own fused ``einsum``, ``logsumexp`` and ``softmax``, and a scatter (``x.at[i]``);
* its CPU reduction kernels may hang on an empty axis (`_without_empty_kernels`), and an
  index out of range reads and writes outside the array (checked here, as NumPy does).

This module imports no framework; the namespace is handed in by the registry.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from tensorops._backends._array_api import ArrayApiBackend, rows_of
from tensorops._types import Backend, Executor, IndexSpec

__all__ = ["MlxBackend"]


class MlxBackend(ArrayApiBackend):
    """Primitives for ``mlx.core`` arrays."""

    __slots__ = ()

    def placed(self, like: Any) -> dict[str, Any]:
        return {}  # no device=: MLX arrays live in unified memory

    def _reduction(self, reduction: str) -> Callable[..., Any]:
        xp = self.xp
        if reduction in ("var", "std"):
            function = getattr(xp, reduction)  # ddof=0 by default
        elif reduction == "logsumexp":
            function = xp.logsumexp  # one fused kernel, stable for infinities
        else:
            function = super()._reduction(reduction)
        return _without_empty_kernels(xp, function, reduction)

    def _one_axis(self, function: Callable[..., Any]) -> Callable[[Any, int], Any]:
        return super()._one_axis(_signed(self.xp, function))

    def einsummer(self, equation: str) -> Callable[..., Any] | None:
        inputs = equation.split("->")[0]
        if any(len(set(term)) < len(term) for term in inputs.split(",")):
            return None  # a diagonal: the planned program takes it
        # mx.einsum costs less per call than the planned program's steps on tiny operands
        # (measured: 30-40 us against 50-80 us for 8 x 8 pairs on the CPU), but it
        # multiplies floating dtypes only (as MLX's matmul)
        xp, einsum = self.xp, functools.partial(self.xp.einsum, equation)
        exact: list[Callable[..., Any]] = []  # made for the first call that needs it

        def run(*operands: Any) -> Any:
            # an empty operand takes the exact route too: mx.einsum sums with the
            # reduction kernels that `_without_empty_kernels` keeps away from empty axes
            if not any(0 in x.shape for x in operands) and any(
                _inexact(xp, x.dtype) for x in operands
            ):
                return einsum(*operands)
            if not exact:
                exact.append(_broadcast_einsum(xp, equation))
            return exact[0](*operands)

        return run

    def softmaxer(self, axes: tuple[int, ...], log: bool) -> Executor:
        xp = self.xp  # MLX's fused kernels (several axes jointly), stable and differentiable
        if not log:
            return lambda x, arg: xp.softmax(x, axis=axes)

        def log_softmax(x: Any, arg: Any) -> Any:
            # shifted first: x - logsumexp(x) loses log(n) beside a large maximum
            shifted = x - xp.max(x, axis=axes, keepdims=True)
            return shifted - xp.logsumexp(shifted, axis=axes, keepdims=True)

        return log_softmax

    def sorter(self, axis: int, descending: bool, indices: bool) -> Executor:
        """MLX sorts stably and ascending only (no descending=, no stable=).

        Descending and stable: sort the reversed array ascending and reverse the result.
        Ties then keep their first order, and a position ``j`` of the reversed array is
        ``n - 1 - j`` of the array.
        """
        function = _signed(self.xp, self.xp.argsort) if indices else self.xp.sort
        if not descending:
            return lambda x, arg: function(x, axis=axis)
        flip = self.xp.flip

        def sort(x: Any, arg: Any) -> Any:
            result = flip(function(flip(x, axis=axis), axis=axis), axis=axis)
            return (x.shape[axis] - 1) - result if indices else result

        return sort

    def values_known(self, x: Any) -> bool:
        """MLX reads outside the array for an index out of range: checked, except while traced.

        Inside ``mx.compile`` or ``mx.vmap`` the values are not known while tracing and
        MLX refuses to compute them: unchecked there.
        """
        try:
            self.xp.eval(x)
        except ValueError:  # traced: "[eval] Attempting to eval an array during ..."
            return False
        return True

    def scatterer(self, spec: IndexSpec, accumulate: bool) -> Callable[[Any, Any, Any], Any]:
        """MLX's scatter: ``x.at[i].add(v)``, and for set_at an assignment ``y[i] = v``.

        The assignment rebinds ``y`` (MLX arrays are values) to a new array: ``y`` is a
        fresh reshape of ``x``, so the caller's array is never changed.
        """
        positions = self.positions(spec)
        reshape = self.xp.reshape
        rows, offsets = rows_of(self, spec)
        batched = spec.batch is not None
        shape = (spec.batch, math.prod(spec.lengths), *rows[1:])

        def scatter(x: Any, index: Any, values: Any) -> Any:
            where = positions(index)
            if batched:
                where = where + offsets(x, where)
            out = reshape(x, rows if batched else tuple(x.shape))  # a new array object
            if accumulate:
                out = out.at[where].add(values)
            else:
                out[where] = values
            return reshape(out, shape) if batched else out

        return scatter

    def matmul(self, a: Any, b: Any) -> Any:
        xp = self.xp
        if not (_inexact(xp, a.dtype) or _inexact(xp, b.dtype)):
            # MLX multiplies matrices of floating dtypes only: integers and bools are
            # multiplied and summed exactly, as NumPy's matmul does (bool: any of the ands)
            products = xp.expand_dims(a, -1) * xp.expand_dims(b, -3)
            return _exact_sum(xp, products, (products.ndim - 2,))
        return xp.matmul(a, b)

    def _last_diagonal(self, x: Any) -> Any:
        return self.xp.diagonal(x, axis1=-2, axis2=-1)  # no linalg.diagonal: NumPy's

    def to_numpy(self, x: Any) -> Any:
        if x.dtype == self.xp.bfloat16:
            x = self.xp.astype(x, self.xp.float32)  # NumPy has no bfloat16: widened, as torch's
        return super().to_numpy(x)

    def __repr__(self) -> str:
        return f"MlxBackend({self.namespace})"


def _broadcast_einsum(xp: Any, equation: str) -> Callable[..., Any]:
    """An einsum of integer or bool operands (no diagonal), exact: broadcast, multiply, sum.

    For the tiny pairs an einsummer is given: every operand is laid out along all the
    equation's axes (length 1 where it lacks one), and the product summed over the axes
    missing from the output (``any`` for bools, as NumPy's einsum).
    """
    inputs, output = equation.split("->")
    terms = inputs.split(",")
    letters = "".join(dict.fromkeys("".join(terms) + output))
    layouts = []
    for term in terms:
        order = tuple(sorted(range(len(term)), key=lambda i: letters.index(term[i])))
        shape = [(letter, letter in term) for letter in letters]
        layouts.append((order, shape))
    summed = tuple(i for i, letter in enumerate(letters) if letter not in output)
    kept = [letter for letter in letters if letter in output]
    final = tuple(kept.index(letter) for letter in output)

    def einsum(*operands: Any) -> Any:
        product = None
        for x, (order, shape) in zip(operands, layouts, strict=True):
            sizes = iter(x.shape[i] for i in order)
            laid = xp.reshape(
                xp.permute_dims(x, order), tuple(next(sizes) if has else 1 for _, has in shape)
            )
            product = laid if product is None else product * laid
        assert product is not None
        if summed:
            product = _exact_sum(xp, product, summed)
        return xp.permute_dims(product, final)

    return einsum


def _exact_sum(xp: Any, x: Any, axes: tuple[int, ...]) -> Any:
    """The sum of an MLX product over `axes` in its own dtype (``any`` for bools, as NumPy)."""
    if x.dtype == xp.bool_:
        return _without_empty_kernels(xp, xp.any, "any")(x, axis=axes)
    return xp.astype(_without_empty_kernels(xp, xp.sum, "sum")(x, axis=axes), x.dtype)


#: What a reduction over no elements gives, as NumPy answers it; the others (max, min,
#: argmax, argmin, logsumexp) have no answer, and MLX refuses them before computing.
_EMPTY_REDUCTIONS: dict[str, float] = {
    "sum": 0,
    "prod": 1,
    "any": False,
    "all": True,
    "mean": math.nan,
    "var": math.nan,
    "std": math.nan,
}


def _without_empty_kernels(
    xp: Any, function: Callable[..., Any], reduction: str
) -> Callable[..., Any]:
    """MLX's `function`, answered without a kernel where an axis reduced over is empty.

    MLX's CPU reduction kernels (0.32) may loop forever on an axis of length 0 beside
    axes that are kept: ``mx.sum(mx.array(np.zeros((3, 0))), axis=1)`` hangs in about
    one call of three. Such a result holds only the reduction's identity.
    """
    fill = _EMPTY_REDUCTIONS.get(reduction)
    if fill is None:
        return function

    def reduce(x: Any, axis: tuple[int, ...]) -> Any:
        shape = tuple(x.shape)
        if 0 not in shape or all(shape[i] for i in axis):
            return function(x, axis=axis)
        # the dtype MLX gives this reduction, from a one-element stand-in (never computed)
        dtype = function(xp.zeros((1,) * len(shape), dtype=x.dtype), axis=axis).dtype
        kept = tuple(n for i, n in enumerate(shape) if i not in {a % len(shape) for a in axis})
        return xp.full(kept, fill, dtype=dtype)

    return reduce


def _signed(xp: Any, function: Callable[..., Any]) -> Callable[..., Any]:
    """MLX's argmax / argmin / argsort, giving its indexing dtype (int32), not uint32.

    Signed as every other family's indices, so that they can be subtracted and offset.
    """
    dtype = xp.__array_namespace_info__().default_dtypes()["indexing"]
    return lambda x, axis: xp.astype(function(x, axis=axis), dtype)


def _inexact(xp: Any, dtype: Any) -> bool:
    return bool(xp.isdtype(dtype, ("real floating", "complex floating")))


_CHECK: type[Backend] = MlxBackend
