"""tops.config: process-wide defaults, per-thread / per-task overrides, validation."""

from __future__ import annotations

import asyncio
import threading
import warnings

import numpy as np
import pytest

import tensorops as tops


@pytest.fixture(autouse=True)
def _restore_defaults() -> object:
    strategy, memory_limit = tops.config.strategy, tops.config.memory_limit
    yield None
    tops.config.strategy, tops.config.memory_limit = strategy, memory_limit


def test_defaults() -> None:
    assert tops.config.strategy == "auto"
    assert tops.config.memory_limit is None
    assert repr(tops.config) == (
        "config(strategy='auto', memory_limit=None, max_time=None, minimize='flops')"
    )


def test_assignment_sets_the_process_default() -> None:
    tops.config.strategy = "greedy"
    assert tops.config.strategy == "greedy"
    seen: list[str] = []
    thread = threading.Thread(target=lambda: seen.append(tops.config.strategy))
    thread.start()
    thread.join()
    assert seen == ["greedy"]
    tops.config.memory_limit = 1000
    assert tops.config.memory_limit == 1000


def test_context_overrides_and_nesting_restore() -> None:
    with tops.config(strategy="optimal", memory_limit=10**7) as settings:
        assert settings is tops.config
        assert (tops.config.strategy, tops.config.memory_limit) == ("optimal", 10**7)
        with tops.config(strategy="dp"):
            assert (tops.config.strategy, tops.config.memory_limit) == ("dp", 10**7)
            with tops.config(memory_limit=None):
                assert (tops.config.strategy, tops.config.memory_limit) == ("dp", None)
            assert tops.config.memory_limit == 10**7
        assert tops.config.strategy == "optimal"
    assert (tops.config.strategy, tops.config.memory_limit) == ("auto", None)


def test_context_restores_after_an_exception() -> None:
    with pytest.raises(KeyError), tops.config(strategy="greedy"):
        raise KeyError("boom")
    assert tops.config.strategy == "auto"


def test_unset_fields_follow_the_process_default() -> None:
    with tops.config(memory_limit=50):
        tops.config.strategy = "greedy"
        assert tops.config.strategy == "greedy"
    assert tops.config.strategy == "greedy"


def test_threads_are_isolated() -> None:
    strategies = ["auto", "optimal", "dp", "greedy"] * 2
    barrier = threading.Barrier(len(strategies))
    seen: dict[int, tuple[str, int | None]] = {}
    arrays = [np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))]

    def work(number: int) -> None:
        with tops.config(strategy=strategies[number], memory_limit=1000 + number):
            barrier.wait()
            for _ in range(20):
                plan = tops.einsum_path("ij,jk,kl->il", *arrays)
                assert plan.strategy == strategies[number]
                tops.einsum("ij,jk,kl->il", *arrays)
            seen[number] = (tops.config.strategy, tops.config.memory_limit)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(len(strategies))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == {n: (strategies[n], 1000 + n) for n in range(len(strategies))}
    assert tops.config.strategy == "auto"


def test_async_tasks_are_isolated() -> None:
    async def task(strategy: str) -> str:
        with tops.config(strategy=strategy):
            await asyncio.sleep(0)
            return tops.config.strategy

    async def main() -> list[str]:
        return list(await asyncio.gather(task("dp"), task("greedy")))

    assert asyncio.run(main()) == ["dp", "greedy"]


def test_per_call_strategy_wins() -> None:
    with tops.config(strategy="greedy"):
        assert tops.einsum_path("ij,jk->ik", (2, 3), (3, 4), strategy="optimal").strategy == (
            "optimal"
        )
        assert tops.einsum_path("ij,jk->ik", (2, 3), (3, 4)).strategy == "greedy"


@pytest.mark.parametrize("bad", ["fast", "", None, 3, ["auto"]])
def test_unknown_strategy_is_rejected_at_set_time(bad: object) -> None:
    message = f"unknown einsum strategy {bad!r}; valid: auto, optimal, dp, greedy, hyper, partition"
    with pytest.raises(tops.TensorOpsError) as info:
        tops.config.strategy = bad  # type: ignore[assignment]
    assert info.value.reason == message
    assert str(info.value).startswith(f"config: {message}")
    with pytest.raises(tops.TensorOpsError):
        tops.config(strategy=bad)
    assert tops.config.strategy == "auto"


@pytest.mark.parametrize("bad", [0, -5, 1.5, True, "10"])
def test_bad_memory_limit_is_rejected(bad: object) -> None:
    message = f"memory_limit must be a positive int (a number of elements) or None, got {bad!r}"
    with pytest.raises(tops.TensorOpsError) as info:
        tops.config.memory_limit = bad  # type: ignore[assignment]
    assert info.value.reason == message
    with pytest.raises(tops.TensorOpsError):
        tops.config(memory_limit=bad)
    assert tops.config.memory_limit is None


def test_an_override_outside_a_with_block_warns_that_it_changes_nothing() -> None:
    with pytest.warns(RuntimeWarning, match="changes nothing outside a with block"):
        tops.config(strategy="greedy")
    assert tops.config.strategy == "auto"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        override = tops.config(strategy="dp")
        with override:  # made first, entered later: no warning
            assert tops.config.strategy == "dp"
        del override
    assert caught == []
