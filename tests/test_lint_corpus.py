"""The linter on real-looking model code: no false positive, and the seeded mistakes found.

Every call of the corpus (tests/lint_corpus) whose pattern is a constant runs on arrays
that fit it. Then each pattern is mutated in the ways of `tests._lint_runs.mutations`,
and each mutation runs against the library the call names, which decides what it is:

* it still runs on the call's arrays: it must never be reported;
* it fails on them, but runs on arrays that fit the mutated pattern (a rank or a
  length no longer fits: a mistake of the arrays, which the code does not show): it
  must not be reported either, the linter never guesses;
* it fails on any arrays: at least 99% of these must be reported.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from tensorops._lint.linter import lint_source
from tests._lint_runs import is_runnable, mutations, read_calls, rewritten, run

CORPUS = Path(__file__).parent / "lint_corpus"
FILES = sorted(CORPUS.glob("*.py"))


def _source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_no_finding_in_the_corpus(path: Path) -> None:
    assert lint_source(_source(path)) == []


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_corpus_call_runs(path: Path) -> None:
    calls = [call for call in read_calls(_source(path)) if is_runnable(call)]
    assert calls
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the frameworks' own deprecations
        failed = [(call.node.lineno, call.pattern, run(call)) for call in calls]
    assert [f for f in failed if f[2] is not None] == []


def _outcomes(path: Path) -> list[tuple[str, bool, bool]]:
    """(description, fails on any arrays, reported) of every mutation of the file's calls."""
    source = _source(path)
    outcomes = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for call in read_calls(source):
            if not is_runnable(call):
                continue
            for mutation in mutations(call):
                fails = run(call, mutation.pattern, mutation.reduction) is not None
                fails = fails and run(call, *mutation[1:], fitting=True) is not None
                reported = bool(lint_source(rewritten(source, call, mutation)))
                where = f"{path.name}:{call.node.lineno} {mutation.kind}: {mutation.pattern!r}"
                outcomes.append((where, fails, reported))
    return outcomes


def test_seeded_mistakes_are_found_and_nothing_that_runs_is_reported() -> None:
    outcomes = [outcome for path in FILES for outcome in _outcomes(path)]
    failing = [o for o in outcomes if o[1]]
    false_alarms = [o[0] for o in outcomes if o[2] and not o[1]]
    missed = [o[0] for o in failing if not o[2]]
    assert false_alarms == []
    assert len(failing) >= 250
    assert len(missed) <= 0.01 * len(failing), missed
