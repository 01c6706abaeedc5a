"""explain for check, concatenation and splitting, the element-wise ops and the ops along axes.

These plans are run on shapes (`tensorops._backends._shapes.ShapeBackend`): every row
is a call the op's executor makes, so the shapes are checked against the op itself,
run on NumPy arrays of the explained shapes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorops as tops
from tensorops.__main__ import main
from tests._seed import rng

_RNG = rng("test_explain_ops")


def _last_shape(text: str) -> tuple[int, ...]:
    """The shape of the table's last row (its output)."""
    row = text.splitlines()[-1]
    return tuple(int(n) for n in row[row.index("(") + 1 : row.index(")")].split(",") if n.strip())


def test_multiply_shows_each_operand_aligned_then_the_call() -> None:
    text = tops.explain("b t c, c -> c b t", [(2, 5, 4), (4,)], op="multiply")
    assert text.splitlines() == [
        'multiply "b t c, c -> c b t" on (2, 5, 4), (4,)',
        "  input 0                  (2, 5, 4)   b t c",
        "  input 1                  (4,)        c",
        "  permute (2,0,1)          (4, 2, 5)",
        "  reshape                  (4, 1, 1)",
        "  multiply (broadcasting)  (4, 2, 5)",
        "  output                   (4, 2, 5)   c b t",
    ]


def test_concatenation_and_splitting() -> None:
    joined = tops.explain("b c1, b c2 -> b (c1 + c2)", [(2, 3), (2, 4)])
    assert joined.splitlines()[-2:] == [
        "  concatenate 2 along axis 1  (2, 7)",
        "  output                      (2, 7)   b (c1 + c2)",
    ]
    split = tops.explain("b (c1 + c2) -> c1 b, b c2", (2, 7), c1=3)
    assert split.splitlines() == [
        'rearrange "b (c1 + c2) -> c1 b, b c2" on (2, 7) with c1=3',
        "  input                             (2, 7)   b (c1 + c2)",
        "  split axis 1 into (3, 4) (views)  (2, 3)",
        "                                    (2, 4)",
        "  permute (1,0)                     (3, 2)",
        "  output 0                          (3, 2)   c1 b",
        "  output 1                          (2, 4)   b c2",
    ]


def test_check_shows_the_solved_lengths() -> None:
    text = tops.explain("b h i d, b h j d", [(2, 3, 4, 5), (2, 3, 6, 5)], op="check")
    assert text.splitlines()[-1] == "  solved: b=2, h=3, i=4, d=5, j=6"
    one = tops.explain("b (h w)", (2, 12), op="check", h=3)
    assert one.splitlines()[-1] == "  solved: b=2, h=3, w=4"


def test_ops_along_axes_show_their_options() -> None:
    rolled = tops.explain("b [t] c -> c b [t]", (2, 5, 4), op="roll", shift=2)
    assert "  roll axes (1) by (2,)  (2, 5, 4)" in rolled.splitlines()
    assert "sort along axis 1 (descending)" in tops.explain(
        "b [t]", (2, 5), op="sort", descending=True
    )
    joint = tops.explain("b [h w] c", (2, 5, 4, 3), op="argsort").splitlines()
    assert [row.split("  ")[1] for row in joint[2:5]] == [
        "reshape",
        "argsort along axis 1",
        "reshape",
    ]


CASES: list[tuple[str, str, list[tuple[int, ...]], dict[str, Any]]] = [
    ("add", "b t c, c", [(2, 5, 4), (4,)], {}),
    ("subtract", "b t c, b t -> t (b c)", [(2, 5, 4), (2, 5)], {}),
    ("maximum", "b (h w), h w -> b h w", [(2, 6), (2, 3)], {}),
    ("where", "b t c, b t c, c", [(2, 5, 4), (2, 5, 4), (4,)], {}),
    ("logaddexp", "b i, b j -> b i j", [(2, 3), (2, 4)], {}),
    ("softmax", "b [h w] c -> b c [h w]", [(2, 3, 4, 5)], {}),
    ("log_softmax", "b [c]", [(2, 3)], {}),
    ("flip", "b [h w] c", [(2, 3, 4, 5)], {}),
    ("roll", "b [h] [w] c", [(2, 3, 4, 5)], {"shift": (1, -2)}),
    ("sort", "b [(h w)] c", [(2, 12, 5)], {"h": 3}),
    ("argsort", "b [t] c -> c [t] b", [(2, 5, 3)], {"descending": True}),
    ("cumsum", "b [t] c", [(2, 5, 3)], {"reverse": True}),
    ("rearrange", "b h w, b w -> b (h + 1) w", [(2, 3, 4), (2, 4)], {}),
    ("rearrange", "b (x + y) -> b (y + x)", [(2, 7)], {"x": 3}),
]


@pytest.mark.parametrize(("op", "pattern", "shapes", "options"), CASES)
def test_the_output_row_is_the_shape_the_op_gives(
    op: str, pattern: str, shapes: list[tuple[int, ...]], options: dict[str, Any]
) -> None:
    arrays = [_RNG.standard_normal(shape) for shape in shapes]
    if op == "where":
        arrays[0] = arrays[0] > 0
    function = getattr(tops, op)
    if op in ("add", "subtract", "maximum", "where", "logaddexp"):
        result = function(*arrays, pattern, **options)
    elif op == "rearrange" and len(arrays) > 1:
        result = function(arrays, pattern, **options)
    else:
        result = function(arrays[0], pattern, **options)
    text = tops.explain(pattern, shapes if len(shapes) > 1 else shapes[0], op=op, **options)
    assert _last_shape(text) == np.shape(result)


def test_errors_are_the_ops_own() -> None:
    with pytest.raises(tops.TensorOpsError) as info:
        tops.explain("b t c, c", [(2, 5, 4), (3,)], op="add")
    with pytest.raises(tops.TensorOpsError) as eager:
        tops.add(np.zeros((2, 5, 4)), np.zeros(3), "b t c, c")
    assert info.value.reason == eager.value.reason
    with pytest.raises(tops.ArgumentError, match="roll needs its shift"):
        tops.explain("b [t]", (2, 5), op="roll")
    with pytest.raises(tops.ArgumentError, match="add needs one shape per array"):
        tops.explain("b t c, c", (), op="add")
    with pytest.raises(tops.ShapeError, match="axis 'd' has length 5 in input 0 and 6 in input 1"):
        tops.explain("b d, b d", [(2, 5), (2, 6)], op="check")


def test_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["explain", "b [t] c", "--shape", "2,5,4", "--op", "roll", "--len", "shift=-1"]) == 0
    )
    out, _ = capsys.readouterr()
    assert out == tops.explain("b [t] c", (2, 5, 4), op="roll", shift=-1) + "\n"
    assert main(["explain", "b c1, b c2 -> b (c1 + c2)", "--shape", "2,3", "--shape", "2,4"]) == 0
    out, _ = capsys.readouterr()
    assert "concatenate 2 along axis 1" in out
    assert (
        main(["explain", "b [t]", "--shape", "2,5", "--op", "sort", "--len", "descending=1"]) == 0
    )
    out, _ = capsys.readouterr()
    assert "(descending)" in out
    assert main(["explain", "b t c, c", "--shapes", "2x5x4,4", "--op", "add"]) == 0
    out, _ = capsys.readouterr()
    assert "add (broadcasting)  (2, 5, 4)" in out
