"""The tinygrad adapter: direct calls on ``tinygrad.Tensor``, on any of its devices.

tinygrad is lazy: every method builds graph and nothing runs until the user asks for
values (``.numpy()``, ``.realize()``, ...). The adapter keeps it so: no call here reads a
tensor's values, so an op costs no kernel launch, gradients flow through
``Tensor.backward()`` and ``TinyJit`` captures the kernels of a function that calls the
ops. Only `TinygradBackend.to_numpy` realizes, because it is asked to.

What tinygrad lacks, and what the adapter does instead:

* ``logsumexp`` and ``logaddexp`` give NaN where every term is ``-inf``; the adapter
  shifts by 0 there, as the other adapters do, so ``log(0)`` is ``-inf``.
* A reduction with no identity (max, min, argmax, argmin) over an empty axis gives
  ``-inf`` or the dtype's extreme; the adapter raises as NumPy does (a shape check, no
  values read).
* Gathers and scatters select with one-hot masks: an index outside its axis selects
  nothing (zeros for a gather, no write for a scatter) instead of raising. Checking it
  would read the index's values: a realize in the middle of a lazy graph, and a
  value-dependent branch that ``TinyJit`` cannot replay.
* There are no complex dtypes; bfloat16 and the float8 types reach NumPy as float32.

This module imports tinygrad; ``tensorops._backends`` imports it only once a tensor
has been seen (tinygrad is then already in ``sys.modules``).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from tinygrad import Tensor, dtypes
from tinygrad.dtype import DType, least_upper_dtype

from tensorops._backends._base import AdapterBase
from tensorops._errors import FRAMEWORK_ERRORS, BackendError, dtype_name
from tensorops._types import Backend, Executor, IndexSpec

__all__ = ["ADAPTER", "TinygradBackend", "adapter_for"]

#: tinygrad's dtypes that NumPy has no dtype for, read as float32 (as ``Tensor.numpy``).
_WIDENED = (dtypes.bfloat16, *dtypes.fp8s)

#: The reductions without an identity: NumPy refuses them over an empty axis.
_NO_IDENTITY = ("max", "min", "argmax", "argmin")

#: With a Python number among the operands: the operators, which take one on either side.
_OPERATORS: dict[str, Callable[..., Any]] = {
    "add": operator.add,
    "subtract": operator.sub,
    "multiply": operator.mul,
    "divide": operator.truediv,
}


def _is_float(dtype: DType) -> bool:
    return bool(dtypes.is_float(dtype))


def _finite_or_zero(x: Tensor) -> Tensor:
    """``x`` with its infinities and NaNs replaced by 0: a shift that never makes ``inf - inf``."""
    return x.isfinite().where(x, 0)


def _logaddexp(a: Any, b: Any) -> Any:
    """``log(exp(a) + exp(b))``, stable; ``-inf`` and ``-inf`` give ``-inf`` (tinygrad: NaN)."""
    top = a.maximum(b) if isinstance(a, Tensor) else Tensor.maximum(b, a)
    top = _finite_or_zero(_floating(top).detach())
    return ((a - top).exp() + (b - top).exp()).log() + top


def _floating(x: Tensor) -> Tensor:
    """``x`` if it is floating, else converted to the dtype ``Tensor.exp`` gives it."""
    return x if _is_float(x.dtype) else x.cast(dtypes.default_float)


# One call each; tinygrad takes a tuple of axes for every reduction but argmax / argmin
# (`AdapterBase.arg_reduction`) and logsumexp, which gives NaN where every term is -inf
# (`AdapterBase.logsumexp`).
_REDUCERS: dict[str, Callable[[Tensor, tuple[int, ...]], Tensor]] = {
    "sum": Tensor.sum,
    "mean": Tensor.mean,
    "max": Tensor.max,
    "min": Tensor.min,
    "prod": Tensor.prod,
    "any": Tensor.any,
    "all": Tensor.all,
    "var": lambda x, axes: x.var(axes, correction=0),  # population statistics
    "std": lambda x, axes: x.std(axes, correction=0),
}

#: The element-wise functions by name (tops.add, ...), all operands tensors.
_ELEMENTWISE: dict[str, Callable[..., Any]] = {
    "add": Tensor.add,
    "subtract": Tensor.sub,
    "multiply": Tensor.mul,
    "divide": Tensor.div,
    "maximum": Tensor.maximum,
    "minimum": Tensor.minimum,
    "logaddexp": _logaddexp,
    "where": Tensor.where,
}


def _describe(x: Tensor) -> str:
    return f"shape {tuple(x.shape)} and dtype {dtype_name(x.dtype)}"


class TinygradBackend(AdapterBase):
    """Primitives for ``tinygrad.Tensor`` (any device: CPU, GPU, its Python emulator)."""

    __slots__ = ()
    name: str = "tinygrad"
    narrow_floats = (dtypes.float16, dtypes.bfloat16)
    float32 = dtypes.float32
    written_class = Tensor
    written_name = "tinygrad tensor"
    c_ordered = True

    def reshape(self, x: Any, shape: tuple[int, ...]) -> Any:
        return x.reshape(shape)

    def permute(self, x: Any, axes: tuple[int, ...]) -> Any:
        return x.permute(axes) if axes else x

    def reducer(self, reduction: str, axes: tuple[int, ...]) -> Executor:
        if reduction in ("argmax", "argmin"):
            function = self.arg_reduction(getattr(Tensor, reduction))
        elif reduction == "logsumexp":
            function = self.logsumexp
        else:
            function = _REDUCERS[reduction]
        no_identity = reduction in _NO_IDENTITY

        def reduce(x: Any, arg: Any) -> Any:
            if not axes:
                return x
            # tinygrad gives -inf (or the dtype's extreme) here; NumPy's answer is an error.
            # The shape says so without reading a value.
            if no_identity and any(x.shape[axis] == 0 for axis in axes):
                raise BackendError(
                    f"cannot take the {reduction} over axes {axes} of a tinygrad tensor with "
                    f"{_describe(x)}: zero-size axis with no identity"
                )
            try:
                return function(x, axes)
            except FRAMEWORK_ERRORS as error:
                raise BackendError(
                    f"cannot take the {reduction} over axes {axes} of a tinygrad tensor with "
                    f"{_describe(x)}: {error}"
                ) from None

        return reduce

    # No einsummer: Tensor.einsum builds the same permute / reshape / multiply-sum graph
    # the planned program builds, without the plan's choice of pairwise order.

    def softmaxer(self, axes: tuple[int, ...], log: bool) -> Executor:
        first, last = axes[0], axes[-1]
        if axes != tuple(range(first, last + 1)):
            return super().softmaxer(axes, log)

        def softmax(x: Any, arg: Any) -> Any:  # adjacent axes: one for tinygrad's own kernel
            flat = x.flatten(first, last) if last > first else x
            out = flat.log_softmax(first) if log else flat.softmax(first)
            return out.reshape(x.shape)

        return softmax

    def roller(self, shifts: tuple[int, ...], axes: tuple[int, ...]) -> Executor:
        return lambda x, arg: x.roll(shifts, axes)

    def sorter(self, axis: int, descending: bool, indices: bool) -> Executor:
        # tinygrad's bitonic sort keeps equal elements in their order: it is stable
        if indices:
            return lambda x, arg: x.argsort(axis, descending)
        return lambda x, arg: x.sort(axis, descending)[0]

    def cumsummer(self, axis: int) -> Executor:
        return lambda x, arg: x.cumsum(axis)

    def dtype_kind(self, dtype: Any) -> str:
        if dtype == dtypes.bool:
            return "b"
        return "f" if _is_float(dtype) else "i" if dtypes.is_int(dtype) else "O"

    def floating(self, x: Any) -> Any:
        return _floating(x)

    def shifted_exp(self, x: Any, axis: int | tuple[int, ...]) -> tuple[Any, Any]:
        top = _finite_or_zero(x.detach().max(axis, keepdim=True))
        return (x - top).exp(), top

    def log(self, x: Any) -> Any:
        return x.log()  # log(0) is -inf, without a warning

    def elementwiser(self, name: str, numbers: tuple[int, ...]) -> Callable[..., Any]:
        if not numbers:
            return _ELEMENTWISE[name]
        if name in _OPERATORS:  # Python's operators take a number on either side
            return _OPERATORS[name]
        if name == "where":

            def where(condition: Any, a: Any, b: Any) -> Any:
                if not isinstance(condition, Tensor):  # a number: a 0-d tensor of it
                    like = a if isinstance(a, Tensor) else b
                    condition = Tensor(bool(condition), device=like.device)
                return condition.where(a, b)

            return where
        function = _ELEMENTWISE[name]  # maximum, minimum, logaddexp: symmetric

        def with_number(a: Any, b: Any) -> Any:
            # the tensor's method, which takes the number as tinygrad's operators take it
            return function(a, b) if isinstance(a, Tensor) else function(b, a)

        return with_number

    def take(self, x: Any, index: Any) -> Any:
        flat = index.reshape(-1)
        return x.reshape(-1).gather(0, _wide(flat, x.numel())).reshape(index.shape)

    def arange(self, n: int, like: Any) -> Any:
        # Tensor.arange has no device: made on the default one, moved where it differs
        return Tensor.arange(n).to(like.device)

    def full(self, shape: tuple[int, ...], value: complex, like: Any) -> Any:
        return Tensor.full(shape, _real(value), dtype=like.dtype, device=like.device)

    def wide_index(self, index: Any, spec: IndexSpec) -> Any:
        # widened first: uint8 coordinates of a 300 x 300 grid would overflow when merged
        return _wide(index, math.prod(spec.lengths) * (spec.batch or 1))

    def gatherer(self, spec: IndexSpec) -> Callable[[Any, Any], Any]:
        positions = self.positions(spec)
        channels = spec.channels
        if spec.batch is None:

            def take(x: Any, index: Any) -> Any:
                where = positions(index)
                rest = tuple(x.shape[1:])
                count = math.prod(where.shape)
                rows = where.reshape(count, 1).expand(count, math.prod(rest))
                out = x.reshape(x.shape[0], -1).gather(0, rows)
                return out.reshape(*where.shape, *rest)

            return take

        def gather(x: Any, index: Any) -> Any:
            where = positions(index)
            if channels is None:
                return x.gather(1, where)
            return x.gather(1, where.unsqueeze(2).expand(*where.shape, channels))

        return gather

    def scatterer(self, spec: IndexSpec, accumulate: bool) -> Callable[[Any, Any, Any], Any]:
        positions = self.positions(spec)
        channels = spec.channels

        def into(x: Any, dim: int, where: Any, values: Any) -> Any:
            if where.numel() == 0:  # nothing to write (tinygrad cannot split an empty axis)
                return x
            values = values.cast(x.dtype) if values.dtype != x.dtype else values
            if accumulate:
                return x.scatter_reduce(dim, where, values, "sum", include_self=True)
            return x.scatter(dim, where, values)  # a repeated position: the last one wins

        if spec.batch is None:

            def scatter(x: Any, index: Any, values: Any) -> Any:
                where = positions(index)
                rest = math.prod(x.shape[1:])
                count = math.prod(where.shape)
                rows = where.reshape(count, 1).expand(count, rest)
                flat = values.expand(*where.shape, *x.shape[1:]).reshape(count, rest)
                return into(x.reshape(x.shape[0], rest), 0, rows, flat).reshape(x.shape)

            return scatter

        def scatter_rows(x: Any, index: Any, values: Any) -> Any:
            where = positions(index)
            if channels is not None:
                where = where.unsqueeze(2).expand(*where.shape, channels)
            return into(x, 1, where, values.expand(where.shape))

        return scatter_rows

    def expand(self, x: Any, shape: tuple[int, ...]) -> Any:
        return x.expand(shape)  # a view of the graph, no copy

    def stack(self, xs: Sequence[Any]) -> Any:
        return Tensor.stack(*xs)

    def concat(self, xs: Sequence[Any], axis: int) -> Any:
        return xs[0].cat(*xs[1:], dim=axis)

    def matmul(self, a: Any, b: Any) -> Any:
        return a.matmul(b)

    def diagonal(self, x: Any, axis1: int, axis2: int) -> Any:
        return x.diagonal(dim1=axis1, dim2=axis2)  # torch's rule: moved last, as NumPy's

    def astype(self, x: Any, dtype: Any, casting: str = "unsafe") -> Any:
        return x if x.dtype == dtype else x.cast(dtype)  # tinygrad has no casting rule

    def contiguous(self, x: Any) -> Any:
        return x.contiguous()

    def assign(self, out: Any, x: Any, casting: str) -> Any:
        return out.assign(self.astype(x, out.dtype))

    def result_type(self, xs: Sequence[Any]) -> Any:
        return least_upper_dtype(*(x.dtype for x in xs))

    def scalar(self, value: complex, like: Any) -> Any:
        # tinygrad's rule for `like * value`: the number takes the tensor's dtype where its
        # kind fits (a float needs a floating tensor), else the default of its kind
        number = _real(value)
        dtype = like.dtype
        if isinstance(number, float) and not _is_float(dtype):
            dtype = dtypes.default_float
        elif not isinstance(number, bool) and dtype == dtypes.bool:
            dtype = dtypes.default_int
        return Tensor(number, dtype=dtype, device=like.device)

    def to_numpy(self, x: Any) -> Any:
        if x.dtype in _WIDENED:
            x = x.cast(dtypes.float32)
        try:
            return x.numpy()
        except FRAMEWORK_ERRORS as error:
            raise BackendError(
                f"cannot read a tinygrad tensor with {_describe(x)} as numpy: {error}"
            ) from None

    def from_numpy(self, a: np.ndarray[Any, Any], device: Any) -> Any:
        """A tinygrad tensor with ``a``'s values, shape and dtype, on `device` (None: the default).

        Example:
            >>> import numpy as np
            >>> ADAPTER.from_numpy(np.arange(3, dtype=np.int16), None).dtype
            dtypes.short
        """
        if a.dtype.kind not in "biuf":
            raise BackendError(
                f"tinygrad has no dtype for numpy's {a.dtype}",
                hint="tinygrad holds bool, integers and real floating-point numbers",
            )
        return Tensor(np.ascontiguousarray(a), device=device)

    def __repr__(self) -> str:
        return "TinygradBackend()"


def _real(value: complex) -> bool | int | float:
    """A Python number tinygrad can hold; it has no complex dtype."""
    if isinstance(value, complex):
        raise BackendError(f"tinygrad has no complex dtype for the value {value}")
    return value


def _wide(index: Tensor, size: int) -> Tensor:
    """`index` in an integer dtype that holds every position below `size` (int32 or int64)."""
    wide = dtypes.int64 if size >= 2**31 else dtypes.int32
    if index.dtype in (dtypes.int32, dtypes.int64) and index.dtype.itemsize >= wide.itemsize:
        return index
    return index.cast(wide)


#: The one adapter (`tensorops._backends.backend_for_framework` reads it).
ADAPTER: Backend = TinygradBackend()


def adapter_for(x: Any) -> Backend | None:
    """The adapter for ``x`` if it is a ``tinygrad.Tensor``, else None.

    Example:
        >>> from tinygrad import Tensor
        >>> adapter_for(Tensor([1.0])), adapter_for([1.0])
        (TinygradBackend(), None)
    """
    return ADAPTER if isinstance(x, Tensor) else None
