"""The flake8 plugin: ``flake8 --select TOP`` reports what ``tensorops lint`` reports.

flake8 finds it through the ``flake8.extension`` entry point ``TOP`` of the
``tensorops`` distribution, hands it each file's tree and lines, and applies its own
``# noqa``, ``--select``, ``--extend-ignore`` and output formats. A finding is one
line there: the code and the first line of the message, at the fault's column
(``flake8 --show-source`` draws the caret under it).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from typing import Any

from tensorops._lint.linter import lint_tree

__all__ = ["Plugin"]


class Plugin:
    r"""A flake8 AST plugin over `tensorops._lint.linter.lint_tree`.

    Examples:
        >>> import ast
        >>> lines = ["import torch\n", "y = torch.einsum('ij,jk->iz', a, b)\n"]
        >>> [row[:3] for row in Plugin(ast.parse("".join(lines)), lines).run()]
        [(2, 26, "TOP002 torch.einsum: output axis 'z' does not appear in any input")]
    """

    name = "tensorops"

    def __init__(self, tree: ast.AST, lines: Sequence[str]) -> None:
        self.tree = tree
        self.lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type[Any]]]:
        """(line, column from 0, "TOPnnn message", this class) for each finding."""
        if not isinstance(self.tree, ast.Module):
            return
        for finding in lint_tree(self.tree, "".join(self.lines)):
            yield finding.line, finding.column - 1, f"{finding.code} {finding.message}", type(self)
