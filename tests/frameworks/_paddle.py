"""The Paddle family of the ``backend`` fixture (``TENSOROPS_TEST_FRAMEWORK=paddle``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tests._frameworks import Family


def family() -> Family:
    """Paddle tensors on the CPU; paddle has no uint16 (it reads NumPy's uint16 as bfloat16)."""
    import paddle

    def asarray(a: np.ndarray) -> Any:
        return paddle.to_tensor(np.array(a, copy=True))

    def to_numpy(x: Any) -> np.ndarray:
        return np.array(x.detach().numpy(), copy=True)

    return Family("paddle", asarray, to_numpy, lacks=frozenset({"uint16", "uint32", "uint64"}))
