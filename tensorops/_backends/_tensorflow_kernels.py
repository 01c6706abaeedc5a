"""TensorFlow calls that need more than one op: reductions, dtypes TF has no kernel for, indexing.

TensorFlow registers many kernels for a subset of its dtypes only (no ``MatMul`` for
int8, no ``Sum`` for bool, no ``Max`` for complex); where NumPy computes a result for
such a dtype the helpers here compute it too, by converting to a dtype that has the
kernel and back, and otherwise say which dtype TensorFlow refuses (`refused`).
Every helper is made of TensorFlow ops only, so it runs eagerly, inside
``tf.function`` and under XLA (``jit_compile=True``), and ``tf.GradientTape``
differentiates it.

The adapter itself is `tensorops._backends._tensorflow`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import tensorflow as tf

from tensorops._errors import BackendError
from tensorops._types import IndexSpec

__all__ = [
    "AXES_AS_GIVEN",
    "ONE_AXIS",
    "REDUCERS",
    "WITHOUT_IDENTITY",
    "cast_number",
    "dynamic_shape",
    "einsum",
    "gather",
    "logaddexp",
    "matmul",
    "multiply",
    "number",
    "promoted",
    "refused",
    "scatter",
]

_NARROW_INTEGERS = (tf.int8, tf.int16, tf.uint8, tf.uint16, tf.uint32, tf.uint64)


def dynamic_shape(x: Any) -> tuple[Any, ...]:
    """``x``'s shape: ints where known, ``tf.shape(x)[i]`` (a scalar tensor) where not."""
    dims = x.shape.as_list()
    if None not in dims:
        return tuple(dims)
    found = tf.shape(x)
    return tuple(found[i] if n is None else n for i, n in enumerate(dims))


def refused(what: str, x: Any, error: Exception | None = None) -> BackendError:
    """The error for a step TensorFlow has no kernel for (or refused) with `x`'s dtype."""
    detail = f": {type(error).__name__}: {str(error).strip().splitlines()[0]}" if error else ""
    return BackendError(
        f"tensorflow cannot take the {what} of a tensor of dtype {x.dtype.name} "
        f"(shape {tuple(x.shape.as_list())}){detail}",
        hint="convert the tensor first, e.g. tf.cast(x, tf.float32)",
    )


# -- products: TF's MatMul / Mul lack some dtypes NumPy multiplies ---------------------------


def matmul(a: Any, b: Any) -> Any:
    """``a @ b`` with broadcasting batch axes, for every dtype NumPy multiplies."""
    dtype = a.dtype
    if dtype == tf.bool:  # NumPy: the logical or of the ands
        return tf.linalg.matmul(tf.cast(a, tf.int64), tf.cast(b, tf.int64)) > 0
    if dtype in _NARROW_INTEGERS:
        # computed wide and cast back: the wrap-around of NumPy's narrow integers
        wide = tf.linalg.matmul(tf.cast(a, tf.int64), tf.cast(b, tf.int64))
        return tf.cast(wide, dtype)
    return tf.linalg.matmul(a, b)


def multiply(a: Any, b: Any) -> Any:
    """The element-wise product with broadcasting (``and`` for bool, as NumPy)."""
    if a.dtype == tf.bool and b.dtype == tf.bool:
        return tf.logical_and(a, b)
    return tf.multiply(a, b)


def logaddexp(a: Any, b: Any) -> Any:
    """``log(exp(a) + exp(b))``, stably; infinite operands give the infinite answer."""
    top = tf.stop_gradient(tf.maximum(a, b))  # the result does not depend on the shift
    top = tf.where(tf.math.is_finite(top), top, tf.zeros_like(top))
    return top + tf.math.log(tf.exp(a - top) + tf.exp(b - top))


# -- numbers and promotion ----------------------------------------------------------------

#: What a Python number becomes beside a tensor whose dtype is not of its kind.
_NUMBER_DTYPES: tuple[tuple[type, Any, Callable[[Any], bool]], ...] = (
    (bool, tf.bool, lambda dtype: dtype == tf.bool),
    (int, tf.int32, lambda dtype: dtype.is_integer or dtype.is_floating or dtype.is_complex),
    (float, tf.float32, lambda dtype: dtype.is_floating or dtype.is_complex),
    (complex, tf.complex64, lambda dtype: dtype.is_complex),
)


def number(value: complex, like: Any | None) -> Any:
    """A Python number as a 0-d tensor: of ``like``'s dtype when it is of the number's kind.

    The array API's rule (a number is "weak"); otherwise the number keeps TensorFlow's
    default dtype for it and promotion decides (`promoted`).
    """
    dtype = next(
        (like.dtype if like is not None and fits(like.dtype) else own)
        for cls, own, fits in _NUMBER_DTYPES
        if isinstance(value, cls)
    )
    return cast_number(value, dtype)


def promoted(operands: Sequence[Any]) -> list[Any]:
    """The tensors cast to the dtype NumPy promotes them to (TensorFlow never promotes)."""
    dtypes = {x.dtype for x in operands}
    if len(dtypes) == 1:
        return list(operands)
    common = tf.as_dtype(np.result_type(*(dtype.as_numpy_dtype for dtype in dtypes)))
    return [x if x.dtype == common else tf.cast(x, common) for x in operands]


def einsum(equation: str) -> Callable[..., Any]:
    """TensorFlow's einsum of `equation`, for every dtype NumPy's einsum takes (and mixed ones).

    `equation` is in letters with an explicit output and no ellipsis, as the planner writes
    it, so it goes to the ``Einsum`` op itself (``tf.raw_ops``): ``tf.einsum`` would parse
    it again at every call (half of its ~60 us on tiny operands).
    """
    op = tf.raw_ops.Einsum

    def run(operands: Sequence[Any]) -> Any:
        return op(inputs=list(operands), equation=equation)

    def einsum(*operands: Any) -> Any:
        operands = tuple(promoted(operands))
        dtype = operands[0].dtype
        if dtype == tf.bool or not (dtype.is_floating or dtype.is_complex or dtype.is_integer):
            return run([tf.cast(x, tf.int64) for x in operands]) > 0
        if dtype not in (tf.int32, tf.int64) and dtype.is_integer:
            wide = run([tf.cast(x, tf.int64) for x in operands])
            return tf.cast(wide, dtype)  # NumPy's wrap-around of narrow integers
        return run(operands)

    return einsum


# -- reductions ------------------------------------------------------------------------------


def _counted(function: Callable[..., Any]) -> Callable[..., Any]:
    """A reduction of bool values as NumPy counts them: as int64 (True is 1)."""

    def reduce(x: Any, axes: tuple[int, ...]) -> Any:
        if x.dtype == tf.bool:
            x = tf.cast(x, tf.int64)
        return function(x, axes)

    return reduce


def _extreme(function: Callable[..., Any], of_bool: Callable[..., Any]) -> Callable[..., Any]:
    """Max / min, with bool values reduced logically (TF has no Max kernel for bool)."""

    def reduce(x: Any, axes: tuple[int, ...]) -> Any:
        return (of_bool if x.dtype == tf.bool else function)(x, axes)

    return reduce


def _truth(function: Callable[..., Any]) -> Callable[..., Any]:
    """Any / all of any dtype: TF's take bool only, NumPy's read nonzero as true."""

    def reduce(x: Any, axes: tuple[int, ...]) -> Any:
        if x.dtype != tf.bool:
            x = tf.not_equal(x, tf.zeros((), x.dtype))
        return function(x, axes)

    return reduce


def _mean(x: Any, axes: tuple[int, ...]) -> Any:
    if not (x.dtype.is_floating or x.dtype.is_complex):
        # TensorFlow's integer mean truncates (tf.reduce_mean([1, 2]) == 1): refused
        # rather than silently rounded, as torch refuses it
        raise BackendError(
            f"mean of an integer tensor truncates in tensorflow (dtype {x.dtype.name}); "
            "convert to float first",
            hint="call tf.cast(x, tf.float32) before reducing, or use 'sum'",
        )
    return tf.reduce_mean(x, axes)


def _statistic(name: str) -> Callable[..., Any]:
    """Var / std (population), of integers as NumPy takes them: in float64."""
    function = tf.math.reduce_variance if name == "var" else tf.math.reduce_std

    def reduce(x: Any, axes: tuple[int, ...]) -> Any:
        if not (x.dtype.is_floating or x.dtype.is_complex):
            x = tf.cast(x, tf.float64)
        return function(x, axes)

    return reduce


def _logsumexp(x: Any, axes: tuple[int, ...]) -> Any:
    if not x.dtype.is_floating:
        raise refused("logsumexp", x)
    return tf.reduce_logsumexp(x, axes)


#: Every reduction of `tensorops._types.REDUCTIONS` but argmax / argmin (`ONE_AXIS`):
#: ``f(x, axes)``, the axes dropped.
REDUCERS: dict[str, Callable[..., Any]] = {
    "sum": _counted(tf.reduce_sum),
    "prod": _counted(tf.reduce_prod),
    "mean": _mean,
    "max": _extreme(tf.reduce_max, tf.reduce_any),
    "min": _extreme(tf.reduce_min, tf.reduce_all),
    "any": _truth(tf.reduce_any),
    "all": _truth(tf.reduce_all),
    "logsumexp": _logsumexp,
    "var": _statistic("var"),
    "std": _statistic("std"),
}

#: argmax / argmin along one axis (several: `AdapterBase.arg_reduction`).
ONE_AXIS: dict[str, Callable[..., Any]] = {"argmax": tf.argmax, "argmin": tf.argmin}

#: The reductions whose axes reach TensorFlow's own reduction unread (an int tensor will do).
AXES_AS_GIVEN = frozenset({"sum", "prod", "mean", "max", "min", "any", "all"})

#: Reductions that have no value over an empty axis (NumPy raises for them).
WITHOUT_IDENTITY = frozenset({"max", "min", "argmax", "argmin"})


# -- indexing --------------------------------------------------------------------------------


def gather(x: Any, where: Any, spec: IndexSpec) -> Any:
    """The entries of `x` at the positions `where`, in `spec`'s layout (see `IndexSpec`)."""
    if spec.batch is None:
        return tf.gather(x, where, axis=0)
    return tf.gather(x, where, axis=1, batch_dims=1)


def scatter(x: Any, where: Any, values: Any, spec: IndexSpec, accumulate: bool) -> Any:
    """A new tensor: `x` with `values` written (or added) at the positions `where`."""
    if spec.batch is not None:
        # tensor_scatter_nd takes full coordinates: the batch position is the first
        rows = tf.broadcast_to(
            tf.reshape(tf.range(spec.batch, dtype=where.dtype), (spec.batch, 1)),
            dynamic_shape(where),
        )
        where = tf.stack([rows, where], axis=-1)
    else:
        where = tf.expand_dims(where, -1)
    values = tf.broadcast_to(
        values, (*dynamic_shape(where)[:-1], *dynamic_shape(x)[_depth(spec) :])
    )
    if accumulate:
        if x.dtype == tf.bool:  # NumPy's add.at on bool is a logical or
            added = tf.tensor_scatter_nd_add(tf.cast(x, tf.int32), where, tf.cast(values, tf.int32))
            return added > 0
        return tf.tensor_scatter_nd_add(x, where, values)
    return tf.tensor_scatter_nd_update(x, where, values)


def _depth(spec: IndexSpec) -> int:
    """How many leading axes of the array one coordinate tuple addresses."""
    return 1 if spec.batch is None else 2


def cast_number(value: complex, dtype: Any) -> Any:
    """A 0-d tensor of `dtype` from the Python number `value`, cast as tf.cast casts arrays."""
    source = np.asarray(value)
    if source.dtype.kind == "c" and not dtype.is_complex:
        source = source.real  # NumPy's cast drops the imaginary part (with a warning)
    return tf.cast(tf.constant(source), dtype)
