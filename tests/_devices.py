"""The torch devices the suite runs on, behind the ``torch_device`` fixture.

``"cpu"`` always; ``"meta"`` (shapes and dtypes only: a test there checks that the
torch path never needs values, so no host sync, ``.item()`` or NumPy round trip);
``"cuda"`` when a GPU is present (skipped with that reason otherwise).

Example::

    def test_sum(torch_device):
        x = torch_device.tensor(np.ones((2, 3)))
        torch_device.check(tops.reduce(x, "a b -> a", "sum"), np.full(2, 3.0))
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

DEVICES = ("cpu", "meta", "cuda")


@dataclass(frozen=True)
class TorchDevice:
    """Make tensors on one device and compare results with NumPy references."""

    name: str

    @staticmethod
    def get(name: str) -> TorchDevice:
        """The device ``name``, skipping the test when it is not available here."""
        torch = pytest.importorskip("torch")
        if name == "cuda" and not torch.cuda.is_available():
            pytest.skip("no CUDA device on this machine (scripts/cuda_check.sh runs these)")
        return TorchDevice(name)

    @property
    def meta(self) -> bool:
        """Whether tensors here have shapes but no values."""
        return self.name == "meta"

    def tensor(self, a: Any, **kwargs: Any) -> Any:
        """A tensor on this device with the values, shape and dtype of ``a``."""
        import torch

        return torch.as_tensor(np.array(a, copy=True), **kwargs).to(self.name)

    def check(self, result: Any, expected: Any, rtol: float = 1e-7, atol: float = 0.0) -> None:
        """``result`` is on this device, with ``expected``'s shape and dtype (and values)."""
        import torch

        expected = np.asarray(expected)
        assert isinstance(result, torch.Tensor), type(result)
        assert result.device.type == self.name, (result.device, self.name)
        assert tuple(result.shape) == expected.shape, (tuple(result.shape), expected.shape)
        assert str(result.dtype).removeprefix("torch.") == str(expected.dtype)
        if not self.meta:
            values = result.detach().cpu().numpy()
            np.testing.assert_allclose(values, expected, rtol=rtol, atol=atol)
