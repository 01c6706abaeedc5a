"""The TensorFlow adapter: TensorFlow ops on eager tensors, variables and graph tensors.

Every method is made of TensorFlow ops only: no ``.numpy()``, no Python branching on
values. The same calls therefore run eagerly, trace inside ``tf.function``, compile
under XLA (``jit_compile=True``) and are differentiated by ``tf.GradientTape``. Only
`TensorflowBackend.to_numpy` reads values, because it is asked to, and the index
range check of get_at / set_at / add_at, which runs on eager tensors alone.

Unknown dimensions (``tf.TensorSpec([None, 4])`` inside ``tf.function``, a Keras input's
batch) are read as run-time sizes (`tensorops._staging.sizes.RunTimeSize`) whose value
is ``tf.shape(x)[i]``: plans made from such sizes are not cached, equal axes are bound
by the plan, and TensorFlow's reshape checks the lengths when the graph runs.

TensorFlow raises its own ``tf.errors.OpError`` (not a ValueError) for a step it
refuses eagerly, and places an op on its preferred device rather than its input's:
every method here turns such an error into a `BackendError` and, where the machine
has several devices, runs on the input's device (`_step`).

This module imports TensorFlow; ``tensorops._backends`` imports it only once a
tensor has been seen (TensorFlow is then already in ``sys.modules``).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
import tensorflow as tf

from tensorops._backends import _tensorflow_kernels as kernels
from tensorops._backends._base import AdapterBase
from tensorops._errors import BackendError, TensorOpsError
from tensorops._staging.sizes import shape_values, value_of
from tensorops._types import Backend, Executor, IndexSpec

__all__ = ["ADAPTER", "TensorflowBackend", "adapter_for"]

_F = TypeVar("_F", bound=Callable[..., Any])

#: Whether TensorFlow sees more than one device: ops are then placed on their input's.
_DEVICES = len(tf.config.list_logical_devices()) > 1
_NOWHERE = contextlib.nullcontext()
#: The alignment (bytes) of the buffers TensorFlow adopts through DLPack: its kernels' widest
#: (Eigen's EIGEN_MAX_ALIGN_BYTES in the builds on PyPI).
_ALIGNMENT = 64


def _placed(x: Any) -> Any:
    """A context that runs ops on ``x``'s device (nothing to do on a one-device machine)."""
    device = x.device if _DEVICES else None
    return tf.device(device) if device else _NOWHERE


@functools.lru_cache(maxsize=4096)
def _eager_ints(values: tuple[int, ...]) -> Any:
    with tf.init_scope():  # eager even when first asked for inside tf.function
        wide = any(abs(value) >= 2**31 for value in values)
        return tf.constant(values, dtype=tf.int64 if wide else tf.int32)


def _ints(values: tuple[Any, ...]) -> Any:
    """A shape, permutation or axes argument as TensorFlow takes it fastest.

    An eager op converts a Python tuple into a tensor at every call (about 90 us of the
    ~110 us a tiny eager reshape costs); an eager int tensor made once per tuple is
    passed instead. While tracing (tf.function, XLA) the tuple itself: XLA needs such
    arguments constant, and a graph converts them once. Sizes TensorFlow reads from the
    graph (run-time sizes, ``tf.shape(x)[i]``) occur only while tracing.
    """
    if not tf.executing_eagerly():
        return shape_values(values)
    return _eager_ints(values)


def _refused(error: Exception) -> BackendError:
    message = getattr(error, "message", str(error)).strip().splitlines()[0]
    return BackendError(f"tensorflow refused a step: {type(error).__name__}: {message}")


def _step(method: _F) -> _F:
    """A method run on its first tensor's device, TensorFlow's own errors made BackendErrors."""

    @functools.wraps(method)
    def step(self: Any, x: Any, *args: Any) -> Any:
        first = x[0] if isinstance(x, (list, tuple)) else x
        try:
            with _placed(first):
                return method(self, x, *args)
        except tf.errors.OpError as error:
            raise _refused(error) from None

    return step  # type: ignore[return-value]


def _executor(function: Callable[..., Any]) -> Executor:
    """An executor ``run(x, arg)`` calling ``function(x)`` the way `_step` runs methods."""

    def run(x: Any, arg: Any) -> Any:
        try:
            with _placed(x):
                return function(x)
        except tf.errors.OpError as error:
            raise _refused(error) from None

    return run


#: The element-wise functions by name (tops.add, ...): NumPy's meaning, TensorFlow's ops.
_ELEMENTWISE: dict[str, Callable[..., Any]] = {
    "add": tf.add,
    "subtract": tf.subtract,
    "multiply": kernels.multiply,
    "divide": tf.math.truediv,  # true division, as NumPy's divide: int / int is float64
    "maximum": lambda a, b: tf.logical_or(a, b) if a.dtype == tf.bool else tf.maximum(a, b),
    "minimum": lambda a, b: tf.logical_and(a, b) if a.dtype == tf.bool else tf.minimum(a, b),
    "logaddexp": kernels.logaddexp,
    "where": tf.where,
}


class TensorflowBackend(AdapterBase):
    """Primitives for ``tf.Tensor`` (eager and graph tensors) and ``tf.Variable``."""

    __slots__ = ()
    name: str = "tensorflow"
    staged_as = "inside tf.function"
    written_class = tf.Variable  # a tensor cannot be written into
    written_name = "tf.Variable"
    c_ordered = True
    narrow_floats = (tf.float16, tf.bfloat16)
    float32 = tf.float32
    #: each pairwise step of a planned einsum as one `einsummer` call: an eager op costs
    #: ~100 us, so one einsum beats transpose + reshape + matmul + reshape
    einsum_pairs: bool = True

    @_step
    def reshape(self, x: Any, shape: tuple[int, ...]) -> Any:
        return tf.reshape(x, _ints(shape))

    @_step
    def permute(self, x: Any, axes: tuple[int, ...]) -> Any:
        return tf.transpose(x, _ints(axes)) if axes else tf.convert_to_tensor(x)

    # executors of one op each, run as `_step` runs methods
    def permuter(self, axes: tuple[int, ...]) -> Executor:
        return _executor(lambda x: tf.transpose(x, _ints(axes)))

    def reshaper(self, shape: tuple[int, ...]) -> Executor:
        return _executor(lambda x: tf.reshape(x, _ints(shape)))

    def reducer(self, reduction: str, axes: tuple[int, ...]) -> Executor:
        if reduction in kernels.ONE_AXIS:
            function = self.arg_reduction(kernels.ONE_AXIS[reduction])
        else:
            function = kernels.REDUCERS[reduction]
        empty = reduction in kernels.WITHOUT_IDENTITY
        # the reductions that hand their axes to TensorFlow as they are (`_ints`)
        ints = _ints if reduction in kernels.AXES_AS_GIVEN else lambda axes: axes

        def reduce(x: Any) -> Any:
            if not axes:
                return tf.convert_to_tensor(x)
            if empty and any(x.shape[i] == 0 for i in axes):
                # TensorFlow answers -inf (or a garbage index); NumPy refuses
                raise BackendError(
                    f"cannot take the {reduction} over axes {axes} of a tensorflow tensor with "
                    f"shape {tuple(x.shape)}: zero-size reduction, which has no identity"
                )
            try:
                return function(x, ints(axes))
            except TensorOpsError:
                raise
            except (tf.errors.OpError, TypeError, ValueError) as error:
                raise kernels.refused(reduction, x, error) from None

        return _executor(reduce)

    def einsummer(self, equation: str) -> Callable[..., Any] | None:
        # one op in place of the program's transpose, reshape, matmul and reshape: on tiny
        # operands TensorFlow's per-op cost dominates (benchmarks/einsum.py)
        einsum = kernels.einsum(equation)

        def run(*operands: Any) -> Any:
            try:
                with _placed(operands[0]):
                    return einsum(*operands)
            except tf.errors.OpError as error:
                raise _refused(error) from None

        return run

    def softmaxer(self, axes: tuple[int, ...], log: bool) -> Executor:  # tf.nn's fused kernels
        def softmax(x: Any) -> Any:
            x = self.floating(x)
            if len(axes) == 1:
                return (tf.nn.log_softmax if log else tf.nn.softmax)(x, axes[0])
            shifted = x - tf.reduce_logsumexp(x, axes, keepdims=True)
            return shifted if log else tf.exp(shifted)

        return _executor(softmax)

    def roller(self, shifts: tuple[int, ...], axes: tuple[int, ...]) -> Executor:
        return _executor(lambda x: tf.roll(x, shifts, axes))

    def sorter(self, axis: int, descending: bool, indices: bool) -> Executor:
        direction = "DESCENDING" if descending else "ASCENDING"

        def sort(x: Any) -> Any:
            values = tf.cast(x, tf.int8) if x.dtype == tf.bool else x  # no bool kernel
            if indices:
                return tf.argsort(values, axis, direction, stable=True)
            if values is x:
                return tf.sort(x, axis, direction)
            return tf.cast(tf.sort(values, axis, direction), tf.bool)

        return _executor(sort)

    def cumsummer(self, axis: int) -> Executor:
        def cumsum(x: Any) -> Any:
            return tf.cumsum(tf.cast(x, tf.int64) if x.dtype == tf.bool else x, axis)

        return _executor(cumsum)

    def dtype_kind(self, dtype: Any) -> str:
        dtype = tf.as_dtype(dtype)
        if dtype == tf.bool:
            return "b"
        if dtype.is_integer:
            return "i"
        return "f" if dtype.is_floating else "c" if dtype.is_complex else "O"

    def floating(self, x: Any) -> Any:
        if x.dtype.is_floating or x.dtype.is_complex:
            return x
        # NumPy's rule for exp of integers: float16 for 8 bits and bool, float32 for 16, ...
        return tf.cast(x, tf.as_dtype(np.result_type(x.dtype.as_numpy_dtype, np.float16)))

    def known(self, x: Any) -> Any:
        return x.numpy() if tf.executing_eagerly() and hasattr(x, "numpy") else None

    @_step
    def shifted_exp(self, x: Any, axis: int | tuple[int, ...]) -> tuple[Any, Any]:
        # no gradient through the shift: the result does not depend on it
        top = tf.stop_gradient(tf.reduce_max(x, axis, keepdims=True))
        top = tf.where(tf.math.is_finite(top), top, tf.zeros_like(top))
        return tf.exp(x - top), top

    @_step
    def log(self, x: Any) -> Any:
        return tf.math.log(x)

    def elementwiser(self, name: str, numbers: tuple[int, ...]) -> Callable[..., Any]:
        function = _ELEMENTWISE[name]
        first = 1 if name == "where" else 0  # the condition is not promoted

        def elementwise(*operands: Any) -> Any:
            tensors = [x for i, x in enumerate(operands) if i not in numbers]
            # numbers take the dtype of a tensor they meet (where's condition does not count)
            like = next(
                (x for i, x in enumerate(operands) if i >= first and i not in numbers), None
            )
            try:
                with _placed(tensors[0]):
                    values = [
                        kernels.number(x, like) if i in numbers else x
                        for i, x in enumerate(operands[first:], first)
                    ]
                    return function(*operands[:first], *kernels.promoted(values))
            except tf.errors.OpError as error:
                raise _refused(error) from None

        return elementwise

    @_step
    def take(self, x: Any, index: Any) -> Any:
        return tf.gather(tf.reshape(x, (-1,)), index)  # x read flattened, shaped as index

    def arange(self, n: int, like: Any) -> Any:
        with _placed(like):
            return tf.range(n, dtype=tf.int64)

    def full(self, shape: tuple[int, ...], value: complex, like: Any) -> Any:
        with _placed(like):
            return tf.fill(_ints(shape), kernels.cast_number(value, like.dtype))

    def gatherer(self, spec: IndexSpec) -> Callable[[Any, Any], Any]:
        positions = self.positions(spec)
        gather = _step(lambda _, x, index: kernels.gather(x, positions(index), spec))
        return functools.partial(gather, self)

    def scatterer(self, spec: IndexSpec, accumulate: bool) -> Callable[[Any, Any, Any], Any]:
        positions = self.positions(spec)

        def scatter(_: Any, x: Any, index: Any, values: Any) -> Any:
            return kernels.scatter(x, positions(index), values, spec, accumulate)

        return functools.partial(_step(scatter), self)

    def wide_index(self, index: Any, spec: IndexSpec) -> Any:
        return index if index.dtype in (tf.int32, tf.int64) else tf.cast(index, tf.int64)

    def values_known(self, x: Any) -> bool:
        # inside tf.function TensorFlow's gather reports an index out of range when the
        # graph runs (on the CPU; GPU kernels give zeros)
        return bool(tf.executing_eagerly())

    @_step
    def expand(self, x: Any, shape: tuple[int, ...]) -> Any:
        return tf.broadcast_to(x, _ints(shape))  # TensorFlow has no stride-0 views: a copy

    @_step
    def stack(self, xs: Sequence[Any]) -> Any:
        return tf.stack(list(xs))

    @_step
    def concat(self, xs: Sequence[Any], axis: int) -> Any:
        return tf.concat(list(xs), axis)

    @_step
    def split(self, x: Any, sizes: Sequence[int], axis: int) -> list[Any]:
        # one op; `num`: sizes that hold a tensor (run-time sizes) are packed into one
        return list(tf.split(x, list(shape_values(sizes)), axis, num=len(sizes)))

    @_step
    def matmul(self, a: Any, b: Any) -> Any:
        return kernels.matmul(*kernels.promoted((a, b)))

    @_step
    def diagonal(self, x: Any, axis1: int, axis2: int) -> Any:
        ndim = x.shape.rank
        axis1 %= ndim
        axis2 %= ndim
        order = (*(i for i in range(ndim) if i not in (axis1, axis2)), axis1, axis2)
        if order != tuple(range(ndim)):
            x = tf.transpose(x, order)
        return tf.linalg.diag_part(x)

    @_step
    def astype(self, x: Any, dtype: Any, casting: str = "unsafe") -> Any:
        return tf.cast(x, tf.as_dtype(dtype))  # TensorFlow has no casting rule: it converts

    def assign(self, out: Any, x: Any, casting: str) -> Any:
        out.assign(tf.cast(x, out.dtype))
        return out

    def result_type(self, xs: Sequence[Any]) -> Any:
        # NumPy's promotion: TensorFlow itself refuses operands of two dtypes
        return tf.as_dtype(np.result_type(*(x.dtype.as_numpy_dtype for x in xs)))

    @_step
    def constant(self, value: complex, like: Any) -> Any:  # one op, not a fill of one
        return kernels.cast_number(value, like.dtype)

    @_step
    def scalar(self, value: complex, like: Any) -> Any:
        return kernels.number(value, like)

    def to_numpy(self, x: Any) -> Any:
        if not tf.executing_eagerly() or not hasattr(x, "numpy"):
            raise BackendError(
                f"a symbolic tensorflow tensor (shape {tuple(x.shape)}) has no values to "
                "convert to numpy: it is traced inside tf.function",
                hint="call tops.asnumpy on the tensors the function returns",
            )
        try:
            # zero-copy for host memory; read-only, since a TensorFlow tensor is immutable
            found = np.from_dlpack(x.value() if isinstance(x, tf.Variable) else x)
        except Exception:  # not in host memory, or a dtype DLPack lacks (bfloat16): a copy
            return x.numpy()
        found.flags.writeable = False
        return found

    def from_numpy(self, a: np.ndarray[Any, Any], device: Any) -> Any:
        """A tensor of this framework with ``a``'s values, zero-copy through DLPack where possible.

        ``device`` is a TensorFlow device name (``"/GPU:0"``), or None for the default.

        Examples:
            >>> import numpy as np, tensorflow as tf
            >>> TensorflowBackend().from_numpy(np.arange(3), None).numpy()
            array([0, 1, 2])
        """
        with tf.device(device) if device else _NOWHERE:
            if a.ctypes.data % _ALIGNMENT:
                # TensorFlow aborts the process (a failed check, not an exception) on a
                # buffer its kernels cannot read aligned; NumPy aligns to 16 bytes only
                return tf.constant(a)
            try:
                found = tf.experimental.dlpack.from_dlpack(a.__dlpack__())
            except Exception:  # read-only or not native-endian: a copy
                return tf.constant(a)
            if device:
                found = tf.identity(found)  # from the host to that device
            return found

    # The fast path hands over `x.shape`, a TensorShape (no tuple): `traced` sends it to
    # `sizes` (a TensorShape of known dims equals its tuple, so a cached plan still hits).
    def static_shape(self, x: Any) -> tuple[Any, ...]:
        if x.shape.rank is None:
            raise BackendError(
                "a tensorflow tensor of unknown rank cannot be matched against a pattern",
                hint="give tf.function an input_signature with the rank, e.g. "
                "tf.TensorSpec([None, None, 3])",
            )
        return tuple(x.shape.as_list())

    def run_time_shape(self, x: Any) -> Any:
        return tf.shape(x)

    def assert_equal(self, first: Any, second: Any, error: Callable[[], Exception]) -> Any:
        message = str(error())
        return tf.debugging.assert_equal(value_of(first), value_of(second), message=message)

    def after(self, checks: Sequence[Any], run: Executor) -> Executor:
        def checked(x: Any, arg: Any) -> Any:
            with tf.control_dependencies(checks):  # the message before a kernel's own
                return run(x, arg)

        return checked

    def is_length(self, value: Any) -> bool:
        # parse_shape's run-time lengths inside tf.function: scalar integer tensors
        return isinstance(value, tf.Tensor) and value.shape.rank == 0 and value.dtype.is_integer

    def __repr__(self) -> str:
        return "TensorflowBackend()"


#: The one adapter (`tensorops._backends.backend_for_framework` reads it).
ADAPTER: Backend = TensorflowBackend()
_TYPES = (tf.Tensor, tf.Variable)


def adapter_for(x: Any) -> Backend | None:
    """The adapter for a TensorFlow tensor or variable; None for anything else.

    Examples:
        >>> import tensorflow as tf
        >>> adapter_for(tf.zeros((2, 3)))
        TensorflowBackend()
        >>> adapter_for([1, 2]) is None
        True
    """
    return ADAPTER if isinstance(x, _TYPES) else None
