"""``tensorops lint``: calls found under every import style, the run time's messages, the CLI.

The message of a finding is the message the call gives when it runs: each case below
is linted as source and run for real on arrays, and the two texts are compared line
by line (the linter leaves out the input lines, which only the run time knows).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tensorops.layers.torch as tl
import torch

import tensorops as tops
from tensorops.__main__ import main
from tensorops._lint.codes import RULES, code_of
from tensorops._lint.linter import Finding, is_selected, lint_source, without_noqa

ROOT = Path(__file__).resolve().parent.parent


def lint(code: str) -> list[Finding]:
    return lint_source(textwrap.dedent(code))


def codes(code: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint(code)]


# --- calls found, under every import style ------------------------------------------------------

BAD = '"b c -> b"'  # every op that rearranges refuses it: 'c' is missing on the right

EINSUM = '("ij,jk->iz", a, b)'
#: (what is imported, the call): each call's pattern is wrong; each must be found.
IMPORT_STYLES = {
    "import einops": ("import einops", f"einops.rearrange(x, {BAD})"),
    "import einops as E": ("import einops as E", f"E.rearrange(x, {BAD})"),
    "from einops import rearrange as r": ("from einops import rearrange as r", f"r(x, {BAD})"),
    "einops.einops": ("from einops.einops import rearrange", f"rearrange(x, {BAD})"),
    "einops layer": ("from einops.layers.torch import Rearrange", f"Rearrange({BAD})"),
    "einops layers package": (
        "import einops.layers.torch",
        f"einops.layers.torch.Rearrange({BAD})",
    ),
    "einops layers as L": ("import einops.layers.flax as L", f"L.Rearrange({BAD})"),
    "import tensorops as tops": ("import tensorops as tops", f"tops.rearrange(x, {BAD})"),
    "from tensorops import": ("from tensorops import rearrange", f"rearrange(x, {BAD})"),
    "tensorops layer": ("from tensorops.layers.torch import Rearrange", f"Rearrange({BAD})"),
    "tensorops layers module": ("from tensorops.layers import keras as tk", f"tk.Rearrange({BAD})"),
    "tensorops layers as L": ("import tensorops.layers.nnx as L", f"L.Rearrange({BAD})"),
    "pattern=": ("import einops", f"einops.rearrange(tensor=x, pattern={BAD})"),
    "import in a function": (
        "def f(x):\n    from einops import rearrange",
        f"    return rearrange(x, {BAD})",
    ),
    "import torch as th": ("import torch as th", f"th.einsum{EINSUM}"),
    "from torch import einsum": ("from torch import einsum", f"einsum{EINSUM}"),
    "torch.functional": ("import torch", f"torch.functional.einsum{EINSUM}"),
    "import numpy as np": ("import numpy as np", f"np.einsum{EINSUM}"),
    "from numpy import einsum": ("from numpy import einsum", f"einsum{EINSUM}"),
    "import jax.numpy as jnp": ("import jax.numpy as jnp", f"jnp.einsum{EINSUM}"),
    "from jax import numpy": ("from jax import numpy as jn", f"jn.einsum{EINSUM}"),
    "import jax": ("import jax", f"jax.numpy.einsum{EINSUM}"),
    "import opt_einsum as oe": ("import opt_einsum as oe", f"oe.contract{EINSUM}"),
    "from opt_einsum import": ("from opt_einsum import contract_path", f"contract_path{EINSUM}"),
}


@pytest.mark.parametrize(("imports", "call"), IMPORT_STYLES.values(), ids=IMPORT_STYLES.keys())
def test_every_import_style_is_resolved(imports: str, call: str) -> None:
    assert [f.code for f in lint(f"{imports}\n{call}")] == ["TOP002"]


NOT_CHECKED = {
    "a pattern that is not a constant": "import einops\ndef f(x, p):\n    einops.rearrange(x, p)",
    "a pattern built at run time": 'import einops\neinops.rearrange(x, "b c -> " + name)',
    "a parameter shadows the import": (
        'import einops\ndef f(einops):\n    einops.rearrange(x, "b c -> b")'
    ),
    "an assignment shadows it": (
        'from einops import rearrange\ndef f():\n    rearrange = g\n    rearrange(x, "b c -> b")'
    ),
    "a lambda's parameter": (
        'from einops import rearrange\nf = lambda rearrange: rearrange(x, "b c -> b")'
    ),
    "a class body's import, in a method": (
        "class C:\n"
        "    from einops import rearrange\n"
        "    def m(self):\n"
        "        return rearrange(x, 'b c -> b')"
    ),
    "two imports of one name": (
        "if a:\n"
        "    from einops import rearrange\n"
        "else:\n"
        "    from tensorops import rearrange\n"
        'rearrange(x, "b c -> b")'
    ),
    "an unknown library": 'import myops\nmyops.rearrange(x, "b c -> b")',
    "a relative import": 'from . import einops\neinops.rearrange(x, "b c -> b")',
    "a constant assigned twice": (
        'import einops\nP = "b c -> b c"\nP = "b c -> b"\neinops.rearrange(x, P)'
    ),
    "a constant rebound by a function": (
        "import einops\n"
        'P = "b c -> b"\n'
        "def f():\n"
        "    global P\n"
        '    P = "b c -> b c"\n'
        "einops.rearrange(x, P)"
    ),
    "a missing length that **kwargs may give": (
        'import einops\neinops.repeat(x, "h w -> h w c", **sizes)'
    ),
    "a reduction that is not a constant": (
        'import einops\neinops.reduce(x, "b c -> b c d", how, d=2)'
    ),
    "an equation of opt_einsum's symbols": (
        'import opt_einsum\nopt_einsum.contract("i1,1k->ik", a, b)'
    ),
    "einops.einsum with '_'": 'import einops\neinops.einsum(a, b, "i _, _ k -> i k")',
    "a method of an array": 'x.rearrange("b c -> b")',
    "a compact einsum with a length given": (
        'import tensorops\ntensorops.einsum("ij,jk->ik", a, b, j=3)'
    ),
    "an einsum keyword whose value is not a constant": (
        'import tensorops\ntensorops.einsum("ij,jk->ik", a, b, optimise=how)'
    ),
    "an einsum keyword beside **kwargs": (
        'import tensorops\ntensorops.einsum("ij,jk->ik", a, b, optimise="greedy", **more)'
    ),
    "check of an argument that may be a list": 'import tensorops\ntensorops.check(xs, "a, b")',
    "check of an array whose shape is not seen": 'import tensorops\ntensorops.check(x, "a b", a=2)',
}


@pytest.mark.parametrize("source", NOT_CHECKED.values(), ids=NOT_CHECKED.keys())
def test_the_linter_never_guesses(source: str) -> None:
    assert lint(source) == []


def test_module_constants_f_strings_and_concatenations_are_read() -> None:
    source = """
        import einops
        SIDE = "b c"
        LEFT: str = f"{SIDE} h"
        PATTERN = LEFT + " -> b h"
        def f(x):
            return einops.rearrange(x, PATTERN)
        def g(x, PATTERN):
            return einops.rearrange(x, PATTERN)
    """
    assert codes(source) == [(7, "TOP002")]


def test_literal_shapes_are_read_where_the_code_gives_them() -> None:
    source = """
        import numpy as np, torch, tensorops as tops, opt_einsum as oe
        tops.rearrange(np.zeros((4, 9)), "b (h w) -> b h w", h=2)
        tops.rearrange(torch.zeros(4, 9), "b (h w) -> b h w", h=3)
        tops.rearrange(torch.zeros(4, 9), "b (h w) -> b h w", h=n)
        tops.einsum_path("ij,jk->ik", (2, 3), (4, 5))
        oe.contract_expression("ij,jk->ik", (2, 3), (3, 5))
    """
    assert codes(source) == [(3, "TOP008"), (6, "TOP008")]


# --- the run time's messages ---------------------------------------------------------------------

x4 = np.zeros((2, 3, 4, 6))
x2 = np.zeros((2, 3))
t4 = torch.zeros(2, 3, 4, 6)
#: (the call as written, the names it reads): each runs and fails, each is linted.
MESSAGES: list[tuple[str, dict[str, Any]]] = [
    ('tops.rearrange(x, "b c h w -> b h w")', {"x": x4}),
    ('tops.rearrange(x, "b c (h w -> b h w")', {"x": x4}),
    ('tops.rearrange(x, "b c h h -> b c h")', {"x": x4}),
    ('tops.rearrange(x, "b c h w -> b c (h w) 2")', {"x": x4}),
    ('tops.rearrange(x, "b ... c ... -> b c")', {"x": x4}),
    ('tops.rearrange(x, "b c h w -> b c h w", k=2)', {"x": x4}),
    ('tops.rearrange(x, "b c h (w1 w2) -> b c h w1 w2")', {"x": x4}),
    ('tops.rearrange(x, "b c h w -> b c h w", k=n)', {"x": x4, "n": 5}),
    ('tops.rearrange(x, "b c h w -> b h w c d", d=2)', {"x": x4}),
    ('tops.rearrange(x, "b [c] h w -> b c h w")', {"x": x4}),
    ('tops.reduce(x, "b c h w -> b c", "maen")', {"x": x4}),
    ('tops.reduce(x, "b c h w -> b c z", "sum")', {"x": x4}),
    ('tops.reduce(x, "b c h w -> b c")', {"x": x4}),
    ('tops.repeat(x, "b c -> b c r")', {"x": x2}),
    ('tops.repeat(x, "b 3 -> b r", r=2)', {"x": x2}),
    ('tops.einsum("ij,jk->iz", a, a)', {"a": x2}),
    ('tops.einsum("ij,jk->ii", a, a)', {"a": x2}),
    ('tops.einsum("ij,jk,kl->il", a, a)', {"a": x2}),
    ('tops.einsum(a, a, "b i, b j -> b k")', {"a": x2}),
    ('tops.einsum("b (h d), d e -> b h e", a, a)', {"a": x2}),
    ('tops.einsum_path("ij,jk->ik", (2, 3), (4, 5))', {}),
    ('tops.pack([a, a], "b * c *")', {"a": x2}),
    ('tops.unpack(a, [(1,)], "b * b")', {"a": x2}),
    ('tops.parse_shape(a, "b (c d)")', {"a": x2}),
    ('tops.softmax(a, "b c")', {"a": x2}),
    ('tops.softmax(a, "b [c] -> b [d]")', {"a": x2}),
    ('tops.roll(a, "b [c c]", shift=1)', {"a": x2}),
    ('tops.get_at(a, i, "b [c], b p -> b q")', {"a": x2, "i": np.zeros((2, 1), int)}),
    ('tops.add(a, a, "b c, b c -> b d")', {"a": x2}),
    ('tops.where(a, a, a, "b c, b c -> b c")', {"a": x2 > 0}),
    ('tops.rearrange([a, a], "b c1, b c2 -> b (c1 + c3)")', {"a": x2}),
    ('tops.rearrange(np.zeros((4, 9)), "b (h w) -> b h w", h=2)', {"np": np}),
    ('tops.einsum("ij,kj->ik", a, a, optimise="greedy")', {"a": x2}),
    ('tops.einsum("ij,kj->ik", a, a, z=3)', {"a": x2}),
    ('tops.einsum_path("ij,jk->ik", (2, 3), (3, 4), optimise="greedy")', {}),
    ('tops.check(a, "b c -> d")', {"a": x2}),
    ('tops.check(a, "b [c]")', {"a": x2}),
    ('tops.check(a, "b c", d=3)', {"a": x2}),
    ('tops.check([a, a], "b c")', {"a": x2}),
    ('tops.check(np.zeros((2, 3)), "b c", c=4)', {"np": np}),
    ('tops.check(a, "... b ...")', {"a": x2}),
    ('tops.check(a, "b (... c)")', {"a": x2}),
    ('tl.Check("a, b")', {"tl": tl}),
    ('tl.Check("b c", d=2)', {"tl": tl}),
    ('tl.Rearrange("b c -> b c d")', {"tl": tl}),
    ('tl.Reduce("b c -> b", "maen")', {"tl": tl}),
    ('tl.EinMix("b c -> b d", weight_shape="c d", c=3)', {"tl": tl}),
    ('tl.EinMix("b c -> b e", weight_shape="c d", c=3, d=4)', {"tl": tl}),
    ('tl.EinMix("b c -> b d", weight_shape="c d", c=3, d=4, e=5)', {"tl": tl}),
]


def _runtime_message(call: str, names: dict[str, Any]) -> list[str]:
    with pytest.raises(tops.TensorOpsError) as caught:
        eval(call, {"tops": tops, **names})  # the test's own call texts
    lines = str(caught.value).splitlines()
    return [line for line in lines if not line.startswith(("  input", "  lengths"))]


@pytest.mark.parametrize(("call", "names"), MESSAGES, ids=[m[0] for m in MESSAGES])
def test_the_message_is_the_run_time_message(call: str, names: dict[str, Any]) -> None:
    header = "import numpy as np\nimport tensorops as tops\nimport tensorops.layers.torch as tl\n"
    (finding,) = lint(header + call)
    shown = [finding.message, *(d for d in finding.details if not d.startswith("  lengths"))]
    expected = _runtime_message(call, names)
    # the dimension's length is the array's, which the linter does not know
    expected[0] = re.sub(r"(from a single dimension) of length \d+$", r"\1", expected[0])
    for name, value in names.items():  # a length given as a name shows the name
        if isinstance(value, int):
            expected = [line.replace(f"={value} ", f"={name} ") for line in expected]
    if "[(2, 3), (4, 5)]" not in call:
        assert shown == expected


def test_a_computed_length_is_shown_as_written() -> None:
    (finding,) = lint("import tensorops as tops\ntops.rearrange(x, 'a b -> b a', k=self.k)")
    assert finding.message == (
        "rearrange: axis length k=self.k is given but 'k' is not in the pattern"
    )
    assert finding.details[-1] == "  lengths: k=self.k"


def test_a_probe_length_is_not_shown() -> None:
    (finding,) = lint("import tensorops as tops\ntops.rearrange(x, 'b (h w) -> b h w')")
    assert finding.message == (
        "rearrange: cannot infer the lengths of h and w in (h w) from a single dimension"
    )


def test_the_column_points_at_the_fault_inside_the_literal() -> None:
    (finding,) = lint('import einops\ny = einops.rearrange(x,  "b c h -> b h")\n')
    line = 'y = einops.rearrange(x,  "b c h -> b h")'
    assert line[finding.column - 1] == "c"
    (finding,) = lint('import einops\nP = "b c -> b"\ny = einops.rearrange(x, P)\n')
    assert (finding.line, finding.column) == (3, 25)


# --- codes ---------------------------------------------------------------------------------------

EXAMPLE_HEADER = (
    "import numpy, numpy as np, torch, einops, tensorops as tops, jax.numpy\nfrom torch import nn\n"
)


@pytest.mark.parametrize("rule", RULES, ids=[rule.code for rule in RULES])
def test_each_rule_reports_its_example_with_its_code(rule: Any) -> None:
    assert [f.code for f in lint(EXAMPLE_HEADER + rule.example)] == [rule.code]


def test_each_rule_is_documented_with_its_example() -> None:
    page = (ROOT / "docs" / "lint.md").read_text(encoding="utf-8")
    for rule in RULES:
        assert f"### {rule.code} {rule.name}" in page
        assert rule.example in page


def test_an_unknown_reason_is_a_syntax_error() -> None:
    assert code_of("something the table does not know") == "TOP001"


# --- noqa, --select, --ignore ---------------------------------------------------------------------


def test_noqa_drops_the_named_codes_or_all() -> None:
    source = textwrap.dedent("""\
        import einops
        einops.rearrange(x, "b c -> b")  # noqa: TOP002
        einops.rearrange(x, "b c -> b")  # noqa: TOP001, E501
        einops.rearrange(x, "b c -> b")  # noqa
        einops.rearrange(x, "b c -> b")  # NOQA:top002
        einops.rearrange(x, "b c -> b")
    """)
    kept = without_noqa(lint_source(source), source.splitlines())
    assert [f.line for f in kept] == [3, 6]


def test_select_and_ignore_take_prefixes_the_longest_wins() -> None:
    assert is_selected("TOP002", ["TOP"], [])
    assert not is_selected("TOP002", ["TOP"], ["TOP00"])
    assert is_selected("TOP002", ["TOP002"], ["TOP00"])
    assert not is_selected("TOP012", ["TOP00"], [])
    assert not is_selected("TOP002", ["TOP002"], ["TOP002"])


# --- the command line -----------------------------------------------------------------------------


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "bad.py").write_text('import einops\ny = einops.rearrange(x, "b c -> b")\n')
    (tmp_path / "good.py").write_text('import einops\ny = einops.rearrange(x, "b c -> c b")\n')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "deep.py").write_text('import numpy as np\nnp.einsum("ij->k", a)\n')
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "skipped.py").write_text('import numpy as np\nnp.einsum("i->k", a)\n')
    return tmp_path


def test_text_output_and_exit_status_1(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", str(files)]) == 1
    out = capsys.readouterr().out
    assert out == (
        f"{files / 'bad.py'}:2:28: TOP002 einops.rearrange: axis 'c' is missing on the right\n"
        '    pattern: "b c -> b"\n'
        "                ^\n"
        "    hint:    use reduce to remove an axis, repeat to add one\n"
        f"{files / 'pkg' / 'deep.py'}:2:16: TOP002 numpy.einsum: output axis 'k' does not "
        "appear in any input\n"
        '    pattern: "ij->k"\n'
        "                  ^\n"
    )


def test_nothing_found_is_exit_status_0(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", str(files / "good.py")]) == 0
    assert capsys.readouterr().out == ""


def test_exclude_select_ignore(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", str(files), "--exclude", "pkg", "--ignore", "TOP002"]) == 0
    assert main(["lint", str(files), "--exclude", "bad.py", "--select", "TOP002"]) == 1
    assert "deep.py" in capsys.readouterr().out


def test_json_output(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", str(files / "bad.py"), "--format", "json"]) == 1
    (record,) = json.loads(capsys.readouterr().out)
    assert record == {
        "path": str(files / "bad.py"),
        "line": 2,
        "column": 28,
        "code": "TOP002",
        "message": "einops.rearrange: axis 'c' is missing on the right",
        "details": [
            '  pattern: "b c -> b"',
            "              ^",
            "  hint:    use reduce to remove an axis, repeat to add one",
        ],
        "pattern": "b c -> b",
        "span": [2, 3],
    }
    assert main(["lint", str(files / "good.py"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_github_output(files: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", str(files / "bad.py"), "--format", "github"]) == 1
    line = capsys.readouterr().out.strip()
    assert line == (
        f"::error file={files / 'bad.py'},line=2,col=28,title=TOP002::einops.rearrange: axis "
        "'c' is missing on the right%0A  pattern: \"b c -> b\"%0A              ^%0A  hint:    "
        "use reduce to remove an axis, repeat to add one"
    )


def test_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(
        "sys.stdin", __import__("io").StringIO('import torch\ntorch.einsum("i->j", a)')
    )
    assert main(["lint", "-", "--stdin-name", "model.py"]) == 1
    assert capsys.readouterr().out.startswith("model.py:2:18: TOP002 torch.einsum: output axis 'j'")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["lint", "missing.py"], "no such file or folder: missing.py"),
        (["lint", ".", "--select", "XYZ"], "unknown code 'XYZ'"),
        (["lint", ".", "--format", "xml"], "invalid choice: 'xml'"),
        (["lint"], "the following arguments are required: PATH"),
    ],
)
def test_bad_use_is_exit_status_2(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert said in capsys.readouterr().err


def test_a_file_that_does_not_parse_is_exit_status_2(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (files / "broken.py").write_text("import einops\ndef f(:\n")
    assert main(["lint", str(files)]) == 2
    out, err = capsys.readouterr()
    assert f"cannot check {files / 'broken.py'}" in err
    assert "bad.py:2:28: TOP002" in out  # the other files are still checked


def test_python_dash_m(files: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tensorops", "lint", str(files / "bad.py")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert "TOP002 einops.rearrange: axis 'c' is missing on the right" in result.stdout


# --- flake8 and pre-commit ------------------------------------------------------------------------


def test_flake8_runs_the_plugin(files: Path) -> None:
    (files / "noqa.py").write_text(
        'import einops\neinops.rearrange(x, "b c -> b")  # noqa: TOP002\n'
    )
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "TOP", "--exclude", ".hidden", str(files)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert sorted(result.stdout.splitlines()) == sorted(
        [
            f"{files / 'bad.py'}:2:28: TOP002 einops.rearrange: axis 'c' is missing on the right",
            f"{files / 'pkg' / 'deep.py'}:2:16: TOP002 numpy.einsum: output axis 'k' does not "
            "appear in any input",
        ]
    )


def test_the_pre_commit_manifest_is_valid() -> None:
    manifest = ROOT / ".pre-commit-hooks.yaml"
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-manifest", str(manifest)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_pre_commit_hook_runs_as_pre_commit_runs_it(files: Path) -> None:
    import yaml

    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert hook["types"] == ["python"]
    command, *arguments = hook["entry"].split()
    executable = Path(sys.executable).parent / command  # installed into the hook's venv
    staged = [str(files / "bad.py"), str(files / "good.py")]
    result = subprocess.run(
        [str(executable), *arguments, *hook.get("args", []), *staged],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert "bad.py:2:28: TOP002" in result.stdout
    clean = subprocess.run(
        [str(executable), *arguments, staged[1]], capture_output=True, text=True, check=False
    )
    assert (clean.returncode, clean.stdout) == (0, "")
