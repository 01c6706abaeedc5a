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

import random
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import settings

from tests import _frameworks, _seed
from tests._devices import DEVICES, TorchDevice
from tests._frameworks import Family
from tests.compat import _report

# No example database: a run replays nothing from earlier runs, only the seed decides.
settings.register_profile("tensorops", database=None, deadline=None, print_blob=True)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--seed",
        type=int,
        default=None,
        help=f"seed of all test randomness (default: ${_seed.ENV}, else {_seed.DEFAULT_SEED})",
    )


@pytest.hookimpl(tryfirst=True)  # before Hypothesis' plugin reads --hypothesis-seed
def pytest_configure(config: pytest.Config) -> None:
    # The peers' suites report from every process (the pytest-xdist controller too).
    config.pluginmanager.register(_report, "tensorops-compat-report")
    if config.getoption("seed") is not None:
        _seed.set_seed(config.getoption("seed"))
    if config.getoption("hypothesis_seed", None) is None:
        config.option.hypothesis_seed = str(_seed.seed())
    if not config.getoption("hypothesis_profile", None):
        settings.load_profile("tensorops")


def pytest_report_header() -> str:
    return f"tensorops test seed: {_seed.seed()} (--seed / ${_seed.ENV})"


@pytest.fixture(autouse=True)
def _seeded(request: pytest.FixtureRequest) -> None:
    """Seed ``random``, NumPy's global generator and torch from the run's seed and test id."""
    derived = _seed.derived(request.node.nodeid)
    random.seed(derived)
    np.random.seed(derived)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(derived)


@pytest.fixture(params=[pytest.param(name, id=f"device={name}") for name in DEVICES])
def torch_device(request: pytest.FixtureRequest) -> TorchDevice:
    """One torch device per test id ("cpu", "meta", "cuda"); see ``tests/_devices.py``."""
    return TorchDevice.get(request.param)


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


_FRAMEWORK = _frameworks.selected()

# tests/frameworks/ import their framework at the top and run in its process alone
# (tests/test_frameworks.py starts those): TensorFlow and Paddle in one process crash it.
collect_ignore_glob = [] if _FRAMEWORK else ["frameworks/*"]


@pytest.fixture(
    params=[pytest.param(name, id=name) for name in ([_FRAMEWORK] if _FRAMEWORK else _FAMILIES)]
)
def backend(request: pytest.FixtureRequest) -> Family:
    """One installed array family per test id; see the module docstring.

    In a process testing one framework (``tests/_frameworks.py``), that framework alone.
    """
    if _FRAMEWORK:
        pytest.importorskip(_frameworks.FRAMEWORKS[_FRAMEWORK].module)
        return _frameworks.family(_FRAMEWORK)
    return _FAMILIES[request.param]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a process testing one framework, keep the tests that run on it.

    Those are the tests that use the ``backend`` fixture, those of ``tests/frameworks/`` and
    einops' suite; the rest run in the main test process and would only run again.
    """
    if not _FRAMEWORK:
        return
    kept, dropped = [], []
    for item in items:
        parts = item.path.parts
        on_framework = (
            "backend" in getattr(item, "fixturenames", ())
            or "frameworks" in parts
            # einops' suite, on the framework EINOPS_TEST_BACKENDS names: its items live in
            # einops' installed files, under this directory's node ids
            or "compat" in parts
            or item.nodeid.startswith("tests/compat/")
        )
        (kept if on_framework else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
