"""Settings of tensorops: how einsum plans when a call does not say.

``tops.config`` is one object. Reading ``tops.config.strategy`` gives the value in
effect here; assigning it sets the process-wide default; ``with tops.config(...)``
overrides it for the current thread or async task only (a `contextvars`
variable, so threads and tasks never see each other's overrides).
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Callable
from contextvars import ContextVar, Token
from types import TracebackType
from typing import Any, NamedTuple

from tensorops._errors import ArgumentError, unknown_option
from tensorops._staging import is_compiling
from tensorops._types import PLANNERS

__all__ = [
    "Config",
    "Settings",
    "check_checks",
    "check_max_time",
    "check_memory_limit",
    "check_minimize",
    "check_plan_store",
    "check_progress",
    "check_strategy",
    "config",
]


class Settings(NamedTuple):
    """What einsum's plan depends on besides the equation and the shapes (hashable).

    Attributes:
        strategy: a strategy name, or an explicit path (a tuple of tuples).
        memory_limit: the most elements an intermediate may have, or None.
        max_time: the seconds ``"hyper"`` may search, or None (a fixed amount of work).
        minimize: ``"flops"``, or ``"combo"`` for FLOPs plus memory writes.
        semiring: what the contraction adds and multiplies: ``"sum"`` (sums of
            products), ``"logsumexp"``, ``"max"`` or ``"min"`` (a keyword of each
            call, not a setting of ``tops.config``).
    """

    strategy: Any
    memory_limit: int | None
    max_time: float | None
    minimize: str
    semiring: str = "sum"


#: The values ``minimize`` takes.
MINIMIZE = ("flops", "combo")


class _Unset:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<unset>"


_UNSET: Any = _Unset()

#: The overrides of the enclosing ``with config(...)`` blocks, one per field of
#: `Settings` but the semiring, each ``_UNSET`` when no block set it.
_OVERRIDES: ContextVar[tuple[Any, ...] | None] = ContextVar("tensorops_config", default=None)
#: How many ``with config(...)`` blocks are open in the whole process: while none is,
#: the defaults are in effect everywhere and no context variable needs reading.
_OPEN = [0]
_OPEN_LOCK = threading.Lock()


def check_strategy(strategy: Any) -> str:
    """Return ``strategy`` if it names a planner, else raise listing the valid ones."""
    if not isinstance(strategy, str) or strategy not in PLANNERS:
        hint = "or pass an explicit path, e.g. strategy=[(0, 1), (0, 1)], to einsum"
        raise unknown_option("einsum strategy", strategy, PLANNERS, hint=hint)
    return strategy


def check_memory_limit(memory_limit: Any) -> int | None:
    """Return ``memory_limit`` if it is None or a positive int, else raise."""
    if memory_limit is None:
        return None
    if isinstance(memory_limit, bool) or not isinstance(memory_limit, int) or memory_limit < 1:
        raise ArgumentError(
            f"memory_limit must be a positive int (a number of elements) or None, got "
            f"{memory_limit!r}",
            hint="a size in bytes ('2GB') is taken per call, where the dtype is known",
        )
    return memory_limit


def check_max_time(max_time: Any) -> float | None:
    """``max_time`` as a float, or None; anything but a positive number is an error."""
    if max_time is None:
        return None
    if isinstance(max_time, bool) or not isinstance(max_time, (int, float)) or max_time <= 0:
        raise ArgumentError(f"max_time must be a positive number of seconds, got {max_time!r}")
    return float(max_time)


def check_minimize(minimize: Any) -> str:
    """``minimize`` checked to be one of `MINIMIZE`."""
    if minimize not in MINIMIZE:
        raise unknown_option("minimize", minimize, MINIMIZE)
    return str(minimize)


def check_progress(progress: Any) -> bool:
    """``progress`` checked to be a bool."""
    if not isinstance(progress, bool):
        raise ArgumentError(f"progress must be True or False, got {progress!r}")
    return progress


def check_checks(checks: Any) -> bool:
    """``checks`` checked to be a bool."""
    if not isinstance(checks, bool):
        raise ArgumentError(f"checks must be True or False, got {checks!r}")
    return checks


#: The environment variable that turns `tops.check` off: ``TENSOROPS_CHECKS=0``.
CHECKS_VARIABLE = "TENSOROPS_CHECKS"


def _checks_from_environment() -> bool:
    """Whether shape checks run by default: False where ``TENSOROPS_CHECKS`` is 0 / false / off."""
    value = os.environ.get(CHECKS_VARIABLE, "").strip().lower()
    return value not in ("0", "false", "off", "no")


def check_plan_store(store: Any) -> Any:
    """``plan_store`` checked: None, a bool, a directory or a ``PlanStore``."""
    if store is None or isinstance(store, (bool, str, os.PathLike)) or hasattr(store, "load"):
        return store
    raise ArgumentError(
        f"plan_store must be True, False, None or a directory, got {type(store).__name__}",
        hint="tops.config.plan_store = True keeps plans in the platform's cache directory",
    )


#: Settings that do not change a plan, so not in `Settings`: name -> (check, default).
_EXTRAS: dict[str, tuple[Callable[[Any], Any], Any]] = {
    "progress": (check_progress, False),
    "plan_store": (check_plan_store, None),
    "checks": (check_checks, _checks_from_environment()),
}
_EXTRA_OVERRIDES: ContextVar[dict[str, Any] | None] = ContextVar("tensorops_extra", default=None)

_CHECKS: tuple[Callable[[Any], Any], ...] = (
    check_strategy,
    check_memory_limit,
    check_max_time,
    check_minimize,
)


class _Override:
    """The context manager returned by ``config(...)``."""

    __slots__ = ("_entered", "_extra", "_extra_token", "_token", "_values")

    def __init__(self, values: tuple[Any, ...], extra: dict[str, Any]) -> None:
        self._values, self._extra = values, extra
        self._token: Token[tuple[Any, ...] | None] | None = None
        self._extra_token: Token[dict[str, Any] | None] | None = None
        self._entered = False

    def __del__(self) -> None:
        # ``tops.config(strategy=...)`` as a statement: dropped at once, here, unused
        if not self._entered:
            warnings.warn(
                "tops.config(...) changes nothing outside a with block: write "
                "'with tops.config(...):' to override for a block, or assign "
                "'tops.config.strategy = ...' to set the default",
                RuntimeWarning,
                stacklevel=2,
            )

    def __enter__(self) -> Config:
        self._entered = True
        outer = _OVERRIDES.get()
        values = self._values
        if outer is not None:
            values = tuple(o if v is _UNSET else v for v, o in zip(values, outer, strict=True))
        self._token = _OVERRIDES.set(values)
        self._extra_token = _EXTRA_OVERRIDES.set({**(_EXTRA_OVERRIDES.get() or {}), **self._extra})
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
        assert self._extra_token is not None
        _EXTRA_OVERRIDES.reset(self._extra_token)
        self._token = self._extra_token = None
        with _OPEN_LOCK:
            _OPEN[0] -= 1


class Config:
    """The settings object ``tops.config``; see the module docstring.

    Attributes:
        strategy: The einsum planning strategy: ``"auto"`` (the default),
            ``"optimal"``, ``"dp"``, ``"greedy"`` or ``"hyper"``.
        memory_limit: The most elements an einsum intermediate may have, or None
            (the default) for no limit.
        max_time: The seconds ``"hyper"`` may search, or None (the default: a
            fixed amount of work).
        minimize: What the planner minimises: ``"flops"`` (the default), or
            ``"combo"``, FLOPs plus memory writes.
        progress: Whether long planning (``hyper``, budgeted ``auto``) and
            sliced contractions show a progress bar (needs ``tqdm``; default False).
        plan_store: Where plans are kept across processes: None (the default:
            the environment variable ``TENSOROPS_PLAN_STORE`` decides), False (no
            store), True (the platform's cache directory), a directory or a
            ``tops.PlanStore``.
        checks: Whether `tops.check` verifies a single array (default True, or
            False where the environment variable ``TENSOROPS_CHECKS`` is ``0`` when
            tensorops is imported); the lengths of several arrays are always solved.

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

    __slots__ = ("_default", "_extra_default")

    def __init__(self) -> None:
        self._default = Settings("auto", None, None, "flops")
        self._extra_default = {name: default for name, (_, default) in _EXTRAS.items()}

    def _extra(self, name: str) -> Any:
        if _OPEN[0] and not is_compiling():
            overrides = _EXTRA_OVERRIDES.get()
            if overrides is not None and name in overrides:
                return overrides[name]
        return self._extra_default[name]

    @property
    def progress(self) -> bool:
        """Whether progress bars show; assigning sets the process-wide default."""
        return bool(self._extra("progress"))

    @progress.setter
    def progress(self, value: bool) -> None:
        self._set(progress=value)

    @property
    def checks(self) -> bool:
        """Whether `tops.check` verifies single arrays; assigning sets the process-wide default."""
        if _OPEN[0]:
            return bool(self._extra("checks"))
        return bool(self._extra_default["checks"])

    @checks.setter
    def checks(self, value: bool) -> None:
        self._set(checks=value)

    @property
    def plan_store(self) -> Any:
        """The plan store setting in effect; assigning sets the process-wide default."""
        return self._extra("plan_store")

    @plan_store.setter
    def plan_store(self, value: Any) -> None:
        self._set(plan_store=value)

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
        # the overrides are the settings of tops.config: every field but the semiring
        defaults: tuple[Any, ...] = self._default[: len(_CHECKS)]
        return Settings(
            *(d if v is _UNSET else v for v, d in zip(overrides, defaults, strict=True))
        )

    @property
    def strategy(self) -> str:
        """The einsum strategy in effect; assigning sets the process-wide default."""
        return str(self.current().strategy)

    @strategy.setter
    def strategy(self, value: str) -> None:
        self._set(strategy=value)

    @property
    def memory_limit(self) -> int | None:
        """The einsum memory limit in effect; assigning sets the process-wide default."""
        return self.current().memory_limit

    @memory_limit.setter
    def memory_limit(self, value: int | None) -> None:
        self._set(memory_limit=value)

    @property
    def max_time(self) -> float | None:
        """The time budget of ``"hyper"`` in effect; assigning sets the process-wide default."""
        return self.current().max_time

    @max_time.setter
    def max_time(self, value: float | None) -> None:
        self._set(max_time=value)

    @property
    def minimize(self) -> str:
        """The planner's objective in effect; assigning sets the process-wide default."""
        return self.current().minimize

    @minimize.setter
    def minimize(self, value: str) -> None:
        self._set(minimize=value)

    def _set(self, **field: Any) -> None:
        ((name, value),) = field.items()
        check = _EXTRAS[name][0] if name in _EXTRAS else _CHECKS[Settings._fields.index(name)]
        try:
            checked = check(value)
        except ArgumentError as error:
            raise error.with_context(op="config") from None
        if name in _EXTRAS:
            self._extra_default = {**self._extra_default, name: checked}
        else:
            self._default = self._default._replace(**{name: checked})

    def __call__(
        self,
        *,
        strategy: Any = _UNSET,
        memory_limit: Any = _UNSET,
        max_time: Any = _UNSET,
        minimize: Any = _UNSET,
        progress: Any = _UNSET,
        plan_store: Any = _UNSET,
        checks: Any = _UNSET,
    ) -> _Override:
        """Override settings for a ``with`` block in this thread / task; checked now.

        Used outside a ``with`` statement it does nothing, and says so with a
        RuntimeWarning when the unused override is dropped.

        Raises:
            TensorOpsError: An unknown strategy or objective, a bad limit or time.
        """
        values = (strategy, memory_limit, max_time, minimize)
        given = {"progress": progress, "plan_store": plan_store, "checks": checks}
        extra = {name: value for name, value in given.items() if value is not _UNSET}
        try:
            for value, check in zip(values, _CHECKS, strict=True):
                if value is not _UNSET:
                    check(value)
            for name, value in extra.items():
                _EXTRAS[name][0](value)
        except ArgumentError as error:
            raise error.with_context(op="config") from None
        return _Override(values, extra)

    def __repr__(self) -> str:
        settings = self.current()._asdict()
        del settings["semiring"]  # a keyword of each call, not a setting
        shown = ", ".join(f"{k}={v!r}" for k, v in settings.items())
        return f"config({shown})"


config = Config()
