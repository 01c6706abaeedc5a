"""The generic adapter: any array library that follows the Python array API standard.

One `ArrayApiBackend` is bound to one namespace ``xp`` (``jax.numpy``,
``array_api_strict``, ``array_api_compat.dask.array``, ``array_api_compat.cupy``,
...). The ops use only functions of the standard, so Dask arrays stay lazy: every
method builds task graph and nothing is computed. Per-library special cases are
kept small and commented where they occur; MLX, which departs from the standard in
more places, has an adapter of its own that subclasses this one
(`tensorops._backends._mlx`).

A dimension of a traced JAX array under ``jax.export`` may be symbolic (``b``,
``2*b``): it is read as a `tensorops._staging.sizes.RunTimeSize` whose value is JAX's
own symbolic dimension, which JAX's reshape and broadcast take.

This module imports only numpy; the namespace is handed in by the registry.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tensorops._backends._base import AdapterBase
from tensorops._errors import FRAMEWORK_ERRORS, BackendError
from tensorops._staging.sizes import shape_values
from tensorops._types import Backend, Executor, IndexSpec

__all__ = ["ArrayApiBackend", "rows_of"]


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


class ArrayApiBackend(AdapterBase):
    """Primitives for the arrays of one array-API namespace ``xp``."""

    __slots__ = (
        "_is_cupy",
        "_is_jax",
        "_linalg_diagonal",
        "float32",
        "is_dask",
        "namespace",
        "narrow_floats",
        "xp",
    )
    name: str = "array_api"
    staged_as = "under jax.export"

    def __init__(self, xp: Any) -> None:
        self.xp = xp
        #: the namespace's module name, for messages: "jax.numpy", "array_api_strict", ...
        self.namespace: str = getattr(xp, "__name__", type(xp).__name__)
        #: whether the arrays are Dask's (lazy: asking for values computes them)
        self.is_dask = self.namespace in ("dask.array", "array_api_compat.dask.array")
        self._is_cupy = self.namespace in ("cupy", "array_api_compat.cupy")
        self._is_jax = self.namespace == "jax.numpy"
        # float16 and bfloat16 are not in the standard: the namespace's where it has them,
        # NumPy's where its dtypes are NumPy's (array_api_compat's Dask and CuPy)
        self.float32 = getattr(xp, "float32", None)
        named_in = np if self.float32 is np.float32 else xp
        self.narrow_floats = tuple(
            getattr(named_in, name) for name in ("float16", "bfloat16") if hasattr(named_in, name)
        )
        # `diagonal` is in the optional linalg extension only; without it we fall back to
        # a strided slice of the flattened last two axes (see `diagonal`).
        linalg = getattr(xp, "linalg", None)
        self._linalg_diagonal: Callable[[Any], Any] | None = getattr(linalg, "diagonal", None)

    def static_shape(self, x: Any) -> tuple[Any, ...]:
        # JAX's symbolic dimensions (jax.export) are lengths known when the graph runs;
        # anything else stays as it is (Dask's nan, an unknown chunk size, is refused)
        return tuple(None if self.is_length(n) else n for n in x.shape)

    def is_length(self, value: Any) -> bool:
        return self._is_jax and type(value).__name__ == "_DimExpr"

    def reshape(self, x: Any, shape: tuple[int, ...]) -> Any:
        shape = shape_values(shape)
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

    def permuter(self, axes: tuple[int, ...]) -> Executor:  # the namespace's call, bound once
        permute_dims = self.xp.permute_dims
        return lambda x, arg: permute_dims(x, axes)

    def reducer(self, reduction: str, axes: tuple[int, ...]) -> Executor:
        function = self._reduction(reduction)
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
        if reduction in ("var", "std"):
            return lambda x, axis: getattr(xp, reduction)(x, axis=axis, correction=0)
        if reduction in ("argmax", "argmin"):
            # the standard's argmax takes one axis: several are brought last and flattened
            arg = self.arg_reduction(self._one_axis(getattr(xp, reduction)))
            return lambda x, axis: arg(x, axis)
        if reduction == "logsumexp":
            return lambda x, axis: self.logsumexp(x, axis)
        return getattr(xp, reduction)  # type: ignore[no-any-return]

    def _one_axis(self, function: Callable[..., Any]) -> Callable[[Any, int], Any]:
        """An arg-reduction of the namespace as ``f(x, axis)``."""
        return lambda x, axis: function(x, axis=axis)

    def dtype_kind(self, dtype: Any) -> str:
        return next((kind for name, kind in _KINDS if self.xp.isdtype(dtype, name)), "O")

    def floating(self, x: Any) -> Any:
        if self.xp.isdtype(x.dtype, ("real floating", "complex floating")):
            return x
        info = getattr(self.xp, "__array_namespace_info__", None)
        dtype = info().default_dtypes()["real floating"] if info else self.xp.float64
        return self.xp.astype(x, dtype)

    def known(self, x: Any) -> Any:
        if self.is_dask:  # lazy: values are computed when the user asks
            return None
        try:
            return self.to_numpy(x)
        except (TypeError, ValueError, RuntimeError):  # a tracer of jax.jit, MLX's compile
            return None

    def shifted_exp(self, x: Any, axis: int | tuple[int, ...]) -> tuple[Any, Any]:
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

    def elementwiser(self, name: str, numbers: tuple[int, ...]) -> Callable[..., Any]:
        # the standard's functions take Python numbers since its 2024.12 revision
        return getattr(self.xp, name)  # type: ignore[no-any-return]

    def take(self, x: Any, index: Any) -> Any:
        flat = self.xp.take(self.reshape(x, (-1,)), self.reshape(index, (-1,)), axis=0)
        return self.reshape(flat, tuple(index.shape))

    def arange(self, n: Any, like: Any) -> Any:
        return self.xp.arange(n, **self.placed(like))

    def full(self, shape: tuple[int, ...], value: complex, like: Any) -> Any:
        return self.xp.full(shape_values(shape), value, dtype=like.dtype, **self.placed(like))

    def constant(self, value: complex, like: Any) -> Any:  # the number's kind, then the cast
        return self.astype(self.scalar(value, like), like.dtype)

    def placed(self, like: Any) -> dict[str, Any]:
        """``device=`` for a new array beside `like`."""
        return {"device": _device(like)}

    def flipper(self, axes: tuple[int, ...]) -> Executor:  # the namespace's flip: Dask's too
        flip = self.xp.flip
        return lambda x, arg: flip(x, axis=axes)

    def roller(self, shifts: tuple[int, ...], axes: tuple[int, ...]) -> Executor:
        roll = self.xp.roll  # a shift per axis: Dask refuses one int for several axes
        return lambda x, arg: roll(x, shift=shifts, axis=axes)

    def sorter(self, axis: int, descending: bool, indices: bool) -> Executor:
        function = self.xp.argsort if indices else self.xp.sort
        return lambda x, arg: function(x, axis=axis, descending=descending, stable=True)

    def cumsummer(self, axis: int) -> Executor:
        # cumulative_sum is the standard's since 2023.12; older namespaces have cumsum
        function = getattr(self.xp, "cumulative_sum", None) or getattr(self.xp, "cumsum", None)
        if function is None:
            raise BackendError(
                f"{self.namespace} has neither cumulative_sum nor cumsum",
                hint="convert the array first, e.g. with tops.convert(x, 'numpy')",
            )
        return lambda x, arg: function(x, axis=axis)

    # Indexes are not range-checked here: the family's `take` applies its own rule (an
    # error for array-api-strict, a fill value for JAX).
    def gatherer(self, spec: IndexSpec) -> Callable[[Any, Any], Any]:
        xp, positions = self.xp, self.positions(spec)
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
        rows, offsets = rows_of(self, spec)

        def take_rows(x: Any, index: Any) -> Any:
            where = positions(index)
            flat = self.reshape(where + offsets(x, where), (-1,))
            out = xp.take(self.reshape(x, rows), flat, axis=0)
            return self.reshape(out, (*where.shape, *rows[1:]))

        return take_rows

    def scatterer(self, spec: IndexSpec, accumulate: bool) -> Callable[[Any, Any, Any], Any]:
        if not self._is_jax:
            raise BackendError(
                f"the array API standard defines no scatter, and tensorops has none for "
                f"{self.namespace} arrays: set_at and add_at run on numpy, torch, jax and mlx "
                "arrays",
                hint="convert first, e.g. tops.convert(x, 'numpy'), and back",
            )
        # JAX's arrays are values: x.at[i].set(v) and .add(v) make new ones
        positions = self.positions(spec)
        method = "add" if accumulate else "set"
        if spec.batch is None:
            return lambda x, index, values: getattr(x.at[positions(index)], method)(values)
        rows, offsets = rows_of(self, spec)
        shape = (spec.batch, math.prod(spec.lengths), *rows[1:])

        def scatter(x: Any, index: Any, values: Any) -> Any:
            where = positions(index)
            out = getattr(self.reshape(x, rows).at[where + offsets(x, where)], method)(values)
            return self.reshape(out, shape)

        return scatter

    def expand(self, x: Any, shape: tuple[int, ...]) -> Any:
        return self.xp.broadcast_to(x, shape_values(shape))

    def stack(self, xs: Sequence[Any]) -> Any:
        return self.xp.stack(list(xs), axis=0)

    def concat(self, xs: Sequence[Any], axis: int) -> Any:
        return self.xp.concat(list(xs), axis=axis)

    def matmul(self, a: Any, b: Any) -> Any:
        return self.xp.matmul(a, b)

    def astype(self, x: Any, dtype: Any, casting: str = "unsafe") -> Any:
        return self.xp.astype(x, dtype)

    def result_type(self, xs: Sequence[Any]) -> Any:
        return self.xp.result_type(*xs)

    def scalar(self, value: complex, like: Any) -> Any:
        kinds = next(kinds for cls, kinds in _SCALAR_KINDS if isinstance(value, cls))
        dtype = like.dtype if self.xp.isdtype(like.dtype, kinds) else None
        return self.xp.asarray(value, dtype=dtype, **self.placed(like))

    def diagonal(self, x: Any, axis1: int, axis2: int) -> Any:
        ndim = len(x.shape)
        axis1 %= ndim
        axis2 %= ndim
        order = (*(i for i in range(ndim) if i not in (axis1, axis2)), axis1, axis2)
        if order != tuple(range(ndim)):
            x = self.xp.permute_dims(x, order)
        return self._last_diagonal(x)

    def _last_diagonal(self, x: Any) -> Any:
        """The diagonal of the last two axes, moved last."""
        if self._linalg_diagonal is not None:
            return self._linalg_diagonal(x)
        # Without the linalg extension: in the flattened (n * n) last axis the diagonal is
        # every (n + 1)-th element, and a step slice is standard.
        n = x.shape[-1]
        flat = self.xp.reshape(x, (*x.shape[:-2], n * n))
        return flat[..., :: n + 1]

    def to_numpy(self, x: Any) -> Any:
        if self.is_dask:
            # Asking for values is asking for the computation.
            return np.asarray(x.compute())
        if self._is_cupy:
            # CuPy refuses implicit device-to-host copies (np.asarray raises); .get() copies.
            return x.get()
        try:
            # Zero-copy for host memory. The producer decides whether the view is
            # writable: JAX arrays are immutable and come back read-only.
            return np.from_dlpack(x)
        except Exception:  # each producer raises its own type for "not on host"
            return np.asarray(x)

    def __repr__(self) -> str:
        return f"ArrayApiBackend({self.namespace})"


def rows_of(
    adapter: ArrayApiBackend, spec: IndexSpec
) -> tuple[tuple[int, ...], Callable[[Any, Any], Any]]:
    """The batched array as rows (batch and indexed axes merged), and each batch's offset."""
    xp, batch, size = adapter.xp, spec.batch or 1, math.prod(spec.lengths)
    rows = (batch * size,) if spec.channels is None else (batch * size, spec.channels)

    def offsets(x: Any, where: Any) -> Any:
        starts = xp.arange(0, batch * size, size, dtype=where.dtype, **adapter.placed(x))
        return adapter.reshape(starts, (batch, 1))

    return rows, offsets


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


_CHECK: type[Backend] = ArrayApiBackend
