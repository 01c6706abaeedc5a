"""tops.explain: one row per framework call, the shape after each, errors as the ops raise them."""

from __future__ import annotations

import numpy as np
import pytest

import tensorops as tops


def _rows(text: str) -> list[list[str]]:
    """The step column and the shape of each row (the first line is the title)."""
    rows = []
    for line in text.splitlines()[1:]:
        step, _, rest = line.strip().partition("  ")
        shape = rest.strip().split(")")[0] + ")"
        rows.append([step.strip(), shape])
    return rows


def test_rearrange_matches_the_docs_example() -> None:
    text = tops.explain("b c (h w) -> b h w c", (2, 3, 64), h=8)
    assert text.splitlines() == [
        'rearrange "b c (h w) -> b h w c" on (2, 3, 64) with h=8',
        "  input              (2, 3, 64)     b c (h w)",
        "  reshape            (2, 3, 8, 8)   b c h w",
        "  permute (0,2,3,1)  (2, 8, 8, 3)   b h w c",
        "  output             (2, 8, 8, 3)   b h w c",
    ]


@pytest.mark.parametrize(
    ("pattern", "shape", "kwargs"),
    [
        ("b c (h w) -> b h w c", (2, 3, 64), {"h": 8}),
        ("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", (2, 3, 8, 8), {"p1": 4, "p2": 4}),
        ("b c (h 2) (w 2) -> b c h w", (2, 3, 8, 8), {"op": "reduce", "reduction": "max"}),
        ("b c h w -> b c", (2, 3, 4, 5), {"reduction": "mean"}),
        ("b c h w -> b c 1 1", (2, 3, 4, 5), {"reduction": "sum"}),
        ("h w -> h w c", (3, 4), {"op": "repeat", "c": 3}),
        ("h w -> (h 2) (w 3)", (3, 4), {"op": "repeat"}),
        ("... h w -> ... (h w)", (5, 6, 3, 4), {}),
        ("b 1 c -> b c 1 ()", (3, 1, 4), {}),
        ("a b -> a b", (3, 4), {}),
    ],
)
def test_every_shape_is_the_shape_the_op_produces(
    pattern: str, shape: tuple[int, ...], kwargs: dict[str, object]
) -> None:
    text = tops.explain(pattern, shape, **kwargs)  # type: ignore[arg-type]
    rows = _rows(text)
    assert rows[0] == ["input", str(shape)]
    assert rows[-1][0] == "output"
    x = np.zeros(shape)
    lengths = {k: v for k, v in kwargs.items() if k not in ("op", "reduction")}
    op = kwargs.get("op") or ("reduce" if "reduction" in kwargs else "rearrange")
    if op == "reduce":
        y = tops.reduce(x, pattern, kwargs["reduction"], **lengths)  # type: ignore[arg-type]
    else:
        y = getattr(tops, str(op))(x, pattern, **lengths)
    assert rows[-1][1] == str(y.shape)
    # the row before "output" is the last call made, so it has the output's shape
    assert rows[-2][1] == str(y.shape)


def test_reduce_names_the_reduction_and_the_axes() -> None:
    text = tops.explain("b c (h 2) (w 2) -> b c h w", (8, 3, 4, 4), reduction="max")
    assert text.splitlines()[0] == 'reduce "b c (h 2) (w 2) -> b c h w" on (8, 3, 4, 4) with max'
    assert "  max over axes (3,5)  (8, 3, 2, 2)" in text


def test_reduce_defaults_to_sum_and_accepts_a_callable() -> None:
    assert "sum over axes (1)" in tops.explain("a b -> a", (2, 3), op="reduce")

    def norm(x: object, axes: tuple[int, ...]) -> object:
        return x

    assert "norm over axes (1)" in tops.explain("a b -> a", (2, 3), reduction=norm)


def test_repeat_shows_the_broadcast() -> None:
    text = tops.explain("h w -> h w c", (3, 4), op="repeat", c=3)
    assert [row[0] for row in _rows(text)] == ["input", "reshape", "expand (no copy)", "output"]


def test_identity_has_no_steps() -> None:
    assert [row[0] for row in _rows(tops.explain("a b -> a b", (3, 4)))] == ["input", "output"]


def test_ellipsis_axes_are_spelled_out() -> None:
    text = tops.explain("b ... -> b (...)", (2, 3, 4))
    assert "b ...[0] ...[1]" in text
    assert "b (...[0] ...[1])" in text


def test_no_array_is_needed_and_the_result_is_a_str() -> None:
    assert isinstance(tops.explain("a -> a", [5]), str)


def test_the_op_is_read_from_the_pattern() -> None:
    assert tops.explain("a b -> a", (2, 3)) == tops.explain("a b -> a", (2, 3), op="reduce")
    assert tops.explain("a -> a r", (2,), r=3) == tops.explain("a -> a r", (2,), op="repeat", r=3)
    with pytest.raises(tops.TensorOpsError, match="axis 'b' is missing on the right"):
        tops.explain("a b -> a c", (2, 3), c=4)  # dropped and added: neither reduce nor repeat


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        (
            lambda: tops.explain("b (h w) -> b h w", (4, 9), h=2),
            "cannot split axis of length 9 into (h w) with h=2: 9 is not divisible by 2",
        ),
        (
            lambda: tops.explain("a b -> a", (2, 3), op="rearrange"),
            "axis 'b' is missing on the right",
        ),
        (
            lambda: tops.explain("a b -> b a", (2, 3), op="transpose"),
            "unknown op 'transpose'; valid: rearrange, reduce, repeat, einsum, check, softmax, "
            "log_softmax, flip, roll, sort, argsort, cumsum, add, subtract, multiply, divide, "
            "maximum, minimum, logaddexp, where",
        ),
        (
            lambda: tops.explain("a b -> a", (2, 3), reduction="median"),
            "unknown reduction 'median'; valid: sum, mean, max, min, prod, any, all, argmax, "
            "argmin, logsumexp, var, std, or a callable f(x, axes)",
        ),
        (
            lambda: tops.explain("a b -> b a", (2, 3), op="repeat", reduction="max"),
            "reduction='max' is given but repeat does not reduce",
        ),
        (
            lambda: tops.explain("ij,jk->ik", [(2, 3), (3, 4)], reduction="sum"),
            "reduction='sum' is given but einsum does not reduce",
        ),
        (
            lambda: tops.explain("a b -> b a", "2,3"),
            "the shape must be a tuple of non-negative integers, got '2,3'",
        ),
        (
            lambda: tops.explain("a b -> b a", (2, -3)),
            "the shape must be a tuple of non-negative integers, got (2, -3)",
        ),
        (
            lambda: tops.explain(42, (2, 3)),  # type: ignore[arg-type]
            "the pattern must be a str, got int",
        ),
    ],
)
def test_errors(call: object, reason: str) -> None:
    with pytest.raises(tops.TensorOpsError) as info:
        call()  # type: ignore[operator]
    assert info.value.reason == reason


def test_error_message_has_the_pattern_shape_and_lengths() -> None:
    with pytest.raises(tops.ShapeError) as info:
        tops.explain("b (h w) -> b h w", (4, 9), h=2)
    assert str(info.value).splitlines() == [
        "rearrange: cannot split axis of length 9 into (h w) with h=2: 9 is not divisible by 2",
        '  pattern: "b (h w) -> b h w"',
        "              ^^^^^",
        "  input:   shape=(4, 9)",
        "  lengths: h=2",
    ]


def test_explain_never_pollutes_the_op_errors() -> None:
    """An error from explain carries the op it explains; the op's own call is unaffected."""
    with pytest.raises(tops.TensorOpsError):
        tops.explain("b (h w) -> b h w", (4, 9), h=2)
    with pytest.raises(tops.TensorOpsError) as info:
        tops.rearrange(np.zeros((4, 9)), "b (h w) -> b h w", h=2)
    assert "dtype=float64" in str(info.value)


@pytest.mark.parametrize(
    ("pattern", "op"),
    [
        ("ij,jk->ik", "einsum"),
        ("ij->ji", "einsum"),
        ("...ij->...ji", "einsum"),
        ("ij", "einsum"),
        ("i j -> j i", "rearrange"),
        ("b (h w) -> b h w", "rearrange"),
    ],
)
def test_op_is_inferred(pattern: str, op: str) -> None:
    from tensorops._explain import _choose_op

    assert _choose_op(pattern, None, None) == op


def test_einsum_shows_the_contraction_plan() -> None:
    einsum_path = getattr(tops, "einsum_path", None)
    if einsum_path is None:
        pytest.skip("einsum_path is not available")
    text = tops.explain("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)])
    assert text.splitlines()[0] == 'einsum "ij,jk,kl->il" on (2, 3), (3, 4), (4, 5)'
    plan = str(einsum_path("ij,jk,kl->il", (2, 3), (3, 4), (4, 5))).rstrip("\n")
    assert text.endswith(plan)


def test_einsum_needs_shapes() -> None:
    with pytest.raises(tops.TensorOpsError) as info:
        tops.explain("ij,jk->ik", [])
    assert info.value.reason == "einsum needs one shape per operand, got []"


def test_einsum_error_describes_the_shapes() -> None:
    with pytest.raises(tops.ShapeError) as info:
        tops.explain("ij,jk->ik", [(2, 3), (4, 5)])
    assert info.value.inputs == ("shape=(2, 3)", "shape=(4, 5)")
    assert "axis 'j' has length 3" in info.value.reason


def test_einsum_with_composed_axes() -> None:
    text = tops.explain("b (h d), d e -> b h e", [(6, 128), (16, 32)], h=8)
    assert text.splitlines()[0] == 'einsum "b (h d), d e -> b h e" on (6, 128), (16, 32)'
    assert "(6, 8, 32)" in text
