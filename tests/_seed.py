"""The suite's one source of randomness, and float tolerances derived from the problem.

The seed comes from ``pytest --seed N``, else the ``TENSOROPS_TEST_SEED`` environment
variable, else :data:`DEFAULT_SEED`. ``tests/conftest.py`` sets it before any test module
is imported, seeds ``random``, NumPy's global generator and torch per test from it and the
test's id, and gives Hypothesis the same seed (with no example database), so a run is a
function of the seed alone and runs with different seeds must give the same outcomes.

Example::

    x = rng("test_reductions").standard_normal((2, 3))
    np.testing.assert_allclose(got, want, **tolerance(np.float32, terms=4096))
"""

from __future__ import annotations

import os
import zlib
from typing import Any

import numpy as np

DEFAULT_SEED = 0
ENV = "TENSOROPS_TEST_SEED"

_seed = int(os.environ.get(ENV, DEFAULT_SEED))


def set_seed(seed: int) -> None:
    """Make ``seed`` the run's seed (called once, from ``pytest_configure``)."""
    global _seed
    _seed = int(seed)


def seed() -> int:
    """The run's seed.

    Example::

        np.random.seed(seed())
    """
    return _seed


def derived(*key: object) -> int:
    """A 32-bit seed from the run's seed and ``key`` (stable across processes and runs).

    Example::

        derived("tests/test_ops.py::test_x") != derived("tests/test_ops.py::test_y")
    """
    text = "\0".join(map(str, (_seed, *key)))
    return zlib.crc32(text.encode())


def rng(*key: object) -> np.random.Generator:
    """A NumPy generator seeded from the run's seed and ``key``.

    Example::

        X = rng("test_softmax").standard_normal((2, 3, 4, 5))
    """
    return np.random.default_rng(derived(*key))


def tolerance(dtype: Any, terms: int = 1, scale: float = 1.0) -> dict[str, float]:
    """``rtol``/``atol`` for comparing sums of ``terms`` products each about ``scale`` in size.

    Two correct implementations that add in different orders (pairwise, blocked BLAS,
    a fused reduction) differ by rounding. For terms of random sign the sum is about
    ``scale * sqrt(terms)`` and the difference about ``eps * scale * terms``, a relative
    ``eps * sqrt(terms)``; the factor 8 covers the spread of that random walk (the
    worst case, ``terms * eps`` relative, needs adversarial inputs). ``atol`` is ``rtol``
    times the sum's typical size, so sums that cancel to near zero still compare.
    Integer and boolean dtypes compare exactly.

    Example::

        >>> tolerance(np.float64)["rtol"] < 1e-14
        True
        >>> tolerance("int64")
        {'rtol': 0.0, 'atol': 0.0}
    """
    eps = _eps(dtype)
    if eps == 0.0:
        return {"rtol": 0.0, "atol": 0.0}
    rtol = 8.0 * eps * max(1.0, float(np.sqrt(terms)))
    return {"rtol": rtol, "atol": rtol * scale * max(1.0, float(np.sqrt(terms)))}


def _eps(dtype: Any) -> float:
    # Machine epsilon of a NumPy or torch dtype; 0 for exact (integer, bool) dtypes.
    name = str(dtype)
    if name.startswith("torch."):
        if name == "torch.bfloat16":
            return 2.0**-7
        dtype = name.removeprefix("torch.")
    numpy_dtype = np.dtype(dtype)
    return float(np.finfo(numpy_dtype).eps) if numpy_dtype.kind in "fc" else 0.0
