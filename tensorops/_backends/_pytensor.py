"""The PyTensor adapter: PyTensor's own graph ops on symbolic variables.

Every op builds graph: the result is a ``TensorVariable`` that ``pytensor.function``
compiles and ``pytensor.grad`` differentiates; nothing is computed until then.
Constants (``pt.constant``), shared variables and the results of other ops are all
``TensorVariable``s of one family.

A dimension whose length the variable's type does not fix (``pt.tensor(shape=(None,
4))``) is read as a `SymbolicSize`: the length as a graph of its own. Plans compute
with it as with an int; comparisons answer True only where the answer is certain, so a
check that cannot be decided before the graph runs is left to PyTensor, which makes it
when the function runs (as einops does). Such sizes cannot be hashed: their calls are
planned afresh each time, like torch's symbolic sizes under torch.compile.

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

from tensorops._backends._numpy import NumpyBackend, reduced_last
from tensorops._errors import FRAMEWORK_ERRORS, ArgumentError, BackendError
from tensorops._types import Executor, IndexSpec

__all__ = ["ADAPTER", "PyTensorBackend", "SymbolicSize", "adapter_for", "unwrap"]


class SymbolicSize:
    """The length of a dimension known only when the graph runs: a scalar PyTensor graph.

    Arithmetic with ints and other symbolic sizes gives symbolic sizes. What cannot be
    decided before the graph runs is assumed to fit, as einops assumes it, and left to
    PyTensor, which checks it when the function runs: a symbolic size equals any other
    length except 0 and 1 (an unknown dimension is never one that broadcasts, as in
    PyTensor's own types), and is divisible by anything (``n % k`` is 0). ``<`` and ``>``
    answer True only where certain. Unhashable, as torch's symbolic sizes are: calls
    with them are planned afresh, never cached.

    Examples:
        >>> import pytensor.tensor as pt
        >>> n = SymbolicSize(pt.tensor("x", shape=(None,)).shape[0])
        >>> n == n * 2, n == 1, n % 4, n > 0
        (True, False, 0, False)
    """

    __slots__ = ("value",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, value: Any) -> None:
        #: the length, a 0-d int64 PyTensor variable
        self.value = value

    def __mul__(self, other: Any) -> Any:
        if type(other) is int and other in (0, 1):  # keeps products of known ones plain
            return self if other == 1 else 0
        return SymbolicSize(self.value * unwrap(other))

    __rmul__ = __mul__

    def __add__(self, other: Any) -> Any:
        if type(other) is int and other == 0:
            return self
        return SymbolicSize(self.value + unwrap(other))

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        return SymbolicSize(self.value - unwrap(other))

    def __rsub__(self, other: Any) -> Any:
        return SymbolicSize(unwrap(other) - self.value)

    def __floordiv__(self, other: Any) -> Any:
        if type(other) is int and other == 1:
            return self
        return SymbolicSize(self.value // unwrap(other))

    def __rfloordiv__(self, other: Any) -> Any:
        return SymbolicSize(unwrap(other) // self.value)

    def __mod__(self, other: Any) -> int:
        # a remainder is asked for only to check divisibility: assumed, checked by the
        # reshape when the function runs
        return 0

    def __rmod__(self, other: Any) -> Any:
        return SymbolicSize(unwrap(other) % self.value)

    def __neg__(self) -> Any:
        return SymbolicSize(-self.value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SymbolicSize):
            return True
        if type(other) is int:
            return other > 1
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __lt__(self, other: object) -> bool:
        return False  # no upper bound is known

    def __gt__(self, other: object) -> bool:
        return type(other) is int and other < 0

    def __le__(self, other: object) -> bool:
        return self < other

    def __ge__(self, other: object) -> bool:
        return self > other or (type(other) is int and other == 0)

    def __bool__(self) -> bool:
        return True  # a length assumed non-zero, as above

    def __index__(self) -> int:
        # a step that needs the number itself (a loop over blocks of the max / min
        # semirings): a clear error instead of Python's TypeError
        raise BackendError(
            "this step needs the length of a dimension that PyTensor knows only when the "
            "function runs",
            hint="give the variable a static shape: pt.tensor(shape=(...)) or pt.specify_shape",
        )

    def __repr__(self) -> str:
        return "?"


def unwrap(size: Any) -> Any:
    """`size` as PyTensor takes it: the graph of a `SymbolicSize`, anything else as it is."""
    return size.value if type(size) is SymbolicSize else size


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
    return [unwrap(n) for n in shape]


def _is_symbolic(shapes: Any) -> bool:
    return any(
        type(n) is SymbolicSize or (isinstance(n, tuple) and _is_symbolic(n)) for n in shapes
    )


#: The element-wise functions by name (tops.add, ...); they take Python numbers as
#: PyTensor's operators do (the number's dtype follows the variable's).
NUMPY_BACKEND = NumpyBackend()

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


def _flat_arg(function: Any) -> Any:
    """The argmax / argmin over several axes flattened in their order (as if written ``(h w)``)."""

    def arg(x: Any, axes: tuple[int, ...]) -> Any:
        if len(axes) == 1:
            return function(x, axis=axes[0])
        perm, start = reduced_last(tuple(range(x.ndim)), axes)
        if perm is not None:
            x = x.dimshuffle(perm)
        return function(x.reshape((*x.shape[:start], -1), ndim=start + 1), axis=-1)

    return arg


def _logsumexp(x: Any, axes: tuple[int, ...]) -> Any:
    # the shift carries no gradient: the result does not depend on it
    top = zero_grad(pt.max(x, axis=axes, keepdims=True))
    # an infinite maximum (all -inf, or a +inf) would give inf - inf: shift by 0 instead
    top = pt.switch(pt.isinf(top), pt.zeros_like(top), top)
    total = pt.log(pt.sum(pt.exp(x - top), axis=axes))
    return total + top.reshape(total.shape, ndim=total.ndim)


_REDUCERS: dict[str, Callable[[Any, tuple[int, ...]], Any]] = {
    "sum": lambda x, axes: pt.sum(x, axis=axes),
    "mean": lambda x, axes: pt.mean(x, axis=axes),
    "max": lambda x, axes: pt.max(x, axis=axes),
    "min": lambda x, axes: pt.min(x, axis=axes),
    "prod": lambda x, axes: pt.prod(x, axis=axes),
    "any": lambda x, axes: pt.any(x, axis=axes),
    "all": lambda x, axes: pt.all(x, axis=axes),
    "argmax": _flat_arg(pt.argmax),
    "argmin": _flat_arg(pt.argmin),
    "logsumexp": _logsumexp,
    "var": lambda x, axes: pt.var(x, axis=axes, ddof=0),
    "std": lambda x, axes: pt.std(x, axis=axes, ddof=0),
}


class PyTensorBackend:
    """Primitives for PyTensor ``TensorVariable``s (constants and shared variables too)."""

    __slots__ = ()
    name: str = "pytensor"

    def reshape(self, x: Any, shape: tuple[int, ...]) -> Any:
        return pt.reshape(x, _shape(shape), ndim=len(shape))

    def permute(self, x: Any, axes: tuple[int, ...]) -> Any:
        return x.dimshuffle(axes) if axes != tuple(range(len(axes))) else x

    def reduce(self, x: Any, reduction: str, axes: tuple[int, ...]) -> Any:
        return self.reducer(reduction, axes)(x, None)

    def permuter(self, axes: tuple[int, ...]) -> Executor:
        return lambda x, arg: self.permute(x, axes)

    def reshaper(self, shape: tuple[int, ...]) -> Executor:
        return lambda x, arg: self.reshape(x, shape)

    def reducer(self, reduction: str, axes: tuple[int, ...]) -> Executor:
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

    def einsummer(self, equation: str) -> Callable[..., Any] | None:
        return None  # the planned program builds the same graph of dots as pt.einsum

    def softmaxer(self, axes: tuple[int, ...], log: bool) -> Executor:
        if len(axes) == 1:  # PyTensor's own op: its gradient and stability rewrites
            function = pt.special.log_softmax if log else pt.special.softmax
            return lambda x, arg: function(x, axis=axes[0])

        def softmax(x: Any, arg: Any) -> Any:
            shifted = x - zero_grad(pt.max(x, axis=axes, keepdims=True))
            exp = pt.exp(shifted)
            total = pt.sum(exp, axis=axes, keepdims=True)
            return shifted - pt.log(total) if log else exp / total

        return softmax

    def flipper(self, axes: tuple[int, ...]) -> Executor:
        index = tuple(slice(None, None, -1 if i in axes else None) for i in range(max(axes) + 1))
        return lambda x, arg: x[index]

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

    def is_integer(self, dtype: Any) -> bool:
        return str(dtype) in integer_dtypes

    def dtype_kind(self, dtype: Any) -> str:
        kind = np.dtype(str(dtype)).kind
        return "i" if kind == "u" else kind if kind in "bifc" else "O"

    def floating(self, x: Any) -> Any:
        if x.dtype in float_dtypes or x.dtype in complex_dtypes:
            return x
        return pt.cast(x, pt.exp(x).dtype)  # what pt.exp gives an integer variable

    def widened(self, x: Any) -> Any:
        return pt.cast(x, "float32") if x.dtype == "float16" else x

    def known(self, x: Any) -> Any:
        return None  # a variable's values are known when its function runs

    def shifted_exp(self, x: Any, axis: int) -> tuple[Any, Any]:
        top = zero_grad(pt.max(x, axis=axis, keepdims=True))
        top = pt.switch(pt.isfinite(top), top, pt.zeros_like(top))
        return pt.exp(x - top), top

    def log(self, x: Any) -> Any:
        return pt.log(x)

    def logaddexp(self, a: Any, b: Any) -> Any:
        return pt.logaddexp(a, b)

    def maximum(self, a: Any, b: Any) -> Any:
        return pt.maximum(a, b)

    def minimum(self, a: Any, b: Any) -> Any:
        return pt.minimum(a, b)

    def where(self, condition: Any, a: Any, b: Any) -> Any:
        return pt.where(condition, a, b)

    def elementwiser(self, name: str, numbers: tuple[int, ...]) -> Callable[..., Any]:
        return _ELEMENTWISE[name]

    def take(self, x: Any, index: Any) -> Any:
        return x.flatten()[index]  # the flattened array, shaped as the index

    def arange(self, n: int, like: Any) -> Any:
        return pt.arange(unwrap(n), dtype="int64")

    def full(self, shape: tuple[int, ...], value: complex, like: Any) -> Any:
        return pt.full(_shape(shape), np.asarray(value).astype(like.dtype), dtype=like.dtype)

    def gatherer(self, spec: IndexSpec) -> Callable[[Any, Any], Any]:
        positions = _positions(spec)
        if spec.batch is None:
            return lambda x, index: x[positions(index)]
        lead = pt.arange(unwrap(spec.batch), dtype="int64")[:, None]

        def gather(x: Any, index: Any) -> Any:
            return x[lead, positions(index)]

        return gather

    def scatterer(self, spec: IndexSpec, accumulate: bool) -> Callable[[Any, Any, Any], Any]:
        positions = _positions(spec)
        write = pt.inc_subtensor if accumulate else pt.set_subtensor
        if spec.batch is None:
            return lambda x, index, values: write(x[positions(index)], values)
        lead = pt.arange(unwrap(spec.batch), dtype="int64")[:, None]
        return lambda x, index, values: write(x[lead, positions(index)], values)

    def expand(self, x: Any, shape: tuple[int, ...]) -> Any:
        return pt.broadcast_to(x, _shape(shape))

    def stack(self, xs: Sequence[Any]) -> Any:
        return pt.stack(list(xs))

    def concat(self, xs: Sequence[Any], axis: int) -> Any:
        return pt.concatenate(list(xs), axis=axis)

    def split(self, x: Any, sizes: Sequence[int], axis: int) -> list[Any]:
        if axis < 0:
            axis += x.ndim
        lead = (slice(None),) * axis
        pieces, start = [], 0
        for size in sizes:
            pieces.append(x[(*lead, slice(unwrap(start), unwrap(start + size)))])
            start = start + size
        return pieces

    def matmul(self, a: Any, b: Any) -> Any:
        return pt.matmul(a, b)

    def multiply(self, a: Any, b: Any) -> Any:
        return pt.mul(a, b)

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

    def ordered(self, x: Any, order: str) -> Any:
        raise BackendError(
            f"order={order!r}: PyTensor variables have no memory order",
            hint="leave order out; only NumPy arrays take order='C' or 'F'",
        )

    def write(self, out: Any, x: Any, casting: str) -> Any:
        raise BackendError(
            "out=: a PyTensor graph cannot write into a variable",
            hint="use the returned variable (pt.set_subtensor builds a written copy)",
        )

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

    def sizes(self, x: Any) -> tuple[Any, ...]:
        static = x.type.shape
        if None not in static:
            return tuple(static)
        return tuple(SymbolicSize(x.shape[i]) if n is None else n for i, n in enumerate(static))

    def outward_size(self, size: Any) -> Any:
        """A size as parse_shape answers it: an int, or PyTensor's own scalar graph.

        Examples:
            >>> import pytensor.tensor as pt
            >>> x = pt.tensor("x", shape=(None, 3))
            >>> [type(n).__name__ for n in ADAPTER.sizes(x)]
            ['SymbolicSize', 'int']
            >>> ADAPTER.outward_size(ADAPTER.sizes(x)[0]).eval({x: np.zeros((5, 3))})
            array(5)
        """
        return unwrap(size)

    def inward_lengths(self, given: dict[str, Any]) -> dict[str, Any]:
        """Axis lengths given as integer scalar graphs (parse_shape's) as `SymbolicSize`.

        Examples:
            >>> import pytensor.tensor as pt
            >>> n = pt.tensor("x", shape=(None,)).shape[0]
            >>> ADAPTER.inward_lengths({"a": n, "b": 2})
            {'a': ?, 'b': 2}
        """
        return {
            name: SymbolicSize(value) if _is_length_graph(value) else value
            for name, value in given.items()
        }

    def traced(self, shapes: Any) -> bool:
        # The fast path hands over `x.shape`, itself a graph: the call takes the slow path,
        # which plans from `sizes` (ints are cached; symbolic sizes are unhashable anyway).
        return not isinstance(shapes, tuple) or any(
            isinstance(n, TensorVariable) or (isinstance(n, tuple) and self.traced(n))
            for n in shapes
        )

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


def _positions(spec: IndexSpec) -> Callable[[Any], Any]:
    """The positions an index reads in the merged indexed axes: ``(i0 * n1 + i1) * n2 ...``.

    Indexes are not checked here: a constant index is read by the plan, and PyTensor
    checks any other when the function runs.
    """
    lengths = tuple(unwrap(n) for n in spec.lengths)
    if len(lengths) == 1:
        return lambda index: index

    def positions(index: Any) -> Any:
        flat = index[..., 0]
        for j in range(1, len(lengths)):
            flat = flat * lengths[j] + index[..., j]
        return flat

    return positions


#: The one adapter (`tensorops._backends.backend_for_framework` reads it).
ADAPTER = PyTensorBackend()


def adapter_for(x: Any) -> PyTensorBackend | None:
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
