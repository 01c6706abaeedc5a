"""The ``backend`` fixture: run a test once per installed array family.

Each parameter is a :class:`Family` with

* ``name``: the test id ("numpy", "torch", "array_api_strict", "dask", "jax"),
* ``asarray(a)``: an array of that family with the values, shape and dtype of the
  NumPy array ``a`` (a fresh copy; Dask arrays are split into several chunks),
* ``to_numpy(x)``: the values of an array of that family as a NumPy array.

Families whose library is not installed are skipped. For JAX, 64-bit types are
enabled (``jax_enable_x64``) so results can be compared with NumPy's dtypes.
array-api-strict has no float16, as the standard says.

Example::

    def test_roundtrip(backend):
        x = backend.asarray(np.arange(6).reshape(2, 3))
        assert backend.to_numpy(x).shape == (2, 3)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from tests.compat import _report


def pytest_configure(config: pytest.Config) -> None:
    # The peers' suites report from every process (the pytest-xdist controller too).
    config.pluginmanager.register(_report, "tensorops-compat-report")


@dataclass(frozen=True)
class Family:
    """How to make and read arrays of one family in tests."""

    name: str
    asarray: Callable[[np.ndarray], Any]
    to_numpy: Callable[[Any], np.ndarray]


def _numpy() -> Family:
    return Family("numpy", lambda a: np.array(a, copy=True), np.asarray)


def _torch() -> Family:
    torch = pytest.importorskip("torch")

    def to_numpy(x: Any) -> np.ndarray:
        return x.detach().cpu().resolve_conj().resolve_neg().numpy()

    return Family("torch", lambda a: torch.from_numpy(np.array(a, copy=True)), to_numpy)


def _array_api_strict() -> Family:
    xp = pytest.importorskip("array_api_strict")
    return Family("array_api_strict", lambda a: xp.asarray(np.array(a, copy=True)), np.asarray)


def _dask() -> Family:
    da = pytest.importorskip("dask.array")

    def asarray(a: np.ndarray) -> Any:
        chunks = tuple(max(1, (n + 1) // 2) for n in a.shape)  # several chunks per axis
        return da.from_array(np.array(a, copy=True), chunks=chunks)

    return Family("dask", asarray, lambda x: np.asarray(x.compute()))


def _jax() -> Family:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = pytest.importorskip("jax.numpy")
    return Family("jax", jnp.asarray, np.asarray)


_FAMILIES = {
    "numpy": _numpy,
    "torch": _torch,
    "array_api_strict": _array_api_strict,
    "dask": _dask,
    "jax": _jax,
}


@pytest.fixture(params=[pytest.param(name, id=name) for name in _FAMILIES])
def backend(request: pytest.FixtureRequest) -> Family:
    """One installed array family per test id; see the module docstring."""
    return _FAMILIES[request.param]()
