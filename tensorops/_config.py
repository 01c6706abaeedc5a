"""Settings of tensorops: the einsum planning strategy and memory limit.

``tops.config`` is one object. Reading ``tops.config.strategy`` gives the value in
effect here; assigning it sets the process-wide default; ``with tops.config(...)``
overrides it for the current thread or async task only (a :mod:`contextvars`
variable, so threads and tasks never see each other's overrides).
"""

from __future__ import annotations

import threading
from contextvars import ContextVar, Token
from types import TracebackType
from typing import Any, NamedTuple

from tensorops._errors import ArgumentError, unknown_option
from tensorops._tracing import is_compiling

__all__ = ["Config", "Settings", "config"]


class Settings(NamedTuple):
    """The settings in effect: what einsum uses when a call does not say."""

    strategy: str
    memory_limit: int | None


class _Unset:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<unset>"


_UNSET: Any = _Unset()

#: The overrides of the enclosing ``with config(...)`` blocks: (strategy, memory_limit),
#: each ``_UNSET`` when that block did not set it.
_OVERRIDES: ContextVar[tuple[Any, Any] | None] = ContextVar("tensorops_config", default=None)
#: How many ``with config(...)`` blocks are open in the whole process: while none is,
#: the defaults are in effect everywhere and no context variable needs reading.
_OPEN = [0]
_OPEN_LOCK = threading.Lock()


def check_strategy(strategy: Any) -> str:
    """Return ``strategy`` if it names a planner, else raise listing the valid ones."""
    # Imported here: the einsum package reads this module's `config` at import time.
    from tensorops._einsum._paths import STRATEGIES

    if not isinstance(strategy, str) or strategy not in STRATEGIES:
        hint = "or pass an explicit path, e.g. strategy=[(0, 1), (0, 1)], to einsum"
        raise unknown_option("einsum strategy", strategy, STRATEGIES, hint=hint).with_context(
            op="config"
        )
    return strategy


def check_memory_limit(memory_limit: Any, op: str | None = "config") -> int | None:
    """Return ``memory_limit`` if it is None or a positive int, else raise."""
    if memory_limit is None:
        return None
    if isinstance(memory_limit, bool) or not isinstance(memory_limit, int) or memory_limit < 1:
        raise ArgumentError(
            f"memory_limit must be a positive int (a number of elements) or None, got "
            f"{memory_limit!r}",
            op=op,
        )
    return memory_limit


class _Override:
    """The context manager returned by ``config(...)``."""

    __slots__ = ("_token", "_values")

    def __init__(self, values: tuple[Any, Any]) -> None:
        self._values = values
        self._token: Token[tuple[Any, Any] | None] | None = None

    def __enter__(self) -> Config:
        outer = _OVERRIDES.get()
        strategy, memory_limit = self._values
        if outer is not None:
            strategy = outer[0] if strategy is _UNSET else strategy
            memory_limit = outer[1] if memory_limit is _UNSET else memory_limit
        self._token = _OVERRIDES.set((strategy, memory_limit))
        with _OPEN_LOCK:
            _OPEN[0] += 1
        return config

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        assert self._token is not None
        _OVERRIDES.reset(self._token)
        self._token = None
        with _OPEN_LOCK:
            _OPEN[0] -= 1


class Config:
    """The settings object ``tops.config``; see the module docstring.

    Attributes:
        strategy: The einsum planning strategy: ``"auto"`` (the default),
            ``"optimal"``, ``"dp"`` or ``"greedy"``.
        memory_limit: The most elements an einsum intermediate may have, or None
            (the default) for no limit.

    Examples:
        >>> import tensorops as tops
        >>> tops.config.strategy
        'auto'
        >>> with tops.config(strategy="greedy", memory_limit=10**6):
        ...     (tops.config.strategy, tops.config.memory_limit)
        ('greedy', 1000000)
        >>> tops.config.strategy
        'auto'
    """

    __slots__ = ("_default",)

    def __init__(self) -> None:
        self._default = Settings("auto", None)

    def current(self) -> Settings:
        """The settings in effect in this thread / task.

        Inside ``torch.compile``d code the process-wide defaults are used: the
        compiler cannot read context variables.
        """
        if not _OPEN[0] or is_compiling():
            return self._default
        overrides = _OVERRIDES.get()
        if overrides is None:
            return self._default
        strategy, memory_limit = overrides
        default = self._default
        return Settings(
            default.strategy if strategy is _UNSET else strategy,
            default.memory_limit if memory_limit is _UNSET else memory_limit,
        )

    @property
    def strategy(self) -> str:
        """The einsum strategy in effect; assigning sets the process-wide default."""
        return self.current().strategy

    @strategy.setter
    def strategy(self, value: str) -> None:
        self._default = self._default._replace(strategy=check_strategy(value))

    @property
    def memory_limit(self) -> int | None:
        """The einsum memory limit in effect; assigning sets the process-wide default."""
        return self.current().memory_limit

    @memory_limit.setter
    def memory_limit(self, value: int | None) -> None:
        self._default = self._default._replace(memory_limit=check_memory_limit(value))

    def __call__(self, *, strategy: Any = _UNSET, memory_limit: Any = _UNSET) -> _Override:
        """Override settings for a ``with`` block in this thread / task; checked now.

        Raises:
            TensorOpsError: An unknown strategy or a bad memory limit.
        """
        if strategy is not _UNSET:
            check_strategy(strategy)
        if memory_limit is not _UNSET:
            check_memory_limit(memory_limit)
        return _Override((strategy, memory_limit))

    def __repr__(self) -> str:
        current = self.current()
        return f"config(strategy={current.strategy!r}, memory_limit={current.memory_limit!r})"


config = Config()
