"""The NumPy adapter: direct numpy calls, the fastest path."""

from __future__ import annotations

import functools
import importlib
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tensorops._backends._base import AdapterBase
from tensorops._errors import FRAMEWORK_ERRORS, ArgumentError, BackendError
from tensorops._types import Backend, Executor, IndexSpec

__all__ = ["ADAPTER", "NumpyBackend"]


def _quiet() -> Any:
    """NumPy's warnings for log(0) and exp overflow silenced (one object per use).

    Infinities are values in log space (log 0 = -inf), and inf is the answer of an exp
    that overflows there.
    """
    return np.errstate(divide="ignore", over="ignore")


def _logsumexp(x: Any, axes: tuple[int, ...]) -> Any:
    """log(sum(exp(x))) over `axes`, shifted by the maximum so that nothing overflows.

    The log and the shift back are done in place, in the sum's own (floating) array:
    fewer temporaries than ``log(sum) + top``.
    """
    top = np.maximum.reduce(x, axes, keepdims=True)
    # an infinite maximum (all -inf, or a +inf) would give inf - inf: shift by 0 instead
    top[np.isinf(top)] = 0
    with _quiet():  # log(0) = -inf is the answer for a slice all -inf, not a mistake
        total = np.add.reduce(np.exp(x - top), axes)
        if type(total) is not np.ndarray:  # every axis reduced: a NumPy scalar, not writable
            return np.log(total) + top.reshape(())
        np.log(total, out=total)
    total += top.reshape(total.shape)
    return total


# The ufunc reductions skip the array-function dispatch of np.sum & co.: a cache hit on a
# tiny array spends most of its time there otherwise.
_REDUCE: dict[str, Callable[..., Any]] = {
    "sum": np.add.reduce,
    "mean": lambda x, axis: x.mean(axis),  # the method: np.mean adds a dispatch layer
    "max": np.maximum.reduce,
    "min": np.minimum.reduce,
    "prod": np.multiply.reduce,
    "any": np.logical_or.reduce,
    "all": np.logical_and.reduce,
    "logsumexp": _logsumexp,
    "var": np.ndarray.var,  # population (ddof=0), as NumPy's default
    "std": np.ndarray.std,
}
#: The element-wise functions by name (tops.add, ...): ufuncs, without array-function dispatch.
_ELEMENTWISE: dict[str, Callable[..., Any]] = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "logaddexp": np.logaddexp,
    "where": np.where,
}
#: argmax / argmin along one axis: the method itself (several: `AdapterBase.arg_reduction`).
_ONE_AXIS: dict[str, Callable[..., Any]] = {
    "argmax": np.ndarray.argmax,
    "argmin": np.ndarray.argmin,
}


def _c_einsum() -> Callable[..., Any]:
    """What ``numpy.einsum(..., optimize=False)`` calls, without its Python wrapper."""
    for module in ("numpy._core.multiarray", "numpy.core.multiarray"):  # NumPy 2, 1.x
        try:
            found = getattr(importlib.import_module(module), "c_einsum", None)
        except ImportError:  # NumPy 1.x has no numpy._core
            continue
        if found is not None:
            return found  # type: ignore[no-any-return]
    return np.einsum  # pragma: no cover - a NumPy without it


_C_EINSUM = _c_einsum()


class NumpyBackend(AdapterBase):
    """Primitives for ``numpy.ndarray`` (and NumPy scalars, treated as 0-d arrays)."""

    __slots__ = ()
    name: str = "numpy"
    narrow_floats = (np.dtype(np.float16),)
    float32 = np.dtype(np.float32)
    written_class = np.ndarray
    written_name = "numpy array"

    # Methods, not np.reshape / np.transpose: the functions add array-function dispatch,
    # which costs more than the call itself on small arrays. NumPy scalars have both methods.
    def reshape(self, x: Any, shape: tuple[int, ...]) -> Any:
        return x.reshape(shape)

    def permute(self, x: Any, axes: tuple[int, ...]) -> Any:
        return x.transpose(axes)

    # The one-call executors call the methods directly: benchmarks/overhead.py's rows are
    # that call and little else.
    def permuter(self, axes: tuple[int, ...]) -> Executor:
        def permute(x: Any, arg: Any) -> Any:
            return x.transpose(axes)

        return permute

    def reshaper(self, shape: tuple[int, ...]) -> Executor:
        def reshape(x: Any, arg: Any) -> Any:
            return x.reshape(shape)

        return reshape

    def reducer(self, reduction: str, axes: tuple[int, ...]) -> Executor:
        function = _REDUCE.get(reduction)
        where: Any = axes
        if reduction in _ONE_AXIS:
            function = self.arg_reduction(_ONE_AXIS[reduction])
            if len(axes) == 1:
                function, where = _ONE_AXIS[reduction], axes[0]
        assert function is not None

        def reduce(x: Any, arg: Any) -> Any:
            try:
                return function(x, where)  # positional: parsed faster than axis=
            except FRAMEWORK_ERRORS as error:
                # e.g. max of an empty axis: "zero-size array to reduction operation ..."
                raise BackendError(
                    f"cannot take the {reduction} over axes {axes} of a numpy array with "
                    f"shape {np.shape(x)} and dtype {np.asarray(x).dtype}: {error}"
                ) from None

        return reduce

    def einsummer(self, equation: str) -> Callable[..., Any] | None:
        # numpy.einsum's C loop (optimize=False) beats reshape + matmul + reshape on tiny
        # operands, and element-wise products (benchmarks/einsum.py, "tiny" rows)
        call = functools.partial(_C_EINSUM, equation)

        def einsum(*operands: Any) -> Any:
            result = call(*operands)
            # object operands: NumPy returns a full contraction as the bare Python object;
            # the planned program's 0-d object array keeps the dtype
            return result if hasattr(result, "dtype") else np.asarray(result, dtype=object)

        return einsum

    # in place where it can: fewer temporaries than the composite
    def softmaxer(self, axes: tuple[int, ...], log: bool) -> Executor:
        def softmax(x: Any, arg: Any) -> Any:
            shifted = x - np.maximum.reduce(x, axes, keepdims=True)
            exp = np.exp(shifted)
            total = np.add.reduce(exp, axes, keepdims=True)
            if log:
                return shifted - np.log(total)
            exp /= total
            return exp

        return softmax

    def roller(self, shifts: tuple[int, ...], axes: tuple[int, ...]) -> Executor:
        def roll(x: Any, arg: Any) -> Any:
            return np.roll(x, shifts, axes)

        return roll

    def sorter(self, axis: int, descending: bool, indices: bool) -> Executor:
        function = np.argsort if indices else np.sort
        if not descending:
            return lambda x, arg: function(x, axis, kind="stable")
        if not indices:  # ties are equal values: the ascending sort reversed
            return lambda x, arg: np.flip(np.sort(x, axis, kind="stable"), axis)

        # NumPy sorts ascending only: reversed, sorted stably, and its positions mapped
        # back and reversed, ties keep their order (as torch's descending stable sort)
        def argsort(x: Any, arg: Any) -> Any:
            found = np.argsort(np.flip(x, axis), axis, kind="stable")
            return np.flip(x.shape[axis] - 1 - found, axis)

        return argsort

    def cumsummer(self, axis: int) -> Executor:
        return lambda x, arg: np.cumsum(x, axis)

    def dtype_kind(self, dtype: Any) -> str:
        kind = np.dtype(dtype).kind
        return "i" if kind == "u" else kind if kind in "bifc" else "O"

    def floating(self, x: Any) -> Any:
        if x.dtype.kind in "fc":
            return x
        # the dtype np.exp gives: float16 for (u)int8 and bool, float32 for int16, ...
        return x.astype(np.result_type(x.dtype, np.float16))

    def known(self, x: Any) -> Any:
        return x

    def shifted_exp(self, x: Any, axis: int | tuple[int, ...]) -> tuple[Any, Any]:
        top = np.maximum.reduce(x, axis, keepdims=True)
        # one check that every maximum is finite (Python's sum of a few: quicker than a ufunc)
        total = sum(top.ravel().tolist()) if top.size <= 64 else np.add.reduce(top, None)
        if math.isfinite(total):  # x - top <= 0: exp is quiet
            shifted = np.subtract(x, top)
            np.exp(shifted, out=shifted)
            return shifted, top
        top[~np.isfinite(top)] = 0
        shifted = np.subtract(x, top)
        with _quiet():
            np.exp(shifted, out=shifted)
        return shifted, top

    def log(self, x: Any) -> Any:
        return np.log(x)

    def elementwiser(self, name: str, numbers: tuple[int, ...]) -> Callable[..., Any]:
        return _ELEMENTWISE[name]  # the ufuncs take Python numbers as NumPy's operators do

    def take(self, x: Any, index: Any) -> Any:
        return np.take(x, index)  # no axis: the flattened array

    def arange(self, n: int, like: Any) -> Any:
        return np.arange(n)

    def full(self, shape: tuple[int, ...], value: complex, like: Any) -> Any:
        return np.full(shape, value, dtype=like.dtype)

    # positions by numpy.ravel_multi_index, which checks the range and merges in one call
    def gatherer(self, spec: IndexSpec) -> Callable[[Any, Any], Any]:
        positions = _positions(spec, merge_batch=True)
        if spec.batch is None:

            def take(x: Any, index: Any) -> Any:
                return x.take(positions(index), 0)

            return take
        rows = _rows(spec)

        def gather(x: Any, index: Any) -> Any:
            return x.reshape(rows).take(positions(index), 0)

        return gather

    def scatterer(self, spec: IndexSpec, accumulate: bool) -> Callable[[Any, Any, Any], Any]:
        # the batch position indexes its own axis: no reshape in and out, and a
        # shorter index to check than the batch merged in (gathers merge it: take)
        positions = _positions(spec, merge_batch=False)
        lead = None if spec.batch is None else np.arange(spec.batch).reshape(spec.batch, 1)

        def scatter(x: Any, index: Any, values: Any) -> Any:
            out = x.copy()
            where = positions(index)
            if lead is not None:
                where = (lead, where)
            if accumulate:
                np.add.at(out, where, values)
            else:
                out[where] = values
            return out

        return scatter

    def expand(self, x: Any, shape: tuple[int, ...]) -> Any:
        # A read-only view: nobody writes through the broadcast alias by accident.
        return np.broadcast_to(x, shape)

    def stack(self, xs: Sequence[Any]) -> Any:
        return np.stack(xs)

    def concat(self, xs: Sequence[Any], axis: int) -> Any:
        return np.concatenate(xs, axis=axis)

    def matmul(self, a: Any, b: Any) -> Any:
        return np.matmul(a, b)

    def diagonal(self, x: Any, axis1: int, axis2: int) -> Any:
        return np.diagonal(x, axis1=axis1, axis2=axis2)

    def astype(self, x: Any, dtype: Any, casting: str = "unsafe") -> Any:
        if casting != "unsafe" and not np.can_cast(x.dtype, dtype, casting):  # type: ignore[arg-type]
            raise ArgumentError(
                f"cannot cast {x.dtype} to {np.dtype(dtype)} under casting={casting!r}",
                hint="casting='unsafe' (or 'same_kind') converts anyway, as numpy.einsum does",
            )
        return x.astype(dtype, casting=casting, copy=False)

    def ordered(self, x: Any, order: str) -> Any:  # both orders, not only C
        return np.asarray(x, order=order)  # type: ignore[call-overload]

    def assign(self, out: Any, x: Any, casting: str) -> Any:
        np.copyto(out, x, casting=casting)  # type: ignore[arg-type]
        return out

    def result_type(self, xs: Sequence[Any]) -> Any:
        return np.result_type(*xs)

    def constant(self, value: complex, like: Any) -> Any:
        # a cast, not np.full: an int out of the dtype's range wraps, as set_at's values do
        return np.asarray(value).astype(like.dtype)

    def scalar(self, value: complex, like: Any) -> Any:
        return np.asarray(value)  # numpy.einsum's rule: int64 / float64 / complex128 / bool

    def to_numpy(self, x: Any) -> Any:
        return np.asarray(x)

    def __repr__(self) -> str:
        return "NumpyBackend()"


#: The one adapter (`tensorops._backends.NUMPY_BACKEND`).
ADAPTER: Backend = NumpyBackend()


def _rows(spec: IndexSpec) -> tuple[int, ...]:
    """The array of a batched gather with its batch and indexed axes merged: one row per entry."""
    rows = (spec.batch or 1) * math.prod(spec.lengths)
    return (rows,) if spec.channels is None else (rows, spec.channels)


def _positions(spec: IndexSpec, merge_batch: bool) -> Callable[[Any], Any]:
    """The rows an index reads: its coordinates raveled, each checked to be in its range.

    ``numpy.ravel_multi_index`` checks every coordinate (a negative one too) and merges
    them in one call; with a batch axis and `merge_batch` it merges the batch
    position first (rows of the array with its batch and indexed axes merged).
    """
    lengths, k = spec.lengths, len(spec.lengths)
    lead: tuple[Any, ...] = ()
    dims = lengths
    if merge_batch and spec.batch is not None:
        lead = (np.arange(spec.batch).reshape(spec.batch, 1),)
        dims = (spec.batch, *lengths)
    out_of_range = spec.out_of_range

    def positions(index: Any) -> Any:
        coordinates = (index,) if k == 1 else tuple(index[..., j] for j in range(k))
        try:
            return np.ravel_multi_index(lead + coordinates, dims)
        except ValueError as error:
            raise _out_of_range(coordinates, lengths, out_of_range) or error from None

    return positions


def _out_of_range(
    coordinates: tuple[Any, ...], lengths: tuple[int, ...], error: Callable[[int, Any], Exception]
) -> Exception | None:
    """The error for the first coordinate outside its axis; None if all are inside."""
    for j, (values, length) in enumerate(zip(coordinates, lengths, strict=True)):
        bad = (values < 0) | (values >= length)
        if bad.any():
            return error(j, values[bad].flat[0].item())
    return None


def shareable(a: np.ndarray) -> np.ndarray:
    """`a`, or a copy of it that another framework can take without copying again.

    Native byte order, aligned, writeable, and strides that are positive multiples of
    the item size (what ``torch.from_numpy`` and ``paddle.to_tensor`` share).
    """
    if not a.dtype.isnative:
        return a.astype(a.dtype.newbyteorder("="))
    if (
        not a.flags.writeable
        or not a.flags.aligned
        or any(stride < 0 or stride % a.itemsize for stride in a.strides)
    ):
        return a.copy(order="C")
    return a
