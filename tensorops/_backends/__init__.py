"""Find the adapter for an array: one dict lookup on ``type(x)`` once a type has been seen.

```
get_backend(x)
  |-- numpy.ndarray, NumPy scalars          -> NumpyBackend      (direct numpy calls)
  |-- torch.Tensor and subclasses           -> TorchBackend      (direct torch calls)
  |-- tf.Tensor, paddle.Tensor, tinygrad    -> an adapter of their own, one module each
  |   Tensor, PyTensor variables               (`_FRAMEWORKS`: recognised via sys.modules)
  `-- anything with __array_namespace__, or
      known to array_api_compat             -> ArrayApiBackend(xp), one per namespace
```

torch and the frameworks of `_FRAMEWORKS` are recognized through ``sys.modules``
without importing them: if a framework has not been imported, ``x`` cannot be one of
its arrays. ``array_api_compat`` is imported on
the first unknown type only. Importing this package imports numpy and nothing else.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import numpy as np

from tensorops._backends._array_api import ArrayApiBackend
from tensorops._backends._mlx import MlxBackend
from tensorops._backends._numpy import ADAPTER as NUMPY_BACKEND
from tensorops._errors import BackendError, unknown_option
from tensorops._imports import when_imported
from tensorops._staging import ON_DYNAMO
from tensorops._types import Backend

__all__ = [
    "ADAPTERS",
    "UNKEYED_SHAPES",
    "NUMPY_BACKEND",
    "ArrayApiBackend",
    "Backend",
    "backend_for_framework",
    "backend_for_name",
    "backend_for_namespace",
    "get_backend",
    "import_torch",
]

_SUPPORTED = (
    "numpy.ndarray, torch.Tensor, tf.Tensor, paddle.Tensor, a tinygrad Tensor, a PyTensor "
    "variable, or an array with __array_namespace__ (JAX, MLX, CuPy, Dask, array-api-strict)"
)
_TORCH_EXTRA = 'pip install "tensorops[torch]"'

#: type(x) -> adapter, one entry per array type seen. The ops' fast path reads it
#: directly (``ADAPTERS[type(x)]``); `get_backend` fills it.
ADAPTERS: dict[type, Backend] = {np.ndarray: NUMPY_BACKEND}
#: The types of ``x.shape`` that cannot key the plan cache (paddle's lists): for these the
#: fast path asks the adapter for a tuple (`Backend.sizes`).
UNKEYED_SHAPES: set[type] = set()
#: array namespace module -> its one adapter.
_BY_NAMESPACE: dict[Any, ArrayApiBackend] = {}
_TORCH_BACKEND: list[Backend] = []

#: Frameworks with an adapter module of their own (the array API does not cover them):
#: (the framework's top-level module, the adapter module). An adapter module is imported
#: the first time an array of a type not yet seen arrives while its framework is in
#: ``sys.modules``; its ``adapter_for(x)`` returns the adapter for ``x``, or None when
#: ``x`` is not one of its framework's arrays; its ``ADAPTER`` is that adapter, whose
#: ``from_numpy(a, device)`` makes the framework's arrays (`backend_for_framework`).
_FRAMEWORKS = (
    ("tensorflow", "tensorops._backends._tensorflow"),
    ("paddle", "tensorops._backends._paddle"),
    ("tinygrad", "tensorops._backends._tinygrad"),
    ("pytensor", "tensorops._backends._pytensor"),
)

# Types that are never arrays: rejected without importing array_api_compat.
_NOT_ARRAYS = (str, bytes, list, tuple, dict, set, int, float, complex, type(None))


def get_backend(x: Any) -> Backend:
    """The adapter for ``x``'s array family; a cache hit is one dict lookup.

    Raises:
        BackendError: ``x`` is not an array of a supported family.
    """
    try:
        return ADAPTERS[type(x)]
    except KeyError:
        return _detect(x)


def _detect(x: Any) -> Backend:
    cls = type(x)
    backend: Backend
    if isinstance(x, np.ndarray) or (
        # np.str_ / np.bytes_ / np.void scalars are strings and records, not numbers.
        isinstance(x, np.generic) and not isinstance(x, np.flexible)
    ):
        backend = NUMPY_BACKEND
    elif "torch" in sys.modules and isinstance(x, sys.modules["torch"].Tensor):
        backend = _torch_backend()
    elif isinstance(x, _NOT_ARRAYS):
        raise _unsupported(x)
    else:
        backend = _framework_backend(x) or backend_for_namespace(_namespace_of(x))
    ADAPTERS[cls] = backend
    return backend


def _framework_backend(x: Any) -> Backend | None:
    """The adapter of `_FRAMEWORKS` whose framework made ``x``, if any."""
    for module, adapter in _FRAMEWORKS:
        if sys.modules.get(module) is not None:
            found: Backend | None = importlib.import_module(adapter).adapter_for(x)
            if found is not None:
                return found
    return None


def backend_for_framework(name: str) -> Backend:
    """The adapter of the framework ``name`` of `_FRAMEWORKS` ("tensorflow", "paddle", ...).

    Raises:
        BackendError: the framework is not installed (the message names its extra).
    """
    adapter = dict(_FRAMEWORKS)[name]
    try:
        importlib.import_module(name)
    except ImportError:
        extra = f'pip install "tensorops[{name}]"'
        raise BackendError(f"{name} is not installed: {extra}", hint=extra) from None
    found: Backend = importlib.import_module(adapter).ADAPTER
    return found


def _namespace_of(x: Any) -> Any:
    from array_api_compat import array_namespace

    try:
        return array_namespace(x)
    except TypeError:
        pass  # not an array to array_api_compat; look for the protocol ourselves
    except Exception as error:  # raised by x.__array_namespace__: report, don't leak
        raise _broken_namespace(x, error) from None
    namespace = getattr(x, "__array_namespace__", None)
    if namespace is None:
        raise _unsupported(x)
    try:
        return namespace()
    except Exception as error:  # a foreign method: report, don't leak
        raise _broken_namespace(x, error) from None


def _broken_namespace(x: Any, error: Exception) -> BackendError:
    return BackendError(
        f"unsupported input type {type(x).__name__}: its __array_namespace__() failed "
        f"({error}); expected {_SUPPORTED}"
    )


def _unsupported(x: Any) -> BackendError:
    hint = None
    if isinstance(x, (list, tuple)):
        hint = "pass an array, e.g. numpy.asarray(x)"
    return BackendError(
        f"unsupported input type {type(x).__name__}: expected {_SUPPORTED}", hint=hint
    )


def backend_for_namespace(xp: Any) -> ArrayApiBackend:
    """The one generic adapter bound to the array namespace ``xp`` (MLX's of its own)."""
    backend = _BY_NAMESPACE.get(xp)
    if backend is None:
        cls = MlxBackend if getattr(xp, "__name__", None) == "mlx.core" else ArrayApiBackend
        backend = _BY_NAMESPACE[xp] = cls(xp)
    return backend


def import_torch(purpose: str = "the torch backend") -> Any:
    """``import torch``, or a BackendError naming the pip extra when it is missing."""
    try:
        import torch
    except ImportError:
        raise BackendError(
            f"{purpose} needs PyTorch, which is not installed: {_TORCH_EXTRA}",
            hint=_TORCH_EXTRA,
        ) from None
    return torch


def _torch_backend() -> Backend:
    if not _TORCH_BACKEND:
        from tensorops._backends._torch import ADAPTER

        backend = ADAPTER
        _TORCH_BACKEND.append(backend)
        # Register the common tensor types at once, so a first call on a Parameter inside a
        # compiled region does not mutate the table while it is traced.
        torch = sys.modules["torch"]
        ADAPTERS.setdefault(torch.Tensor, backend)
        ADAPTERS.setdefault(torch.nn.Parameter, backend)
    return _TORCH_BACKEND[0]


def _register_torch() -> None:
    """Register the torch adapter before the first traced call (see `tensorops._staging.ON_DYNAMO`).

    Otherwise the first call of a process, if torch.compile traces it, finds no adapter
    on the fast path and Dynamo traces the detection, the adapter's construction and the
    table's update: hundreds of bytecodes more to capture.
    """
    if "torch" in sys.modules:
        _torch_backend()


ON_DYNAMO.append(_register_torch)


def _prepare_tensorflow(module: Any) -> None:
    """Keep tensorops out of AutoGraph before any ``tf.function`` is traced.

    See `tensorops._backends._tensorflow_autograph`; it imports nothing TensorFlow has not.
    """
    importlib.import_module("tensorops._backends._tensorflow_autograph").install(module)


when_imported("tensorflow", _prepare_tensorflow)


def _prepare_paddle(module: Any) -> None:
    """Keep tensorops out of ``paddle.jit.to_static``'s conversion, before any is traced.

    Importing the adapter registers tensorops with ``paddle.jit.ignore_module``; its
    tensor types are entered here, so that a first call inside a traced function does not
    detect them.
    """
    paddle_adapter = importlib.import_module("tensorops._backends._paddle")
    for cls in paddle_adapter.TENSOR_TYPES:
        ADAPTERS.setdefault(cls, paddle_adapter.ADAPTER)
    UNKEYED_SHAPES.update(paddle_adapter.SHAPE_TYPES)


when_imported("paddle", _prepare_paddle)


def backend_for_name(name: str) -> Backend:
    """The adapter called ``name``: ``"numpy"`` or ``"torch"``.

    Raises:
        ArgumentError: an unknown name.
        BackendError: ``"torch"`` when PyTorch is not installed.
    """
    if name == "numpy":
        return NUMPY_BACKEND
    if name == "torch":
        import_torch()
        return _torch_backend()
    hint = "for other libraries pass one of their arrays; the backend follows its type"
    raise unknown_option("backend", name, ("numpy", "torch"), hint=hint)
