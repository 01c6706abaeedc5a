"""The PyTensor family for the suite (``TENSOROPS_TEST_FRAMEWORK=pytensor``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytensor
import pytensor.tensor as pt
from pytensor.tensor.variable import TensorVariable

from tests._frameworks import Family


def _asarray(a: np.ndarray) -> Any:
    # a constant of the values: its static shape is the array's, its dtype the array's own
    return pt.constant(np.array(a, copy=True), dtype=a.dtype.name)


def _to_numpy(x: Any) -> np.ndarray:
    # FAST_COMPILE: the suite builds thousands of small graphs, and compiling each to C
    # costs a second; test_pytensor.py compiles in the default mode
    return np.asarray(pytensor.function([], x, mode="FAST_COMPILE")())


def family() -> Family:
    """PyTensor constants; results (graph variables) evaluated with ``.eval()``."""
    return Family("pytensor", _asarray, _to_numpy, result_class=TensorVariable)
