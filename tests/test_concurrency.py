"""Threads share the caches safely, and ``tops.config`` overrides stay in their thread."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import tensorops as tops

# A hang fails the test instead of stalling the suite.
pytestmark = pytest.mark.timeout(120)

THREADS = 8
ROUNDS = 150
_STRATEGIES = ["greedy", "dp", "optimal", "auto"]


def _run_threads(work: Callable[[int], None]) -> None:
    """Run ``work(i)`` for i in range(THREADS) at the same time; re-raise the first failure."""
    barrier = threading.Barrier(THREADS)

    def start(i: int) -> None:
        barrier.wait()
        work(i)

    with ThreadPoolExecutor(THREADS) as pool:
        for future in [pool.submit(start, i) for i in range(THREADS)]:
            future.result()


def _ops_round(i: int, k: int) -> None:
    """One round of every op with shapes that differ by thread and round."""
    b, h, w = 1 + i, 1 + k % 5, 2 + (i + k) % 3
    x = np.arange(b * h * w * 2, dtype=np.float64).reshape(b, h * w, 2)
    y = tops.rearrange(x, "b (h w) c -> b c w h", h=h)
    np.testing.assert_array_equal(y, x.reshape(b, h, w, 2).transpose(0, 3, 2, 1))
    r = tops.reduce(x, "b (h w) c -> b h", "max", w=w)
    np.testing.assert_array_equal(r, x.reshape(b, h, w, 2).max(axis=(2, 3)))
    p = tops.repeat(x, "b n c -> b n c r", r=i + 1)
    np.testing.assert_array_equal(p, np.broadcast_to(x[..., None], (*x.shape, i + 1)))
    a = np.full((b, h), float(i + 1))
    c = np.full((h, w), float(k + 1))
    np.testing.assert_allclose(tops.einsum("ij,jk->ik", a, c), a @ c)
    np.testing.assert_allclose(tops.einsum(a, c, "b h, h w -> b w"), a @ c)
    packed, shapes = tops.pack([x, y.reshape(b, -1)], "b *")
    first, _second = tops.unpack(packed, shapes, "b *")
    np.testing.assert_array_equal(first, x)
    assert tops.parse_shape(x, "b _ c") == {"b": b, "c": 2}


def test_threads_share_caches_and_results_stay_right() -> None:
    def work(i: int) -> None:
        for k in range(ROUNDS):
            _ops_round(i, k)

    _run_threads(work)


def test_clearing_caches_while_other_threads_run() -> None:
    def work(i: int) -> None:
        for k in range(ROUNDS // 2):
            if i == 0:
                tops.clear_caches()
                tops.cache_info()
            else:
                _ops_round(i, k)

    _run_threads(work)


def test_config_overrides_do_not_leak_between_threads() -> None:
    shapes = [(3, 4), (4, 5), (5, 6), (6, 2)]
    default = tops.config.strategy

    def work(i: int) -> None:
        mine = _STRATEGIES[i % len(_STRATEGIES)]
        for _ in range(ROUNDS // 3):
            if i % 2:
                with tops.config(strategy=mine):
                    assert tops.config.strategy == mine
                    plan = tops.einsum_path("ij,jk,kl,lm->im", *shapes)
                    assert plan.strategy == mine
            else:
                assert tops.config.strategy == default
                plan = tops.einsum_path("ij,jk,kl,lm->im", *shapes)
                assert plan.strategy == default

    _run_threads(work)
    assert tops.config.strategy == default


def test_config_memory_limit_does_not_leak_between_threads() -> None:
    def work(i: int) -> None:
        limit = 1000 + i
        for _ in range(ROUNDS // 3):
            if i % 2:
                with tops.config(memory_limit=limit):
                    assert tops.config.memory_limit == limit
            else:
                assert tops.config.memory_limit is None

    _run_threads(work)
