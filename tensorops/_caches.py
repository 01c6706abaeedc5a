"""Every cache of tensorops, found at run time, cleared and inspected in one place.

tensorops memoizes parsed patterns, bound executors, pack terms and einsum plans
with `functools.lru_cache`. Each cache is bounded (its ``maxsize`` is
finite), so memory stays flat however many distinct shapes a program uses. The
functions here find the caches by walking the loaded ``tensorops`` modules for
module-level objects with ``cache_info`` and ``cache_clear``; a cache added to
any module is covered without being registered.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any, NamedTuple, Protocol, TypeGuard

__all__ = ["cache_info", "clear_caches"]

_PACKAGE = "tensorops"


class _Info(NamedTuple):
    hits: int
    misses: int
    maxsize: int | None
    currsize: int


class _Cached(Protocol):
    def cache_info(self) -> Any: ...
    def cache_clear(self) -> None: ...


def _is_cache(value: object) -> TypeGuard[_Cached]:
    """Whether `value` is a memoized function (a type with those methods is not one)."""
    return (
        callable(getattr(value, "cache_clear", None))
        and callable(getattr(value, "cache_info", None))
        and not isinstance(value, type)
    )


def _caches() -> Iterator[tuple[str, _Cached]]:
    """Yield ``("module.name", cache)`` once per cache of the loaded tensorops modules."""
    found: dict[int, tuple[str, _Cached]] = {}
    prefix = _PACKAGE + "."
    modules = [
        (name, module)
        for name, module in sys.modules.copy().items()
        if module is not None and (name == _PACKAGE or name.startswith(prefix))
    ]
    for module_name, module in sorted(modules, key=lambda item: item[0]):
        for attr, value in sorted(vars(module).copy().items()):
            if not _is_cache(value):
                continue
            name = f"{module_name}.{attr}"
            previous = found.get(id(value))
            # A cache re-imported elsewhere is named after the module that defines it.
            if previous is None or getattr(value, "__module__", None) == module_name:
                found[id(value)] = (name, value)
    yield from sorted(found.values(), key=lambda item: item[0])


def clear_caches() -> None:
    """Empty every cache of tensorops: patterns, recipes, pack terms and einsum plans.

    Results never depend on the caches, so clearing them only costs the time to
    rebuild what the next calls need. Useful to measure cold-start costs or to
    release memory after a burst of distinct shapes.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> _ = tops.rearrange(np.zeros((2, 3)), "a b -> b a")
        >>> tops.clear_caches()
        >>> all(currsize == 0 for _, _, _, currsize in tops.cache_info().values())
        True
    """
    for _, cache in _caches():
        cache.cache_clear()


def cache_info() -> dict[str, tuple[int, int, int | None, int]]:
    """Statistics of every cache of tensorops, by its dotted name.

    Returns:
        A dict from ``"module.function"`` to ``(hits, misses, maxsize, currsize)``,
        sorted by name. Every ``maxsize`` is a finite number: the caches are bounded.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> tops.clear_caches()
        >>> _ = tops.rearrange(np.zeros((2, 3)), "a b -> b a")
        >>> _ = tops.rearrange(np.ones((2, 3)), "a b -> b a")
        >>> info = tops.cache_info()
        >>> info["tensorops._grammar.parse_pattern"].currsize
        1
        >>> all(maxsize is not None for _, _, maxsize, _ in info.values())
        True
    """
    result: dict[str, tuple[int, int, int | None, int]] = {}
    for name, cache in _caches():
        hits, misses, maxsize, currsize = cache.cache_info()
        result[name] = _Info(int(hits), int(misses), maxsize, int(currsize))
    return result
