"""The NumPy adapter: direct numpy calls, the fastest path."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from tensorops._errors import FRAMEWORK_ERRORS, ArgumentError, BackendError, ShapeError
from tensorops._types import Executor

__all__ = ["NumpyBackend", "split_by_slicing"]

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
}


def split_by_slicing(x: Any, sizes: Sequence[int], axis: int) -> list[Any]:
    """Consecutive pieces of ``x`` along ``axis`` by basic slicing (views in every library).

    The index ends with ``...``: the array API standard requires every axis to be covered.
    """
    if axis < 0:
        axis += len(x.shape)
    lead = (slice(None),) * axis
    pieces = []
    start = 0
    for size in sizes:
        index = (*lead, slice(start, start + size), ...)
        pieces.append(x[index])
        start += size
    return pieces


class NumpyBackend:
    """Primitives for ``numpy.ndarray`` (and NumPy scalars, treated as 0-d arrays)."""

    __slots__ = ()
    name: str = "numpy"

    # Methods, not np.reshape / np.transpose: the functions add array-function dispatch,
    # which costs more than the call itself on small arrays. NumPy scalars have both methods.
    def reshape(self, x: Any, shape: tuple[int, ...]) -> Any:
        return x.reshape(shape)

    def permute(self, x: Any, axes: tuple[int, ...]) -> Any:
        return x.transpose(axes)

    def reduce(self, x: Any, reduction: str, axes: tuple[int, ...]) -> Any:
        return self.reducer(reduction, axes)(x, None)

    def permuter(self, axes: tuple[int, ...]) -> Executor:
        def permute(x: Any, arg: Any) -> Any:
            return x.transpose(axes)

        return permute

    def reshaper(self, shape: tuple[int, ...]) -> Executor:
        def reshape(x: Any, arg: Any) -> Any:
            return x.reshape(shape)

        return reshape

    def reducer(self, reduction: str, axes: tuple[int, ...]) -> Executor:
        function = _REDUCE[reduction]

        def reduce(x: Any, arg: Any) -> Any:
            try:
                return function(x, axes)  # positional: parsed faster than axis=
            except FRAMEWORK_ERRORS as error:
                # e.g. max of an empty axis: "zero-size array to reduction operation ..."
                raise BackendError(
                    f"cannot take the {reduction} over axes {axes} of a numpy array with "
                    f"shape {np.shape(x)} and dtype {np.asarray(x).dtype}: {error}"
                ) from None

        return reduce

    def expand(self, x: Any, shape: tuple[int, ...]) -> Any:
        # A read-only view: nobody writes through the broadcast alias by accident.
        return np.broadcast_to(x, shape)

    def stack(self, xs: Sequence[Any]) -> Any:
        return np.stack(xs)

    def concat(self, xs: Sequence[Any], axis: int) -> Any:
        return np.concatenate(xs, axis=axis)

    def split(self, x: Any, sizes: Sequence[int], axis: int) -> list[Any]:
        return split_by_slicing(np.asarray(x), sizes, axis)

    def matmul(self, a: Any, b: Any) -> Any:
        return np.matmul(a, b)

    def multiply(self, a: Any, b: Any) -> Any:
        return np.multiply(a, b)

    def diagonal(self, x: Any, axis1: int, axis2: int) -> Any:
        return np.diagonal(x, axis1=axis1, axis2=axis2)

    def astype(self, x: Any, dtype: Any, casting: str = "unsafe") -> Any:
        if casting != "unsafe" and not np.can_cast(x.dtype, dtype, casting):  # type: ignore[arg-type]
            raise ArgumentError(
                f"cannot cast {x.dtype} to {np.dtype(dtype)} under casting={casting!r}",
                hint="casting='unsafe' (or 'same_kind') converts anyway, as numpy.einsum does",
            )
        return x.astype(dtype, casting=casting, copy=False)

    def ordered(self, x: Any, order: str) -> Any:
        return np.asarray(x, order=order)  # type: ignore[call-overload]

    def write(self, out: Any, x: Any, casting: str) -> Any:
        if not isinstance(out, np.ndarray):
            raise BackendError(f"out must be a numpy array here, got {type(out).__name__}")
        if out.shape != np.shape(x):
            raise ShapeError(f"out has shape {out.shape} but the result has shape {np.shape(x)}")
        np.copyto(out, x, casting=casting)  # type: ignore[arg-type]
        return out

    def result_type(self, xs: Sequence[Any]) -> Any:
        return np.result_type(*xs)

    def scalar(self, value: complex, like: Any) -> Any:
        return np.asarray(value)  # numpy.einsum's rule: int64 / float64 / complex128 / bool

    def sizes(self, x: Any) -> tuple[Any, ...]:
        return tuple(x.shape)

    def traced(self, shapes: Any) -> bool:
        return False

    def to_numpy(self, x: Any) -> Any:
        return np.asarray(x)

    def __repr__(self) -> str:
        return "NumpyBackend()"
