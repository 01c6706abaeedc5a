"""einsum_expression: planned once, called many times, constants contracted once per family."""

from __future__ import annotations

import functools
import itertools
from typing import Any

import numpy as np
import pytest

import tensorops as tops
from tensorops._backends._numpy import NumpyBackend

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(7)

CASES: list[tuple[str, tuple[tuple[int, ...], ...]]] = [
    ("ij,jk,kl->il", ((2, 3), (3, 4), (4, 5))),
    ("ij,jk,kl->il", ((64, 3), (3, 64), (64, 3))),
    (
        "bdef,cdkj,ji,ikeh,hbc,lfo",
        ((2, 3, 4, 5), (2, 3, 4, 2), (2, 3), (3, 4, 4, 2), (2, 2, 2), (4, 5, 3)),
    ),
    ("ab,cd,ad,cb", ((2, 3), (4, 5), (2, 5), (4, 3))),
    ("ii,ij->j", ((3, 3), (3, 4))),
    ("ij,j,jk->ik", ((3, 4), (4,), (4, 2))),
]


def _arrays(shapes: tuple[tuple[int, ...], ...]) -> list[np.ndarray]:
    return [RNG.standard_normal(shape) for shape in shapes]


def _subsets(count: int) -> list[tuple[int, ...]]:
    return [c for r in range(count) for c in itertools.combinations(range(count), r)]


def _expression(
    equation: str, arrays: list[Any], constants: tuple[int, ...], **keywords: Any
) -> Any:
    args = [x if i in constants else tuple(x.shape) for i, x in enumerate(arrays)]
    return tops.einsum_expression(equation, *args, constants=constants, **keywords)


@pytest.mark.parametrize(("equation", "shapes"), CASES)
def test_numpy_against_numpy_einsum(equation: str, shapes: tuple[tuple[int, ...], ...]) -> None:
    arrays = _arrays(shapes)
    expected = np.einsum(equation, *arrays)
    for constants in _subsets(len(arrays)):
        expr = _expression(equation, arrays, constants)
        variables = [x for i, x in enumerate(arrays) if i not in constants]
        for _ in range(2):  # the second call reuses what the first contracted
            np.testing.assert_allclose(expr(*variables), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("equation", "shapes"), CASES)
def test_torch_against_torch_einsum(equation: str, shapes: tuple[tuple[int, ...], ...]) -> None:
    arrays = [torch.from_numpy(x) for x in _arrays(shapes)]
    expected = torch.einsum(equation, *arrays)
    for constants in _subsets(len(arrays))[1:]:
        expr = _expression(equation, arrays, constants)
        result = expr(*[x for i, x in enumerate(arrays) if i not in constants])
        assert isinstance(result, torch.Tensor)
        torch.testing.assert_close(result, expected)


def test_numpy_constants_called_with_torch_come_back_as_torch() -> None:
    arrays = _arrays(((64, 3), (3, 64), (64, 3)))
    expr = _expression("ij,jk,kl->il", arrays, (1, 2))
    result = expr(torch.from_numpy(arrays[0]))
    assert isinstance(result, torch.Tensor)
    np.testing.assert_allclose(result.numpy(), np.einsum("ij,jk,kl->il", *arrays))


@pytest.fixture
def matmuls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, ...]]:
    """The shapes of the left operand of every NumPy matmul tensorops makes."""
    seen: list[tuple[int, ...]] = []
    original = NumpyBackend.matmul

    def counting(self: NumpyBackend, a: Any, b: Any) -> Any:
        seen.append(a.shape)
        return original(self, a, b)

    monkeypatch.setattr(NumpyBackend, "matmul", counting)
    return seen


def test_constants_are_contracted_once(matmuls: list[tuple[int, ...]]) -> None:
    # contracting the two constants first is cheapest, so the path starts with them
    arrays = _arrays(((64, 3), (3, 64), (64, 3)))
    expr = _expression("ij,jk,kl->il", arrays, (1, 2))
    assert expr.plan.path == [(1, 2), (0, 1)]
    assert matmuls == []  # nothing runs before the first call
    for _ in range(3):
        np.testing.assert_allclose(expr(arrays[0]), np.einsum("ij,jk,kl->il", *arrays))
    assert matmuls == [(3, 64), (64, 3), (64, 3), (64, 3)]  # constants once, then one per call


def test_constants_first_when_calls_cost_less(matmuls: list[tuple[int, ...]]) -> None:
    # einsum's path starts with the operand (fewest FLOPs in all); with the two
    # constants contracted once ahead, a call is one (2, 3) @ (3, 5) product
    arrays = _arrays(((2, 3), (3, 4), (4, 5)))
    assert tops.einsum_path("ij,jk,kl->il", *arrays).path == [(0, 1), (0, 1)]
    expr = _expression("ij,jk,kl->il", arrays, (1, 2), constants_first=True)
    assert expr.plan.path == [(1, 2), (0, 1)]
    for _ in range(3):
        np.testing.assert_allclose(expr(arrays[0]), np.einsum("ij,jk,kl->il", *arrays))
    assert matmuls == [(3, 4), (2, 3), (2, 3), (2, 3)]


def test_constants_first_only_when_it_pays() -> None:
    arrays = _arrays(((20, 30), (30, 40), (40, 50)))
    planned = tops.einsum_path("ij,jk,kl->il", *arrays).path
    first = functools.partial(_expression, "ij,jk,kl->il", arrays, constants_first=True)
    # the constants share no axis: contracting them first is an outer product
    assert first((0, 2)).plan.path == planned
    # a path given, or a memory limit: planned as einsum plans it
    given = [(0, 1), (0, 1)]
    assert first((1, 2), optimize=given).plan.path == given
    limited = first((1, 2), memory_limit=10**6)
    assert limited.plan.path == tops.einsum_path("ij,jk,kl->il", *arrays, memory_limit=10**6).path
    # one constant: nothing to contract ahead by itself
    assert first((1,)).plan.path == planned


def test_by_default_a_call_computes_as_einsum_does() -> None:
    # contracting constants 1 and 2 first would make a call cheaper, but it would
    # round differently from einsum's order: only constants_first=True reorders
    arrays = [x.astype(np.float32) for x in _arrays(((2, 3), (3, 4), (4, 5)))]
    expr = _expression("ij,jk,kl->li", arrays, (1, 2))
    assert expr.plan.path == tops.einsum_path("ij,jk,kl->li", *arrays).path == [(0, 1), (0, 1)]
    for _ in range(2):  # before and after the constants' steps are kept
        np.testing.assert_array_equal(expr(arrays[0]), tops.einsum("ij,jk,kl->li", *arrays))


def test_constants_first_must_be_a_bool() -> None:
    arrays = _arrays(((2, 3), (3, 4)))
    with pytest.raises(
        tops.ArgumentError, match="constants_first must be True or False, got 'yes'"
    ):
        _expression("ij,jk->ik", arrays, (1,), constants_first="yes")


def test_constants_are_kept_per_family_and_device() -> None:
    arrays = _arrays(((64, 3), (3, 64), (64, 3)))
    expr = _expression("ij,jk,kl->il", arrays, (1, 2))
    expr(arrays[0])
    expr(torch.from_numpy(arrays[0]))
    expr(torch.from_numpy(arrays[0]))
    meta = expr(torch.empty((64, 3), dtype=torch.float64, device="meta"))
    assert meta.device.type == "meta"
    assert meta.shape == (64, 3)
    assert sorted(expr.evaluated_constants) == [
        ("numpy", "cpu"),
        ("torch", "cpu"),
        ("torch", "meta"),
    ]
    (folded,) = expr.evaluated_constants[("torch", "cpu")]
    assert isinstance(folded, torch.Tensor)
    assert folded.shape == (3, 3)
    assert expr.evaluated_constants[("torch", "meta")][0].device.type == "meta"
    assert set(expr._evaluated_constants) == {"numpy", "torch"}  # opt_einsum's view


def test_torch_calls_reuse_the_folded_constants() -> None:
    arrays = [torch.from_numpy(x) for x in _arrays(((64, 3), (3, 64), (64, 3)))]
    expr = _expression("ij,jk,kl->il", arrays, (1, 2))
    expr(arrays[0])
    (first,) = expr.evaluated_constants[("torch", "cpu")]
    expr(arrays[0] * 2)
    (second,) = expr.evaluated_constants[("torch", "cpu")]
    assert first is second


def test_mixed_dtypes_promote_as_the_framework_does() -> None:
    w = torch.ones((3, 4), dtype=torch.float64)
    expr = tops.einsum_expression("ij,jk->ik", (2, 3), w, constants=[1])
    result = expr(torch.ones((2, 3), dtype=torch.float32))
    assert result.dtype == torch.float64
    torch.testing.assert_close(result, torch.full((2, 4), 3.0, dtype=torch.float64))


def test_out_writes_into_the_array() -> None:
    arrays = _arrays(((2, 3), (3, 4), (4, 5)))
    for constants in [(), (1, 2)]:
        expr = _expression("ij,jk,kl->il", arrays, constants)
        out = np.empty((2, 5))
        variables = [x for i, x in enumerate(arrays) if i not in constants]
        assert expr(*variables, out=out) is out
        np.testing.assert_allclose(out, np.einsum("ij,jk,kl->il", *arrays))


def test_backend_computes_in_another_family_and_converts_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    arrays = _arrays(((2, 3), (3, 4)))
    expr = tops.einsum_expression("ij,jk->ik", (2, 3), (3, 4))
    seen = []
    original = torch.matmul
    monkeypatch.setattr(torch, "matmul", lambda a, b: seen.append(a) or original(a, b))
    result = expr(*arrays, backend="torch")
    assert isinstance(result, np.ndarray)
    np.testing.assert_allclose(result, arrays[0] @ arrays[1])
    assert seen  # torch computed it
    out = np.empty((2, 4))
    assert expr(*arrays, backend="torch", out=out) is out
    np.testing.assert_allclose(out, arrays[0] @ arrays[1])


def test_jax_constants_and_jit() -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    arrays = _arrays(((64, 3), (3, 64), (64, 3)))
    constants = [jnp.asarray(x) for x in arrays]
    expr = tops.einsum_expression("ij,jk,kl->il", (64, 3), *constants[1:], constants=[1, 2])
    expected = np.einsum("ij,jk,kl->il", *arrays)
    np.testing.assert_allclose(np.asarray(expr(constants[0])), expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(
        np.asarray(jax.jit(expr)(constants[0])), expected, rtol=1e-4, atol=1e-4
    )
    assert ("jax", str(constants[0].device)) in expr.evaluated_constants


def test_sliced_plan_with_constants() -> None:
    arrays = _arrays(((4, 5), (5, 6), (6, 4)))
    expr = _expression("ij,jk,kl->il", arrays, (1,), memory_limit=8)
    assert expr.plan.sliced_axes
    result = expr(arrays[0], arrays[2])
    np.testing.assert_allclose(result, np.einsum("ij,jk,kl->il", *arrays))


def test_spaced_equation_with_lengths_and_sublists() -> None:
    x, w = RNG.standard_normal((5, 32)), RNG.standard_normal((4, 6))
    expr = tops.einsum_expression("b (h d), d e -> b h e", (5, 32), w, constants=[1], h=8)
    np.testing.assert_allclose(expr(x), np.einsum("bhd,de->bhe", x.reshape(5, 8, 4), w))
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4))
    expr = tops.einsum_expression((2, 3), [0, 1], (3, 4), [1, 2], [2, 0])
    np.testing.assert_allclose(expr(a, b), (a @ b).T)


def test_numbers_and_all_constants() -> None:
    expr = tops.einsum_expression(",i->i", (), (3,))
    np.testing.assert_allclose(expr(2.0, np.arange(3.0)), [0.0, 2.0, 4.0])
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4))
    expr = tops.einsum_expression("ij,jk->ik", a, b, constants=[0, 1])
    np.testing.assert_allclose(expr(), a @ b)
    assert isinstance(expr(backend="torch"), np.ndarray)


def test_repr_str_and_plan() -> None:
    expr = tops.einsum_expression("ab,bc", (2, 3), np.ones((3, 4)), constants={1})
    assert repr(expr) == "EinsumExpression('ab,bc', (2, 3), (3, 4), constants=[1])"
    assert "'ab,bc'" in str(expr)
    assert "Complete contraction:  ab,bc->ac" in str(expr)
    assert expr.shapes == ((2, 3), (3, 4))
    assert expr.constants == (1,)
    assert isinstance(expr.plan, tops.ContractionPlan)


def _raises(match: str, error: type[Exception] = tops.TensorOpsError) -> Any:
    return pytest.raises(error, match=match)


def test_errors_when_called() -> None:
    expr = tops.einsum_expression("ab,bc->ac", (2, 3), (3, 4))
    with _raises(r"takes exactly 2 array\(s\) \(operands \[0, 1\]\), got 1") as info:
        expr(np.ones((2, 3)))
    assert 'pattern: "ab,bc->ac"' in str(info.value)
    assert str(info.value).startswith("einsum_expression:")
    with _raises("got 3", tops.ArgumentError):
        expr(np.ones((2, 3)), np.ones((3, 4)), np.ones((3, 4)))
    with _raises(
        r"operand 0 has shape \(2, 3, 4\); the expression was planned for \(2, 3\)"
    ) as info:
        expr(np.ones((2, 3, 4)), np.ones((3, 4)))
    assert isinstance(info.value, tops.ShapeError)
    assert "input 0: shape=(2, 3, 4)" in str(info.value)
    with _raises("operand 1 has shape"):
        expr(np.ones((2, 3)), np.ones((3, 5)))
    with pytest.raises(TypeError, match="unexpected keyword argument 'order'"):
        expr(np.ones((2, 3)), np.ones((3, 4)), order="F")
    with _raises("backend 'nonesuch' is not an installed array library"):
        expr(np.ones((2, 3)), np.ones((3, 4)), backend="nonesuch")
    with _raises(r"takes exactly 1 array\(s\) \(operands \[0\]\), got 2") as info:
        tops.einsum_expression("ab,bc->ac", (2, 3), np.ones((3, 4)), constants=[1])(
            np.ones((2, 3)), np.ones((3, 4))
        )
    assert "constants [1] are part of the expression" in str(info.value)


@pytest.mark.parametrize(
    ("args", "keywords", "match"),
    [
        (("ab,bc->ac", (2, 3), (3, 4), (42, 42)), {}, "2 input term.* but 3 array"),
        (("ab,bc->ac", (2, 3), (4, 4)), {}, "b"),
        (("ab,bc->ac", (2, 3), (3, 4)), {"out": np.empty((2, 4))}, "out= belongs to the calls"),
        (("ab,bc->ac", (2, 3), (3, 4)), {"backend": "torch"}, "backend= belongs to the calls"),
        (
            ("ab,bc->ac", (2, 3), (3, 4)),
            {"constants": [1]},
            "operand 1 is a constant, so it must be an array",
        ),
        (
            ("ab,bc->ac", (2, 3), np.ones((3, 4))),
            {"constants": [2]},
            "constant 2 is not an operand position",
        ),
        (("ab,bc->ac", (2, 3), np.ones((3, 4))), {"constants": 1}, "constants must be a list"),
        (("ab,bc->ac", (2, 3), (3, -4)), {}, "not a shape"),
        (("ab,bc->ac", (2, 3), (3, 4)), {"strategy": "nonesuch"}, "nonesuch"),
        ((), {}, "the equation must be a str"),
    ],
)
def test_errors_when_made(args: tuple[Any, ...], keywords: dict[str, Any], match: str) -> None:
    with _raises(match) as info:
        tops.einsum_expression(*args, **keywords)
    assert str(info.value).startswith("einsum_expression:")


def test_tiny_pairs_go_to_the_framework_einsum_as_in_einsum(matmuls: list[tuple[int, ...]]) -> None:
    a, b = RNG.standard_normal((4, 5)), RNG.standard_normal((5, 6))
    expr = tops.einsum_expression("ij,jk->ik", a.shape, b.shape)
    for _ in range(2):
        np.testing.assert_allclose(expr(a, b), a @ b)
    assert matmuls == []  # numpy.einsum's loop, as tops.einsum takes for a tiny pair
    expr = tops.einsum_expression("ij,jk->ik", a.shape, b.shape, strategy="greedy")
    np.testing.assert_allclose(expr(a, b), a @ b)
    assert len(matmuls) == 1  # the planned program
    out = np.empty((4, 6))
    tops.einsum_expression("ij,jk->ik", a.shape, b.shape)(a, b, out=out)
    np.testing.assert_allclose(out, a @ b)
