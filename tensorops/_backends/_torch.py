"""The PyTorch adapter: direct torch calls on any device.

Every op method is a plain torch call, so autograd flows through it and
``torch.compile(fullgraph=True)`` traces it without graph breaks: no ``.item()``,
no ``.cpu()``, no host synchronization, no Python branching on tensor values.
Only :meth:`TorchBackend.to_numpy` moves data to the host, because it is asked to.

This module imports torch; ``tensorops._backends`` imports it only once a
tensor has been seen (torch is then already in ``sys.modules``).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .._errors import TensorOpsError

__all__ = ["TorchBackend", "tensor_to_numpy"]

#: dtypes NumPy cannot hold, and the dtype they are widened to on the way to NumPy.
_WIDENED: dict[torch.dtype, torch.dtype] = {torch.bfloat16: torch.float32}
for _name in ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz"):
    if hasattr(torch, _name):
        _WIDENED[getattr(torch, _name)] = torch.float32
if hasattr(torch, "float8_e8m0fnu"):
    _WIDENED[torch.float8_e8m0fnu] = torch.float32
if hasattr(torch, "complex32"):
    _WIDENED[torch.complex32] = torch.complex64

# The framework errors a reduction can raise on bad input (empty axes, bad dtypes).
_FRAMEWORK_ERRORS = (RuntimeError, IndexError, ValueError, TypeError)


def tensor_to_numpy(x: torch.Tensor) -> np.ndarray[Any, Any]:
    """A NumPy array with the values of ``x``; zero-copy for plain CPU tensors.

    The tensor is detached (a view, so ``requires_grad`` tensors stay zero-copy),
    its conjugate and negative bits are resolved (a copy; ``numpy.from_dlpack``
    would silently drop the negation), it is moved to the CPU (a copy for other
    devices), and dtypes NumPy has no equivalent for are widened (a copy):
    bfloat16 and the float8 types become float32, complex32 becomes complex64.
    """
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
        raise TensorOpsError(
            f"cannot convert a torch tensor of dtype {str(x.dtype).removeprefix('torch.')} "
            f"to numpy: {error}"
        ) from None


class TorchBackend:
    """Primitives for ``torch.Tensor`` and its subclasses (``nn.Parameter``)."""

    __slots__ = ()
    name: str = "torch"

    # Sizes are passed as separate arguments: torch parses `reshape(2, 3)` about 0.4 µs
    # faster than `reshape((2, 3))`, which is most of a cache hit's budget on small tensors.
    # An empty shape must stay a tuple: `x.reshape()` is an error.
    def reshape(self, x: Any, shape: tuple[int, ...]) -> Any:
        return x.reshape(*shape) if shape else x.reshape(shape)

    def permute(self, x: Any, axes: tuple[int, ...]) -> Any:
        return x.permute(*axes) if axes else x

    def reduce(self, x: Any, reduction: str, axes: tuple[int, ...]) -> Any:
        if not axes:
            # torch reads dim=() as "every dim"; the protocol means "no dim".
            return x
        try:
            reducer = _REDUCERS.get(reduction)
            if reducer is not None:
                return reducer(x, axes)  # positional: torch parses it ~0.2 µs faster
            return _reduce(x, reduction, axes)
        except _FRAMEWORK_ERRORS as error:
            raise _refused(x, reduction, axes, error) from None

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

    def astype(self, x: Any, dtype: Any) -> Any:
        return x.to(dtype)

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
}


def _reduce(x: torch.Tensor, reduction: str, axes: tuple[int, ...]) -> torch.Tensor:
    """The reductions torch has no multi-axis call for."""
    if reduction == "prod":
        # torch.prod takes a single dim; reduce the highest first so lower ones keep their index.
        ndim = x.ndim
        for axis in sorted((a + ndim if a < 0 else a for a in axes), reverse=True):
            x = torch.prod(x, dim=axis)
        return x
    raise TensorOpsError(f"unknown reduction {reduction!r}")


def _refused(x: torch.Tensor, reduction: str, axes: tuple[int, ...], error: Exception) -> Exception:
    """The TensorOpsError for a reduction torch refused, explained where we can."""
    dtype = str(x.dtype).removeprefix("torch.")
    if reduction == "mean" and not (x.dtype.is_floating_point or x.dtype.is_complex):
        return TensorOpsError(
            f"mean of an integer tensor is not defined in torch (dtype {dtype}); "
            "convert to float first",
            hint="call x.float() before reducing, or use 'sum'",
        )
    return TensorOpsError(
        f"cannot take the {reduction} over axes {axes} of a torch tensor with "
        f"shape {tuple(x.shape)} and dtype {dtype}: {error}"
    )


# --- torch.compile: tracing through the plan caches --------------------------------------------
# Dynamo does not call functools.lru_cache wrappers: it traces the wrapped function (exact here:
# the planning helpers are pure functions of strings and shapes, and the trace constant-folds to
# the framework calls) but warns once per wrapper, which breaks `-W error` test suites. torch
# marks einops' planning helpers as safe to trace (torch/_dynamo/decorators.py,
# `_allow_lru_cache_trace_without_warning_for_einops`); we mark ours the same way. Importing
# torch._dynamo costs ~1.5 s, so the marking waits until torch.compile imports it.
_DYNAMO_UTILS = "torch._dynamo.utils"


def _allow_dynamo_to_trace_caches(dynamo_utils: Any) -> None:
    """Mark every lru_cache wrapper of the loaded tensorops modules as safe for Dynamo to trace."""
    allow = getattr(dynamo_utils, "allow_lru_cache_wrapper_trace_without_warning", None)
    if allow is None:  # older torch: Dynamo warns once per helper, results are unaffected
        return
    for name, module in list(sys.modules.items()):
        if name != "tensorops" and not name.startswith("tensorops."):
            continue
        for value in list(vars(module).values()):
            if hasattr(value, "cache_info") and hasattr(value, "__wrapped__"):
                allow(value)


class _OnDynamoImport(importlib.abc.MetaPathFinder):
    """Runs :func:`_allow_dynamo_to_trace_caches` right after ``torch._dynamo.utils`` loads."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != _DYNAMO_UTILS:
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        loader = getattr(spec, "loader", None)
        if loader is not None and hasattr(loader, "exec_module"):
            exec_module = loader.exec_module

            def exec_and_allow(module: Any) -> None:
                exec_module(module)
                _allow_dynamo_to_trace_caches(module)

            loader.exec_module = exec_and_allow
        return spec


if _DYNAMO_UTILS in sys.modules:
    _allow_dynamo_to_trace_caches(sys.modules[_DYNAMO_UTILS])
else:
    sys.meta_path.insert(0, _OnDynamoImport())
