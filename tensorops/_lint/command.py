"""``tensorops lint PATH...``: files, folders and ``-`` (standard input) checked, findings printed.

Exit status: 0 when nothing is found, 1 when something is, 2 on bad use (an unknown
option, a path that does not exist, a code that is not a rule's) or when a file
cannot be read or parsed as Python (said on stderr; the other files are still checked).
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from tensorops._lint.codes import RULES
from tensorops._lint.linter import Finding, is_selected, lint_source, without_noqa
from tensorops._lint.report import FORMATS, format_findings

__all__ = ["add_arguments", "run"]

#: Folders never entered when a folder is given.
_SKIPPED = frozenset({"__pycache__", "node_modules", "venv", "build", "dist"})
_PREFIXES = tuple(rule.code for rule in RULES)


def _codes(text: str) -> list[str]:
    """``"TOP002,TOP01"`` -> ``["TOP002", "TOP01"]``: prefixes of the rules' codes."""
    codes = [part.strip().upper() for part in text.split(",") if part.strip()]
    for code in codes:
        if not any(rule.startswith(code) for rule in _PREFIXES):
            raise argparse.ArgumentTypeError(
                f"unknown code {code!r}: the codes are TOP001 to {_PREFIXES[-1]}"
            )
    return codes


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``lint`` subcommand's arguments."""
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files, folders, or - for stdin")
    parser.add_argument("--format", choices=FORMATS, default="text", help="default: text")
    parser.add_argument(
        "--select",
        type=_codes,
        default=["TOP"],
        metavar="CODES",
        help="report only these codes or prefixes, comma-separated (default: TOP, all)",
    )
    parser.add_argument(
        "--ignore",
        type=_codes,
        default=[],
        metavar="CODES",
        help="do not report these codes or prefixes, comma-separated",
    )
    parser.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="skip files and folders whose name matches (repeatable), e.g. --exclude tests",
    )
    parser.add_argument(
        "--stdin-name", default="-", metavar="NAME", help="the path reported for -, e.g. model.py"
    )


def _files(paths: Sequence[str], exclude: Sequence[str]) -> Iterator[str]:
    """Each file to check: files as given, folders' ``.py`` files in sorted order."""
    for text in paths:
        path = Path(text)
        if text == "-" or not path.is_dir():
            yield text
            continue
        for found in sorted(path.rglob("*.py")):
            parts = found.relative_to(path).parts
            if any(p in _SKIPPED or p.startswith(".") for p in parts[:-1]):
                continue
            if any(fnmatch.fnmatch(p, glob) for p in parts for glob in exclude):
                continue
            yield str(found)


def _read(text: str) -> str:
    if text == "-":
        return sys.stdin.read()
    with open(text, "rb") as file:
        return file.read().decode("utf-8")


def run(args: argparse.Namespace) -> int:
    """Check the paths of `args`, print the findings; returns the exit status."""
    missing = [p for p in args.paths if p != "-" and not Path(p).exists()]
    if missing:
        print(f"tensorops: error: no such file or folder: {missing[0]}", file=sys.stderr)
        return 2
    found: list[tuple[str, Finding]] = []
    failed = False
    for name in _files(args.paths, args.exclude):
        shown = args.stdin_name if name == "-" else name
        try:
            source = _read(name)
            findings = lint_source(source)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError) as error:
            print(f"tensorops: error: cannot check {shown}: {error}", file=sys.stderr)
            failed = True
            continue
        if findings:
            findings = without_noqa(findings, source.splitlines())
        found.extend((shown, f) for f in findings if is_selected(f.code, args.select, args.ignore))
    text = format_findings(found, args.format)
    if text:
        print(text)
    if failed:
        return 2
    return 1 if found else 0
