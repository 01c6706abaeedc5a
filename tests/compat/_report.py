"""The compatibility suites' summary: one line per peer, from one process or many.

Registered by ``tests/conftest.py`` so that it is loaded in every pytest process,
the pytest-xdist controller included (which never collects, so never loads
``tests/compat/conftest.py``). Collection (in ``tests/compat/conftest.py``)
counts the deselected tests; under pytest-xdist each worker hands its counts to
the controller when it finishes. The run ends with one line per peer: passed /
failed / error / skipped / deselected.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

HERE = Path(__file__).parent
_OUTCOMES = ("passed", "failed", "error", "skipped", "deselected")
DESELECTED_BY_PEER = pytest.StashKey[Counter[str]]()
STALE = pytest.StashKey[set[str]]()


#: The test modules here that are plain pytest modules, not a peer's suite.
PLAIN_MODULES = ("test_clients.py",)


def is_suite_file(path: Path) -> bool:
    """Whether `path` is one of the suite files here (``test_<peer>.py``)."""
    if path.name in PLAIN_MODULES:
        return False
    return path.parent == HERE and path.name.startswith("test_") and path.suffix == ".py"


def peer_of(nodeid: str, config: pytest.Config) -> str | None:
    """The peer whose suite a node id belongs to ("einops" for test_einops.py), or None."""
    path = config.rootpath / nodeid.partition("::")[0]
    return path.stem.removeprefix("test_") if is_suite_file(path) else None


def pytest_configure(config: pytest.Config) -> None:
    config.stash[DESELECTED_BY_PEER] = Counter()
    config.stash[STALE] = set()
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
            counter = self.config.stash[DESELECTED_BY_PEER]
            counter[peer] = max(counter[peer], n)
        self.config.stash[STALE].update(output.get("tensorops_stale", ()))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """On an xdist worker, hand the deselection counts and stale keys to the controller."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["tensorops_deselected"] = dict(session.config.stash[DESELECTED_BY_PEER])
        output["tensorops_stale"] = sorted(session.config.stash[STALE])


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    counts: dict[str, Counter[str]] = {}
    for peer, n in config.stash[DESELECTED_BY_PEER].items():
        counts.setdefault(peer, Counter())["deselected"] = n
    for category, reports in terminalreporter.stats.items():
        for report in reports:
            peer = peer_of(report.nodeid, config) if isinstance(report, pytest.TestReport) else None
            if peer is not None and (report.when == "call" or not report.passed):
                counts.setdefault(peer, Counter())[category or report.outcome] += 1
    if not counts and not config.stash[STALE]:
        return
    terminalreporter.section("compatibility suites")
    for peer, outcomes in sorted(counts.items()):
        line = ", ".join(f"{outcomes[k]} {k}" for k in _OUTCOMES if outcomes[k])
        terminalreporter.line(f"{peer}: {line}")
    for key in sorted(config.stash[STALE]):
        terminalreporter.line(f"tests/compat/deselected.py names a test that does not exist: {key}")
