"""``tensorops lint``: the constant patterns of a codebase checked without running it.

A file is parsed with `ast` (`calls`: the calls of the followed libraries, each
callee resolved through its imports), each call of a known function (`targets`) is
read into a `StaticCall` (`arguments`, `constants`), checked by its library's own
rules (`libraries`) and planned by the run time's planner on stand-in shapes
(`probes`, `planning`); a mistake becomes a `Finding` with the run time's message
and a code (`codes`, `linter`). `report` writes findings out, `command` is the
subcommand of ``tensorops``, `flake8_plugin` the flake8 plugin. Nothing here imports
a framework.
"""

from tensorops._lint.codes import RULES as RULES
from tensorops._lint.command import add_arguments as add_arguments
from tensorops._lint.command import run as run
from tensorops._lint.linter import Finding as Finding
from tensorops._lint.linter import lint_source as lint_source
from tensorops._lint.linter import lint_tree as lint_tree

__all__ = ["RULES", "Finding", "add_arguments", "lint_source", "lint_tree", "run"]
