"""Log-space einsum at any magnitude, against a high-precision reference, gradients included.

The guarantee (docs/einsum.md, "Numerics"): for finite operands a ``"logsumexp"`` result
is ``-inf`` only where the true value is, and within `ULPS` ulps of ``max(1, |true|)``
per summed term of it, at spreads of up to 1e4 between the operands' maxima; gradients
are finite and are the softmax weights of the terms. The reference is the broadcast
log-sum-exp in ``np.longdouble`` (80-bit on x86; mpmath where it is no wider than
float64).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorops as tops
from tensorops._einsum.equations._semiring import BLOCK_CAP
from tensorops._einsum.semirings import _logmatmul
from tests._seed import rng

#: The bound: this many ulps of max(1, |true|) per summed term.
ULPS = 4

#: Two-operand contractions: matrix products, vector-matrix, batched, several summed axes.
PRODUCTS = (
    "ij,jk->ik",
    "i,ij->j",
    "bij,bjk->bik",
    "ij,kj->ik",
    "bi,ij->bj",
    "ij,jk->",
    "ij,jk->ki",
    "ijk,jkl->il",
    "ij,jk->ijk",
)

SPREADS = (1.0, 30.0, 100.0, 1e3, 1e4)


@st.composite
def adversarial(draw: Any, equations: tuple[str, ...] = PRODUCTS) -> tuple[str, Any, float, float]:
    """An equation, the lengths of its axes, a seed, the spread of magnitudes, -inf's share."""
    equation = draw(st.sampled_from(equations))
    letters = sorted(set(equation) - set(",->"))
    sizes = {letter: draw(st.integers(1, 6)) for letter in letters}
    seed = draw(st.integers(0, 2**32 - 1))
    spread = draw(st.sampled_from(SPREADS))
    holes = draw(st.sampled_from([0.0, 0.0, 0.25]))
    return equation, (sizes, seed), spread, holes


def operands(equation: str, key: Any, spread: float, holes: float, dtype: Any) -> list[np.ndarray]:
    """Log-values whose maxima fall on different entries: spikes of up to `spread`.

    Each operand has its own offset (up to `spread` apart from the others), a scale of
    its own, spikes at random entries, and -inf at a share `holes` of them.
    """
    sizes, seed = key
    generator = np.random.default_rng(seed)
    arrays = []
    for term in equation.split("->")[0].split(","):
        shape = tuple(sizes[letter] for letter in term)
        x = generator.standard_normal(shape) * generator.choice([1.0, spread / 10, spread])
        x += generator.uniform(-spread, spread)
        spikes = generator.random(shape) < 0.25
        x[spikes] += generator.uniform(0, spread, int(spikes.sum()))
        if holes:
            x[generator.random(shape) < holes] = -np.inf
        arrays.append(x.astype(dtype))
    return arrays


def _wide(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.longdouble)


EXTENDED = np.finfo(np.longdouble).eps < np.finfo(np.float64).eps


def terms_of(equation: str, arrays: list[np.ndarray]) -> tuple[np.ndarray, str, str]:
    """Every term of the sum, in high precision: (output axes, contracted axes), the letters."""
    lhs, output = equation.split("->")
    inputs = lhs.split(",")
    contracted = "".join(sorted(set(lhs) - set(output) - {","}))
    full = output + contracted
    total: Any = 0
    for term, x in zip(inputs, arrays, strict=True):
        order = "".join(sorted(term, key=full.index))
        moved = np.einsum(f"{term}->{order}", _wide(x) if EXTENDED else x.astype(object))
        shape = [x.shape[term.index(letter)] if letter in term else 1 for letter in full]
        total = total + moved.reshape(shape)
    return np.asarray(total), output, contracted


def reference(equation: str, arrays: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The true log-sum-exp over the contracted axes, and every term's softmax weight."""
    total, output, contracted = terms_of(equation, arrays)
    axes = tuple(range(len(output), len(output) + len(contracted)))
    if not EXTENDED:  # mpmath, element by element
        import mpmath

        mpmath.mp.prec = 100
        exp = np.vectorize(lambda v: mpmath.exp(mpmath.mpf(v)) if v != -np.inf else 0)
        log = np.vectorize(lambda v: mpmath.log(v) if v else -mpmath.inf)
        sums = exp(total).sum(axis=axes)
        values = log(sums)
        weights = exp(total) / np.expand_dims(np.where(sums == 0, 1, sums), axes)
        return values.astype(np.longdouble), weights.astype(np.longdouble)
    top = total.max(axis=axes, keepdims=True)
    top = np.where(np.isfinite(top), top, 0)
    exps = np.exp(total - top)
    sums = exps.sum(axis=axes, keepdims=True)
    with np.errstate(divide="ignore"):  # log(0) = -inf: every term -inf
        values = (np.log(sums) + top).reshape(total.shape[: len(output)])
    weights = exps / np.where(sums == 0, 1, sums)
    return values, weights


def summed_terms(equation: str, arrays: list[np.ndarray]) -> int:
    lhs, output = equation.split("->")
    sizes = {
        letter: n
        for term, x in zip(lhs.split(","), arrays, strict=True)
        for letter, n in zip(term, x.shape, strict=True)
    }
    return math.prod(sizes[letter] for letter in set(lhs) - set(output) - {","})


def check_values(got: Any, want: np.ndarray, terms: int, eps: float, extra: Any = 0.0) -> None:
    """-inf exactly where the truth is; elsewhere within the bound (plus `extra`)."""
    got = np.asarray(got, np.longdouble)
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want))
    finite = np.isfinite(want)
    assert np.isfinite(got[finite]).all()
    bound = (ULPS * terms * eps * np.maximum(1, np.abs(want)) + extra)[finite]
    error = np.abs(got[finite] - want[finite])
    assert (error <= bound).all(), float((error / bound).max())


# --- values: NumPy and torch, float32 and float64 ---------------------------------------


@settings(deadline=None, max_examples=80)
@given(case=adversarial())
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_is_exact_at_any_magnitude(case: Any, dtype: Any) -> None:
    equation, key, spread, holes = case
    arrays = operands(equation, key, spread, holes, dtype)
    got = tops.einsum(equation, *arrays, semiring="logsumexp")
    assert np.asarray(got).dtype == dtype
    want, _ = reference(equation, arrays)
    check_values(got, want, summed_terms(equation, arrays), float(np.finfo(dtype).eps))


@settings(deadline=None, max_examples=40)
@given(case=adversarial())
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_torch_values_and_gradients_at_any_magnitude(case: Any, dtype: str) -> None:
    torch = pytest.importorskip("torch")
    equation, key, spread, holes = case
    arrays = operands(equation, key, spread, holes, np.dtype(dtype))
    tensors = [torch.from_numpy(x.copy()).requires_grad_() for x in arrays]
    got = tops.einsum(equation, *tensors, semiring="logsumexp")
    want, weights = reference(equation, arrays)
    eps = float(np.finfo(dtype).eps)
    terms = summed_terms(equation, arrays)
    check_values(got.detach().numpy(), want, terms, eps)
    seeds = np.random.default_rng(key[1]).standard_normal(want.shape)
    upstream = np.where(np.isfinite(want), seeds, 0.0)
    finite = torch.isfinite(got)
    loss = torch.where(finite, got, torch.zeros_like(got)) * torch.from_numpy(upstream).to(got)
    loss.sum().backward()
    check_gradients(equation, arrays, tensors, (want, weights), upstream, eps, terms)


def check_gradients(
    equation: str,
    arrays: list[np.ndarray],
    tensors: list[Any],
    reference_: tuple[np.ndarray, np.ndarray],
    upstream: np.ndarray,
    eps: float,
    terms: int,
) -> None:
    """Each operand's gradient: the softmax weights of its terms times the upstream gradient.

    The bound: a weight is computed with a relative error of the unit roundoff times the
    spread of its shifted terms (at most `_logmatmul.MAX_SPREAD`) and the terms summed.
    """
    values, weights = reference_
    lhs, output = equation.split("->")
    contracted = "".join(sorted(set(lhs) - set(output) - {","}))
    full = output + contracted
    lead = upstream.shape + (1,) * len(contracted)
    flow = weights * _wide(upstream).reshape(lead)
    # a weight exp(term - value) is as precise as the term: a relative unit roundoff
    # times its size, max(1, |value|), besides the spread and the sum
    size = np.abs(upstream) * np.maximum(1, np.abs(np.where(np.isfinite(values), values, 0)))
    sizes = np.broadcast_to(size.astype(np.float64).reshape(lead), flow.shape)
    for term, x, tensor in zip(lhs.split(","), arrays, tensors, strict=True):
        assert tensor.grad is not None
        got = tensor.grad.numpy()
        assert np.isfinite(got).all()
        want = np.einsum(f"{full}->{term}", flow.astype(np.float64))
        scale = np.einsum(f"{full}->{term}", sizes)
        bound = (2 * _logmatmul.MAX_SPREAD + 4 * terms) * eps * scale
        assert (np.abs(got - want) <= bound).all(), float((np.abs(got - want) / bound).max())
        assert x.shape == got.shape


# --- 16-bit floats: computed in float32 -----------------------------------------------------


@settings(deadline=None, max_examples=30)
@given(case=adversarial(("ij,jk->ik", "i,ij->j", "bij,bjk->bik")))
@pytest.mark.parametrize("family", ["numpy float16", "torch float16", "torch bfloat16"])
def test_sixteen_bit_floats_are_computed_in_float32(case: Any, family: str) -> None:
    name, dtype = family.split()
    equation, key, spread, holes = case
    if name == "numpy":
        arrays = operands(equation, key, min(spread, 1e4), holes, np.float16)
        got = np.asarray(tops.einsum(equation, *arrays, semiring="logsumexp"))
        assert got.dtype == np.float16
        exact = [x.astype(np.float64) for x in arrays]
    else:
        torch = pytest.importorskip("torch")
        wide = operands(equation, key, spread, holes, np.float32)
        tensors = [torch.from_numpy(x).to(getattr(torch, dtype)) for x in wide]
        result = tops.einsum(equation, *tensors, semiring="logsumexp")
        assert result.dtype == getattr(torch, dtype)
        got = result.float().numpy()
        exact = [t.double().numpy() for t in tensors]
    want, _ = reference(equation, exact)
    narrow = 2.0**-10 if dtype == "float16" else 2.0**-7
    rounding = narrow * np.maximum(1, np.abs(want))  # the float32 result rounded to 16 bits
    terms = summed_terms(equation, exact)
    check_values(got, want, terms, float(np.finfo(np.float32).eps), rounding)


# --- minus infinity, max and min -----------------------------------------------------------


def test_minus_infinity_results_have_no_nan_gradient() -> None:
    torch = pytest.importorskip("torch")
    a = torch.tensor([[0.0, -np.inf], [1.0, 2.0]], requires_grad=True)
    b = torch.tensor([[-np.inf, -1.0], [-np.inf, 3.0]], requires_grad=True)
    got = tops.einsum("ij,jk->ik", a, b, semiring="logsumexp")
    assert torch.isneginf(got[:, 0]).all()  # every term of that column is -inf
    got[:, 1].sum().backward()
    assert a.grad is not None
    assert b.grad is not None
    share = 1 / (1 + np.e**5)  # row 1: terms 1 - 1 and 2 + 3
    np.testing.assert_allclose(a.grad.numpy(), [[1.0, 0.0], [share, 1 - share]], rtol=1e-6)
    np.testing.assert_allclose(b.grad[:, 0].numpy(), [0.0, 0.0])


@pytest.mark.parametrize("family", ["numpy", "torch"])
@pytest.mark.parametrize("form", ["einsum", "expression"])
def test_one_step_with_maxima_that_are_not_finite(family: str, form: str) -> None:
    """A step's operand all -inf, with +inf, with nan: as the broadcast reference says."""
    a = np.log(np.random.default_rng(7).dirichlet(np.ones(4), 4))
    rows = {
        "all -inf": np.full(4, -np.inf),
        "+inf": np.array([0.0, np.inf, 1.0, -np.inf]),
        "nan": np.array([0.0, np.nan, 1.0, 2.0]),
        "finite": np.array([-300.0, 0.0, 250.0, -1.0]),
    }
    torch = pytest.importorskip("torch") if family == "torch" else None
    array = np.asarray if torch is None else torch.tensor
    step = tops.einsum_expression("i,ij->j", (4,), array(a), constants=[1], semiring="logsumexp")
    for name, x in rows.items():
        with np.errstate(invalid="ignore"):  # logaddexp(inf, inf) is inf, with a warning
            want = np.logaddexp.reduce(x[:, None] + a, axis=0)
        if form == "einsum":
            got = tops.einsum("i,ij->j", array(x), array(a), semiring="logsumexp")
        else:
            got = step(array(x))
        got = np.asarray(got)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=name)


@settings(deadline=None, max_examples=40)
@given(case=adversarial(("ij,jk->ik", "i,ij->j", "bij,bjk->bik", "ijk,jkl->il")))
@pytest.mark.parametrize("semiring", ["max", "min"])
def test_max_and_min_with_back_pointers_at_the_same_magnitudes(case: Any, semiring: str) -> None:
    equation, key, spread, holes = case
    arrays = operands(equation, key, spread, holes, np.float64)
    if semiring == "min":
        arrays = [np.negative(x) for x in arrays]  # +inf where max has -inf
    values, indices = tops.einsum(equation, *arrays, semiring=semiring, argmax=True)
    total, output, contracted = terms_of(equation, arrays)
    axes = tuple(range(len(output), total.ndim))
    reduce = np.max if semiring == "max" else np.min
    want = reduce(total, axis=axes) if axes else total
    np.testing.assert_array_equal(values, want.astype(np.float64))  # a sum, rounded once
    # the indices reach the optimum: the term they pick is the value
    at = np.indices(want.shape)
    picked = total[(*at, *(np.asarray(indices[letter]) for letter in contracted))]
    finite = np.isfinite(want)
    bound = np.finfo(np.float64).eps * np.maximum(1, np.abs(want[finite]))
    assert (np.abs(picked[finite] - want[finite]) <= bound).all()
    np.testing.assert_array_equal(picked[~finite], want[~finite])


# --- where the exact path runs -----------------------------------------------------------------


def _recorded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The elements of every exact block computed from now on."""
    blocks: list[int] = []
    block = _logmatmul._broadcast_logsumexp

    def recorded(backend: Any, a: Any, b: Any) -> Any:
        blocks.append(a.shape[0] * a.shape[1] * a.shape[2] * b.shape[1])
        return block(backend, a, b)

    monkeypatch.setattr(_logmatmul, "_broadcast_logsumexp", recorded)
    return blocks


def test_the_shifted_product_stays_the_path_where_it_is_exact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    blocks = _recorded(monkeypatch)
    generator = rng("exact path")
    a, b = 3 * generator.standard_normal((64, 48)), 3 * generator.standard_normal((48, 80))
    tops.einsum("ij,jk->ik", a, b, semiring="logsumexp")
    assert blocks == []
    # one column whose terms all fall far below the shifts: only its tiles are recomputed
    b[:, 37] = -2000.0
    b[5, 37] = 0.0
    a[:, 5] = -3000.0
    got = tops.einsum("ij,jk->ik", a, b, semiring="logsumexp")
    want, _ = reference("ij,jk->ik", [a, b])
    check_values(got, want, 48, float(np.finfo(np.float64).eps))
    assert blocks
    assert max(blocks) <= _logmatmul.SPARSE_TILE
    assert sum(blocks) <= a.size * b.shape[1] / 3  # a few tiles of the column, not the rest


@pytest.mark.parametrize("limit", [1, 7, 100, None])
def test_exact_blocks_never_exceed_the_memory_limit(
    monkeypatch: pytest.MonkeyPatch, limit: int | None
) -> None:
    blocks = _recorded(monkeypatch)
    arrays = operands("bij,bjk->bik", ({"b": 2, "i": 4, "j": 9, "k": 5}, 7), 1e4, 0.0, np.float64)
    got = tops.einsum("bij,bjk->bik", *arrays, semiring="logsumexp", memory_limit=limit)
    want, _ = reference("bij,bjk->bik", arrays)
    check_values(got, want, 9, float(np.finfo(np.float64).eps))
    assert blocks
    assert max(blocks) <= (limit or BLOCK_CAP)


def test_the_spread_kept_is_what_the_bound_allows() -> None:
    """The fast path's error bound, 3 spread + log k + k + 6 units of roundoff, fits."""
    for inner in range(1, 300):
        gap = _logmatmul.spread(inner)
        if gap <= 0:
            assert _logmatmul.floor(inner) == math.inf
            continue
        assert 3 * gap + math.log(inner) + inner + 8 <= 2 * ULPS * inner  # in units of eps/2
        assert gap <= _logmatmul.MAX_SPREAD
        assert math.exp(-gap - math.log(inner)) > np.finfo(np.float32).tiny  # normal terms


# --- graphs staged before their values are known ---------------------------------------------


def _far_apart() -> tuple[list[np.ndarray], np.ndarray]:
    arrays = operands("ij,jk->ik", ({"i": 4, "j": 5, "k": 6}, 11), 1e4, 0.0, np.float64)
    return arrays, reference("ij,jk->ik", arrays)[0]


def test_jax_jit_is_exact_everywhere() -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    arrays, want = _far_apart()
    contract = jax.jit(lambda a, b: tops.einsum("ij,jk->ik", a, b, semiring="logsumexp"))
    got = contract(*(jnp.asarray(x) for x in arrays))
    check_values(np.asarray(got), want, 5, float(np.finfo(np.float64).eps))
    grads = jax.grad(lambda a, b: contract(a, b).sum(), argnums=(0, 1))(*map(jnp.asarray, arrays))
    assert all(np.isfinite(np.asarray(g)).all() for g in grads)


def test_torch_compile_is_exact_everywhere() -> None:
    torch = pytest.importorskip("torch")
    arrays, want = _far_apart()
    contract = torch.compile(
        lambda a, b: tops.einsum("ij,jk->ik", a, b, semiring="logsumexp"),
        fullgraph=True,
        backend="eager",
    )
    got = contract(*(torch.from_numpy(x) for x in arrays))
    check_values(got.numpy(), want, 5, float(np.finfo(np.float64).eps))


def test_dask_stays_lazy_and_exact() -> None:
    da = pytest.importorskip("dask.array")
    arrays, want = _far_apart()
    a, b = (da.from_array(x, chunks=2) for x in arrays)
    got = tops.einsum("ij,jk->ik", a, b, semiring="logsumexp")
    assert isinstance(got, da.Array)
    check_values(got.compute(), want, 5, float(np.finfo(np.float64).eps))
