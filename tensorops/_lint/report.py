"""Findings written out: as text for people, as JSON for tools, as GitHub workflow annotations.

``text``::

    model.py:12:27: TOP002 rearrange: axis 'w' is missing on the right
        pattern: "b (h w) -> b h"
                       ^
        hint:    use reduce to remove an axis, repeat to add one

``json``: a list of objects with ``path``, ``line``, ``column``, ``code``,
``message``, ``details`` (the lines under it), ``pattern`` and ``span``.

``github``: one ``::error file=...,line=...,col=...,title=TOPnnn::message`` line per
finding, its details after the message (newlines escaped as workflow commands need).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from tensorops._lint.linter import Finding

__all__ = ["FORMATS", "format_findings"]

FORMATS = ("text", "json", "github")


def _text(path: str, finding: Finding) -> str:
    head = f"{path}:{finding.line}:{finding.column}: {finding.code} {finding.message}"
    return "\n".join([head, *(f"  {line}" for line in finding.details)])


def _escape(text: str, properties: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if properties:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def _github(path: str, finding: Finding) -> str:
    message = "\n".join([finding.message, *finding.details])
    return (
        f"::error file={_escape(path, True)},line={finding.line},col={finding.column},"
        f"title={finding.code}::{_escape(message)}"
    )


def format_findings(found: Iterable[tuple[str, Finding]], style: str) -> str:
    """The findings of (path, finding) pairs in one of `FORMATS`; "" for none (but JSON's ``[]``).

    Examples:
        >>> finding = Finding(2, 5, "TOP001", "rearrange: unclosed parenthesis", (), "a (b", (2, 3))
        >>> print(format_findings([("m.py", finding)], "text"))
        m.py:2:5: TOP001 rearrange: unclosed parenthesis
    """
    found = list(found)
    if style == "json":
        records = [
            {
                "path": path,
                "line": f.line,
                "column": f.column,
                "code": f.code,
                "message": f.message,
                "details": list(f.details),
                "pattern": f.pattern,
                "span": list(f.span) if f.span is not None else None,
            }
            for path, f in found
        ]
        return json.dumps(records, indent=2, ensure_ascii=False)
    write = _github if style == "github" else _text
    return "\n".join(write(path, finding) for path, finding in found)
