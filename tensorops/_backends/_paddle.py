"""The Paddle adapter: direct paddle calls, in dynamic graph mode and under ``to_static``.

array-api-compat (1.16) has no paddle namespace, so the adapter is written on paddle's
own API. Every op method is a paddle call, so autograd (``loss.backward()``,
``paddle.grad``) flows through it, and under ``paddle.jit.to_static`` the calls are
recorded into the static program, where a tensor is a ``paddle.pir.Value``. Only
`PaddleBackend.to_numpy` reads values on the host, and the range check of an index
(dynamic mode only), to raise the message NumPy raises. Where paddle's kernels refuse or
get wrong what NumPy takes, `tensorops._backends._paddle_kernels` says why.

This module imports paddle; ``tensorops._backends`` imports it as soon as paddle is
imported (to keep tensorops out of to_static's source conversion, below).
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import paddle

from tensorops._backends import _paddle_kernels as kernels
from tensorops._backends._base import AdapterBase
from tensorops._backends._numpy import shareable
from tensorops._errors import FRAMEWORK_ERRORS, BackendError, dtype_name
from tensorops._imports import when_ready
from tensorops._staging.sizes import shape_values
from tensorops._types import Backend, Executor, IndexSpec

__all__ = [
    "ADAPTER",
    "EXPAND",
    "RESHAPE",
    "SHAPE_TYPES",
    "TENSOR_TYPES",
    "TRANSPOSE",
    "PaddleBackend",
    "adapter_for",
]

#: The types the registry enters for this adapter as soon as paddle is imported.
TENSOR_TYPES = (
    paddle.Tensor,
    getattr(paddle.base.framework, "EagerParamBase", kernels.VALUE),
    kernels.VALUE,
)

#: The types of paddle's ``x.shape``: lists (paddle 3's ``Size`` subclasses list), which
#: cannot key the plan cache; the fast path keys it with `PaddleBackend.sizes` instead.
SHAPE_TYPES = (list, *(cls for cls in [getattr(paddle.base.libpaddle, "Size", None)] if cls))

#: The functions the adapter reshapes, permutes and expands with: paddle's C++ ops for
#: eager tensors (`tensorops._backends._paddle_kernels.DIRECT`), the public ones otherwise.
TRANSPOSE = kernels.eager_or("transpose", paddle.transpose)
RESHAPE = kernels.eager_or("reshape", paddle.reshape)
EXPAND = kernels.eager_or("expand", paddle.expand)


# to_static's AST mode rewrites the source of every function it calls into, unless its
# module is ignored; tensorops' functions are plain calls into paddle, but their code
# (defaults, caches, error handling) does not survive the rewrite.
paddle.jit.ignore_module([sys.modules["tensorops"]])


def _called_as_they_are() -> None:
    """Mark tensorops' public functions for ``to_static`` to call as they are.

    ``ignore_module`` keeps them out of the AST mode's rewriting, not out of SOT (the
    default mode), which simulates the bytecode of every function it calls into and
    does not survive tensorops' (frozen dataclasses, exceptions with attributes).
    ``paddle.jit.marker.unified`` (paddle >= 3.1) marks a function for both; before it,
    SOT simulates them, and ``full_graph=True`` is the mode that works.
    """
    unified = getattr(getattr(paddle.jit, "marker", None), "unified", None)
    if unified is None:
        return
    tensorops = sys.modules["tensorops"]
    for name in tensorops.__all__:
        function = getattr(tensorops, name)
        if inspect.isfunction(function):
            unified(function)


when_ready(_called_as_they_are)  # paddle imported first: tensorops is still importing


def adapter_for(x: Any) -> Backend | None:
    """The adapter for a paddle tensor (a parameter, a static value), None for anything else.

    Examples:
        >>> import paddle
        >>> adapter_for(paddle.ones([2])), adapter_for([1.0])
        (PaddleBackend(), None)
    """
    return ADAPTER if isinstance(x, kernels.TENSORS) else None


class PaddleBackend(AdapterBase):
    """Primitives for ``paddle.Tensor`` (parameters included) and static ``pir.Value``.

    Under ``paddle.jit.to_static`` with an ``InputSpec`` of unknown lengths (``None``,
    which paddle shows as ``-1``) a length is read as a run-time size whose value is
    ``paddle.shape(x)[i]``: the static program computes it from its input.
    """

    __slots__ = ()
    name: str = "paddle"
    staged_as = "in a paddle.jit.to_static program"
    written_class = paddle.Tensor
    written_name = "paddle tensor"
    c_ordered = True
    narrow_floats = (paddle.float16, paddle.bfloat16)
    float32 = paddle.float32

    def reshape(self, x: Any, shape: tuple[int, ...]) -> Any:
        return RESHAPE(x, list(shape_values(shape)))

    def permute(self, x: Any, axes: tuple[int, ...]) -> Any:
        return TRANSPOSE(x, list(axes)) if axes else x

    # the one-call executors hold their arguments as lists, made once
    def permuter(self, axes: tuple[int, ...]) -> Executor:
        perm, transpose = list(axes), TRANSPOSE
        return lambda x, arg: transpose(x, perm) if perm else x

    def reshaper(self, shape: tuple[int, ...]) -> Executor:
        sizes, reshape = list(shape_values(shape)), RESHAPE
        return lambda x, arg: reshape(x, sizes)

    @kernels.widening_results
    def reducer(self, reduction: str, axes: tuple[int, ...]) -> Executor:
        function = kernels.REDUCERS.get(reduction)
        if function is None:  # argmax / argmin
            function = self.arg_reduction(kernels.ONE_AXIS[reduction])
        where, empty = list(axes), kernels.EMPTY.get(reduction)

        def reduce(x: Any, arg: Any) -> Any:
            if not where:
                return x  # paddle reads axis=[] as "every axis"; the protocol means none
            try:
                if empty is not None and any(x.shape[axis] == 0 for axis in where):
                    raise ValueError(empty)
                return function(x, where)
            except BackendError:
                raise
            except FRAMEWORK_ERRORS as error:
                raise BackendError(
                    f"cannot take the {reduction} over axes {axes} of a paddle tensor with "
                    f"shape {tuple(x.shape)} and dtype {dtype_name(x.dtype)}: "
                    f"{kernels.first_line(error)}"
                ) from None

        return reduce

    # paddle.einsum parses in Python: the planned program is not slower (no einsummer)

    @kernels.widening_results
    def softmaxer(self, axes: tuple[int, ...], log: bool) -> Executor:
        # Not paddle's softmax and log_softmax: their CPU kernels clip the shifted input at
        # -64, so kernels.exact_exp(-inf) comes out as 1.6e-28 and a log-probability floors at -64.
        where = list(axes)

        def softmax(x: Any, arg: Any) -> Any:
            x = kernels.floating(x)
            shifted = x - kernels.max_shift(x, where)[1]
            if log:
                return shifted - paddle.log(
                    paddle.sum(kernels.exact_exp(shifted), where, keepdim=True)
                )
            exp = kernels.exact_exp(shifted)
            return exp / paddle.sum(exp, where, keepdim=True)

        return softmax

    @kernels.widening_results
    def roller(self, shifts: tuple[int, ...], axes: tuple[int, ...]) -> Executor:
        return lambda x, arg: paddle.roll(x, shifts=list(shifts), axis=list(axes))

    @kernels.widening_results
    def sorter(self, axis: int, descending: bool, indices: bool) -> Executor:
        function = paddle.argsort if indices else paddle.sort

        def sort(x: Any, arg: Any) -> Any:
            # paddle has no sort kernel for bools: sorted as 0 / 1, the values cast back
            keys = x.astype(paddle.int32) if x.dtype == kernels.BOOL else x
            out = function(keys, axis=axis, descending=descending, stable=True)
            return out if indices or x.dtype != kernels.BOOL else out.astype(kernels.BOOL)

        return sort

    @kernels.widening_results
    def cumsummer(self, axis: int) -> Executor:
        # paddle has no cumsum kernel for bools; NumPy counts them in int64
        def cumsum(x: Any, arg: Any) -> Any:
            return paddle.cumsum(
                x.astype(paddle.int64) if x.dtype == kernels.BOOL else x, axis=axis
            )

        return cumsum

    def dtype_kind(self, dtype: Any) -> str:
        return kernels.dtype_kind(dtype)

    def floating(self, x: Any) -> Any:
        return kernels.floating(x)

    def known(self, x: Any) -> Any:
        # a value of a static program has no values until the program runs
        return x.numpy() if isinstance(x, paddle.Tensor) and paddle.in_dynamic_mode() else None

    @kernels.widening
    def shifted_exp(self, x: Any, axis: int | tuple[int, ...]) -> tuple[Any, Any]:
        # detached: the result does not depend on the shift, so no gradient need flow there
        top = kernels.max_shift(x, [axis] if isinstance(axis, int) else list(axis))[1]
        return kernels.exact_exp(x - top), top

    @kernels.widening
    def log(self, x: Any) -> Any:
        return paddle.log(x)

    @kernels.widening_results
    def elementwiser(self, name: str, numbers: tuple[int, ...]) -> Callable[..., Any]:
        if numbers and name in kernels.OPERATORS:  # paddle's operators take a number on either side
            return kernels.OPERATORS[name]
        first = 1 if name == "where" else 0  # the condition takes no part in the promotion
        promoted = kernels.with_promotion(kernels.ELEMENTWISE[name], first)
        if not numbers:
            return promoted

        def with_numbers(*operands: Any) -> Any:
            like = next(
                (x for x in operands[first:] if isinstance(x, kernels.TENSORS)), operands[0]
            )
            return promoted(
                *(x if isinstance(x, kernels.TENSORS) else self.scalar(x, like) for x in operands)
            )

        return with_numbers

    @kernels.widening
    def take(self, x: Any, index: Any) -> Any:
        return paddle.take(x, index)  # x read as flattened, the result shaped as index

    def arange(self, n: int, like: Any) -> Any:
        return paddle.arange(n, dtype=paddle.int64, device=kernels.place_of(like))

    def full(self, shape: tuple[int, ...], value: complex, like: Any) -> Any:
        return paddle.full(
            list(shape_values(shape)), value, dtype=like.dtype, device=kernels.place_of(like)
        )

    def wide_index(self, index: Any, spec: IndexSpec) -> Any:
        # paddle's kernels take int32 and int64 indexes; merged positions are int64
        if len(spec.lengths) > 1 or spec.index_dtype not in kernels.INDEX_DTYPES:
            return index.astype(paddle.int64)
        return index

    def values_known(self, x: Any) -> bool:
        return isinstance(x, paddle.Tensor)  # not a value of a static program

    @kernels.widening_results
    def gatherer(self, spec: IndexSpec) -> Callable[[Any, Any], Any]:
        positions, channels = self.positions(spec), spec.channels
        if spec.batch is None:

            def take(x: Any, index: Any) -> Any:
                where = positions(index)
                out = paddle.gather(x, paddle.reshape(where, [-1]), axis=0)
                return paddle.reshape(out, [*where.shape, *x.shape[1:]])

            return take

        def gather(x: Any, index: Any) -> Any:
            where = positions(index)
            if channels is not None:
                where = paddle.expand(paddle.unsqueeze(where, 2), [*where.shape, channels])
            return paddle.take_along_axis(x, where, axis=1, broadcast=False)

        return gather

    @kernels.widening_results
    def scatterer(self, spec: IndexSpec, accumulate: bool) -> Callable[[Any, Any, Any], Any]:
        positions, channels = self.positions(spec), spec.channels
        if spec.batch is None:

            def scatter(x: Any, index: Any, values: Any) -> Any:
                where = paddle.reshape(positions(index), [-1])
                rows = paddle.reshape(values, [-1, *x.shape[1:]])
                if accumulate:
                    return paddle.index_add(x, where, 0, rows)
                return paddle.scatter(x, where, rows, overwrite=True)

            return scatter
        reduce = "add" if accumulate else "assign"

        def put(x: Any, index: Any, values: Any) -> Any:
            where = positions(index)
            if channels is not None:
                where = paddle.expand(paddle.unsqueeze(where, 2), [*where.shape, channels])
            return paddle.put_along_axis(x, where, values, 1, reduce=reduce, broadcast=False)

        return put

    def expand(self, x: Any, shape: tuple[int, ...]) -> Any:
        return EXPAND(x, list(shape_values(shape)))

    def stack(self, xs: Sequence[Any]) -> Any:
        return paddle.stack(list(xs), axis=0)

    def concat(self, xs: Sequence[Any], axis: int) -> Any:
        return paddle.concat(list(xs), axis=axis)

    @kernels.widening
    def matmul(self, a: Any, b: Any) -> Any:
        return paddle.matmul(a, b)

    @kernels.widening
    def diagonal(self, x: Any, axis1: int, axis2: int) -> Any:
        return paddle.diagonal(x, 0, axis1, axis2)  # moved last, as NumPy's

    def astype(self, x: Any, dtype: Any, casting: str = "unsafe") -> Any:
        return x if x.dtype == dtype else x.astype(dtype)  # paddle has no casting rule

    def contiguous(self, x: Any) -> Any:
        return x.contiguous() if isinstance(x, paddle.Tensor) else x

    def assign(self, out: Any, x: Any, casting: str) -> Any:
        paddle.assign(self.astype(x, out.dtype), out)
        return out

    def result_type(self, xs: Sequence[Any]) -> Any:
        dtype = xs[0].dtype
        for x in xs[1:]:
            dtype = kernels.promote(dtype, x.dtype)
        return dtype

    def scalar(self, value: complex, like: Any) -> Any:
        # paddle's rule for `like * value`: the tensor's dtype where the number's kind fits
        # (a float stays float16 with a float16 tensor), else the kind's default dtype
        kind = 0 if isinstance(value, bool) else 1 if isinstance(value, int) else 2
        kind += isinstance(value, complex)
        dtype = like.dtype
        if kind > kernels.kind_rank(dtype):
            default = paddle.get_default_dtype()
            complex_default = "complex128" if default == "float64" else "complex64"
            dtype = (paddle.int64, default, complex_default)[kind - 1]
        return paddle.full([], value, dtype=dtype, device=kernels.place_of(like))

    def to_numpy(self, x: Any) -> Any:
        if not isinstance(x, paddle.Tensor):
            raise BackendError(
                f"a value of a static paddle program (shape {tuple(x.shape)}) has no values "
                "to convert to numpy",
                hint="convert the tensors the to_static function returns, outside of it",
            )
        x = x.detach()  # DLPack refuses tensors that require gradients
        if x.dtype in kernels.WIDENED:
            x = x.astype(paddle.float32)
        if not x.place.is_cpu_place():
            x = x.cpu()
        try:
            return np.from_dlpack(x)  # zero-copy
        except (BufferError, TypeError, RuntimeError, ValueError):
            return x.numpy()

    def from_numpy(self, a: np.ndarray[Any, Any], device: Any) -> Any:
        """A paddle tensor with the values of `a`: zero-copy through DLPack on the CPU.

        `device` is None (the CPU), a place or a string (``"cpu"``, ``"gpu:0"``). A
        read-only, unaligned or negatively strided array is copied first: paddle's tensor
        would be writable.

        Examples:
            >>> import numpy as np
            >>> ADAPTER.from_numpy(np.arange(3.0), None).shape
            paddle.Size([3])
        """
        a = np.asarray(a)
        dtype = kernels.FROM_NUMPY.get(a.dtype.newbyteorder("="))
        if dtype is None:
            raise BackendError(
                f"cannot convert a numpy array of dtype {a.dtype} to paddle: paddle has no "
                "such dtype",
                hint="paddle holds bool, uint8, int8-int64, float16-float64, complex64 and "
                "complex128; cast first, e.g. a.astype(np.int32)",
            )
        a = shareable(a)
        on_host = device is None or str(device).lower() in ("cpu", "place(cpu)")
        try:
            if on_host:
                return paddle.from_dlpack(a)
            return paddle.to_tensor(a, place=device)
        except (BufferError, TypeError, RuntimeError, ValueError) as error:
            raise BackendError(
                f"cannot make a paddle tensor on {device!r}: {kernels.first_line(error)}"
            ) from None

    def sizes(self, x: Any) -> tuple[Any, ...]:
        # an eager tensor's shape is a list, read here by every call: the base's general
        # reading cost 0.8 us of a 4.2 us rearrange (benchmarks/frameworks.py, paddle)
        if x.__class__ is paddle.Tensor:
            return tuple(x.shape)
        return super().sizes(x)

    def static_shape(self, x: Any) -> tuple[Any, ...]:
        shape = tuple(x.shape)  # ints, and -1 for a length to_static does not know
        if x.__class__ is paddle.Tensor or min(shape, default=0) >= 0:
            return shape
        return tuple(None if n < 0 else n for n in shape)

    def run_time_shape(self, x: Any) -> Any:
        return paddle.shape(x)

    def is_length(self, value: Any) -> bool:
        # parse_shape's run-time lengths in a static program: 0-d integer values
        return (
            isinstance(value, kernels.VALUE)
            and len(value.shape) == 0
            and kernels.dtype_kind(value.dtype) == "i"
        )

    def __repr__(self) -> str:
        return "PaddleBackend()"


ADAPTER: Backend = PaddleBackend()
