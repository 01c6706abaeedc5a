"""Move arrays between families: ``asnumpy`` and ``convert``, zero-copy through DLPack.

A copy is made only where sharing memory would be wrong or impossible:

=======================================  ==================================================
case                                     why it copies
=======================================  ==================================================
NumPy -> torch, read-only array          torch tensors are always writable: no silent alias
NumPy -> torch, negative or odd strides  torch cannot describe them (it would abort)
NumPy -> torch, non-native byte order    torch and DLPack know native byte order only
NumPy scalar -> torch                    a scalar has no buffer to share
torch -> NumPy, conjugate / negative bit the bit is lazy; NumPy would drop it silently
torch -> NumPy, CUDA or other device     NumPy lives on the host
torch -> NumPy, bfloat16 / float8        NumPy has no such dtype: widened to float32
Dask -> anything                         the graph is computed (values were asked for)
anything -> Dask                         ``dask.array.from_array`` wraps the host array
=======================================  ==================================================
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Literal, overload

import numpy as np
import numpy.typing as npt

from tensorops._backends import (
    ArrayApiBackend,
    backend_for_framework,
    backend_for_namespace,
    get_backend,
    import_torch,
)
from tensorops._backends._numpy import shareable
from tensorops._errors import (
    ArgumentError,
    BackendError,
    TensorOpsError,
    describe_inputs,
)
from tensorops._staging import raise_error
from tensorops._types import Backend

__all__ = ["asnumpy", "convert"]

_TARGETS = (
    "'numpy', 'torch', 'tensorflow', 'paddle', 'tinygrad', 'pytensor', "
    "or an array namespace module (array_api_strict, jax.numpy, mlx.core, ...)"
)
_ALIASES = {"np": "numpy", "pytorch": "torch", "jax": "jax.numpy", "dask": "dask.array"}
#: The frameworks with an adapter of their own (`_backends._FRAMEWORKS`), by name or module.
_FRAMEWORK_NAMES = {
    "tensorflow": "tensorflow",
    "tf": "tensorflow",
    "paddle": "paddle",
    "tinygrad": "tinygrad",
    "pytensor": "pytensor",
    "pytensor.tensor": "pytensor",
}
_NUMPY_NAMES = ("numpy", "array_api_compat.numpy")
_TORCH_NAMES = ("torch", "array_api_compat.torch")
_DASK_NAMES = ("dask.array", "array_api_compat.dask.array")
# (kind, itemsize) of the NumPy dtypes torch has: bool, ints, uints, floats, complex.
_TORCH_DTYPES = frozenset(
    [("b", 1)]
    + [(kind, size) for kind in "iu" for size in (1, 2, 4, 8)]
    + [("f", 2), ("f", 4), ("f", 8), ("c", 8), ("c", 16)]
)


def asnumpy(x: Any) -> npt.NDArray[Any]:
    """Return the values of ``x``, an array of any supported family, as a ``numpy.ndarray``.

    No copy is made for a NumPy array or a plain CPU tensor: the result shares its
    memory (a tensor that requires grad is detached first, which is still a view).
    Copies happen for tensors on another device, with the conjugate or negative bit
    set, or of a dtype NumPy lacks: bfloat16 and the float8 types become float32,
    complex32 becomes complex64. Array-API arrays on the host come back through
    DLPack without a copy (read-only where the producer says so, as for JAX); a Dask
    array is computed.

    Args:
        x: an array of any supported family (NumPy, torch, TensorFlow, Paddle, tinygrad,
            PyTensor, or an array-API library).

    Returns:
        A ``numpy.ndarray`` with the same values, shape and (see above) dtype.

    Raises:
        BackendError: ``x`` is not an array of a supported family.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> a = np.arange(3)
        >>> tops.asnumpy(a) is a
        True
        >>> tops.asnumpy(np.float32(2.5))
        array(2.5, dtype=float32)
    """
    try:
        result: npt.NDArray[Any] = get_backend(x).to_numpy(x)
    except TensorOpsError as error:
        raise_error(error.with_context(op="asnumpy", inputs=describe_inputs([x])))
    return result


@overload
def convert(x: Any, target: Literal["numpy"], device: Any = None) -> npt.NDArray[Any]: ...


@overload
def convert(x: Any, target: str | ModuleType | Any, device: Any = None) -> Any: ...


def convert(x: Any, target: str | ModuleType | Any, device: Any = None) -> Any:
    """Return ``x`` as an array of the ``target`` family, sharing memory whenever it can.

    Memory is shared through DLPack (or ``torch.from_numpy``) when the layout allows.
    A copy is made only when it must be: a read-only NumPy array, negative strides or
    non-native byte order going to torch; a NumPy scalar; a tensor with the conjugate
    or negative bit set; bfloat16 / float8 going to NumPy (widened to float32); data
    on another device; a namespace that cannot import through DLPack (then
    ``xp.asarray`` copies). A Dask source is computed; a Dask target wraps the host
    array with ``dask.array.from_array``. An input already of the target family is
    returned as is (or moved to ``device``). JAX arrays reach torch zero-copy too; JAX
    treats them as immutable, so do not write through such a tensor.

    Args:
        x: an array of any supported family (NumPy, torch, TensorFlow, Paddle, tinygrad,
            PyTensor, or an array-API library).
        target: ``"numpy"``, ``"torch"``, ``"tensorflow"``, ``"paddle"``, ``"tinygrad"``,
            ``"pytensor"`` (or the module itself), or an array namespace module such as
            ``array_api_strict``, ``jax.numpy``, ``mlx.core`` or ``dask.array``.
        device: where the result lives: ``"cpu"``, ``"cuda"``, a ``torch.device``, or
            a device of the target namespace. ``None`` keeps the source's device.

    Returns:
        An array of the target family with the values of ``x``.

    Raises:
        TensorOpsError: unknown target, a dtype the target cannot hold, a bad device,
            or ``"torch"`` when PyTorch is not installed (``pip install "tensorops[torch]"``).

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> a = np.arange(6.0).reshape(2, 3)
        >>> tops.convert(a, "numpy") is a
        True
        >>> import torch
        >>> t = tops.convert(a, "torch")
        >>> t.data_ptr() == a.ctypes.data  # no copy: the tensor shares a's memory
        True
        >>> float(tops.convert(t, "numpy").sum())
        15.0
    """
    try:
        kind, xp = _resolve_target(target)
        source = get_backend(x)
        if kind == "numpy":
            if device is not None and str(device) != "cpu":
                raise ArgumentError(f"numpy arrays live on the cpu; cannot place one on {device!r}")
            return source.to_numpy(x)
        if kind == "torch":
            return _to_torch(x, source, device)
        if kind == "dask":
            return _to_dask(x, source, xp, device)
        if kind == "framework":
            return _to_framework(x, source, xp, device)
        return _to_namespace(x, source, xp, device)
    except TensorOpsError as error:
        raise_error(error.with_context(op="convert", inputs=describe_inputs([x])))


def _resolve_target(target: Any) -> tuple[str, Any]:
    """``(kind, namespace)``: "numpy", "torch", "dask", "framework" (with its name), "namespace"."""
    if isinstance(target, str):
        if target in ("numpy", "torch"):
            return target, None
        if target in _FRAMEWORK_NAMES:
            return "framework", _FRAMEWORK_NAMES[target]
        suggestion = _ALIASES.get(target.lower())
        hint = None
        if suggestion in ("numpy", "torch"):
            hint = f"did you mean {suggestion!r}?"
        elif suggestion is not None:
            hint = f"pass the namespace module itself: import {suggestion}"
        raise ArgumentError(f"unknown conversion target {target!r}: expected {_TARGETS}", hint=hint)
    name = getattr(target, "__name__", None)
    if name in _NUMPY_NAMES:
        return "numpy", None
    if name in _TORCH_NAMES:
        return "torch", None
    if name in _DASK_NAMES:
        import array_api_compat.dask.array as dask_xp

        return "dask", dask_xp
    if name in _FRAMEWORK_NAMES:
        return "framework", _FRAMEWORK_NAMES[name]
    if isinstance(name, str) and callable(getattr(target, "asarray", None)):
        return "namespace", target
    hint = "pass jax.numpy, not jax" if name == "jax" else None
    raise ArgumentError(
        f"unknown conversion target {_describe(target)}: expected {_TARGETS}", hint=hint
    )


def _describe(target: Any) -> str:
    name = getattr(target, "__name__", None)
    if isinstance(name, str):
        return f"module {name}"
    return f"of type {type(target).__name__}"


def _to_torch(x: Any, source: Backend, device: Any) -> Any:
    torch = import_torch("converting to torch")
    if source.name == "torch":
        result = x
    elif source.name == "numpy":
        result = _numpy_to_torch(torch, x)
    elif isinstance(source, ArrayApiBackend) and not source.is_dask:
        try:
            result = torch.from_dlpack(x)  # zero-copy; keeps the producer's device
        except Exception:  # producers raise their own types for "cannot export"
            result = _numpy_to_torch(torch, source.to_numpy(x))
    else:
        result = _numpy_to_torch(torch, source.to_numpy(x))
    if device is None:
        return result
    try:
        return result.to(device)
    except (RuntimeError, ValueError, TypeError, AssertionError) as error:
        # AssertionError: torch's message when it was built without CUDA.
        raise BackendError(f"cannot move a torch tensor to device {device!r}: {error}") from None


def _numpy_to_torch(torch: Any, a: Any) -> Any:
    a = np.asarray(a)  # a NumPy scalar becomes a fresh 0-d array
    if (a.dtype.kind, a.dtype.itemsize) not in _TORCH_DTYPES:
        raise BackendError(
            f"cannot convert a numpy array of dtype {a.dtype} to torch: torch has no such dtype",
            hint="torch holds bool, int8-int64, uint8-uint64, float16-float64, "
            "complex64 and complex128",
        )
    a = shareable(a)
    return torch.from_numpy(a)


def _plain_tensor(t: Any) -> Any:
    # DLPack refuses tensors that require grad or carry the conjugate bit, and silently
    # drops the negative bit: hand over a plain view (or a copy where a bit is set).
    return t.detach().resolve_conj().resolve_neg()


def _to_dask(x: Any, source: Backend, dask_xp: Any, device: Any) -> Any:
    if isinstance(source, ArrayApiBackend) and source.is_dask:
        result = x
    else:
        import dask.array as da

        from_array: Any = da.from_array  # dask is untyped
        result = from_array(source.to_numpy(x))
    return _move(result, dask_xp, device)


def _to_namespace(x: Any, source: Backend, xp: Any, device: Any) -> Any:
    if isinstance(source, ArrayApiBackend) and source.xp is xp:
        return _move(x, xp, device)
    if source.name == "torch":
        host: Any = _plain_tensor(x)
    elif source.name == "numpy":
        host = np.asarray(x)
        if not host.dtype.isnative:
            host = host.astype(host.dtype.newbyteorder("="))
    elif isinstance(source, ArrayApiBackend) and source.is_dask:
        host = source.to_numpy(x)
    else:
        host = x
    from_dlpack = getattr(xp, "from_dlpack", None)
    result: Any = None
    if from_dlpack is not None:
        try:
            result = from_dlpack(host)
        except Exception:  # producers raise their own types for "cannot export"
            result = None
    if result is None:
        result = xp.asarray(host if isinstance(host, np.ndarray) else asnumpy(host))
    if getattr(xp, "__name__", None) == "mlx.core":
        result = _mlx_dtype_kept(result, host, xp)
    return _move(result, xp, device)


def _mlx_dtype_kept(result: Any, host: Any, mx: Any) -> Any:
    """`result`, or `host` converted again with its dtype named where MLX changed it.

    MLX's ``from_dlpack`` and ``asarray`` read float64 as float32 unless the dtype is
    named, and complex128, which MLX lacks, as complex64.
    """
    name = str(host.dtype).rsplit(".", 1)[-1]  # numpy's "float64", torch's "torch.float64"
    dtype = getattr(mx, "bool_" if name == "bool" else name, None)
    if dtype is None:
        raise BackendError(
            f"cannot convert an array of dtype {name} to mlx.core: MLX has no such dtype",
            hint="convert to a dtype MLX has first, e.g. complex64 for complex128",
        )
    if result.dtype == dtype:
        return result
    return mx.asarray(host if isinstance(host, np.ndarray) else asnumpy(host), dtype=dtype)


def _to_framework(x: Any, source: Backend, name: str, device: Any) -> Any:
    target = backend_for_framework(name)
    if source is target and device is None:
        return x
    host = x if source.name == "numpy" else source.to_numpy(x)
    return target.from_numpy(np.asarray(host), device)  # type: ignore[attr-defined]


def _move(x: Any, xp: Any, device: Any) -> Any:
    if device is None:
        return x
    import array_api_compat

    try:
        return array_api_compat.to_device(x, device)
    except (RuntimeError, ValueError, TypeError) as error:
        namespace = backend_for_namespace(xp).namespace
        raise BackendError(
            f"cannot move an array of {namespace} to device {device!r}: {error}"
        ) from None
