"""A persistent store of contraction plans: a directory of small JSON files, opt-in.

A ``hyper`` search of seconds to minutes is lost when the process ends; with the
store enabled (``tops.config.plan_store = True``, or the environment variable
``TENSOROPS_PLAN_STORE``), every plan made for a strategy name is written to a
directory and read back by later processes that plan the same contraction.

* **Key**: a BLAKE2 hash of the contraction's structure with its axes renamed by first
  appearance (``"ij,jk->ik"`` and ``"ab,bc->ac"`` share an entry), the axis sizes,
  the strategy, the memory limit, ``max_time``, ``minimize`` and `FORMAT`.
* **Writes** are atomic: a temporary file in the directory, then `os.replace`;
  processes writing the same key at once leave one whole entry.
* **Bounded**: after a write, the least recently used entries (by modification time;
  a read touches its entry) are removed until at most `PlanStore.max_entries`
  entries and `PlanStore.max_bytes` bytes remain.
* **Never trusted**: a loaded entry is used only if its key material equals the
  contraction's, its path is valid for the operands, its FLOPs recomputed equal the
  stored ones and the memory limit holds; anything else (truncated, garbage, a
  wrong path) is planned again and rewritten.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from tensorops._config import config
from tensorops._einsum.planning._cost import sliced_contraction_steps

__all__ = ["FORMAT", "PlanStore", "StoreEntry", "active_store", "default_directory"]

FORMAT = 1
"""Version of the entries' format; part of every key, so a new format starts afresh."""

ENV_VAR = "TENSOROPS_PLAN_STORE"
_SUFFIX = ".plan.json"
_OFF = ("", "0", "false", "no", "off")
_ON = ("1", "true", "yes", "on")

StepList = tuple[tuple[int, ...], ...]


class StoreEntry(NamedTuple):
    """One stored plan, as `PlanStore.entries` lists it.

    Attributes:
        key: The hex digest naming the entry.
        operands: How many operands the contraction has.
        strategy: The strategy that made the plan.
        flops: The plan's cost (opt_einsum's count, every slice included).
        bytes: The entry's size on disk.
        modified: Its last use, in seconds since the epoch.
    """

    key: str
    operands: int
    strategy: str
    flops: int
    bytes: int
    modified: float


def default_directory() -> Path:
    """The platform's cache directory for plans.

    ``%LOCALAPPDATA%/tensorops/plans`` on Windows, ``~/Library/Caches/tensorops/plans``
    on macOS, else ``$XDG_CACHE_HOME/tensorops/plans`` (``~/.cache`` when unset).

    Examples:
        >>> default_directory().parts[-2:]
        ('tensorops', 'plans')
    """
    import sys

    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = str(Path.home() / "Library" / "Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tensorops" / "plans"


def _canonical(
    inputs: Sequence[tuple[str, ...]], output: Sequence[str]
) -> tuple[dict[str, int], list[list[int]], list[int]]:
    """Axis numbers by first appearance, and the operands and output as numbers."""
    number: dict[str, int] = {}
    for term in (*inputs, output):
        for axis in term:
            number.setdefault(axis, len(number))
    return number, [[number[a] for a in term] for term in inputs], [number[a] for a in output]


class _Request(NamedTuple):
    """A contraction as the store sees it: its key material and how to rename axes."""

    material: list[Any]
    names: list[str]  # axis number -> the caller's name

    @property
    def digest(self) -> str:
        import json

        try:  # hashlib's own BLAKE2, without the 10 ms hashlib takes to load OpenSSL
            from _blake2 import blake2b
        except ImportError:  # pragma: no cover - a Python built without it
            from hashlib import blake2b
        text = json.dumps(self.material, separators=(",", ":"))
        return blake2b(text.encode(), digest_size=20).hexdigest()


def _request(
    inputs: Sequence[tuple[str, ...]],
    output: Sequence[str],
    sizes: Mapping[str, int],
    settings: Sequence[Any],
) -> _Request:
    number, terms, out = _canonical(inputs, output)
    names = list(number)
    material = [FORMAT, terms, out, [int(sizes[a]) for a in names], list(settings)]
    return _Request(material, names)


class PlanStore:
    """A directory of contraction plans kept across processes (see the module docstring).

    Args:
        directory: Where the entries are (None: `default_directory`); created on
            the first write.
        max_entries: Most entries kept.
        max_bytes: Most bytes the entries take together.

    Examples:
        >>> import tempfile, tensorops as tops
        >>> store = tops.PlanStore(tempfile.mkdtemp())
        >>> with tops.config(plan_store=store.directory):
        ...     plan = tops.einsum_path("ij,jk,kl->il", (7, 3), (3, 9), (9, 5))
        >>> [(entry.operands, entry.strategy) for entry in store.entries()]
        [(3, 'auto')]
        >>> store.clear()
        1
    """

    def __init__(
        self,
        directory: str | os.PathLike[str] | None = None,
        max_entries: int = 4096,
        max_bytes: int = 64 * 2**20,
    ) -> None:
        self.directory = Path(directory) if directory is not None else default_directory()
        self.max_entries, self.max_bytes = max_entries, max_bytes

    def __repr__(self) -> str:
        return f"PlanStore({str(self.directory)!r})"

    def _file(self, key: str) -> Path:
        return self.directory / f"{key}{_SUFFIX}"

    def _files(self) -> list[tuple[float, int, Path]]:
        """(modified, bytes, path) of every entry, oldest first; [] without a directory."""
        found = []
        try:
            with os.scandir(self.directory) as scan:
                for item in scan:
                    if item.name.endswith(_SUFFIX):
                        try:
                            stat = item.stat()
                        except FileNotFoundError:  # removed by another process meanwhile
                            continue
                        found.append((stat.st_mtime, stat.st_size, Path(item.path)))
        except FileNotFoundError:
            return []
        found.sort()
        return found

    def read(self, key: str) -> dict[str, Any] | None:
        """The entry named ``key`` as stored (unchecked), or None if absent or unreadable."""
        import json

        file = self._file(key)
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
            os.utime(file)  # used now: evicted last
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        return data if isinstance(data, dict) else None

    def write(self, key: str, data: dict[str, Any]) -> None:
        """Write an entry atomically, then evict down to the bounds.

        An unwritable directory is ignored: the store is a cache.
        """
        import json
        import tempfile

        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump(data, stream, separators=(",", ":"))
            os.replace(temporary, self._file(key))
        except OSError:
            return
        self.evict()

    def evict(self) -> int:
        """Remove the least recently used entries beyond the bounds; return how many."""
        files = self._files()
        total = sum(size for _, size, _ in files)
        removed = 0
        for _, size, file in files:
            if len(files) - removed <= self.max_entries and total <= self.max_bytes:
                break
            file.unlink(missing_ok=True)  # another process may have evicted it first
            removed += 1
            total -= size
        return removed

    def entries(self) -> list[StoreEntry]:
        """Every entry, least recently used first (unreadable ones with operands 0)."""
        import json

        listed = []
        for modified, size, file in self._files():
            try:
                data = json.loads(file.read_text(encoding="utf-8"))
                operands, strategy = len(data["key"][1]), str(data["key"][4][0])
                flops = int(data["flops"])
            except (OSError, ValueError, KeyError, IndexError, TypeError):
                operands, strategy, flops = 0, "?", 0
            key = file.name[: -len(_SUFFIX)]
            listed.append(StoreEntry(key, operands, strategy, flops, size, modified))
        return listed

    def clear(self) -> int:
        """Remove every entry (and stray temporary files); return how many entries."""
        removed = 0
        for _, _, file in self._files():
            try:
                file.unlink()
                removed += 1
            except FileNotFoundError:
                pass
        for stray in self.directory.glob("*.tmp") if self.directory.is_dir() else ():
            if time.time() - stray.stat().st_mtime > 60:  # not one being written now
                stray.unlink(missing_ok=True)
        return removed

    def load(
        self,
        inputs: Sequence[tuple[str, ...]],
        output: Sequence[str],
        sizes: Mapping[str, int],
        settings: Sequence[Any],
    ) -> tuple[StepList, tuple[str, ...]] | None:
        """The stored path and sliced axes of a contraction, checked; None if none valid."""
        request = _request(inputs, output, sizes, settings)
        data = self.read(request.digest)
        if data is None or data.get("key") != request.material:
            return None
        return _checked(data, request, inputs, output, sizes, settings[1])

    def save(
        self,
        inputs: Sequence[tuple[str, ...]],
        output: Sequence[str],
        sizes: Mapping[str, int],
        settings: Sequence[Any],
        planned: tuple[StepList, tuple[str, ...]],
    ) -> None:
        """Store the path and sliced axes planned for a contraction."""
        request = _request(inputs, output, sizes, settings)
        path, sliced = planned
        number = {name: i for i, name in enumerate(request.names)}
        flops = sliced_contraction_steps(inputs, tuple(output), sizes, path, sliced).flops
        data = {
            "key": request.material,
            "path": [list(step) for step in path],
            "sliced": [number[a] for a in sliced],
            "flops": flops,
        }
        self.write(request.digest, data)


def _checked(
    data: dict[str, Any],
    request: _Request,
    inputs: Sequence[tuple[str, ...]],
    output: Sequence[str],
    sizes: Mapping[str, int],
    memory_limit: int | None,
) -> tuple[StepList, tuple[str, ...]] | None:
    """The entry's path and sliced axes if valid for the contraction, its cost matching."""
    try:
        path = tuple(map(tuple, data["path"]))  # positions checked by the replay
        sliced = tuple(request.names[_index(i)] for i in data["sliced"])
        steps = sliced_contraction_steps(inputs, tuple(output), sizes, path, frozenset(sliced))
        flops = data["flops"]
    except (KeyError, IndexError, TypeError, ValueError):
        return None
    if len(set(sliced)) != len(sliced) or steps.flops != flops or type(flops) is not int:
        return None
    if memory_limit is not None and steps.largest_intermediate > memory_limit:
        return None
    return path, sliced


def _index(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise ValueError(f"not a position: {value!r}")
    return value


def active_store() -> PlanStore | None:
    """The store in use: ``tops.config.plan_store``, else ``TENSOROPS_PLAN_STORE``; or None.

    Either is True (or ``"1"``, ``"true"``...) for `default_directory`, a
    directory, or False / None / ``"0"`` / unset for no store.
    """
    setting = config.plan_store
    if setting is None:
        text = os.environ.get(ENV_VAR, "").strip()
        if text.lower() in _OFF:
            return None
        setting = True if text.lower() in _ON else text
    if setting is False:
        return None
    if isinstance(setting, PlanStore):
        return setting
    return PlanStore(None if setting is True else setting)
