"""The PyTorch adapter: direct torch calls on any device.

Every op method is a plain torch call, so autograd flows through it and
``torch.compile(fullgraph=True)`` traces it without graph breaks: no ``.item()``,
no ``.cpu()``, no host synchronization, no Python branching on tensor values.
Only `TorchBackend.to_numpy` moves data to the host, because it is asked to.

This module imports torch; ``tensorops._backends`` imports it only once a
tensor has been seen (torch is then already in ``sys.modules``). What tensorops
does for torch.compile is in `tensorops._tracing`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from tensorops._backends._numpy import reduced_last
from tensorops._compile import STAND_INS
from tensorops._errors import FRAMEWORK_ERRORS, BackendError, ShapeError
from tensorops._types import Executor, IndexSpec

__all__ = ["TorchBackend", "stand_in", "tensor_to_numpy"]

#: The element-wise functions by name (tops.add, ...).
_ELEMENTWISE: dict[str, Callable[..., Any]] = {
    "add": torch.add,
    "subtract": torch.sub,
    "multiply": torch.mul,
    "divide": torch.div,
    "maximum": torch.maximum,
    "minimum": torch.minimum,
    "logaddexp": torch.logaddexp,
    "where": torch.where,
}
#: With a Python number among the operands: the operators (torch.sub(2.0, x) refuses it).
_OPERATORS: dict[str, Callable[..., Any]] = {
    "add": operator.add,
    "subtract": operator.sub,
    "multiply": operator.mul,
    "divide": operator.truediv,
}

#: dtypes NumPy cannot hold, and the dtype they are widened to on the way to NumPy.
_WIDENED: dict[torch.dtype, torch.dtype] = {torch.bfloat16: torch.float32}
for _name in ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz"):
    if hasattr(torch, _name):
        _WIDENED[getattr(torch, _name)] = torch.float32
if hasattr(torch, "float8_e8m0fnu"):
    _WIDENED[torch.float8_e8m0fnu] = torch.float32
if hasattr(torch, "complex32"):
    _WIDENED[torch.complex32] = torch.complex64


def tensor_to_numpy(x: torch.Tensor) -> np.ndarray[Any, Any]:
    """A NumPy array with the values of ``x``; zero-copy for plain CPU tensors.

    The tensor is detached (a view, so ``requires_grad`` tensors stay zero-copy),
    its conjugate and negative bits are resolved (a copy; ``numpy.from_dlpack``
    would silently drop the negation), it is moved to the CPU (a copy for other
    devices), and dtypes NumPy has no equivalent for are widened (a copy):
    bfloat16 and the float8 types become float32, complex32 becomes complex64.
    A meta tensor has no values: that is a `BackendError`.
    """
    if x.device.type == "meta":
        raise BackendError(
            f"a meta tensor (shape {tuple(x.shape)}) has no values to convert to numpy",
            hint="meta tensors carry shapes only; run on 'cpu' or 'cuda' to read values",
        )
    x = x.detach()
    if x.layout != torch.strided:
        x = x.to_dense()
    x = x.resolve_conj().resolve_neg()
    if x.device.type != "cpu":
        x = x.cpu()
    widened = _WIDENED.get(x.dtype)
    if widened is not None:
        x = x.to(widened)
    try:
        return x.numpy()
    except (TypeError, RuntimeError) as error:
        raise BackendError(
            f"cannot convert a torch tensor of dtype {str(x.dtype).removeprefix('torch.')} "
            f"to numpy: {error}"
        ) from None


def stand_in(shape: tuple[int, ...], dtype: str) -> torch.Tensor:
    """A meta tensor (no data) of `shape` and the dtype named `dtype` (``"torch.float32"``)."""
    return torch.empty(shape, dtype=getattr(torch, dtype.removeprefix("torch.")), device="meta")


# Registered when this module is imported, which runs natively even when the first torch
# call is inside a torch.compile trace (a write from traced code would be deferred).
STAND_INS["torch"] = stand_in


class TorchBackend:
    """Primitives for ``torch.Tensor`` and its subclasses (``nn.Parameter``)."""

    __slots__ = ()
    name: str = "torch"

    # Sizes are passed as separate arguments: torch parses `reshape(2, 3)` faster than
    # `reshape((2, 3))` (benchmarks/overhead.py). An empty shape must stay a tuple:
    # `x.reshape()` is an error.
    def reshape(self, x: Any, shape: tuple[int, ...]) -> Any:
        return x.reshape(*shape) if shape else x.reshape(shape)

    def permute(self, x: Any, axes: tuple[int, ...]) -> Any:
        return x.permute(*axes) if axes else x

    def reduce(self, x: Any, reduction: str, axes: tuple[int, ...]) -> Any:
        return self.reducer(reduction, axes)(x, None)

    def permuter(self, axes: tuple[int, ...]) -> Executor:
        def permute(x: Any, arg: Any) -> Any:
            return x.permute(*axes) if axes else x

        return permute

    def reshaper(self, shape: tuple[int, ...]) -> Executor:
        def reshape(x: Any, arg: Any) -> Any:
            return x.reshape(*shape) if shape else x.reshape(shape)

        return reshape

    def reducer(self, reduction: str, axes: tuple[int, ...]) -> Executor:
        function = _REDUCERS.get(reduction) or _reduce_one_by_one(reduction)
        where: Any = axes
        if reduction in _ONE_AXIS and len(axes) == 1:
            function, where = _ONE_AXIS[reduction], axes[0]

        def reduce(x: Any, arg: Any) -> Any:
            if not axes:
                # torch reads dim=() as "every dim"; the protocol means "no dim".
                return x
            try:
                return function(x, where)  # positional: torch parses it faster than dim=
            except FRAMEWORK_ERRORS as error:
                raise _refused(x, reduction, axes, error) from None

        return reduce

    def einsummer(self, equation: str) -> Callable[..., Any] | None:
        return None  # torch.einsum costs more per call than the planned program

    def softmaxer(self, axes: tuple[int, ...], log: bool) -> Executor:
        function = torch.log_softmax if log else torch.softmax
        first, last = axes[0], axes[-1]
        if len(axes) == 1:

            def softmax(x: Any, arg: Any) -> Any:
                return function(x, first)

        elif axes == tuple(range(first, last + 1)):  # adjacent: one axis for torch's kernel

            def softmax(x: Any, arg: Any) -> Any:
                return function(x.flatten(first, last), first).view(x.shape)

        else:

            def softmax(x: Any, arg: Any) -> Any:
                shifted = x - torch.logsumexp(x, axes, keepdim=True)
                return shifted if log else torch.exp(shifted)

        return softmax

    def flipper(self, axes: tuple[int, ...]) -> Executor:
        return lambda x, arg: torch.flip(x, axes)

    def roller(self, shifts: tuple[int, ...], axes: tuple[int, ...]) -> Executor:
        return lambda x, arg: torch.roll(x, shifts, axes)

    def sorter(self, axis: int, descending: bool, indices: bool) -> Executor:
        if indices:
            return lambda x, arg: torch.argsort(x, dim=axis, descending=descending, stable=True)
        return lambda x, arg: torch.sort(x, dim=axis, descending=descending, stable=True)[0]

    def cumsummer(self, axis: int) -> Executor:
        return lambda x, arg: torch.cumsum(x, axis)

    def is_integer(self, dtype: Any) -> bool:
        return not (dtype.is_floating_point or dtype.is_complex or dtype == torch.bool)

    def dtype_kind(self, dtype: Any) -> str:
        if dtype == torch.bool:
            return "b"
        return "f" if dtype.is_floating_point else "c" if dtype.is_complex else "i"

    def floating(self, x: Any) -> Any:
        if x.is_floating_point() or x.is_complex():
            return x
        return x.to(torch.get_default_dtype())  # what torch.exp gives an integer tensor

    def shifted_exp(self, x: Any, axis: int) -> tuple[Any, Any]:
        # detached: the result does not depend on the shift, so no gradient need flow there
        top = torch.amax(x.detach(), axis, keepdim=True).nan_to_num_(0.0, 0.0, 0.0)
        return torch.exp(x - top), top

    def log(self, x: Any) -> Any:
        return torch.log(x)

    def logaddexp(self, a: Any, b: Any) -> Any:
        return torch.logaddexp(a, b)

    def maximum(self, a: Any, b: Any) -> Any:
        return torch.maximum(a, b)

    def minimum(self, a: Any, b: Any) -> Any:
        return torch.minimum(a, b)

    def where(self, condition: Any, a: Any, b: Any) -> Any:
        return torch.where(condition, a, b)

    def elementwiser(self, name: str, numbers: tuple[int, ...]) -> Callable[..., Any]:
        if not numbers or name == "where":  # torch.where takes numbers for a and b
            return _ELEMENTWISE[name]
        if name in _OPERATORS:  # Python's operators take a number on either side
            return _OPERATORS[name]
        function = _ELEMENTWISE[name]  # maximum, minimum, logaddexp take tensors only

        def with_numbers(*operands: Any) -> Any:
            like = next(x for x in operands if isinstance(x, torch.Tensor))
            # a 0-d tensor promotes as the Python number does (it does not widen a dtype
            # of its own kind)
            return function(
                *(
                    x if isinstance(x, torch.Tensor) else torch.tensor(x, device=like.device)
                    for x in operands
                )
            )

        return with_numbers

    def take(self, x: Any, index: Any) -> Any:
        return torch.take(x, index)  # x read as flattened, the result shaped as index

    def arange(self, n: int, like: Any) -> Any:
        return torch.arange(n, device=like.device)

    def full(self, shape: tuple[int, ...], value: complex, like: Any) -> Any:
        return torch.full(shape, value, dtype=like.dtype, device=like.device)

    # No range check: it would read the index on the host (a sync). torch's kernels check
    # it themselves (an error on the CPU, a device-side assert on CUDA).
    def gatherer(self, spec: IndexSpec) -> Callable[[Any, Any], Any]:
        channels = spec.channels
        gather: Callable[[Any, Any], Any]
        if spec.batch is None:
            gather = torch.Tensor.__getitem__  # x[index], one Python call less
        elif channels is None:

            def gather(x: Any, index: Any) -> Any:
                return x.gather(1, index)

        else:

            def gather(x: Any, index: Any) -> Any:
                return x.gather(1, index.unsqueeze(2).expand(-1, -1, channels))

        return _with_positions(gather, spec)

    def scatterer(self, spec: IndexSpec, accumulate: bool) -> Callable[[Any, Any, Any], Any]:
        channels = spec.channels
        scatter: Callable[[Any, Any, Any], Any]
        if spec.batch is None:

            def scatter(x: Any, index: Any, values: Any) -> Any:
                return x.index_put((index,), values, accumulate=accumulate)

        else:
            function = torch.Tensor.scatter_add if accumulate else torch.Tensor.scatter

            def scatter(x: Any, index: Any, values: Any) -> Any:
                if channels is not None:
                    index = index.unsqueeze(2).expand(-1, -1, channels)
                return function(x, 1, index, values)

        positions = _positions(spec)
        if positions is None:
            return scatter
        return lambda x, index, values: scatter(x, positions(index), values)

    def expand(self, x: Any, shape: tuple[int, ...]) -> Any:
        return x.expand(*shape) if shape else x.expand(shape)  # stride-0 view, no copy

    def stack(self, xs: Sequence[Any]) -> Any:
        return torch.stack(list(xs))

    def concat(self, xs: Sequence[Any], axis: int) -> Any:
        return torch.cat(list(xs), dim=axis)

    def split(self, x: Any, sizes: Sequence[int], axis: int) -> list[Any]:
        return list(torch.split(x, list(sizes), dim=axis))

    def matmul(self, a: Any, b: Any) -> Any:
        return torch.matmul(a, b)

    def multiply(self, a: Any, b: Any) -> Any:
        return torch.mul(a, b)

    def diagonal(self, x: Any, axis1: int, axis2: int) -> Any:
        return torch.diagonal(x, dim1=axis1, dim2=axis2)

    def astype(self, x: Any, dtype: Any, casting: str = "unsafe") -> Any:
        return x.to(dtype)  # torch has no casting rule: it converts

    def ordered(self, x: Any, order: str) -> Any:
        if order == "C":
            return x.contiguous()
        raise BackendError(
            f"order={order!r}: torch tensors are laid out in C order (strides aside)",
            hint="leave order out, or call .contiguous() on the result",
        )

    def write(self, out: Any, x: Any, casting: str) -> Any:
        if not isinstance(out, torch.Tensor):
            raise BackendError(f"out must be a torch tensor here, got {type(out).__name__}")
        if tuple(out.shape) != tuple(x.shape):
            raise ShapeError(
                f"out has shape {tuple(out.shape)} but the result has shape {tuple(x.shape)}"
            )
        return out.copy_(x)

    def result_type(self, xs: Sequence[Any]) -> Any:
        # torch.result_type takes two operands; promote_types folds the dtypes pairwise.
        dtype = xs[0].dtype
        for x in xs[1:]:
            dtype = torch.promote_types(dtype, x.dtype)
        return dtype

    def constant(self, value: complex, like: Any) -> Any:
        # no torch.result_type: Dynamo cannot trace a torch call that returns a dtype
        return torch.tensor(value, dtype=like.dtype, device=like.device)

    def scalar(self, value: complex, like: Any) -> Any:
        # torch's rule for `like * value`: a float stays float16 with a float16 tensor
        return torch.tensor(value, dtype=torch.result_type(like, value), device=like.device)

    def to_numpy(self, x: Any) -> Any:
        return tensor_to_numpy(x)

    def sizes(self, x: Any) -> tuple[Any, ...]:
        shape = tuple(x.shape)
        if any(isinstance(n, torch.Tensor) for n in shape):
            # torch.jit.trace records sizes as tensors; the plan reads them as they are now
            state = torch._C._get_tracing_state()
            torch._C._set_tracing_state(None)  # type: ignore[attr-defined]
            try:
                shape = tuple(x.shape)
            finally:
                torch._C._set_tracing_state(state)  # type: ignore[attr-defined]
        return shape

    def traced(self, shapes: Any) -> bool:
        for n in shapes:
            if n.__class__ is int:  # most sizes: one test each (a plan's first call)
                continue
            if (isinstance(n, tuple) and self.traced(n)) or isinstance(n, torch.Tensor):
                return True
        return False

    def __repr__(self) -> str:
        return "TorchBackend()"


def _flat_arg(function: Any) -> Any:
    """The argmax / argmin over several axes flattened in their order (as if written ``(h w)``)."""

    def arg(x: torch.Tensor, axes: tuple[int, ...]) -> Any:
        perm, start = reduced_last(x.shape, axes)
        if perm is not None:
            x = x.permute(perm)
        return function(x.flatten(start), -1)

    return arg


# One call each; the dict lookup is cheaper than a chain of string comparisons.
_REDUCERS: dict[str, Any] = {
    "sum": torch.sum,
    "mean": torch.mean,
    "max": torch.amax,  # not x.max(dim): that returns (values, indices)
    "min": torch.amin,
    "any": torch.any,
    "all": torch.all,
    "argmax": _flat_arg(torch.argmax),
    "argmin": _flat_arg(torch.argmin),
    "logsumexp": torch.logsumexp,
    "var": lambda x, axes: torch.var(x, axes, correction=0),
    "std": lambda x, axes: torch.std(x, axes, correction=0),
}

#: argmax / argmin over one axis: the function itself, called with that axis.
_ONE_AXIS: dict[str, Any] = {"argmax": torch.argmax, "argmin": torch.argmin}

#: Index dtypes torch's indexing kernels take as they are (uint8 would be a mask).
_INDEX_DTYPES = (torch.int64, torch.int32)


def _positions(spec: IndexSpec) -> Callable[[Any], Any] | None:
    """The positions an index reads in the merged indexed axes; None if it holds them already.

    Several coordinates are merged as ``((i0 * n1) + i1) * n2 + i2``, one ``add`` each.
    """
    lengths = spec.lengths
    wide = spec.index_dtype not in _INDEX_DTYPES or (
        len(lengths) > 1 and spec.index_dtype != torch.int64
    )
    if len(lengths) == 1:
        return (lambda index: index.long()) if wide else None

    def positions(index: Any) -> Any:
        if wide:
            index = index.long()
        flat = index[..., 0]
        for j in range(1, len(lengths)):
            flat = torch.add(index[..., j], flat, alpha=lengths[j])
        return flat

    return positions


def _with_positions(
    gather: Callable[[Any, Any], Any], spec: IndexSpec
) -> Callable[[Any, Any], Any]:
    positions = _positions(spec)
    if positions is None:
        return gather
    return lambda x, index: gather(x, positions(index))


def _reduce_one_by_one(reduction: str) -> Any:
    """A multi-axis reduction from torch's one-axis call (prod), highest axis first."""
    single = getattr(torch, reduction)

    def reduce(x: torch.Tensor, axes: tuple[int, ...]) -> torch.Tensor:
        ndim = x.ndim
        for axis in sorted((a + ndim if a < 0 else a for a in axes), reverse=True):
            x = single(x, dim=axis)
        return x

    return reduce


def _refused(x: torch.Tensor, reduction: str, axes: tuple[int, ...], error: Exception) -> Exception:
    """The TensorOpsError for a reduction torch refused, explained where we can."""
    dtype = str(x.dtype).removeprefix("torch.")
    if reduction == "mean" and not (x.dtype.is_floating_point or x.dtype.is_complex):
        return BackendError(
            f"mean of an integer tensor is not defined in torch (dtype {dtype}); "
            "convert to float first",
            hint="call x.float() before reducing, or use 'sum'",
        )
    return BackendError(
        f"cannot take the {reduction} over axes {axes} of a torch tensor with "
        f"shape {tuple(x.shape)} and dtype {dtype}: {error}"
    )
