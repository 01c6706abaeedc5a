"""The command line: `tensorops explain | path | bench`, exit codes and one-line errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import tensorops as tops
from tensorops.__main__ import main


def test_explain_prints_the_steps(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["explain", "b c (h w) -> b h w c", "--shape", "2,3,64", "--len", "h=8"])
    out, err = capsys.readouterr()
    assert code == 0
    assert err == ""
    assert out == tops.explain("b c (h w) -> b h w c", (2, 3, 64), h=8) + "\n"


def test_explain_reduce_with_x_separated_shape(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["explain", "b c (h 2) (w 2) -> b c h w", "--shape", "8x3x32x32"]
    code = main([*argv, "--op", "reduce", "--reduction", "max"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert "max over axes (3,5)  (8, 3, 16, 16)" in out


def test_explain_repeat_several_lengths(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["explain", "h w -> (h a) (w b)", "--shape", "2,3", "--op", "repeat"]
    assert main([*argv, "--len", "a=2", "--len", "b=4"]) == 0
    assert "(4, 12)" in capsys.readouterr().out


def test_tensorops_error_prints_the_full_message_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["explain", "b (h w) -> b h w", "--shape", "4,9", "--len", "h=2"])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.startswith(
        "tensorops: error: rearrange: cannot split axis of length 9 into (h w) with h=2"
    )
    assert '  pattern: "b (h w) -> b h w"\n              ^^^^^\n' in err
    assert "  lengths: h=2" in err


def test_hint_is_shown_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "a b c -> a d", "--shape", "2,3,4"]) == 2
    err = capsys.readouterr().err
    assert "axis 'b' is missing on the right" in err
    assert "  hint:    to reduce it, pass op='reduce' (tensorops explain --op reduce)" in err
    assert "einsum_path" not in err


def test_brief_prints_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["explain", "b (h w) -> b h w", "--shape", "4,9", "--len", "h=2", "--brief"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("tensorops: error: rearrange: cannot split axis of length 9")


@pytest.mark.parametrize(
    ("pattern", "shape", "lengths", "op"),
    [
        ("b c h w -> b c", (2, 3, 4, 5), {}, "reduce"),
        ("b c (h 2) (w 2) -> b c h w", (2, 3, 4, 4), {}, "reduce"),
        ("h w -> h w c", (2, 3), {"c": 4}, "repeat"),
        ("h w -> (h 2) w", (2, 3), {}, "repeat"),
        ("b c (h w) -> b h w c", (2, 3, 4), {"h": 2}, "rearrange"),
    ],
)
def test_explain_reads_the_op_from_the_pattern(
    pattern: str,
    shape: tuple[int, ...],
    lengths: dict[str, int],
    op: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["explain", pattern, "--shape", ",".join(map(str, shape))]
    argv += [f"--len={name}={value}" for name, value in lengths.items()]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith(f'{op} "{pattern}"')
    assert out == tops.explain(pattern, shape, op=op, **lengths) + "\n"
    assert out == tops.explain(pattern, shape, **lengths) + "\n"


def test_explain_einsum_with_one_shape_flag_per_operand(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["explain", "ij,jk->ik", "--shape", "2,3", "--shape", "3,5"]) == 0
    out = capsys.readouterr().out
    assert out == tops.explain("ij,jk->ik", [(2, 3), (3, 5)]) + "\n"


def test_einsum_errors_name_explain_not_einsum_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "ij,jk->ik", "--shapes", "2x3,4x5"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tensorops: error: einsum: axis 'j' has length 3")
    assert "einsum_path" not in err


def test_every_option_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "--help"]) == 0
    out = capsys.readouterr().out
    for option in ("--shape", "--shapes", "--len", "--op", "--reduction", "--brief"):
        block = out.split(option, 1)[1].split("\n  -", 1)[0]
        assert len(block.split()) > 2, f"{option} has no help text"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["explain", "a -> a", "--shape", "4,b"], "bad shape '4,b'"),
        (["explain", "a -> a"], "one of the arguments --shape --shapes is required"),
        (["explain", "a -> a", "--shape", "4", "--len", "h4"], "bad axis length 'h4'"),
        (["explain", "a -> a", "--shape", "4", "--len", "h=x"], "'x' is not an integer"),
        (["explain", "a -> a", "--shape", "4", "--op", "nope"], "invalid choice: 'nope'"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["path", "ij,jk->ik", "--shapes", "2x3,3xq"], "bad shapes '2x3,3xq'"),
        (["explain", "a -> a", "--shape", "4x-1"], "bad shape '4x-1': lengths are >= 0"),
        (["path", "ij->i", "--shapes", "2x-3"], "bad shapes '2x-3': lengths are >= 0"),
        (["path", "ij,jk->ik"], "the following arguments are required: --shapes"),
        (["path", "ij->i", "--shapes", "2x3", "--memory-limit", "-1"], "bad memory limit"),
    ],
)
def test_bad_arguments(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("tensorops: error: ")
    assert message in err
    assert err.count("\n") == 1


def test_no_command_prints_help_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "explain" in capsys.readouterr().err


def test_help_and_version_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "usage: tensorops" in capsys.readouterr().out
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("tensorops ")


def test_path_prints_the_plan(capsys: pytest.CaptureFixture[str]) -> None:
    einsum_path = getattr(tops, "einsum_path", None)
    if einsum_path is None:
        pytest.skip("einsum_path is not available")
    argv = ["path", "ij,jk,kl->il", "--shapes", "2x3,3x4,4x5", "--strategy", "optimal"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    expected = einsum_path("ij,jk,kl->il", (2, 3), (3, 4), (4, 5), strategy="optimal")
    assert out == str(expected).rstrip("\n") + "\n"


def test_path_with_memory_limit(capsys: pytest.CaptureFixture[str]) -> None:
    if getattr(tops, "einsum_path", None) is None:
        pytest.skip("einsum_path is not available")
    argv = ["path", "ij,jk,kl->il", "--shapes", "2x3,3x4,4x5", "--memory-limit", "1000"]
    assert main(argv) == 0
    assert capsys.readouterr().out.strip()


def test_bench_without_benchmarks_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "--dir", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tensorops: error: no benchmarks directory found")
    assert err.count("\n") == 1


def test_bench_runs_every_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a_table.py").write_text(
        "import sys\n"
        "print('| case | time |')\n"
        "print('quick' if '--quick' in sys.argv else 'full')\n"
    )
    (tmp_path / "_helpers.py").write_text("raise SystemExit(3)\n")
    assert main(["bench", "--quick", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "## a_table.py" in out
    assert "| case | time |" in out
    assert "quick" in out
    assert "_helpers" not in out


def test_bench_reports_a_failing_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "broken.py").write_text("raise SystemExit(1)\n")
    assert main(["bench", "--dir", str(tmp_path)]) == 1
    assert "failed: broken.py" in capsys.readouterr().err


def test_python_dash_m_tensorops() -> None:
    root = Path(__file__).resolve().parent.parent
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tensorops",
            "explain",
            "a (b c) -> c b a",
            "--shape",
            "2,6",
            "--len",
            "b=2",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=root,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == 'rearrange "a (b c) -> c b a" on (2, 6) with b=2'
    assert result.stdout.splitlines()[-1].split()[:4] == ["output", "(3,", "2,", "2)"]


def test_path_with_an_explicit_path(capsys: pytest.CaptureFixture[str]) -> None:
    if getattr(tops, "einsum_path", None) is None:
        pytest.skip("einsum_path is not available")
    argv = ["path", "ij,jk,kl->il", "--shapes", "2x3,3x4,4x5", "--strategy", "[(1, 2), (0, 1)]"]
    assert main(argv) == 0
    expected = tops.einsum_path("ij,jk,kl->il", (2, 3), (3, 4), (4, 5), strategy=[(1, 2), (0, 1)])
    assert capsys.readouterr().out == str(expected).rstrip("\n") + "\n"


def test_path_with_a_bad_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["path", "ij->i", "--shapes", "2x3", "--strategy", "[(0,"]) == 2
    assert "bad path '[(0,'" in capsys.readouterr().err


def test_path_error_shows_the_shapes(capsys: pytest.CaptureFixture[str]) -> None:
    if getattr(tops, "einsum_path", None) is None:
        pytest.skip("einsum_path is not available")
    assert main(["path", "ij,jk->ik", "--shapes", "2x3,4x5"]) == 2
    err = capsys.readouterr().err
    assert "axis 'j' has length 3" in err
    assert "input 1: shape=(4, 5)" in err
