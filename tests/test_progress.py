"""Progress bars: shown when asked and tqdm is there; silent otherwise, never an error."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest

import tensorops as tops
from tensorops._einsum.planning import _progress
from tests.test_paths import grid

tqdm = pytest.importorskip("tqdm")


class Recorder:
    """Stands in for tqdm.tqdm: records what a bar was told."""

    made: list[Recorder] = []  # noqa: RUF012 - one list per test, reset by the fixture

    def __init__(self, **options: Any) -> None:
        self.options, self.n, self.total = options, 0.0, options["total"]
        self.postfix: list[str] = []
        self.closed = False
        Recorder.made.append(self)

    def update(self, n: float = 1) -> None:
        self.n += n

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        self.postfix.append(text)

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def bars(monkeypatch: pytest.MonkeyPatch) -> list[Recorder]:
    Recorder.made = []
    monkeypatch.setattr(tqdm, "tqdm", Recorder)
    tops.clear_caches()
    return Recorder.made


def _lattice(side: int, bond: int) -> tuple[str, list[tuple[int, ...]]]:
    """A square lattice of tensors as a spaced equation, every bond of size ``bond``."""
    inputs, _, _ = grid(side, side)
    return ", ".join(" ".join(t) for t in inputs) + " ->", [(bond,) * len(t) for t in inputs]


RING = "ab,bc,cd,da->"
MATRICES = [np.arange(16 * 16, dtype=float).reshape(16, 16) / 100 + k for k in range(4)]


def test_silent_by_default(bars: list[Recorder]) -> None:
    equation, shapes = _lattice(6, 6)
    tops.einsum_path(equation, *shapes)
    tops.einsum(RING, *MATRICES, memory_limit=16)
    assert bars == []


def test_sliced_execution_counts_slices(bars: list[Recorder]) -> None:
    result = tops.einsum(RING, *MATRICES, memory_limit=16, progress=True)
    np.testing.assert_allclose(result, np.einsum(RING, *MATRICES))
    (bar,) = bars
    slices = tops.einsum_path(RING, *MATRICES, memory_limit=16).slices
    assert slices > 1
    assert (bar.total, bar.n, bar.closed) == (slices, slices, True)
    assert bar.options["unit"] == "slice"


def test_auto_search_shows_best_cost(bars: list[Recorder]) -> None:
    equation, shapes = _lattice(6, 6)
    plan = tops.einsum_path(equation, *shapes, progress=True)
    (bar,) = bars
    assert bar.closed
    assert 0 < bar.n <= bar.total
    best = float(bar.postfix[-1].split()[-1])
    assert best == pytest.approx(np.log10(plan.flops), abs=1e-3)
    tops.clear_caches()
    assert tops.einsum_path(equation, *shapes).path == plan.path  # the bar changes nothing


def test_hyper_with_max_time_counts_seconds(bars: list[Recorder]) -> None:
    equation, shapes = _lattice(5, 3)
    tops.einsum_path(equation, *shapes, strategy="hyper", max_time=0.2, progress=True)
    (bar,) = bars
    assert (bar.total, bar.options["unit"], bar.closed) == (0.2, "s", True)
    assert bar.postfix


def test_config_default_and_override(bars: list[Recorder]) -> None:
    with tops.config(progress=True):
        assert tops.config.progress is True
        tops.einsum(RING, *MATRICES, memory_limit=16)
        tops.einsum(RING, *MATRICES, memory_limit=16, progress=False)
    assert len(bars) == 1
    tops.config.progress = True
    try:
        tops.einsum(RING, *MATRICES, memory_limit=16)
    finally:
        tops.config.progress = False
    assert len(bars) == 2


def test_absent_tqdm_shows_nothing_and_works(
    bars: list[Recorder], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm raises ImportError
    result = tops.einsum(RING, *MATRICES, memory_limit=16, progress=True)
    np.testing.assert_allclose(result, np.einsum(RING, *MATRICES))
    equation, shapes = _lattice(6, 6)
    tops.einsum_path(equation, *shapes, progress=True)
    assert bars == []


def test_silent_while_compiling(bars: list[Recorder], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_progress, "for_compiler", lambda: True)
    tops.einsum(RING, *MATRICES, memory_limit=16, progress=True)
    assert bars == []


def test_real_bar_writes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.setattr(_progress, "_DELAY", 0)
    try:
        tops.einsum(RING, *MATRICES, memory_limit=16, progress=True)
    finally:
        monkeypatch.undo()
    assert "einsum slices" in capsys.readouterr().err


@pytest.mark.parametrize("value", [1, "yes", None])
def test_bad_progress_value(value: object) -> None:
    with pytest.raises(tops.ArgumentError, match="progress must be True or False"):
        tops.einsum(RING, *MATRICES, progress=value)
    with pytest.raises(tops.ArgumentError, match="progress must be True or False"):
        tops.config.progress = value  # type: ignore[assignment]


@pytest.mark.slow
def test_silent_under_torch_compile(bars: list[Recorder]) -> None:
    torch = pytest.importorskip("torch")
    matrices = [torch.from_numpy(m) for m in MATRICES]

    def ring(a: Any, b: Any, c: Any, d: Any) -> Any:
        return tops.einsum("ab,bc,cd,da->", a, b, c, d, memory_limit=16)

    def asked(a: Any, b: Any, c: Any, d: Any) -> Any:
        return tops.einsum("ab,bc,cd,da->", a, b, c, d, memory_limit=16, progress=True)

    expected = torch.einsum("ab,bc,cd,da->", *matrices)
    for fn in (ring, asked):
        torch._dynamo.reset()
        tops.config.progress = True
        try:
            result = torch.compile(fn, backend="eager", fullgraph=True)(*matrices)
        finally:
            tops.config.progress = False
        torch.testing.assert_close(result, expected)
    assert bars == []
