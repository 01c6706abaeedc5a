"""Every ```python block in docs/*.md runs, page by page, in one namespace per page.

* A block preceded by a ``<!-- skip -->`` line is not run (GPU-only code, shell sessions).
* A block that mentions an optional library (torch, jax, dask, array_api_strict, cupy,
  tensorflow, paddle, tinygrad, pytensor, mlx, flax, keras, equinox) is skipped when that
  library is not installed. CI runs this file again once every framework is installed.
  A page that uses Paddle runs in a fresh interpreter (TensorFlow, imported by another
  page, crashes Paddle's import), and imports Paddle before TensorFlow itself.
* A block followed by an ``<!-- output -->`` line and a ```text block must print
  exactly that text: the error catalogue cannot drift from the code.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
OPTIONAL = (
    "torch",
    "jax",
    "dask",
    "distributed",
    "array_api_strict",
    "cupy",
    "tensorflow",
    "paddle",
    "tinygrad",
    "pytensor",
    "mlx",
    "flax",
    "keras",
    "equinox",
)
_FENCE = re.compile(r"^```(\w*)\s*$")


@dataclass
class Block:
    line: int
    code: str
    skip: bool
    expected: str | None


def extract_blocks(text: str) -> list[Block]:
    """The ```python blocks of a markdown page, with their skip marker and expected output."""
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i].strip())
        if match and match.group(1) == "python":
            start = i
            body: list[str] = []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            previous = [line.strip() for line in lines[:start] if line.strip()]
            skip = bool(previous) and previous[-1] == "<!-- skip -->"
            expected, i = _expected_output(lines, i + 1)
            blocks.append(Block(start + 1, "\n".join(body) + "\n", skip, expected))
        else:
            i += 1
    return blocks


def _expected_output(lines: list[str], i: int) -> tuple[str | None, int]:
    j = i
    while j < len(lines) and not lines[j].strip():
        j += 1
    if j >= len(lines) or lines[j].strip() != "<!-- output -->":
        return None, i
    j += 1
    while j < len(lines) and not lines[j].strip():
        j += 1
    assert lines[j].strip() == "```text", f"<!-- output --> must precede a ```text block: {j + 1}"
    out: list[str] = []
    j += 1
    while lines[j].strip() != "```":
        out.append(lines[j])
        j += 1
    return "\n".join(out) + "\n", j + 1


def _missing(code: str) -> list[str]:
    return [
        name
        for name in OPTIONAL
        if re.search(rf"\b{name}\b", code) and importlib.util.find_spec(name) is None
    ]


PAGES = sorted(DOCS.glob("*.md"))
README = DOCS.parent / "README.md"


# Paddle warns on import where ccache is not installed; Keras' Variable.__array__ calls
# NumPy 2 without the `copy` keyword (model.save goes through it).
@pytest.mark.filterwarnings("ignore:No ccache found:UserWarning")
@pytest.mark.filterwarnings(
    "ignore:__array__ implementation doesn't accept a copy keyword:DeprecationWarning"
)
@pytest.mark.parametrize("page", [*PAGES, README], ids=[p.name for p in [*PAGES, README]])
def test_code_blocks_run(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    if (
        os.environ.get(_ALONE) != page.name
        and re.search(r"\bpaddle\b", text)
        and importlib.util.find_spec("paddle") is not None
    ):
        # TensorFlow may be imported in this process already: Paddle would crash it
        _run_alone(page)
        return
    namespace: dict[str, object] = {"__name__": "__docs__"}
    failures: list[str] = []
    for block in extract_blocks(text):
        if block.skip or _missing(block.code):
            continue
        where = f"{page.name}:{block.line}"
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                exec(compile(block.code, where, "exec"), namespace)
            except Exception as error:
                failures.append(f"{where}: {type(error).__name__}: {error}")
                continue
        if block.expected is not None and out.getvalue() != block.expected:
            failures.append(f"{where}: printed\n{out.getvalue()}expected\n{block.expected}")
    assert not failures, "\n\n".join(failures)


_ALONE = "TENSOROPS_DOCS_PAGE"


def _run_alone(page: Path) -> None:
    """Run `page`'s blocks in a fresh interpreter (this test, with `_ALONE` naming it)."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
    command.append(f"{__file__}::test_code_blocks_run[{page.name}]")
    done = subprocess.run(
        command,
        env={**os.environ, _ALONE: page.name},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"{page.name} in a process of its own:\n{done.stdout[-8000:]}"


def test_every_page_is_in_the_nav() -> None:
    nav = (DOCS.parent / "mkdocs.yml").read_text(encoding="utf-8")
    for page in PAGES:
        assert f" {page.name}" in nav, f"{page.name} is not in mkdocs.yml nav"


def _public_objects() -> list[tuple[str, object]]:
    import tensorops

    found = [(f"tensorops.{n}", getattr(tensorops, n)) for n in tensorops.__all__]
    if importlib.util.find_spec("torch") is not None:
        from tensorops.layers import torch as layers

        found += [(f"layers.torch.{n}", getattr(layers, n)) for n in layers.__all__]
    return found


def _layer_names() -> list[str]:
    """``layers.<family>.<name>`` of every layer family, read from the source (no import:
    the frameworks may be missing, and TensorFlow and Paddle cannot share a process)."""
    spec = importlib.util.find_spec("tensorops.layers")  # the installed package's sources
    assert spec is not None
    assert spec.origin is not None
    names = []
    for source in sorted(Path(spec.origin).parent.glob("[!_]*.py")):
        for node in ast.parse(source.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
            ):
                names += [f"layers.{source.stem}.{n}" for n in ast.literal_eval(node.value)]
    return names


def test_api_page_lists_every_public_name() -> None:
    api = (DOCS / "api.md").read_text(encoding="utf-8")
    missing = [name for name, _ in _public_objects() if name not in api]
    missing += [name for name in _layer_names() if f"::: {name}\n" not in api + "\n"]
    assert not missing, f"docs/api.md does not list {missing}"
    assert {name.split(".")[1] for name in _layer_names()} >= {
        "torch",
        "flax",
        "nnx",
        "keras",
        "paddle",
        "equinox",
    }


def _written_docstrings() -> dict[str, dict[str, str]]:
    """The docstring each family's exported layer is written with, read from the source."""
    spec = importlib.util.find_spec("tensorops.layers")
    assert spec is not None
    assert spec.origin is not None
    found: dict[str, dict[str, str]] = {}
    for source in sorted(Path(spec.origin).parent.glob("[!_]*.py")):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
        names = [n for n in _layer_names() if n.startswith(f"layers.{source.stem}.")]
        found[source.stem] = {
            name: ast.get_docstring(classes[name.split(".")[-1]], clean=False) or ""
            for name in names
        }
    return found


def test_every_layer_docstring_is_made_from_the_table() -> None:
    """As scripts/docstrings.py makes them for the API page, and the classes at run time."""
    from tensorops.layers._docs import LAYERS, layer_docstring

    written = _written_docstrings()
    for family, classes in written.items():
        assert {name.split(".")[-1] for name in classes} == set(LAYERS), family
        for name, own in classes.items():
            text = layer_docstring(name.split(".")[-1], family, own)
            assert "\nRaises:\n    TensorOpsError: " in text, name
    if importlib.util.find_spec("torch") is not None:
        from tensorops.layers import torch as layers

        for name, own in written["torch"].items():
            made = layer_docstring(name.split(".")[-1], "torch", own)
            assert getattr(layers, name.split(".")[-1]).__doc__ == made, name


def test_two_operand_docstrings_are_made_from_the_table() -> None:
    """As scripts/docstrings.py makes them for the API page, and the functions at run time."""
    import tensorops
    from tensorops._elementwise import _api

    tree = ast.parse(Path(_api.__file__).read_text(encoding="utf-8"))
    written = {
        node.name: ast.get_docstring(node, clean=False) or ""
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any(isinstance(d, ast.Name) and d.id == "_two_operands" for d in node.decorator_list)
    }
    binary = {"add", "subtract", "multiply", "divide", "maximum", "minimum", "logaddexp"}
    assert set(written) == binary
    for name, own in written.items():
        made = _api.two_operand_docstring(name, own)
        assert getattr(tensorops, name).__doc__ == made, name
        assert made.index("\nArgs:\n    x: ") < made.index("\nExamples:\n"), name
        assert "\nRaises:\n    TensorOpsError: " in made, name
    with pytest.raises(ValueError, match="the docstring of f has no 'Examples:' section"):
        _api.two_operand_docstring("f", "A summary only.")


def test_public_docstrings_have_no_sphinx_roles() -> None:
    """mkdocstrings renders Markdown: a ``:func:`x``` role would appear as raw text."""
    role = re.compile(r":(func|class|meth|attr|data|mod|exc):`")
    found: list[str] = []
    for name, obj in _public_objects():
        docs = [(name, getattr(obj, "__doc__", None))]
        if isinstance(obj, type):
            docs += [(f"{name}.{k}", getattr(v, "__doc__", None)) for k, v in vars(obj).items()]
        found += [where for where, doc in docs if doc and role.search(doc)]
    assert not found, f"Sphinx roles in the docstrings of {found}"


def test_extract_blocks() -> None:
    text = "\n".join(
        [
            "<!-- skip -->",
            "```python",
            "x = 1",
            "```",
            "```python",
            "print(2)",
            "```",
            "<!-- output -->",
            "```text",
            "2",
            "```",
        ]
    )
    first, second = extract_blocks(text)
    assert (first.skip, first.code, first.expected) == (True, "x = 1\n", None)
    assert (second.skip, second.code, second.expected) == (False, "print(2)\n", "2\n")
