"""einsum_expression over another semiring: constants prepared once per family and device."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorops as tops
from tensorops._backends._numpy import NumpyBackend
from tests._seed import rng
from tests.test_semiring import _check_indices, _close, brute

SEMIRINGS = ["logsumexp", "max", "min"]

#: (equation, shapes, positions of the constants)
CASES = [
    ("i,ij->j", [(6,), (6, 7)], [1]),
    ("bi,ij->bj", [(3, 6), (6, 6)], [1]),
    ("ij,jk,kl->il", [(4, 5), (5, 6), (6, 3)], [1, 2]),
    ("ij,jk,kl->il", [(4, 5), (5, 6), (6, 3)], [0]),
    ("bi,ij,bj->b", [(3, 5), (5, 5), (3, 5)], [1]),
    ("ii,ij->j", [(4, 4), (4, 5)], [0]),
    ("ij->i", [(3, 4)], [0]),
    ("ij,jk->ik", [(3, 4), (4, 5)], [0, 1]),
]


def _arrays(shapes: list[tuple[int, ...]], key: str, scale: float = 3.0) -> list[np.ndarray]:
    generator = rng("test_semiring_expression", key)
    return [scale * generator.standard_normal(shape) for shape in shapes]


def _expression(
    equation: str, arrays: list[np.ndarray], constants: list[int], **keywords: Any
) -> Any:
    given = [x if i in constants else x.shape for i, x in enumerate(arrays)]
    return tops.einsum_expression(equation, *given, constants=constants, **keywords)


@pytest.mark.parametrize("semiring", SEMIRINGS)
@pytest.mark.parametrize("first", [False, True])
@pytest.mark.parametrize(("equation", "shapes", "constants"), CASES)
def test_calls_agree_with_einsum(
    semiring: str, first: bool, equation: str, shapes: Any, constants: list[int]
) -> None:
    arrays = _arrays(shapes, equation, scale=300.0)  # magnitudes where exps underflow
    expression = _expression(equation, arrays, constants, semiring=semiring, constants_first=first)
    variables = [x for i, x in enumerate(arrays) if i not in constants]
    for _ in range(2):  # the second call from what the first kept
        got = expression(*variables)
        _close(got, brute(equation, arrays, semiring), arrays, semiring)
    assert expression.plan.semiring == semiring


def test_a_step_on_a_constant_is_one_product_and_work_in_the_states(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    exps: list[tuple[int, ...]] = []
    products: list[tuple[int, ...]] = []
    shifted_exp, matmul = NumpyBackend.shifted_exp, NumpyBackend.matmul

    def counted_exp(self: Any, x: Any, axis: int) -> Any:
        exps.append(x.shape)
        return shifted_exp(self, x, axis)

    def counted_matmul(self: Any, a: Any, b: Any) -> Any:
        products.append(b.shape)
        return matmul(self, a, b)

    monkeypatch.setattr(NumpyBackend, "shifted_exp", counted_exp)
    monkeypatch.setattr(NumpyBackend, "matmul", counted_matmul)
    start, transition = _arrays([(16,), (16, 16)], "hmm")
    step = tops.einsum_expression("i,ij->j", (16,), transition, constants=[1], semiring="logsumexp")
    alpha = start
    for _ in range(5):
        alpha = step(alpha)
    assert exps.count((16, 16)) == 1  # the transition's shifted exp, once
    assert exps.count((1, 16)) == 5  # alpha's, per call
    assert products == [(16, 16)] * 5
    want = start
    for _ in range(5):
        want = brute("i,ij->j", [want, transition], "logsumexp")
    np.testing.assert_allclose(alpha, want, rtol=1e-12)


def test_constants_are_prepared_per_family_and_device() -> None:
    torch = pytest.importorskip("torch")
    start, transition = _arrays([(5,), (5, 4)], "families")
    step = tops.einsum_expression("i,ij->j", (5,), transition, constants=[1], semiring="logsumexp")
    want = brute("i,ij->j", [start, transition], "logsumexp")
    np.testing.assert_allclose(step(start), want)
    got = step(torch.from_numpy(start))
    assert isinstance(got, torch.Tensor)
    np.testing.assert_allclose(got.numpy(), want)
    assert set(step.evaluated_constants) == {("numpy", "cpu"), ("torch", "cpu")}
    # float32 calls with the float64 constants: computed as torch promotes them
    single = step(torch.from_numpy(start).float())
    assert single.dtype == torch.float64
    np.testing.assert_allclose(single.numpy(), want)


def test_sixteen_bit_constants_are_computed_in_float32() -> None:
    torch = pytest.importorskip("torch")
    start, transition = _arrays([(6,), (6, 6)], "half", scale=100.0)
    half = torch.from_numpy(transition).half()
    step = tops.einsum_expression("i,ij->j", (6,), half, constants=[1], semiring="logsumexp")
    got = step(torch.from_numpy(start).half())
    assert got.dtype == torch.float16
    exact = [torch.from_numpy(start).half().double().numpy(), half.double().numpy()]
    want = brute("i,ij->j", exact, "logsumexp")
    np.testing.assert_allclose(got.double().numpy(), want, rtol=2**-10)
    assert step(torch.from_numpy(start)).dtype == torch.float64  # as float64 + float16 is


def test_gradients_flow_to_the_variables() -> None:
    torch = pytest.importorskip("torch")
    start, transition = _arrays([(5,), (5, 4)], "gradients")
    step = tops.einsum_expression("i,ij->j", (5,), transition, constants=[1], semiring="logsumexp")
    alpha = torch.tensor(start, requires_grad=True)
    step(alpha).sum().backward()
    reference = torch.tensor(start, requires_grad=True)
    torch.logsumexp(reference[:, None] + torch.from_numpy(transition), 0).sum().backward()
    assert alpha.grad is not None
    assert reference.grad is not None
    torch.testing.assert_close(alpha.grad, reference.grad)


@pytest.mark.parametrize("semiring", ["max", "min"])
def test_back_pointers(semiring: str) -> None:
    arrays = _arrays([(4, 5), (5, 6), (6, 3)], "pointers")
    expression = _expression("ij,jk,kl->il", arrays, [1, 2], semiring=semiring, argmax=True)
    values, indices = expression(arrays[0])
    assert set(indices) == {"j", "k"}
    _check_indices("ij,jk,kl->il", arrays, semiring, values, indices)
    want = tops.einsum("ij,jk,kl->il", *arrays, semiring=semiring, argmax=True)
    np.testing.assert_array_equal(values, want[0])


@pytest.mark.parametrize("semiring", SEMIRINGS)
def test_sliced_plans_and_out(semiring: str) -> None:
    arrays = _arrays([(4, 5), (5, 6), (6, 3)], "sliced", scale=300.0)
    expression = _expression("ij,jk,kl->il", arrays, [1, 2], semiring=semiring, memory_limit=6)
    assert expression.plan.sliced_axes
    out = np.empty((4, 3))
    assert expression(arrays[0], out=out) is out
    _close(out, brute("ij,jk,kl->il", arrays, semiring), arrays, semiring)


def test_staged_calls_with_constants() -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    start, transition = _arrays([(5,), (5, 4)], "jit", scale=1e4)
    step = tops.einsum_expression("i,ij->j", (5,), transition, constants=[1], semiring="logsumexp")
    got = jax.jit(step)(jnp.asarray(start))
    want = brute("i,ij->j", [start, transition], "logsumexp")
    assert np.isfinite(np.asarray(got)).all()
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
