"""The persistent plan store: keyed, atomic, bounded, never trusted, off by default."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import pytest

import tensorops as tops
from tensorops._einsum.planning._cost import sliced_contraction_steps
from tensorops._einsum.planning._store import ENV_VAR, PlanStore, active_store, default_directory
from tensorops._einsum.programs import _program

# A ring of eight matrices with a chord: the planners have a real choice.
RING = "ab,bc,cd,de,ef,fg,gh,ha,ae->"
SIZES = {"a": 4, "b": 9, "c": 3, "d": 7, "e": 5, "f": 8, "g": 2, "h": 6}


def _shapes(**changed: int) -> list[tuple[int, ...]]:
    sizes = {**SIZES, **changed}
    return [tuple(sizes[a] for a in term) for term in RING[:-2].split(",")]


SHAPES = _shapes()


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    tops.clear_caches()


def _plan(directory: Path | None, equation: str = RING, **options: object) -> tops.ContractionPlan:
    tops.clear_caches()  # the in-process cache would hide the store
    with tops.config(plan_store=False if directory is None else str(directory)):
        return tops.einsum_path(equation, *SHAPES, **options)  # type: ignore[arg-type]


def _entry_files(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.plan.json"))


def test_disabled_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert tops.config.plan_store is None
    assert active_store() is None
    tops.einsum_path(RING, *SHAPES)
    assert list(tmp_path.rglob("*")) == []


def test_environment_variable_enables_the_default_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv(ENV_VAR, "1")
    store = active_store()
    assert store is not None
    assert store.directory == tmp_path / "tensorops" / "plans" == default_directory()
    tops.einsum_path(RING, *SHAPES)
    assert len(_entry_files(store.directory)) == 1
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "elsewhere"))
    assert active_store().directory == tmp_path / "elsewhere"  # type: ignore[union-attr]
    monkeypatch.setenv(ENV_VAR, "0")
    assert active_store() is None
    with tops.config(plan_store=False):  # the config wins over the environment
        monkeypatch.setenv(ENV_VAR, "1")
        assert active_store() is None


def test_stored_plan_is_used_without_planning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _plan(tmp_path, strategy="dp")
    assert len(_entry_files(tmp_path)) == 1

    def no_planning(*args: object, **kwargs: object) -> None:
        raise AssertionError("planned again")

    monkeypatch.setattr(_program, "plan_contraction", no_planning)
    again = _plan(tmp_path, strategy="dp")
    assert again.path == first.path
    assert again.flops == first.flops
    # renamed axes are the same contraction: the same entry
    renamed = _plan(tmp_path, RING.translate(str.maketrans("abcdefgh", "pqrstuvw")), strategy="dp")
    assert renamed.path == first.path
    assert len(_entry_files(tmp_path)) == 1


def test_key_includes_sizes_and_settings(tmp_path: Path) -> None:
    _plan(tmp_path, strategy="dp")
    _plan(tmp_path, strategy="greedy")
    _plan(tmp_path, strategy="greedy", memory_limit=40)
    tops.clear_caches()
    with tops.config(plan_store=str(tmp_path)):
        tops.einsum_path(RING, *_shapes(b=10), strategy="greedy")
    entries = PlanStore(tmp_path).entries()
    assert len(entries) == 4
    assert sorted(e.strategy for e in entries) == ["dp", "greedy", "greedy", "greedy"]


def test_sliced_plan_round_trips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _plan(tmp_path, strategy="greedy", memory_limit=4)
    assert first.sliced_axes
    monkeypatch.setattr(_program, "plan_contraction", None)  # a call would fail
    again = _plan(tmp_path, strategy="greedy", memory_limit=4)
    assert (again.path, again.sliced_axes, again.flops) == (
        first.path,
        first.sliced_axes,
        first.flops,
    )


def _corrupt_truncated(text: str) -> str:
    return text[: len(text) // 2]


def _corrupt_garbage(text: str) -> str:
    return "\x00\xff not json at all"


def _corrupt_wrong_path(text: str) -> str:
    data = json.loads(text)
    data["path"][0] = [0, 99]  # no such operand
    return json.dumps(data)


def _corrupt_other_valid_path(text: str) -> str:
    data = json.loads(text)  # a valid path, but not the one whose cost is stored
    data["path"] = [[0, 1]] * (len(data["key"][1]) - 1)
    return json.dumps(data)


def _corrupt_key(text: str) -> str:
    data = json.loads(text)  # a hash collision: another contraction's entry
    data["key"][3][0] += 1
    return json.dumps(data)


def _corrupt_type(text: str) -> str:
    return json.dumps([1, 2, 3])


@pytest.mark.parametrize(
    "corrupt",
    [
        _corrupt_truncated,
        _corrupt_garbage,
        _corrupt_wrong_path,
        _corrupt_other_valid_path,
        _corrupt_key,
        _corrupt_type,
    ],
)
def test_corrupt_entry_is_replanned_and_rewritten(tmp_path: Path, corrupt: object) -> None:
    first = _plan(tmp_path, strategy="dp")
    (file,) = _entry_files(tmp_path)
    good = file.read_text()
    file.write_text(corrupt(good))  # type: ignore[operator]
    again = _plan(tmp_path, strategy="dp")
    assert again.path == first.path
    assert again.flops == first.flops
    assert json.loads(file.read_text()) == json.loads(good)  # rewritten whole


def test_entry_over_the_memory_limit_is_not_trusted(tmp_path: Path) -> None:
    _plan(tmp_path, strategy="greedy", memory_limit=4)
    (file,) = _entry_files(tmp_path)
    data = json.loads(file.read_text())
    data["sliced"] = []  # the whole contraction in one piece: over the limit
    inputs = [tuple(str(a) for a in term) for term in data["key"][1]]
    sizes = {str(i): size for i, size in enumerate(data["key"][3])}
    path = data["path"]
    data["flops"] = sliced_contraction_steps(inputs, (), sizes, path).flops
    file.write_text(json.dumps(data))
    plan = _plan(tmp_path, strategy="greedy", memory_limit=4)
    assert plan.sliced_axes
    assert plan.largest_intermediate <= 4


def test_eviction_keeps_the_most_recently_used(tmp_path: Path) -> None:
    store = PlanStore(tmp_path, max_entries=3)
    for key in "abcde":
        store.write(key, {"n": key})
        os.utime(store._file(key), (1000 + ord(key), 1000 + ord(key)))
    assert [e.key for e in store.entries()] == ["c", "d", "e"]
    assert store.read("c") == {"n": "c"}  # a read makes it the most recent
    store.write("f", {"n": "f"})
    assert sorted(e.key for e in store.entries()) == ["c", "e", "f"]
    small = PlanStore(tmp_path, max_bytes=2 * store.entries()[0].bytes)
    assert small.evict() == 1
    assert len(small.entries()) == 2


def test_list_and_clear(tmp_path: Path) -> None:
    assert PlanStore(tmp_path / "missing").entries() == []
    assert PlanStore(tmp_path / "missing").clear() == 0
    plan = _plan(tmp_path, strategy="greedy")
    (entry,) = PlanStore(tmp_path).entries()
    assert (entry.operands, entry.strategy, entry.flops) == (len(SHAPES), "greedy", plan.flops)
    (tmp_path / "junk.plan.json").write_text("{")
    assert [e.operands for e in PlanStore(tmp_path).entries()].count(0) == 1
    assert PlanStore(tmp_path).clear() == 2
    assert _entry_files(tmp_path) == []


def test_unwritable_directory_is_ignored(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    plan = _plan(blocker / "plans", strategy="greedy")  # mkdir fails: planned all the same
    assert plan.path


def test_bad_setting() -> None:
    with pytest.raises(tops.ArgumentError, match="plan_store must be"):
        tops.config.plan_store = 3  # type: ignore[assignment]
    with pytest.raises(tops.ArgumentError, match="plan_store must be"):
        tops.config(plan_store=[1])


def _worker(directory: str, number: int) -> list[list[tuple[int, ...]]]:
    """Plan one network every worker plans and one of this worker's own, a few times."""
    paths = []
    with tops.config(plan_store=directory):
        for _ in range(5):
            tops.clear_caches()
            paths.append(tops.einsum_path(RING, *SHAPES, strategy="dp").path)
            own = _shapes(a=5 + number)
            paths.append(tops.einsum_path(RING, *own, strategy="greedy").path)
    return paths


def test_concurrent_writers(tmp_path: Path) -> None:
    # spawn, not fork: a forked child of a process running JAX's or torch's threads may
    # deadlock (JAX warns at fork, and the warning fails the test that forked)
    context = multiprocessing.get_context("spawn")
    with context.Pool(4) as pool:
        results = pool.starmap(_worker, [(str(tmp_path), n) for n in range(4)])
    shared = {tuple(paths[0]) for paths in results}
    assert len(shared) == 1  # every process got the same plan of the shared network
    assert list(tmp_path.glob("*.tmp")) == []  # no temporary file left behind
    entries = PlanStore(tmp_path).entries()
    assert len(entries) == 5
    assert all(e.operands == len(SHAPES) for e in entries)
    expected = _plan(None, strategy="dp")
    assert _plan(tmp_path, strategy="dp").path == expected.path


def test_cli_lists_and_clears(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tensorops.__main__ import main

    plan = _plan(tmp_path, strategy="greedy")
    assert main(["store", "list", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"1 plans in {tmp_path}")
    assert f"{len(SHAPES)} operands  greedy" in out
    assert f"{len(str(plan.flops)) - 1}." in out  # log10 of the FLOPs
    assert main(["store", "clear", "--dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("removed 1 plans")
    assert _entry_files(tmp_path) == []
    assert main(["store", "prune"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_einsum_uses_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    arrays = [np.random.default_rng(k).random(shape) for k, shape in enumerate(SHAPES)]
    with tops.config(plan_store=str(tmp_path)):
        first = tops.einsum(RING, *arrays, strategy="dp")
        assert len(_entry_files(tmp_path)) == 1
        tops.clear_caches()
        monkeypatch.setattr(_program, "plan_contraction", None)  # a call would fail
        again = tops.einsum(RING, *arrays, strategy="dp")
    np.testing.assert_allclose(first, np.einsum(RING, *arrays))
    np.testing.assert_allclose(again, first)


_PROCESS = """
import sys, tensorops as tops
from tensorops._einsum.programs import _program
if sys.argv[1] == "second":
    _program.plan_contraction = None  # planning again would fail
plan = tops.einsum_path({ring!r}, *{shapes!r}, strategy="hyper", max_time=0.5)
print(plan.path)
"""


def test_a_second_process_reads_what_the_first_wrote(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = _PROCESS.format(ring=RING, shapes=SHAPES)
    environment = {**os.environ, ENV_VAR: str(tmp_path)}
    paths = [
        subprocess.run(
            [sys.executable, "-c", script, which],
            env=environment,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout
        for which in ("first", "second")
    ]
    assert paths[0] == paths[1]
    assert len(_entry_files(tmp_path)) == 1
