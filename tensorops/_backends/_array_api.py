"""The generic adapter: any array library that follows the Python array API standard.

One `ArrayApiBackend` is bound to one namespace ``xp`` (``jax.numpy``,
``array_api_strict``, ``array_api_compat.dask.array``, ``array_api_compat.cupy``,
...). The ops use only functions of the standard, so Dask arrays stay lazy: every
method builds task graph and nothing is computed. Per-library special cases are
kept small and commented where they occur.

This module imports only numpy; the namespace is handed in by the registry.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tensorops._backends._numpy import reduced_last, split_by_slicing
from tensorops._errors import FRAMEWORK_ERRORS, BackendError
from tensorops._types import Executor, IndexSpec

__all__ = ["ArrayApiBackend"]


# The standard's rule for an array and a Python number: the number takes the array's
# dtype when its kind fits in it (bool is tested before int, which it subclasses).
_SCALAR_KINDS: tuple[tuple[type, tuple[str, ...]], ...] = (
    (bool, ("bool",)),
    (int, ("integral", "real floating", "complex floating")),
    (float, ("real floating", "complex floating")),
    (complex, ("complex floating",)),
)


#: The standard's dtype kinds and NumPy's letter for each (`ArrayApiBackend.dtype_kind`).
_KINDS = (("bool", "b"), ("integral", "i"), ("real floating", "f"), ("complex floating", "c"))


class ArrayApiBackend:
    """Primitives for the arrays of one array-API namespace ``xp``."""

    __slots__ = (
        "_is_cupy",
        "_is_jax",
        "_is_mlx",
        "_linalg_diagonal",
        "is_dask",
        "namespace",
        "xp",
    )
    name: str = "array_api"

    def __init__(self, xp: Any) -> None:
        self.xp = xp
        #: the namespace's module name, for messages: "jax.numpy", "array_api_strict", ...
        self.namespace: str = getattr(xp, "__name__", type(xp).__name__)
        #: whether the arrays are Dask's (lazy: asking for values computes them)
        self.is_dask = self.namespace in ("dask.array", "array_api_compat.dask.array")
        self._is_cupy = self.namespace in ("cupy", "array_api_compat.cupy")
        self._is_jax = self.namespace == "jax.numpy"
        # MLX (mlx.core) departs from the standard in a few signatures: no device= (its
        # arrays have no device), var/std take ddof, sort has no descending=, matmul takes
        # floating dtypes only; and it has einsum, logsumexp, softmax and a scatter.
        self._is_mlx = self.namespace == "mlx.core"
        # `diagonal` is in the optional linalg extension only; without it we fall back to
        # a strided slice of the flattened last two axes (see `diagonal`).
        linalg = getattr(xp, "linalg", None)
        self._linalg_diagonal: Callable[[Any], Any] | None = getattr(linalg, "diagonal", None)

    def reshape(self, x: Any, shape: tuple[int, ...]) -> Any:
        if self.is_dask and 0 in x.shape and -1 not in shape:
            # Dask cannot reshape empty arrays split into several chunks
            # (https://github.com/dask/dask/issues/2561); an empty result holds no data.
            return self.xp.empty(shape, dtype=x.dtype)
        if self.is_dask:
            try:
                return self.xp.reshape(x, shape)
            except NotImplementedError:
                # Dask reshapes only by merging or splitting existing axes evenly; its
                # message suggests several passes: merge everything, then split.
                return self.xp.reshape(self.xp.reshape(x, (-1,)), shape)
        return self.xp.reshape(x, shape)

    def permute(self, x: Any, axes: tuple[int, ...]) -> Any:
        return self.xp.permute_dims(x, axes)

    def reduce(self, x: Any, reduction: str, axes: tuple[int, ...]) -> Any:
        return self.reducer(reduction, axes)(x, None)

    def permuter(self, axes: tuple[int, ...]) -> Executor:
        permute_dims = self.xp.permute_dims

        def permute(x: Any, arg: Any) -> Any:
            return permute_dims(x, axes)

        return permute

    def reshaper(self, shape: tuple[int, ...]) -> Executor:
        def reshape(x: Any, arg: Any) -> Any:
            return self.reshape(x, shape)

        return reshape

    def reducer(self, reduction: str, axes: tuple[int, ...]) -> Executor:
        function = self._reduction(reduction)
        if self._is_mlx:
            function = _without_empty_kernels(self.xp, function, reduction)
        namespace = self.namespace

        def reduce(x: Any, arg: Any) -> Any:
            if not axes:
                return x
            try:
                return function(x, axis=axes)
            except FRAMEWORK_ERRORS as error:
                # e.g. array-api-strict refuses the mean of an integer array (the standard
                # defines mean for floating-point dtypes only).
                raise BackendError(
                    f"cannot take the {reduction} over axes {axes} of a {namespace} array "
                    f"with shape {tuple(x.shape)} and dtype {x.dtype}: {error}"
                ) from None

        return reduce

    def _reduction(self, reduction: str) -> Callable[..., Any]:
        """``f(x, axis=axes)`` for a reduction the standard has under another name or not at all."""
        xp = self.xp
        if reduction in ("var", "std") and self._is_mlx:
            return getattr(xp, reduction)  # type: ignore[no-any-return]  # ddof=0 by default
        if reduction in ("var", "std"):
            return lambda x, axis: getattr(xp, reduction)(x, axis=axis, correction=0)
        if reduction in ("argmax", "argmin"):
            # the standard's argmax takes one axis: several are brought last and flattened
            single = getattr(xp, reduction)
            if self._is_mlx:
                single = _signed(xp, single)

            def arg(x: Any, axis: tuple[int, ...]) -> Any:
                if len(axis) == 1:
                    return single(x, axis=axis[0])
                perm, start = reduced_last(x.shape, axis)
                if perm is not None:
                    x = xp.permute_dims(x, perm)
                x = self.reshape(x, (*x.shape[:start], math.prod(x.shape[start:])))
                return single(x, axis=-1)

            return arg
        if reduction == "logsumexp":
            # MLX's own is one fused kernel, stable for infinities as `_logsumexp`
            return xp.logsumexp if self._is_mlx else self._logsumexp
        return getattr(xp, reduction)  # type: ignore[no-any-return]

    def _logsumexp(self, x: Any, axis: tuple[int, ...]) -> Any:
        xp = self.xp
        top = xp.max(x, axis=axis, keepdims=True)
        # an infinite maximum (all -inf, or a +inf) would give inf - inf: shift by 0 instead
        top = xp.where(xp.isfinite(top), top, xp.zeros_like(top))
        total = self.log(xp.sum(xp.exp(x - top), axis=axis))
        return total + xp.reshape(top, total.shape)

    def dtype_kind(self, dtype: Any) -> str:
        kinds = (
            ("bool", "b"),
            ("integral", "i"),
            ("real floating", "f"),
            ("complex floating", "c"),
        )
        return next((kind for name, kind in kinds if self.xp.isdtype(dtype, name)), "O")

    def floating(self, x: Any) -> Any:
        if self.xp.isdtype(x.dtype, ("real floating", "complex floating")):
            return x
        info = getattr(self.xp, "__array_namespace_info__", None)
        dtype = info().default_dtypes()["real floating"] if info else self.xp.float64
        return self.xp.astype(x, dtype)

    def shifted_exp(self, x: Any, axis: int) -> tuple[Any, Any]:
        xp = self.xp
        top = xp.max(x, axis=axis, keepdims=True)
        top = xp.where(xp.isfinite(top), top, xp.zeros_like(top))
        return xp.exp(x - top), top

    def log(self, x: Any) -> Any:
        # log(0) warns where the library computes with NumPy (array-api-strict, Dask's
        # chunks, when they are computed): zeros are taken apart instead
        xp = self.xp
        zero = x == 0
        logs = xp.log(xp.where(zero, xp.ones_like(x), x))
        return xp.where(zero, xp.full_like(x, -math.inf), logs)

    def logaddexp(self, a: Any, b: Any) -> Any:
        return self.xp.logaddexp(a, b)

    def maximum(self, a: Any, b: Any) -> Any:
        return self.xp.maximum(a, b)

    def minimum(self, a: Any, b: Any) -> Any:
        return self.xp.minimum(a, b)

    def where(self, condition: Any, a: Any, b: Any) -> Any:
        return self.xp.where(condition, a, b)

    def elementwiser(self, name: str, numbers: tuple[int, ...]) -> Callable[..., Any]:
        # the standard's functions take Python numbers since its 2024.12 revision
        return getattr(self.xp, name)  # type: ignore[no-any-return]

    def take(self, x: Any, index: Any) -> Any:
        flat = self.xp.take(self.reshape(x, (-1,)), self.reshape(index, (-1,)), axis=0)
        return self.reshape(flat, tuple(index.shape))

    def arange(self, n: int, like: Any) -> Any:
        return self.xp.arange(n, **self._placed(like))

    def full(self, shape: tuple[int, ...], value: complex, like: Any) -> Any:
        return self.xp.full(shape, value, dtype=like.dtype, **self._placed(like))

    def _placed(self, like: Any) -> dict[str, Any]:
        """``device=`` for a new array beside `like`; none for MLX, which takes no device=.

        MLX arrays live in unified memory: a stream, not the array, says where work runs.
        """
        return {} if self._is_mlx else {"device": _device(like)}

    def einsummer(self, equation: str) -> Callable[..., Any] | None:
        if not self._is_mlx:
            return None  # the array API standard has no einsum
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
        xp = self.xp
        if self._is_mlx:  # MLX's fused kernels (several axes jointly), stable and differentiable
            if not log:
                return lambda x, arg: xp.softmax(x, axis=axes)

            def log_softmax(x: Any, arg: Any) -> Any:
                # shifted first: x - logsumexp(x) loses log(n) beside a large maximum
                shifted = x - xp.max(x, axis=axes, keepdims=True)
                return shifted - xp.logsumexp(shifted, axis=axes, keepdims=True)

            return log_softmax

        def softmax(x: Any, arg: Any) -> Any:
            shifted = x - xp.max(x, axis=axes, keepdims=True)
            exp = xp.exp(shifted)
            total = xp.sum(exp, axis=axes, keepdims=True)
            return shifted - xp.log(total) if log else exp / total

        return softmax

    def flipper(self, axes: tuple[int, ...]) -> Executor:
        flip = self.xp.flip
        return lambda x, arg: flip(x, axis=axes)

    def roller(self, shifts: tuple[int, ...], axes: tuple[int, ...]) -> Executor:
        roll = self.xp.roll  # a shift per axis: Dask refuses one int for several axes
        return lambda x, arg: roll(x, shift=shifts, axis=axes)

    def sorter(self, axis: int, descending: bool, indices: bool) -> Executor:
        function = self.xp.argsort if indices else self.xp.sort
        if self._is_mlx:
            return self._mlx_sorter(function, axis, descending, indices)
        return lambda x, arg: function(x, axis=axis, descending=descending, stable=True)

    def _mlx_sorter(self, function: Any, axis: int, descending: bool, indices: bool) -> Executor:
        """MLX sorts stably and ascending only (no descending=, no stable=).

        Descending and stable: sort the reversed array ascending and reverse the result.
        Ties then keep their first order, and a position ``j`` of the reversed array is
        ``n - 1 - j`` of the array.
        """
        if indices:
            function = _signed(self.xp, function)
        if not descending:
            return lambda x, arg: function(x, axis=axis)
        flip = self.xp.flip

        def sort(x: Any, arg: Any) -> Any:
            result = flip(function(flip(x, axis=axis), axis=axis), axis=axis)
            return (x.shape[axis] - 1) - result if indices else result

        return sort

    def cumsummer(self, axis: int) -> Executor:
        # cumulative_sum is the standard's since 2023.12; older namespaces have cumsum
        function = getattr(self.xp, "cumulative_sum", None) or getattr(self.xp, "cumsum", None)
        if function is None:
            raise BackendError(
                f"{self.namespace} has neither cumulative_sum nor cumsum",
                hint="convert the array first, e.g. with tops.convert(x, 'numpy')",
            )
        return lambda x, arg: function(x, axis=axis)

    def is_integer(self, dtype: Any) -> bool:
        return bool(self.xp.isdtype(dtype, "integral"))

    # Indexes are not range-checked here: the family's `take` applies its own rule (an
    # error for array-api-strict, a fill value for JAX).
    def gatherer(self, spec: IndexSpec) -> Callable[[Any, Any], Any]:
        xp, positions = self.xp, self._positions(spec)
        take_along = getattr(xp, "take_along_axis", None)  # in the standard since 2024.12
        if spec.batch is None:

            def take(x: Any, index: Any) -> Any:
                where = positions(index)
                out = xp.take(x, self.reshape(where, (-1,)), axis=0)
                return self.reshape(out, (*where.shape, *x.shape[1:]))

            return take
        if take_along is not None:

            def gather(x: Any, index: Any) -> Any:
                where = positions(index)
                if spec.channels is not None:
                    where = self.reshape(where, (*where.shape, 1))
                return take_along(x, where, axis=1)

            return gather
        rows, offsets = self._rows(spec)

        def take_rows(x: Any, index: Any) -> Any:
            where = positions(index)
            flat = self.reshape(where + offsets(x, where), (-1,))
            out = xp.take(self.reshape(x, rows), flat, axis=0)
            return self.reshape(out, (*where.shape, *rows[1:]))

        return take_rows

    def scatterer(self, spec: IndexSpec, accumulate: bool) -> Callable[[Any, Any, Any], Any]:
        if self._is_mlx:
            return self._mlx_scatterer(spec, accumulate)
        if not self._is_jax:
            raise BackendError(
                f"the array API standard defines no scatter, and tensorops has none for "
                f"{self.namespace} arrays: set_at and add_at run on numpy, torch, jax and mlx "
                "arrays",
                hint="convert first, e.g. tops.convert(x, 'numpy'), and back",
            )
        positions = self._positions(spec)
        method = "add" if accumulate else "set"
        if spec.batch is None:
            return lambda x, index, values: getattr(x.at[positions(index)], method)(values)
        rows, offsets = self._rows(spec)
        shape = (spec.batch, math.prod(spec.lengths), *rows[1:])

        def scatter(x: Any, index: Any, values: Any) -> Any:
            where = positions(index)
            out = getattr(self.reshape(x, rows).at[where + offsets(x, where)], method)(values)
            return self.reshape(out, shape)

        return scatter

    def _mlx_scatterer(self, spec: IndexSpec, accumulate: bool) -> Callable[[Any, Any, Any], Any]:
        """MLX's scatter: ``x.at[i].add(v)``, and for set_at an assignment ``y[i] = v``.

        The assignment rebinds ``y`` (MLX arrays are values) to a new array: ``y`` is a
        fresh reshape of ``x``, so the caller's array is never changed.
        """
        positions = self._positions(spec)
        reshape = self.xp.reshape
        rows, offsets = self._rows(spec)
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

    def _range_check(self, spec: IndexSpec) -> Callable[[Any], Any]:
        """The index itself, once each coordinate is checked to lie in its axis (for MLX).

        MLX reads and writes outside the array for an index out of range, so the values
        are read here (NumPy's error, word for word). Inside ``mx.compile`` or ``mx.vmap``
        they are not known while tracing and MLX refuses to compute them: unchecked there.
        """
        xp, lengths = self.xp, spec.lengths

        def checked(index: Any) -> Any:
            for j, length in enumerate(lengths):
                values = index if len(lengths) == 1 else index[..., j]
                bad = (values < 0) | (values >= length)
                try:
                    if not xp.any(bad).item():
                        continue
                except ValueError:  # traced: "[eval] Attempting to eval an array during ..."
                    return index
                first = int(xp.argmax(self.reshape(bad, (-1,))).item())
                raise spec.out_of_range(j, self.reshape(values, (-1,))[first].item())
            return index

        return checked

    def _positions(self, spec: IndexSpec) -> Callable[[Any], Any]:
        """The positions an index reads in the merged indexed axes: ``(i0 * n1 + i1) * n2 ...``."""
        lengths = spec.lengths
        checked = self._range_check(spec) if self._is_mlx else None
        if len(lengths) == 1:
            return checked or (lambda index: index)

        def positions(index: Any) -> Any:
            if checked is not None:
                index = checked(index)
            flat = index[..., 0]
            for j in range(1, len(lengths)):
                flat = flat * lengths[j] + index[..., j]
            return flat

        return positions

    def _rows(self, spec: IndexSpec) -> tuple[tuple[int, ...], Callable[[Any, Any], Any]]:
        """The batched array as rows (batch and indexed axes merged), and each batch's offset."""
        xp, batch, size = self.xp, spec.batch or 1, math.prod(spec.lengths)
        rows = (batch * size,) if spec.channels is None else (batch * size, spec.channels)

        def offsets(x: Any, where: Any) -> Any:
            starts = xp.arange(0, batch * size, size, dtype=where.dtype, **self._placed(x))
            return self.reshape(starts, (batch, 1))

        return rows, offsets

    def expand(self, x: Any, shape: tuple[int, ...]) -> Any:
        return self.xp.broadcast_to(x, shape)

    def stack(self, xs: Sequence[Any]) -> Any:
        return self.xp.stack(list(xs), axis=0)

    def concat(self, xs: Sequence[Any], axis: int) -> Any:
        return self.xp.concat(list(xs), axis=axis)

    def split(self, x: Any, sizes: Sequence[int], axis: int) -> list[Any]:
        # The standard has no split with sizes; basic slicing is standard and gives views.
        return split_by_slicing(x, sizes, axis)

    def matmul(self, a: Any, b: Any) -> Any:
        xp = self.xp
        if self._is_mlx and not (_inexact(xp, a.dtype) or _inexact(xp, b.dtype)):
            # MLX multiplies matrices of floating dtypes only: integers and bools are
            # multiplied and summed exactly, as NumPy's matmul does (bool: any of the ands)
            products = xp.expand_dims(a, -1) * xp.expand_dims(b, -3)
            return _exact_sum(xp, products, (products.ndim - 2,))
        return xp.matmul(a, b)

    def multiply(self, a: Any, b: Any) -> Any:
        return self.xp.multiply(a, b)

    def astype(self, x: Any, dtype: Any, casting: str = "unsafe") -> Any:
        return self.xp.astype(x, dtype)

    def ordered(self, x: Any, order: str) -> Any:
        raise BackendError(
            f"order={order!r}: the array API has no memory order ({self.namespace})",
            hint="leave order out; only NumPy arrays take order='C' or 'F'",
        )

    def write(self, out: Any, x: Any, casting: str) -> Any:
        raise BackendError(
            f"out=: the array API cannot write into an array ({self.namespace})",
            hint="NumPy arrays and torch tensors take out=; use the returned array",
        )

    def result_type(self, xs: Sequence[Any]) -> Any:
        return self.xp.result_type(*xs)

    def constant(self, value: complex, like: Any) -> Any:
        return self.astype(self.scalar(value, like), like.dtype)

    def scalar(self, value: complex, like: Any) -> Any:
        kinds = next(kinds for cls, kinds in _SCALAR_KINDS if isinstance(value, cls))
        dtype = like.dtype if self.xp.isdtype(like.dtype, kinds) else None
        return self.xp.asarray(value, dtype=dtype, **self._placed(like))

    def diagonal(self, x: Any, axis1: int, axis2: int) -> Any:
        ndim = len(x.shape)
        axis1 %= ndim
        axis2 %= ndim
        order = (*(i for i in range(ndim) if i not in (axis1, axis2)), axis1, axis2)
        if order != tuple(range(ndim)):
            x = self.xp.permute_dims(x, order)
        if self._linalg_diagonal is not None:
            return self._linalg_diagonal(x)
        if self._is_mlx:  # no linalg.diagonal; NumPy's diagonal, which moves it last
            return self.xp.diagonal(x, axis1=-2, axis2=-1)
        # Without the linalg extension: in the flattened (n * n) last axis the diagonal is
        # every (n + 1)-th element, and a step slice is standard.
        n = x.shape[-1]
        flat = self.xp.reshape(x, (*x.shape[:-2], n * n))
        return flat[..., :: n + 1]

    def sizes(self, x: Any) -> tuple[Any, ...]:
        return tuple(x.shape)

    def traced(self, shapes: Any) -> bool:
        return False

    def to_numpy(self, x: Any) -> Any:
        if self.is_dask:
            # Asking for values is asking for the computation.
            return np.asarray(x.compute())
        if self._is_cupy:
            # CuPy refuses implicit device-to-host copies (np.asarray raises); .get() copies.
            return x.get()
        if self._is_mlx and x.dtype == self.xp.bfloat16:
            x = self.xp.astype(x, self.xp.float32)  # NumPy has no bfloat16: widened, as torch's
        try:
            # Zero-copy for host memory. The producer decides whether the view is
            # writable: JAX arrays are immutable and come back read-only.
            return np.from_dlpack(x)
        except Exception:  # each producer raises its own type for "not on host"
            return np.asarray(x)

    def __repr__(self) -> str:
        return f"ArrayApiBackend({self.namespace})"


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


def _device(x: Any) -> Any:
    """The device of ``x``, or None (the default device) for a traced JAX array without one.

    Under ``jax.jit`` the tracers of older JAX releases (0.4.33, the oldest tested)
    have no ``device``; a traced computation is placed on the default device anyway.
    """
    from array_api_compat import device

    try:
        return device(x)
    except AttributeError:
        return None
