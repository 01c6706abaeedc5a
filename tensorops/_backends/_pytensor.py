"""The PyTensor adapter: PyTensor's own graph ops on symbolic variables.

Every op builds graph: the result is a ``TensorVariable`` that ``pytensor.function``
compiles and ``pytensor.grad`` differentiates; nothing is computed until then.
Constants (``pt.constant``), shared variables and the results of other ops are all
``TensorVariable``s of one family.

A dimension whose length the variable's type does not fix (``pt.tensor(shape=(None,
4))``) is read as a run-time size (`tensorops._staging.sizes.RunTimeSize`) whose value
is ``x.shape[i]``, a scalar graph. Plans compute with it as with an int and bind equal
axes by construction; a check that cannot be decided before the graph runs is left to
PyTensor, which makes it when the function runs (as einops does). Such sizes cannot be
hashed: their calls are planned afresh each time, like torch's symbolic sizes under
torch.compile.

This module imports pytensor; ``tensorops._backends`` imports it only once pytensor is
in ``sys.modules``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytensor
import pytensor.tensor as pt
from pytensor.gradient import zero_grad
from pytensor.graph.basic import Constant

try:  # moved in PyTensor 2.32; the old name warns
    from pytensor.graph.traversal import graph_inputs
except ImportError:  # pragma: no cover - older PyTensor
    from pytensor.graph.basic import graph_inputs
from pytensor.tensor.type import complex_dtypes, float_dtypes, integer_dtypes
from pytensor.tensor.variable import TensorVariable

from tensorops._backends._base import AdapterBase
from tensorops._backends._numpy import ADAPTER as NUMPY_BACKEND
from tensorops._errors import FRAMEWORK_ERRORS, ArgumentError, BackendError
from tensorops._staging.sizes import shape_values, value_of
from tensorops._types import Backend, Executor, IndexSpec

__all__ = ["ADAPTER", "PyTensorBackend", "adapter_for"]


def _is_length_graph(value: Any) -> bool:
    """Whether `value` is a 0-d integer PyTensor graph: a length known when the graph runs."""
    return (
        isinstance(value, TensorVariable)
        and value.type.ndim == 0
        and value.type.dtype in integer_dtypes
    )


def _shape(shape: Sequence[Any]) -> Any:
    """A shape for PyTensor: a tuple of ints, or a list mixing ints and scalar graphs."""
    if all(type(n) is int for n in shape):
        return tuple(shape)
    return list(shape_values(shape))


#: The element-wise functions by name (tops.add, ...); they take Python numbers as
#: PyTensor's operators do (the number's dtype follows the variable's).
_ELEMENTWISE: dict[str, Callable[..., Any]] = {
    "add": pt.add,
    "subtract": pt.sub,
    "multiply": pt.mul,
    "divide": pt.true_div,
    "maximum": pt.maximum,
    "minimum": pt.minimum,
    "logaddexp": pt.logaddexp,
    "where": pt.where,
}


# argmax / argmin and logsumexp: `AdapterBase.arg_reduction` and `AdapterBase.logsumexp`
_REDUCERS: dict[str, Callable[[Any, tuple[int, ...]], Any]] = {
    "sum": lambda x, axes: pt.sum(x, axis=axes),
    "mean": lambda x, axes: pt.mean(x, axis=axes),
    "max": lambda x, axes: pt.max(x, axis=axes),
    "min": lambda x, axes: pt.min(x, axis=axes),
    "prod": lambda x, axes: pt.prod(x, axis=axes),
    "any": lambda x, axes: pt.any(x, axis=axes),
    "all": lambda x, axes: pt.all(x, axis=axes),
    "var": lambda x, axes: pt.var(x, axis=axes, ddof=0),
    "std": lambda x, axes: pt.std(x, axis=axes, ddof=0),
}


class PyTensorBackend(AdapterBase):
    """Primitives for PyTensor ``TensorVariable``s (constants and shared variables too)."""

    __slots__ = ()
    name: str = "pytensor"
    staged_as = "in a PyTensor graph"
    narrow_floats = ("float16",)  # a variable's dtype is its name
    float32 = "float32"

    def reshape(self, x: Any, shape: tuple[int, ...]) -> Any:
        return pt.reshape(x, _shape(shape), ndim=len(shape))

    def permute(self, x: Any, axes: tuple[int, ...]) -> Any:
        return x.dimshuffle(axes) if axes != tuple(range(len(axes))) else x

    def reducer(self, reduction: str, axes: tuple[int, ...]) -> Executor:
        if reduction in ("argmax", "argmin"):
            one_axis = getattr(pt, reduction)
            function = self.arg_reduction(lambda x, axis: one_axis(x, axis=axis))
        elif reduction == "logsumexp":
            function = self.logsumexp
        else:
            function = _REDUCERS[reduction]
        # PyTensor would fail only when the function runs: an empty axis known now is an error
        # now, as on NumPy
        needs_values = reduction in ("max", "min", "argmax", "argmin")

        def reduce(x: Any, arg: Any) -> Any:
            if not axes:
                return x
            if needs_values and any(x.type.shape[axis] == 0 for axis in axes):
                raise _empty(x, reduction, axes)
            try:
                return function(x, axes)
            except FRAMEWORK_ERRORS as error:
                raise BackendError(
                    f"cannot take the {reduction} over axes {axes} of a pytensor variable "
                    f"of dtype {x.dtype}: {error}"
                ) from None

        return reduce

    # No einsummer: the planned program builds the same graph of dots as pt.einsum

    def softmaxer(self, axes: tuple[int, ...], log: bool) -> Executor:
        if len(axes) > 1:
            return super().softmaxer(axes, log)
        # PyTensor's own op: its gradient and stability rewrites
        function = pt.special.log_softmax if log else pt.special.softmax
        return lambda x, arg: function(x, axis=axes[0])

    def roller(self, shifts: tuple[int, ...], axes: tuple[int, ...]) -> Executor:
        def roll(x: Any, arg: Any) -> Any:
            for shift, axis in zip(shifts, axes, strict=True):  # pt.roll takes one axis
                x = pt.roll(x, shift, axis=axis)
            return x

        return roll

    def sorter(self, axis: int, descending: bool, indices: bool) -> Executor:
        function = pt.argsort if indices else pt.sort
        if not descending:
            return lambda x, arg: function(x, axis=axis, stable=True)

        def flipped(x: Any) -> Any:
            return pt.flip(x, axis=axis)

        if not indices:  # ties are equal values: the ascending sort reversed
            return lambda x, arg: flipped(pt.sort(x, axis=axis, stable=True))

        # PyTensor sorts ascending only: reversed, sorted stably, and its positions mapped
        # back and reversed, ties keep their order (as torch's descending stable sort)
        def argsort(x: Any, arg: Any) -> Any:
            found = pt.argsort(flipped(x), axis=axis, stable=True)
            return flipped(x.shape[axis] - 1 - found)

        return argsort

    def cumsummer(self, axis: int) -> Executor:
        return lambda x, arg: pt.cumsum(x, axis=axis)

    def dtype_kind(self, dtype: Any) -> str:
        kind = np.dtype(str(dtype)).kind
        return "i" if kind == "u" else kind if kind in "bifc" else "O"

    def floating(self, x: Any) -> Any:
        if x.dtype in float_dtypes or x.dtype in complex_dtypes:
            return x
        return pt.cast(x, pt.exp(x).dtype)  # what pt.exp gives an integer variable

    def shifted_exp(self, x: Any, axis: int | tuple[int, ...]) -> tuple[Any, Any]:
        top = zero_grad(pt.max(x, axis=axis, keepdims=True))
        top = pt.switch(pt.isfinite(top), top, pt.zeros_like(top))
        return pt.exp(x - top), top

    def log(self, x: Any) -> Any:
        return pt.log(x)

    def elementwiser(self, name: str, numbers: tuple[int, ...]) -> Callable[..., Any]:
        return _ELEMENTWISE[name]

    def take(self, x: Any, index: Any) -> Any:
        return x.flatten()[index]  # the flattened array, shaped as the index

    def arange(self, n: int, like: Any) -> Any:
        return pt.arange(value_of(n), dtype="int64")

    def full(self, shape: tuple[int, ...], value: complex, like: Any) -> Any:
        return pt.full(_shape(shape), np.asarray(value).astype(like.dtype), dtype=like.dtype)

    # Indexes are not checked here: a constant index is read by the plan, and PyTensor
    # checks any other when the function runs.
    def gatherer(self, spec: IndexSpec) -> Callable[[Any, Any], Any]:
        positions = self.positions(spec)
        if spec.batch is None:
            return lambda x, index: x[positions(index)]
        lead = pt.arange(value_of(spec.batch), dtype="int64")[:, None]

        def gather(x: Any, index: Any) -> Any:
            return x[lead, positions(index)]

        return gather

    def scatterer(self, spec: IndexSpec, accumulate: bool) -> Callable[[Any, Any, Any], Any]:
        positions = self.positions(spec)
        write = pt.inc_subtensor if accumulate else pt.set_subtensor
        if spec.batch is None:
            return lambda x, index, values: write(x[positions(index)], values)
        lead = pt.arange(value_of(spec.batch), dtype="int64")[:, None]
        return lambda x, index, values: write(x[lead, positions(index)], values)

    def expand(self, x: Any, shape: tuple[int, ...]) -> Any:
        return pt.broadcast_to(x, _shape(shape))

    def stack(self, xs: Sequence[Any]) -> Any:
        return pt.stack(list(xs))

    def concat(self, xs: Sequence[Any], axis: int) -> Any:
        return pt.concatenate(list(xs), axis=axis)

    def matmul(self, a: Any, b: Any) -> Any:
        return pt.matmul(a, b)

    def diagonal(self, x: Any, axis1: int, axis2: int) -> Any:
        return pt.diagonal(x, axis1=axis1, axis2=axis2)

    def astype(self, x: Any, dtype: Any, casting: str = "unsafe") -> Any:
        dtype = np.dtype(str(dtype)).name
        if casting != "unsafe" and not np.can_cast(x.dtype, dtype, casting):  # type: ignore[arg-type]
            raise ArgumentError(
                f"cannot cast {x.dtype} to {dtype} under casting={casting!r}",
                hint="casting='unsafe' (or 'same_kind') converts anyway, as numpy.einsum does",
            )
        return x if x.dtype == dtype else pt.cast(x, dtype)

    def result_type(self, xs: Sequence[Any]) -> Any:
        return pytensor.scalar.upcast(*(x.dtype for x in xs))

    def constant(self, value: complex, like: Any) -> Any:
        return pt.constant(np.asarray(value).astype(like.dtype))

    def scalar(self, value: complex, like: Any) -> Any:
        # PyTensor's rule for `like * value`: a float stays float32 with a float32 variable
        dtype = (pt.zeros((), dtype=like.dtype) + value).dtype
        return pt.constant(np.asarray(value).astype(dtype))

    def to_numpy(self, x: Any) -> Any:
        if isinstance(x, Constant):
            return np.array(x.data, copy=True)  # no graph to compile
        free = [
            v
            for v in graph_inputs([x])
            if not isinstance(v, (Constant, pytensor.compile.SharedVariable))
        ]
        if free:
            names = ", ".join(str(v.name or v) for v in free[:4])
            raise BackendError(
                f"cannot evaluate a pytensor variable that depends on inputs ({names})",
                hint="compile it with pytensor.function([inputs], x), or call "
                "x.eval({input: value, ...})",
            )
        return np.asarray(x.eval())

    def from_numpy(self, a: np.ndarray[Any, Any], device: Any) -> Any:
        """A PyTensor constant with ``a``'s values, shape and dtype (`tops.convert`).

        Examples:
            >>> import numpy as np
            >>> ADAPTER.from_numpy(np.arange(3, dtype=np.int16), None).type
            TensorType(int16, shape=(3,))
        """
        if device not in (None, "cpu"):
            raise BackendError(
                f"device={device!r}: PyTensor places values when a function is compiled",
                hint="leave device out (or pass 'cpu')",
            )
        return pt.constant(np.array(a, copy=True), dtype=a.dtype.name)

    def static_shape(self, x: Any) -> tuple[Any, ...]:
        return tuple(x.type.shape)

    def is_length(self, value: Any) -> bool:
        return _is_length_graph(value)  # parse_shape's lengths: scalar integer graphs

    def __repr__(self) -> str:
        return "PyTensorBackend()"


def _empty(x: Any, reduction: str, axes: tuple[int, ...]) -> BackendError:
    """NumPy's error for a reduction without identity over an empty axis, for this variable."""
    stand_in = np.zeros([1 if n is None else n for n in x.type.shape], dtype=x.dtype)
    try:
        NUMPY_BACKEND.reduce(stand_in, reduction, axes)
    except BackendError as error:
        return BackendError(str(error.args[0]).replace("numpy array", "pytensor variable"))
    return BackendError(f"cannot take the {reduction} over axes {axes}: an axis is empty")


#: The one adapter (`tensorops._backends.backend_for_framework` reads it).
ADAPTER: Backend = PyTensorBackend()


def adapter_for(x: Any) -> Backend | None:
    """The adapter for PyTensor tensor variables (constants and shared ones too), else None.

    Examples:
        >>> import pytensor.tensor as pt
        >>> adapter_for(pt.constant([1.0, 2.0]))
        PyTensorBackend()
        >>> adapter_for([1.0]) is None
        True
    """
    # TensorConstant and TensorSharedVariable are TensorVariables
    return ADAPTER if isinstance(x, TensorVariable) else None
