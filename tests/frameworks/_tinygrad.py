"""The tinygrad family for the suite (``TENSOROPS_TEST_FRAMEWORK=tinygrad``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from tinygrad import Tensor

from tests._frameworks import Family


def _asarray(a: np.ndarray) -> Any:
    # a copy: the tensor may share the buffer of a contiguous NumPy array
    return Tensor(np.array(a, copy=True, order="C"))


def _to_numpy(x: Any) -> np.ndarray:
    return np.array(x.numpy(), copy=True)


def family() -> Family:
    """Lazy tinygrad tensors on the default device; tinygrad has no complex dtypes."""
    return Family("tinygrad", _asarray, _to_numpy, lacks=frozenset({"complex64", "complex128"}))
