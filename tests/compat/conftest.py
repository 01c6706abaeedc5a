"""The pytest plugin behind the compatibility suites (see tests/compat/__init__.py).

* collects each ``test_<peer>.py`` here as the peer's installed test modules,
* marks their tests ``compat``, adds the suite's warning filters and deselects the
  tests named in :data:`tests.compat.deselected.DESELECTED`,
* sets the names a suite lists in ``patch_during_tests`` while each of its tests runs,
* reports a failure as the exception (and its causes) plus the peer's test line, unless
  ``--tb`` is given: pytest's own styles parse the source of every frame, about 0.15 s a
  failure (17 minutes for 7,400 failures of opt_einsum's suite),
* counts what it deselects for the summary of `tests.compat._report`.
"""

from __future__ import annotations

import functools
import linecache
import os
import traceback
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TypeVar

import pytest

from tests.compat._harness import InstalledModule, Suite, SuiteFile
from tests.compat._report import DESELECTED_BY_PEER, STALE, is_suite_file, peer_of
from tests.compat.deselected import DESELECTED

# The one-line switch: True runs the suites in every `python -m pytest`. Until then they run
# with TENSOROPS_COMPAT=1, or when tests/compat (or a file in it) is named on the command line.
RUN_IN_DEFAULT_SUITE = True

HERE = Path(__file__).parent
V = TypeVar("V")


def _enabled(config: pytest.Config) -> bool:
    if RUN_IN_DEFAULT_SUITE or os.environ.get("TENSOROPS_COMPAT") == "1":
        return True
    start = config.invocation_params.dir
    for arg in config.args:
        path = (start / arg.partition("::")[0]).resolve()
        if path == HERE or HERE in path.parents:
            return True
    return False


def _lookup(table: Mapping[str, V], item: pytest.Item, suite_file: SuiteFile) -> V | None:
    """The entry for an item: its own id, its id without parameters, its class, its module."""
    own_id = item.nodeid.removeprefix(suite_file.nodeid + "::")
    name = own_id.partition("[")[0]
    parts = name.split("::")
    for key in (own_id, *("::".join(parts[:n]) for n in range(len(parts), 0, -1))):
        if key in table:
            return table[key]
    return None


def _missing(key: str, module: InstalledModule) -> bool:
    """Whether a table key names nothing in the loaded module (a stale entry)."""
    obj: object = module.obj
    for attribute in key.partition("[")[0].split("::")[1:]:
        if not hasattr(obj, attribute):
            return True
        obj = getattr(obj, attribute)
    return False


def _brief_failure(item: pytest.Item, excinfo: pytest.ExceptionInfo[BaseException]) -> str:
    """The exception and its causes, then the peer's test line; parses no source."""
    lines, test_file, tb = [excinfo.exconly()], str(item.path), excinfo.tb
    error: BaseException | None = excinfo.value
    while error is not None:
        error = error.__cause__ or (None if error.__suppress_context__ else error.__context__)
        if error is not None:
            lines.append("caused by " + "".join(traceback.format_exception_only(error)).strip())
    where = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == test_file:
            where = tb.tb_lineno
        tb = tb.tb_next
    if where is not None:
        lines.append(f"at {test_file}:{where}: {linecache.getline(test_file, where).strip()}")
    return "\n".join(lines)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if is_suite_file(collection_path) and not _enabled(config):
        return True
    return None


def pytest_pycollect_makemodule(
    module_path: Path, parent: pytest.Collector
) -> pytest.Module | None:
    if is_suite_file(module_path):
        return SuiteFile.from_parent(parent, path=module_path)
    return None


def _suite_items(items: list[pytest.Item]) -> Iterator[tuple[pytest.Item, SuiteFile]]:
    for item in items:
        suite_file = next((n for n in item.listchain() if isinstance(n, SuiteFile)), None)
        if suite_file is not None:
            yield item, suite_file


@pytest.hookimpl(tryfirst=True)  # before -m / -k select: they see the `compat` mark
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    dropped: list[pytest.Item] = []
    modules: dict[str, InstalledModule] = {}
    brief = config.option.tbstyle == "auto" and not config.option.fulltrace
    for item, suite_file in _suite_items(items):
        module = next(n for n in item.listchain() if isinstance(n, InstalledModule))
        modules[module.name] = module
        item.add_marker(pytest.mark.compat)
        if brief:
            item.repr_failure = functools.partial(_brief_failure, item)  # type: ignore[method-assign]
        for spec in _lookup(suite_file.obj.SUITE.filterwarnings, item, suite_file) or ():
            item.add_marker(pytest.mark.filterwarnings(spec))
        if _lookup(DESELECTED, item, suite_file) is not None:
            dropped.append(item)
            config.stash[DESELECTED_BY_PEER][peer_of(item.nodeid, config) or ""] += 1
    config.stash[STALE].update(
        key
        for key in DESELECTED
        if key.partition("::")[0] in modules and _missing(key, modules[key.partition("::")[0]])
    )
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        gone = set(dropped)
        items[:] = [item for item in items if item not in gone]


@pytest.fixture(autouse=True)
def _patched_peer(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Set the names the suite patches in the peer itself, for this test only."""
    suite_file = next((n for n in request.node.listchain() if isinstance(n, SuiteFile)), None)
    if suite_file is None:
        return
    suite: Suite = suite_file.obj.SUITE
    for module_name, names in suite.patch_during_tests.items():
        for name, value in names.items():
            monkeypatch.setattr(f"{module_name}.{name}", value)
