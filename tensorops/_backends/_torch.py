"""The PyTorch adapter: direct torch calls on any device.

Every op method is a plain torch call, so autograd flows through it and
``torch.compile(fullgraph=True)`` traces it without graph breaks: no ``.item()``,
no ``.cpu()``, no host synchronization, no Python branching on tensor values.
Only `TorchBackend.to_numpy` moves data to the host, because it is asked to.

This module imports torch; ``tensorops._backends`` imports it only once a
tensor has been seen (torch is then already in ``sys.modules``). What tensorops
does for torch.compile is in `tensorops._compile`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from tensorops._backends._base import AdapterBase
from tensorops._errors import FRAMEWORK_ERRORS, BackendError
from tensorops._staging import STAND_INS, is_compiling
from tensorops._staging.sizes import shape_values
from tensorops._types import Backend, Executor, IndexSpec

__all__ = ["ADAPTER", "TorchBackend", "stand_in", "tensor_to_numpy"]

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


class TorchBackend(AdapterBase):
    """Primitives for ``torch.Tensor`` and its subclasses (``nn.Parameter``).

    Under ``torch.jit.trace`` every length is recorded (a 0-d tensor): `sizes` reads them
    as run-time sizes, so that the trace computes each length from its input's shape
    and stays valid at other sizes, as einops' traced graphs do.
    """

    __slots__ = ()
    name: str = "torch"
    staged_as = "under torch.jit.trace"
    written_class = torch.Tensor
    written_name = "torch tensor"
    c_ordered = True
    narrow_floats = (torch.float16, torch.bfloat16)
    float32 = torch.float32

    # Sizes are passed as separate arguments: torch parses `reshape(2, 3)` faster than
    # `reshape((2, 3))` (benchmarks/overhead.py). An empty shape must stay a tuple:
    # `x.reshape()` is an error. A run-time size (torch.jit.trace) is torch's own value.
    def reshape(self, x: Any, shape: tuple[int, ...]) -> Any:
        try:
            return x.reshape(*shape) if shape else x.reshape(shape)
        except TypeError:
            return x.reshape(shape_values(shape))

    def permute(self, x: Any, axes: tuple[int, ...]) -> Any:
        return x.permute(*axes) if axes else x

    # The one-call executors call the methods directly: benchmarks/overhead.py's rows are
    # that call and little else.
    def permuter(self, axes: tuple[int, ...]) -> Executor:
        def permute(x: Any, arg: Any) -> Any:
            return x.permute(*axes) if axes else x

        return permute

    def reshaper(self, shape: tuple[int, ...]) -> Executor:
        shape = shape_values(shape)

        def reshape(x: Any, arg: Any) -> Any:
            return x.reshape(*shape) if shape else x.reshape(shape)

        return reshape

    def reducer(self, reduction: str, axes: tuple[int, ...]) -> Executor:
        function = _REDUCERS.get(reduction) or _reduce_one_by_one(reduction)
        where: Any = axes
        if reduction in _ONE_AXIS:
            function = self.arg_reduction(_ONE_AXIS[reduction])
            if len(axes) == 1:
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

    # torch.einsum costs more per call than the planned program: no einsummer

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

    def flipper(self, axes: tuple[int, ...]) -> Executor:  # torch has no negative strides
        return lambda x, arg: torch.flip(x, axes)

    def roller(self, shifts: tuple[int, ...], axes: tuple[int, ...]) -> Executor:
        return lambda x, arg: torch.roll(x, shifts, axes)

    def sorter(self, axis: int, descending: bool, indices: bool) -> Executor:
        if indices:
            return lambda x, arg: torch.argsort(x, dim=axis, descending=descending, stable=True)
        return lambda x, arg: torch.sort(x, dim=axis, descending=descending, stable=True)[0]

    def cumsummer(self, axis: int) -> Executor:
        return lambda x, arg: torch.cumsum(x, axis)

    def dtype_kind(self, dtype: Any) -> str:
        if dtype == torch.bool:
            return "b"
        return "f" if dtype.is_floating_point else "c" if dtype.is_complex else "i"

    def floating(self, x: Any) -> Any:
        if x.is_floating_point() or x.is_complex():
            return x
        return x.to(torch.get_default_dtype())  # what torch.exp gives an integer tensor

    def widened(self, x: Any) -> Any:
        return x.float() if x.dtype in (torch.float16, torch.bfloat16) else x

    def known(self, x: Any) -> Any:
        # a graph being made (Dynamo, its fake tensors, torch.jit.trace, torch.func's
        # wrappers) has no values to read
        if type(x) is not torch.Tensor or x.is_meta or is_compiling():
            return None
        if torch._C._get_tracing_state() is not None:
            return None
        try:
            return x.item() if x.dim() == 0 else tensor_to_numpy(x.detach())
        except RuntimeError:  # a tensor of a torch.func transform (vmap, grad)
            return None

    def shifted_exp(self, x: Any, axis: int | tuple[int, ...]) -> tuple[Any, Any]:
        # detached: the result does not depend on the shift, so no gradient need flow there
        top = torch.amax(x.detach() if x.requires_grad else x, axis, keepdim=True)
        top.nan_to_num_(0.0, 0.0, 0.0)
        return (x - top).exp_(), top  # in place: the difference is a temporary of its own

    def shifted_exp_unguarded(self, x: Any, axis: int | tuple[int, ...]) -> tuple[Any, Any]:
        # no nan_to_num_: 3.4 us of a 16-state step's 60 (benchmarks/semiring.py, small call)
        top = torch.amax(x.detach() if x.requires_grad else x, axis, keepdim=True)
        return (x - top).exp_(), top

    def log(self, x: Any) -> Any:
        return torch.log(x)

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
        return torch.full(shape_values(shape), value, dtype=like.dtype, device=like.device)

    def constant(self, value: complex, like: Any) -> Any:
        # torch.tensor, not torch.full: Dynamo cannot trace a torch call that returns a dtype
        return torch.tensor(value, dtype=like.dtype, device=like.device)

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

        positions = self.positions(spec)
        return lambda x, index: gather(x, positions(index))

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

        positions = self.positions(spec)
        return lambda x, index, values: scatter(x, positions(index), values)

    def positions(self, spec: IndexSpec) -> Callable[[Any], Any]:
        """Several coordinates merged with torch.add's alpha: one kernel each, not two.

        An index of a dtype torch's kernels take as it is is used as it is.
        """
        lengths = spec.lengths
        wide = spec.index_dtype not in _INDEX_DTYPES or (
            len(lengths) > 1 and spec.index_dtype != torch.int64
        )
        if len(lengths) == 1:
            return (lambda index: index.long()) if wide else _same

        def positions(index: Any) -> Any:
            if wide:
                index = index.long()
            flat = index[..., 0]
            for j in range(1, len(lengths)):
                flat = torch.add(index[..., j], flat, alpha=lengths[j])
            return flat

        return positions

    def expand(self, x: Any, shape: tuple[int, ...]) -> Any:  # stride-0 view, no copy
        try:
            return x.expand(*shape) if shape else x.expand(shape)
        except TypeError:
            return x.expand(shape_values(shape))

    def stack(self, xs: Sequence[Any]) -> Any:
        return torch.stack(list(xs))

    def concat(self, xs: Sequence[Any], axis: int) -> Any:
        return torch.cat(list(xs), dim=axis)

    def matmul(self, a: Any, b: Any) -> Any:
        return torch.matmul(a, b)

    def diagonal(self, x: Any, axis1: int, axis2: int) -> Any:
        return torch.diagonal(x, dim1=axis1, dim2=axis2)

    def astype(self, x: Any, dtype: Any, casting: str = "unsafe") -> Any:
        return x.to(dtype)  # torch has no casting rule: it converts

    def contiguous(self, x: Any) -> Any:
        return x.contiguous()

    def assign(self, out: Any, x: Any, casting: str) -> Any:
        return out.copy_(x)

    def result_type(self, xs: Sequence[Any]) -> Any:
        # torch.result_type takes two operands; promote_types folds the dtypes pairwise.
        dtype = xs[0].dtype
        for x in xs[1:]:
            dtype = torch.promote_types(dtype, x.dtype)
        return dtype

    def scalar(self, value: complex, like: Any) -> Any:
        # torch's rule for `like * value`: a float stays float16 with a float16 tensor
        return torch.tensor(value, dtype=torch.result_type(like, value), device=like.device)

    def to_numpy(self, x: Any) -> Any:
        return tensor_to_numpy(x)

    def static_shape(self, x: Any) -> tuple[Any, ...]:
        shape = tuple(x.shape)
        # torch.jit.trace records every length as a 0-d tensor: each is read when it runs
        return (None,) * len(shape) if _any_tensor(shape) else shape

    def is_length(self, value: Any) -> bool:
        # parse_shape's lengths under torch.jit.trace: 0-d integer tensors
        return isinstance(value, torch.Tensor) and value.ndim == 0 and not value.is_floating_point()

    def __repr__(self) -> str:
        return "TorchBackend()"


# One call each; the dict lookup is cheaper than a chain of string comparisons.
_REDUCERS: dict[str, Any] = {
    "sum": torch.sum,
    "mean": torch.mean,
    "max": torch.amax,  # not x.max(dim): that returns (values, indices)
    "min": torch.amin,
    "any": torch.any,
    "all": torch.all,
    "logsumexp": torch.logsumexp,
    "var": lambda x, axes: torch.var(x, axes, correction=0),
    "std": lambda x, axes: torch.std(x, axes, correction=0),
}

#: argmax / argmin along one axis (several: `AdapterBase.arg_reduction`).
_ONE_AXIS: dict[str, Any] = {"argmax": torch.argmax, "argmin": torch.argmin}

#: Index dtypes torch's indexing kernels take as they are (uint8 would be a mask).
_INDEX_DTYPES = (torch.int64, torch.int32)


def _same(index: Any) -> Any:
    return index


def _any_tensor(shape: tuple[Any, ...]) -> bool:
    return any(isinstance(n, torch.Tensor) for n in shape)


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


#: The one adapter (`tensorops._backends` makes it the adapter of every tensor type).
ADAPTER: Backend = TorchBackend()
