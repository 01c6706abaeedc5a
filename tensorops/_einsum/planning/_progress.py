"""Progress bars for long einsum work: a ``hyper`` search, a sliced contraction.

Shown only when asked (``progress=True`` on `einsum` / `einsum_path`, or
``tops.config.progress = True``), and only when ``tqdm`` is installed (the
``progress`` extra): without it nothing is shown and nothing fails. Never under
``torch.compile``. A bar appears after half a second, so quick work stays silent
even when asked.

* planning: work done (or seconds, with ``max_time``), and the best tree's cost so
  far as ``log10 FLOPs``;
* sliced execution: slices done, and tqdm's estimate of the time left.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from tensorops._config import config
from tensorops._einsum.planning._hyper import Effort
from tensorops._staging import for_compiler

__all__ = ["ProgressEffort", "enabled", "planning_effort", "progress_bar", "with_progress"]

_REQUESTED: ContextVar[bool | None] = ContextVar("tensorops_progress", default=None)
_DELAY = 0.5  # seconds before a bar appears
_EVERY = 64  # budget checks between two updates of a planning bar


def enabled() -> bool:
    """Whether progress is asked for here: by the call, else by ``tops.config.progress``."""
    if for_compiler():
        return False
    asked = _REQUESTED.get()
    return config.progress if asked is None else asked


def with_progress(progress: bool | None, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` with a call's ``progress=`` in effect (None: the config decides).

    Under ``torch.compile`` it only calls ``fn``: context variables do not trace.

    Examples:
        >>> with_progress(True, enabled)
        True
    """
    if progress is None or for_compiler():
        return fn(*args)
    token = _REQUESTED.set(progress)
    try:
        return fn(*args)
    finally:
        _REQUESTED.reset(token)


def progress_bar(total: float, description: str, unit: str) -> Any:
    """A tqdm bar if progress is asked for and tqdm is installed, else None."""
    if not enabled():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=description, unit=unit, delay=_DELAY, leave=False)


class ProgressEffort(Effort):
    """An `Effort` that shows the search's progress and best cost on a bar.

    Args:
        work: As for `Effort`.
        deadline: As for `Effort`; the bar then counts seconds, else work units.
        bar: The tqdm bar.
    """

    __slots__ = ("bar", "best", "checks", "start")

    def __init__(self, work: int, deadline: float | None, bar: Any) -> None:
        super().__init__(work, deadline)
        self.bar, self.best, self.checks = bar, 0, 0
        self.start = time.perf_counter()

    def left(self) -> int:
        """As `Effort.left`; every few calls, the bar moves."""
        self.checks += 1
        if self.checks % _EVERY == 0:
            self.show()
        return super().left()

    def show(self) -> None:
        """Move the bar to the work (or time) spent."""
        if self.deadline is None:
            done: float = min(self.spent, self.work)
        else:
            done = round(min(time.perf_counter() - self.start, self.bar.total), 1)
        self.bar.update(done - self.bar.n)

    def found(self, cost: int) -> None:
        """Show ``cost`` if it is the cheapest tree so far."""
        if cost > 0 and (not self.best or cost < self.best):
            self.best = cost
            self.bar.set_postfix_str(f"best log10 FLOPs {math.log10(cost):.3f}", refresh=False)


@contextmanager
def planning_effort(work: int, deadline: float | None, description: str) -> Iterator[Effort]:
    """The budget of a search, with a bar when progress is asked for (closed at the end).

    Examples:
        >>> with planning_effort(100, None, "hyper") as effort:
        ...     type(effort).__name__, effort.left()
        ('Effort', 100)
    """
    total = work if deadline is None else round(max(0.0, deadline - time.perf_counter()), 1)
    bar = progress_bar(total, description, "work" if deadline is None else "s")
    if bar is None:
        yield Effort(work, deadline)
        return
    effort = ProgressEffort(work, deadline, bar)
    try:
        yield effort
    finally:
        effort.show()
        bar.close()
