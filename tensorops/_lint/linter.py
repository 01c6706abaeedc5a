"""One Python source checked: its pattern calls found, bound, planned, and each mistake a `Finding`.

`lint_tree` is what the command line and the flake8 plugin share: the calls of
`tensorops._lint.calls`, read by `tensorops._lint.arguments`, checked by the
library's own rules (`tensorops._lint.libraries`) and then planned as the run time
plans them (`tensorops._lint.planning`). A finding points at the fault inside the
pattern's literal where the literal is plain (one line, no escapes), else at the
pattern argument.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from tensorops._errors import TensorOpsError
from tensorops._lint.arguments import StaticCall, bind
from tensorops._lint.calls import UNKNOWN, find_calls
from tensorops._lint.codes import code_of
from tensorops._lint.constants import Constants
from tensorops._lint.libraries import library_error, reading
from tensorops._lint.planning import PLACEHOLDER, Source, is_literal, is_number, plan_call
from tensorops._lint.targets import PATHS, TARGETS

__all__ = ["Finding", "is_selected", "lint_source", "lint_tree", "without_noqa"]

#: A source that mentions none of these holds no call the linter knows: it is not parsed.
_MENTIONS = re.compile(r"einops|tensorops|einsum")
_PROBE_LENGTH = re.compile(r" of length \d+(?= into|$)")
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.I)


class Finding(NamedTuple):
    """One mistake in one call.

    Attributes:
        line: the line of the fault (1-based).
        column: its column (1-based, in characters).
        code: the rule's code, e.g. ``TOP002``.
        message: the first line of the run-time message: ``op: reason``.
        details: the message's other lines: the pattern, the caret under the fault,
            the lengths given, a hint.
        pattern: the pattern text.
        span: the fault's ``(start, end)`` in the pattern, when it has one.
    """

    line: int
    column: int
    code: str
    message: str
    details: tuple[str, ...]
    pattern: str
    span: tuple[int, int] | None


#: Findings by what they depend on (`_key`): model code repeats its patterns.
_FOUND: dict[tuple[Any, ...], tuple[str, TensorOpsError] | None] = {}
_FOUND_SIZE = 4096


def _key(call: StaticCall, spaced: bool | None) -> tuple[Any, ...]:
    """Everything a call's check reads: the same key, the same finding."""
    operands = call.operands
    numbers = () if operands is None else tuple(i for i, o in enumerate(operands) if is_number(o))
    return (
        call.target,
        call.pattern,
        tuple(call.lengths.items()),
        call.open,
        call.reduction,
        call.weight_shape,
        call.bias_shape,
        None if operands is None else len(operands),
        numbers,
        call.shapes,
        spaced,
    )


def _checked(call: StaticCall) -> tuple[str, TensorOpsError] | None:
    """(code, error) of the call's first mistake, or None; the error is the caller's to change."""
    spaced = reading(call) if call.target.op == "einsum" else None
    key = _key(call, spaced)
    if key not in _FOUND:
        if len(_FOUND) >= _FOUND_SIZE:
            _FOUND.clear()
        _FOUND[key] = _check(call, spaced)
    found = _FOUND[key]
    if found is None:
        return None
    code, error = found
    error = copy.copy(error)
    unknown = [name for name, value in call.lengths.items() if value is UNKNOWN]
    for name in unknown:  # show the expression where the placeholder stood
        shown = f"{name}={ast.unparse(call.sources[name])}"
        error.reason = error.reason.replace(f"{name}={PLACEHOLDER}", shown)
    return code, error


def _check(call: StaticCall, spaced: bool | None) -> tuple[str, TensorOpsError] | None:
    found = library_error(call)
    if found == "skip":
        return None
    if isinstance(found, tuple):
        return found
    error = plan_call(call, spaced)
    if error is None:
        return None
    code = code_of(error.reason)
    if code == "TOP007" and call.open:  # **kwargs may give the length
        return None
    if not is_literal(call):  # a probe's length is not the array's: not shown
        error.reason = _PROBE_LENGTH.sub("", error.reason)
    return code, error


def _lengths_shown(call: StaticCall) -> dict[str, object]:
    return {
        name: Source(ast.unparse(call.sources[name])) if value is UNKNOWN else value
        for name, value in call.lengths.items()
    }


def _column(
    lines: Sequence[str], call: StaticCall, span: tuple[int, int] | None
) -> tuple[int, int]:
    """(line, column), 1-based, of the fault: inside a plain literal, else at the argument."""
    node = call.pattern_node
    line = lines[node.lineno - 1] if node.lineno <= len(lines) else ""
    start = len(line.encode()[: node.col_offset].decode(errors="replace"))
    if span is None or not isinstance(node, ast.Constant) or node.end_lineno != node.lineno:
        return node.lineno, start + 1
    end = len(line.encode()[: node.end_col_offset].decode(errors="replace"))
    literal = line[start:end]
    quote = next((i for i, c in enumerate(literal) if c in "'\""), None)
    if quote is None or "\\" in literal or literal[quote : quote + 3] in ('"""', "'''"):
        return node.lineno, start + 1
    if literal[quote + 1 : -1] != call.pattern:
        return node.lineno, start + 1
    return node.lineno, start + quote + 2 + min(span[0], len(call.pattern))


def lint_tree(tree: ast.Module, source: str) -> list[Finding]:
    r"""Every finding of a parsed module, in source order.

    Examples:
        >>> import ast
        >>> text = 'import einops\ny = einops.rearrange(x, "b c -> b")\n'
        >>> [f[:3] for f in lint_tree(ast.parse(text), text)]
        [(2, 28, 'TOP002')]
    """
    found = find_calls(tree, source, PATHS)
    if not found:
        return []
    constants = Constants(tree, source)
    paths = {id(item.node): item.path for item in found}
    lines: list[str] = []  # read only for a finding
    findings = []
    for item in found:
        if item.path not in TARGETS:
            continue
        call = bind(item, constants, paths)
        if call is None:
            continue
        checked = _checked(call)
        if checked is None:
            continue
        code, error = checked
        shown = _lengths_shown(call)
        error = error.with_context(op=call.target.name, pattern=call.pattern, lengths=shown)
        head, *details = str(error).splitlines()
        lines = lines or source.splitlines()
        line, column = _column(lines, call, error.span)
        findings.append(Finding(line, column, code, head, tuple(details), call.pattern, error.span))
    return findings


def lint_source(source: str) -> list[Finding]:
    """Every finding of a module's source (`SyntaxError` if it does not parse)."""
    if not _MENTIONS.search(source):
        return []
    return lint_tree(ast.parse(source), source)


def without_noqa(findings: Iterable[Finding], lines: Sequence[str]) -> list[Finding]:
    """The findings whose line has no ``# noqa`` naming their code (or naming none)."""
    kept = []
    for finding in findings:
        line = lines[finding.line - 1] if finding.line <= len(lines) else ""
        match = _NOQA.search(line)
        if match is not None:
            codes = match.group("codes")
            if codes is None or finding.code in re.split(r"[,\s]+", codes.upper()):
                continue
        kept.append(finding)
    return kept


def is_selected(code: str, select: Sequence[str], ignore: Sequence[str]) -> bool:
    """Whether `code` is reported: it starts with a selected prefix and with no ignored one.

    Examples:
        >>> is_selected("TOP002", ["TOP"], ["TOP00"]), is_selected("TOP012", ["TOP"], ["TOP00"])
        (False, True)
    """
    chosen = max((len(p) for p in select if code.startswith(p)), default=-1)
    dropped = max((len(p) for p in ignore if code.startswith(p)), default=-1)
    return chosen >= 0 and chosen > dropped
