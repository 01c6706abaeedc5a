"""The ``tensorops`` command line: explain, plan a contraction, lint a codebase, benchmark.

Usage::

    tensorops explain "b c (h w) -> b h w c" --shape 2,3,64 --len h=8
    tensorops explain "b c (h 2) (w 2) -> b c h w" --shape 8,3,32,32 --reduction max
    tensorops path "ij,jk,kl->il" --shapes 2x3,3x4,4x5 --strategy optimal
    tensorops store list
    tensorops lint src/ --format github
    tensorops bench --quick

``python -m tensorops`` is the same program. A pattern that does not fit prints
the op's full message on stderr (the pattern, a caret at the fault, shapes, a
hint) and exits with status 2; ``--brief`` prints its first line only. A bad
command line prints one line and exits with status 2. ``lint`` exits with 1 when it
finds a mistake (see `tensorops._lint.command`).
"""

from __future__ import annotations

import argparse
import ast
import math
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from tensorops._explain import EXPLAINED_OPS

__all__ = ["main"]


class _UsageError(Exception):
    """A bad command line; reported as one line on stderr, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)


def _dims(part: str, separator: str, bad: str, expected: str) -> tuple[int, ...]:
    """The lengths in `part`, split at `separator`; else ``"{bad}: {expected}"`` for argparse."""
    if part in ("", "()"):
        return ()
    try:
        dims = tuple(int(d) for d in part.split(separator))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{bad}: {expected}") from None
    if any(d < 0 for d in dims):
        raise argparse.ArgumentTypeError(f"{bad}: lengths are >= 0")
    return dims


def _parse_shape(text: str) -> tuple[int, ...]:
    """``"8,3,32,32"`` or ``"8x3x32x32"`` -> ``(8, 3, 32, 32)``; ``"()"`` is a scalar."""
    text = text.strip()
    if text in ("", "()"):
        return ()
    separator = "x" if "x" in text else ","
    expected = "expected integers such as 8,3,32,32"
    return _dims(text.strip("()"), separator, f"bad shape {text!r}", expected)


def _parse_shapes(text: str) -> list[tuple[int, ...]]:
    """``"2x3,3x4"`` -> ``[(2, 3), (3, 4)]``: operands split by ``,``, dims by ``x``."""
    bad, expected = f"bad shapes {text!r}", "expected operands like 2x3,3x4"
    return [_dims(part.strip(), "x", bad, expected) for part in text.split(",")]


def _parse_length(text: str) -> tuple[str, int]:
    """``"h=4"`` -> ``("h", 4)``."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip().isidentifier():
        raise argparse.ArgumentTypeError(f"bad axis length {text!r}: expected NAME=INT, e.g. h=4")
    try:
        return name.strip(), int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"bad axis length {text!r}: {value!r} is not an integer"
        ) from None


def _memory_limit(text: str) -> int:
    try:
        value = int(float(text)) if "e" in text.lower() else int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad memory limit {text!r}: expected elements") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"bad memory limit {text!r}: must be > 0")
    return value


def _build_parser() -> _Parser:
    common = _Parser(add_help=False)
    common.add_argument(
        "--brief", action="store_true", help="print only the first line of an error message"
    )
    parser = _Parser(
        prog="tensorops",
        description="Explain tensorops patterns, plan einsum contractions, check the patterns "
        "of a codebase, run the benchmarks.",
        parents=[common],
    )
    from tensorops import __version__

    parser.add_argument("--version", action="version", version=f"tensorops {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    explain = commands.add_parser(
        "explain", parents=[common], help="show the steps of a pattern with the shape after each"
    )
    explain.add_argument("pattern", help='e.g. "b c (h w) -> b h w c"')
    given = explain.add_mutually_exclusive_group(required=True)
    given.add_argument(
        "--shape",
        dest="shape_list",
        action="append",
        type=_parse_shape,
        help="input shape, e.g. 8,3,32,32; repeat it for each einsum operand",
    )
    given.add_argument("--shapes", type=_parse_shapes, help="einsum operand shapes, e.g. 2x3,3x4")
    explain.add_argument(
        "--len",
        dest="lengths",
        action="append",
        type=_parse_length,
        default=[],
        metavar="NAME=INT",
        help="an axis length (repeatable)",
    )
    explain.add_argument(
        "--op",
        choices=EXPLAINED_OPS,
        metavar="OP",
        help="the op to explain: " + ", ".join(EXPLAINED_OPS) + " (default: read from the "
        "pattern: rearrange for a pattern with '+' (concatenation, splitting); einsum for "
        "equations such as 'ij,jk->ik'; reduce when --reduction is given or axes are only "
        "dropped, as in 'b c h w -> b c'; repeat when axes are only added, as in "
        "'h w -> h w c'; rearrange otherwise). The options of roll, sort, argsort and "
        "cumsum are given as --len: shift=1, descending=1, reverse=1",
    )
    explain.add_argument(
        "--reduction",
        help="for reduce: sum mean max min prod any all argmax argmin logsumexp var std "
        "(default: sum)",
    )

    path = commands.add_parser(
        "path", parents=[common], help="print the contraction plan of an einsum equation"
    )
    path.add_argument("equation", help='e.g. "ij,jk,kl->il"')
    path.add_argument(
        "--shapes", type=_parse_shapes, required=True, help="operand shapes, e.g. 2x3,3x4,4x5"
    )
    path.add_argument(
        "--strategy", help="auto (default), optimal, dp, greedy, or a path such as '[(0, 1)]'"
    )
    path.add_argument(
        "--memory-limit", type=_memory_limit, metavar="N", help="largest intermediate (elements)"
    )
    path.add_argument(
        "--plot", type=Path, metavar="FILE", help="also draw the contraction tree to FILE (.png)"
    )

    store = commands.add_parser(
        "store", parents=[common], help="list or clear the plans kept across runs"
    )
    store.add_argument("action", choices=["list", "clear"])
    store.add_argument(
        "--dir", type=Path, help="the store's directory (default: the platform's cache directory)"
    )

    lint = commands.add_parser(
        "lint",
        parents=[common],
        help="check every constant pattern of tensorops, einops and einsum calls, "
        "without running the code",
    )
    from tensorops._lint import add_arguments

    add_arguments(lint)

    bench = commands.add_parser(
        "bench", parents=[common], help="run the scripts in benchmarks/ and print their tables"
    )
    bench.add_argument("--quick", action="store_true", help="fewer repeats, smaller sizes")
    bench.add_argument(
        "--dir",
        type=Path,
        default=Path("benchmarks"),
        help="the benchmarks directory of a source checkout (default: ./benchmarks)",
    )
    return parser


def _run_explain(args: argparse.Namespace) -> int:
    import tensorops as tops

    shapes = args.shapes if args.shapes is not None else args.shape_list
    if args.op is None and (args.shapes is not None or len(shapes) > 1):
        args.op = "rearrange" if "+" in args.pattern else "einsum"
    options = dict(args.lengths)
    for flag in ("descending", "reverse"):  # the options of sort, argsort, cumsum: 0 or 1
        if flag in options and args.op in ("sort", "argsort", "cumsum"):
            options[flag] = bool(options[flag])
    # one --shape is the input's shape; several (or einsum) are one per operand
    shape: Any = shapes if args.op == "einsum" or len(shapes) > 1 else shapes[0]
    text = tops.explain(args.pattern, shape, op=args.op, reduction=args.reduction, **options)
    print(text)
    return 0


def _run_path(args: argparse.Namespace) -> int:
    import tensorops as tops

    options: dict[str, Any] = {}
    if args.strategy is not None:
        options["strategy"] = args.strategy
        if args.strategy.lstrip().startswith("["):  # an explicit path: "[(0, 1), (0, 1)]"
            try:
                options["strategy"] = [tuple(step) for step in ast.literal_eval(args.strategy)]
            except (ValueError, TypeError, SyntaxError):
                raise _UsageError(
                    f"bad path {args.strategy!r}: expected a list of tuples, e.g. '[(0, 1)]'"
                ) from None
    if args.memory_limit is not None:
        options["memory_limit"] = args.memory_limit
    plan = tops.einsum_path(args.equation, *args.shapes, **options)
    print(str(plan).rstrip("\n"))
    if args.plot is not None:
        os.environ.setdefault("MPLBACKEND", "Agg")  # a file, never a window
        try:
            plan.plot().figure.savefig(args.plot, dpi=150)
        except ImportError as error:
            _report(str(error), brief=True)
            return 2
        print(f"wrote {args.plot}")
    return 0


def _run_store(args: argparse.Namespace) -> int:
    import tensorops as tops

    store = tops.PlanStore(args.dir)
    if args.action == "clear":
        print(f"removed {store.clear()} plans from {store.directory}")
        return 0
    entries = store.entries()
    print(f"{len(entries)} plans in {store.directory}")
    for entry in entries:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.modified))
        cost = f"{math.log10(entry.flops):.2f}" if entry.flops > 0 else "?"
        print(
            f"  {entry.key[:16]}  {entry.operands:4d} operands  {entry.strategy:8}  "
            f"log10 FLOPs {cost:>6}  {entry.bytes:8,d} bytes  {when}"
        )
    return 0


def _run_lint(args: argparse.Namespace) -> int:
    from tensorops._lint import run

    return run(args)


def _run_bench(args: argparse.Namespace) -> int:
    directory = args.dir
    if not directory.is_dir():
        print(
            f"tensorops: error: no benchmarks directory found in {directory}; run from a "
            "source checkout, or pass --dir",
            file=sys.stderr,
        )
        return 2
    scripts = sorted(p for p in directory.glob("*.py") if not p.name.startswith("_"))
    if not scripts:
        print(f"tensorops: error: no benchmark scripts in {directory}", file=sys.stderr)
        return 2
    failed = []
    for script in scripts:
        print(f"## {script.name}", flush=True)
        command = [sys.executable, str(script)] + (["--quick"] if args.quick else [])
        # Stream the script's output line by line: a full run takes minutes.
        with subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        ) as process:
            assert process.stdout is not None
            for line in process.stdout:
                print(line, end="", flush=True)
        if process.returncode != 0:
            failed.append(script.name)
        print()
    if failed:
        print(f"tensorops: error: failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with `argv` (default ``sys.argv[1:]``); returns the exit status.

    Examples:
        >>> main(["explain", "a b -> b a", "--shape", "2,3"])
        rearrange "a b -> b a" on (2, 3)
          input          (2, 3)   a b
          permute (1,0)  (3, 2)   b a
          output         (3, 2)   b a
        0
    """
    from tensorops._errors import TensorOpsError

    arguments = list(sys.argv[1:] if argv is None else argv)
    brief = "--brief" in arguments
    parser = _build_parser()
    try:
        args = parser.parse_args(arguments)
        if args.command is None:
            parser.print_help(sys.stderr)
            return 2
        handler = {
            "explain": _run_explain,
            "path": _run_path,
            "store": _run_store,
            "lint": _run_lint,
            "bench": _run_bench,
        }
        return handler[args.command](args)
    except SystemExit as exit_:  # --help and --version
        return exit_.code if isinstance(exit_.code, int) else 0
    except _UsageError as error:
        _report(str(error), brief=True)
        return 2
    except TensorOpsError as error:
        _report(str(error), brief)
        return 2


def _report(message: str, brief: bool) -> None:
    """The error on stderr: the whole message, or its first line when `brief`."""
    text = message.splitlines()[0] if brief and message else message or "error"
    print(f"tensorops: error: {text}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
