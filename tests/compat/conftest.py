"""The pytest plugin behind the compatibility suites (see tests/compat/__init__.py).

* collects each ``test_<peer>.py`` here as the peer's installed test modules,
* marks their tests ``compat``, adds the suite's warning filters and deselects the
  tests named in :data:`tests.compat.deselected.DESELECTED`,
* sets the names a suite lists in ``patch_during_tests`` while each of its tests runs,
* reports a failure as the exception (and its causes) plus the peer's test line, unless
  ``--tb`` is given: pytest's own styles parse the source of every frame, about 0.15 s a
  failure (17 minutes for 7,400 failures of opt_einsum's suite),
* ends the run with one line per peer: passed / failed / error / skipped / deselected.
"""

from __future__ import annotations

import functools
import linecache
import os
import traceback
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TypeVar

import pytest

from tests.compat._harness import InstalledModule, Suite, SuiteFile
from tests.compat.deselected import DESELECTED

# The one-line switch: True runs the suites in every `python -m pytest`. Until then they run
# with TENSOROPS_COMPAT=1, or when tests/compat (or a file in it) is named on the command line.
RUN_IN_DEFAULT_SUITE = True

HERE = Path(__file__).parent
_OUTCOMES = ("passed", "failed", "error", "skipped", "deselected")
_deselected = pytest.StashKey[Counter[str]]()
_stale = pytest.StashKey[set[str]]()
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


def _is_suite_file(path: Path) -> bool:
    return path.parent == HERE and path.name.startswith("test_") and path.suffix == ".py"


def _peer(nodeid: str, config: pytest.Config) -> str | None:
    """The peer whose suite a node id belongs to ("einops" for test_einops.py), or None."""
    path = config.rootpath / nodeid.partition("::")[0]
    return path.stem.removeprefix("test_") if _is_suite_file(path) else None


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


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_deselected] = Counter()
    config.stash[_stale] = set()
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_FromWorkers(config), "tensorops-compat-xdist")


class _FromWorkers:
    """Under pytest-xdist the workers collect and deselect: they report it here.

    Every worker collects every test, so each reports the same counts; the
    controller keeps the largest seen (they are equal).
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: object, error: object) -> None:
        output = getattr(node, "workeroutput", {})
        for peer, n in output.get("tensorops_deselected", {}).items():
            counter = self.config.stash[_deselected]
            counter[peer] = max(counter[peer], n)
        self.config.stash[_stale].update(output.get("tensorops_stale", ()))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On an xdist worker, hand the deselection counts and stale keys to the controller."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["tensorops_deselected"] = dict(session.config.stash[_deselected])
        output["tensorops_stale"] = sorted(session.config.stash[_stale])


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if _is_suite_file(collection_path) and not _enabled(config):
        return True
    return None


def pytest_pycollect_makemodule(
    module_path: Path, parent: pytest.Collector
) -> pytest.Module | None:
    if _is_suite_file(module_path):
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
            config.stash[_deselected][_peer(item.nodeid, config) or ""] += 1
    config.stash[_stale].update(
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


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    counts: dict[str, Counter[str]] = {}
    for peer, n in config.stash[_deselected].items():
        counts.setdefault(peer, Counter())["deselected"] = n
    for category, reports in terminalreporter.stats.items():
        for report in reports:
            peer = _peer(report.nodeid, config) if isinstance(report, pytest.TestReport) else None
            if peer is not None and (report.when == "call" or not report.passed):
                counts.setdefault(peer, Counter())[category or report.outcome] += 1
    if not counts and not config.stash[_stale]:
        return
    terminalreporter.section("compatibility suites")
    for peer, outcomes in sorted(counts.items()):
        line = ", ".join(f"{outcomes[k]} {k}" for k in _OUTCOMES if outcomes[k])
        terminalreporter.line(f"{peer}: {line}")
    for key in sorted(config.stash[_stale]):
        terminalreporter.line(f"tests/compat/deselected.py names a test that does not exist: {key}")
