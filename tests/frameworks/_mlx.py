"""The MLX family for the suite (``TENSOROPS_TEST_FRAMEWORK=mlx``)."""

from __future__ import annotations

from typing import Any

import mlx.core as mx
import numpy as np

from tests._frameworks import Family


def _asarray(a: np.ndarray) -> Any:
    # mx.array narrows float64 to float32 unless the dtype is named; complex128, which
    # MLX lacks, is narrowed to complex64
    name = {"bool": "bool_", "complex128": "complex64"}.get(a.dtype.name, a.dtype.name)
    return mx.array(np.array(a, copy=True), dtype=getattr(mx, name))


def family() -> Family:
    """MLX arrays on the CPU; MLX has no complex128."""
    return Family(
        "mlx",
        _asarray,
        lambda x: np.array(x),
        lacks=frozenset({"complex128"}),
        exp_dtypes={"float64": "float32"},
    )
