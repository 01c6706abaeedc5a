"""The TensorFlow family for the suite (``TENSOROPS_TEST_FRAMEWORK=tensorflow``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import tensorflow as tf

from tests._frameworks import Family


def _asarray(a: np.ndarray) -> Any:
    # a copy: tf.constant may share the buffer of an aligned NumPy array
    return tf.constant(np.array(a, copy=True))


def _to_numpy(x: Any) -> np.ndarray:
    return np.array(x.numpy(), copy=True)


def family() -> Family:
    """Eager TensorFlow tensors on the default device; TensorFlow has every NumPy number dtype."""
    return Family("tensorflow", _asarray, _to_numpy)
