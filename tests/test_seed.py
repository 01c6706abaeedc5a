"""The suite's seed and tolerance helpers (tests/_seed.py)."""

from __future__ import annotations

import numpy as np
import pytest

import tensorops as tops
from tests import _seed


def test_derived_seeds_follow_the_run_seed() -> None:
    run_seed = _seed.seed()
    try:
        _seed.set_seed(1)
        first = (_seed.derived("a"), _seed.rng("a").random())
        assert first == (_seed.derived("a"), _seed.rng("a").random())  # stable
        assert _seed.derived("a") != _seed.derived("b")
        _seed.set_seed(2)
        assert _seed.derived("a") != first[0]
    finally:
        _seed.set_seed(run_seed)


def test_global_generators_are_seeded_per_test(request: pytest.FixtureRequest) -> None:
    # The autouse fixture seeded random, NumPy's global generator and torch from the id.
    import random

    derived = _seed.derived(request.node.nodeid)
    assert np.random.random() == np.random.RandomState(derived).random()
    assert random.random() == random.Random(derived).random()


def test_tolerance_grows_with_terms_and_eps() -> None:
    small, large = _seed.tolerance(np.float32, 10), _seed.tolerance(np.float32, 10_000)
    assert large["rtol"] == pytest.approx(small["rtol"] * np.sqrt(1000))
    assert _seed.tolerance(np.float64, 10)["rtol"] < small["rtol"]
    assert _seed.tolerance(np.float16)["rtol"] > small["rtol"]
    assert _seed.tolerance(np.int32, 10**6) == {"rtol": 0.0, "atol": 0.0}


def test_tolerance_covers_float32_sums_in_different_orders() -> None:
    """68,880 float32 terms: a matrix product and a fused reduction differ within it."""
    torch = pytest.importorskip("torch")
    n = 68_880
    for draw in range(3):
        a, b = (
            torch.from_numpy(_seed.rng("sums", draw, k).random((n, 16), np.float32)) for k in (0, 1)
        )
        by_matmul = torch.einsum("nd,nd->d", a, b)  # torch: a batched matrix product
        fused = tops.einsum("nd,nd->d", a, b)  # tensorops: multiply, then sum
        exact = (a.double() * b.double()).sum(0)
        bounds = _seed.tolerance(torch.float32, n)
        for result in (by_matmul, fused):
            np.testing.assert_allclose(result.double(), exact, **bounds)
        np.testing.assert_allclose(by_matmul, fused, **bounds)
