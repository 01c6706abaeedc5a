"""Einsum over other semirings: logsumexp, max, min (and the adapters' primitives for them)."""

from __future__ import annotations

import functools
import importlib
from collections import Counter
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings

import tensorops as tops
from tensorops._backends import get_backend
from tests._seed import rng, tolerance
from tests.strategies import equations
from tests.test_einsum import CATALOGUE

# the oracle's log-sum-exp (SciPy comes with JAX, a test dependency)
logsumexp = pytest.importorskip("scipy.special").logsumexp

# --- the adapters' primitives ------------------------------------------------------------


def test_primitives_on_every_family(backend: Any) -> None:
    x = np.array([[0.5, -np.inf, 2.0], [-np.inf, -np.inf, -np.inf]])
    adapter = get_backend(backend.asarray(x))
    exps, shift = adapter.shifted_exp(backend.asarray(x), 1)
    np.testing.assert_allclose(backend.to_numpy(shift), [[2.0], [0.0]])  # all -inf: 0
    np.testing.assert_allclose(backend.to_numpy(exps), np.exp(x - [[2.0], [0.0]]))
    logs = adapter.log(backend.asarray(np.array([1.0, np.e, np.inf])))
    np.testing.assert_allclose(backend.to_numpy(logs), [0.0, 1.0, np.inf])
    a, b = backend.asarray(np.array([-np.inf, 1.0])), backend.asarray(np.array([-np.inf, 2.0]))
    np.testing.assert_allclose(
        backend.to_numpy(adapter.logaddexp(a, b)), np.logaddexp([-np.inf, 1], [-np.inf, 2])
    )
    np.testing.assert_array_equal(backend.to_numpy(adapter.maximum(a, b)), [-np.inf, 2.0])
    np.testing.assert_array_equal(backend.to_numpy(adapter.minimum(a, b)), [-np.inf, 1.0])
    np.testing.assert_array_equal(backend.to_numpy(adapter.where(a > b, a, b)), [-np.inf, 2.0])
    grid = backend.asarray(np.arange(6.0).reshape(2, 3))
    at = adapter.arange(6, grid)
    assert adapter.dtype_kind(at.dtype) == "i"
    index = adapter.reshape(at, (3, 2)) % 5
    np.testing.assert_array_equal(
        backend.to_numpy(adapter.take(grid, index)), [[0, 1], [2, 3], [4, 0]]
    )
    np.testing.assert_array_equal(
        backend.to_numpy(adapter.full((2,), -np.inf, grid)), [-np.inf] * 2
    )


def test_known_and_widened_on_every_family(backend: Any) -> None:
    x = backend.asarray(np.array([[1.5, -2.0], [0.25, 4.0]]))
    adapter = get_backend(x)
    known = adapter.known(x < 1)
    if known is not None:  # eager families: the values themselves
        np.testing.assert_array_equal(np.asarray(known), [[False, True], [True, False]])
    else:  # a family that computes only when asked, or a graph
        assert backend.name in ("dask", "tinygrad", "pytensor")
    assert adapter.widened(x) is x


#: The bfloat16 of each family that has one (``module:attribute``): `widened` makes it
#: float32 as it makes float16 (NumPy, Dask, PyTensor and array-api-strict have none).
BFLOAT16 = {
    "torch": "torch:bfloat16",
    "jax": "jax.numpy:bfloat16",
    "tensorflow": "tensorflow:bfloat16",
    "paddle": "paddle:bfloat16",
    "tinygrad": "tinygrad:dtypes.bfloat16",
    "mlx": "mlx.core:bfloat16",
}


def test_sixteen_bit_floats_are_widened_to_float32_on_every_family(backend: Any) -> None:
    values = np.array([[1.5, -2.0]], np.float32)
    single = backend.asarray(values)
    adapter = get_backend(single)
    assert adapter.widened(single) is single
    halves = []
    if backend.name != "array_api_strict":  # the standard has no 16-bit floats
        halves.append(backend.asarray(values.astype(np.float16)))
    if backend.name in BFLOAT16:
        module, path = BFLOAT16[backend.name].split(":")
        dtype = functools.reduce(getattr, path.split("."), importlib.import_module(module))
        halves.append(adapter.astype(single, dtype))
    for half in halves:
        assert half.dtype != single.dtype
        wide = adapter.widened(half)
        assert wide.dtype == single.dtype
        np.testing.assert_array_equal(backend.to_numpy(wide), values)


def test_dtype_kinds_and_floating(backend: Any) -> None:
    for values, kind in [([True], "b"), ([1], "i"), (np.array([1], np.uint8), "i"), ([1.0], "f")]:
        x = backend.asarray(np.asarray(values))
        adapter = get_backend(x)
        assert adapter.dtype_kind(x.dtype) == kind
        assert adapter.dtype_kind(adapter.floating(x).dtype) == "f"
    # no complex64 from NumPy's complex in array-api-strict; no complex at all in some
    if backend.name != "array_api_strict" and "complex128" not in backend.lacks:
        x = backend.asarray(np.array([1j]))
        assert get_backend(x).dtype_kind(x.dtype) == "c"


def test_numpy_floating_is_what_exp_gives() -> None:
    adapter = get_backend(np.zeros(1))
    for dtype in (np.int8, np.uint8, np.int16, np.int32, np.int64, np.bool_):
        x = np.zeros(2, dtype)
        assert adapter.floating(x).dtype == np.exp(x).dtype


def test_logsumexp_reduction_of_an_all_minus_infinity_slice_warns_nothing(backend: Any) -> None:
    x = backend.asarray(np.full((2, 3), -np.inf))
    result = get_backend(x).reduce(x, "logsumexp", (1,))
    np.testing.assert_array_equal(backend.to_numpy(result), [-np.inf, -np.inf])


# --- a brute-force oracle ----------------------------------------------------------------

#: Letters that stand for the dimensions of ``...`` in the oracle (never in equations here).
_DOTS = "UVWXYZ"


def _expand(equation: str, ndims: list[int]) -> tuple[list[str], str]:
    """The terms and output of a compact equation, ``...`` spelled out, as NumPy reads it."""
    equation = equation.replace(" ", "")
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    ranks = [nd - len(t.replace("...", "")) for t, nd in zip(terms, ndims, strict=True)]
    dots = max((r for t, r in zip(terms, ranks, strict=True) if "..." in t), default=0)
    letters = _DOTS[len(_DOTS) - dots :]
    spelled = [t.replace("...", letters[dots - r :]) for t, r in zip(terms, ranks, strict=True)]
    if arrow:
        return spelled, rhs.replace("...", letters)
    counts = Counter("".join(t.replace("...", "") for t in terms))
    return spelled, letters + "".join(sorted(a for a, n in counts.items() if n == 1))


def _total(equation: str, arrays: list[np.ndarray]) -> tuple[np.ndarray, int]:
    """Every operand broadcast to the full index space and added: (output axes, contracted).

    Returns the sum (float64, or the operands' integer dtype) and the output's rank.
    """
    terms, out = _expand(equation, [a.ndim for a in arrays])
    contracted = sorted({a for t in terms for a in t} - set(out))
    full = list(out) + contracted
    sizes: dict[str, int] = {}
    for term, a in zip(terms, arrays, strict=True):
        for letter, n in zip(term, a.shape, strict=True):
            sizes[letter] = max(sizes.get(letter, 1), n) if n else 0
    dtype = np.result_type(*arrays) if arrays else np.float64
    total = np.zeros([sizes[a] for a in full], dtype if dtype.kind == "i" else np.float64)
    for term, a in zip(terms, arrays, strict=True):
        distinct = "".join(dict.fromkeys(term))
        taken = np.einsum(f"{term}->{distinct}", a) if distinct != term else a
        order = sorted(range(len(distinct)), key=lambda i: full.index(distinct[i]))
        shape = [1] * len(full)
        for i in order:
            shape[full.index(distinct[i])] = taken.shape[i]
        total = total + taken.transpose(order).reshape(shape)
    return total, len(out)


def brute(equation: str, arrays: list[np.ndarray], semiring: str) -> np.ndarray:
    """The semiring einsum by brute force: the full broadcast, then one reduction."""
    total, rank = _total(equation, arrays)
    axes = tuple(range(rank, total.ndim))
    if not axes:
        return total
    if semiring == "logsumexp":
        if total.size == 0:  # SciPy reads no axes of an empty array: the sum of no exps
            return np.full(total.shape[:rank], -np.inf)
        return np.asarray(logsumexp(total, axis=axes))
    if total.dtype.kind == "f":
        extreme = -np.inf if semiring == "max" else np.inf
        return np.asarray(getattr(np, f"a{semiring}")(total, axis=axes, initial=extreme))
    return np.asarray(getattr(np, f"a{semiring}")(total, axis=axes))


def _tolerance(arrays: list[np.ndarray], dtype: Any, semiring: str) -> dict[str, float]:
    """Rounding of adding the operands (and of the log-sum's terms), from dtype and size."""
    finite = [np.abs(a[np.isfinite(a)]).max(initial=0.0) for a in arrays]
    scale = 1.0 + float(sum(finite))
    terms = max(1, int(np.prod([a.size for a in arrays], dtype=float)))
    if semiring == "logsumexp":
        return tolerance(dtype, terms=min(terms, 10**6), scale=scale)
    return tolerance(dtype, terms=len(arrays) ** 2, scale=scale)


def _close(
    got: Any, want: np.ndarray, arrays: list[np.ndarray], semiring: str, family: Any = None
) -> None:
    """`got` against `want`; `family` computed it, its exponentials perhaps coarser."""
    got = np.asarray(got)
    assert got.shape == want.shape
    dtype = got.dtype
    if family is not None and semiring == "logsumexp":
        dtype = family.exp_precision(dtype)
    np.testing.assert_allclose(got, want, **_tolerance(arrays, dtype, semiring))


def _operands(shapes: list[tuple[int, ...]], key: str, scale: float = 3.0) -> list[np.ndarray]:
    generator = rng("test_semiring", key, str(shapes))
    return [np.asarray(scale * generator.standard_normal(shape)) for shape in shapes]


SEMIRINGS = ["logsumexp", "max", "min"]


def _run(
    equation: str, arrays: list[np.ndarray], semiring: str, convert: Any = None, **kw: Any
) -> Any:
    convert = convert or (lambda a: a)
    return tops.einsum(equation, *[convert(a) for a in arrays], semiring=semiring, **kw)


# --- against brute force -----------------------------------------------------------------


@pytest.mark.parametrize("semiring", SEMIRINGS)
@pytest.mark.parametrize(("equation", "shapes"), CATALOGUE)
def test_catalogue(
    backend: Any, semiring: str, equation: str, shapes: tuple[tuple[int, ...], ...]
) -> None:
    arrays = _operands(list(shapes), equation)
    want = brute(equation, arrays, semiring)
    got = _run(equation, arrays, semiring, backend.asarray)
    _close(backend.to_numpy(got), want, arrays, semiring, backend)


def _compare(
    case: tuple[str, list[tuple[int, ...]]],
    semiring: str,
    convert: Any = np.asarray,
    back: Any = np.asarray,
    argmax: bool = False,
) -> None:
    """tops against brute force; an equation NumPy refuses is a TensorOpsError."""
    equation, shapes = case
    arrays = _operands(shapes, equation)
    try:
        np.einsum(equation, *arrays)
    except ValueError:
        with pytest.raises(tops.TensorOpsError):
            _run(equation, arrays, semiring, convert, argmax=argmax)
        return
    got = _run(equation, arrays, semiring, convert, argmax=argmax)
    if argmax:
        indices = {axis: back(index) for axis, index in got[1].items()}
        _check_indices(equation, arrays, semiring, back(got[0]), indices)
    else:
        _close(back(got), brute(equation, arrays, semiring), arrays, semiring)


@settings(deadline=None, max_examples=150)
@given(case=equations())
@pytest.mark.parametrize("semiring", SEMIRINGS)
def test_random_equations_numpy(case: tuple[str, list[tuple[int, ...]]], semiring: str) -> None:
    _compare(case, semiring, np.asarray, np.asarray)


@settings(deadline=None, max_examples=60)
@given(case=equations())
@pytest.mark.parametrize("semiring", SEMIRINGS)
def test_random_equations_torch(case: tuple[str, list[tuple[int, ...]]], semiring: str) -> None:
    torch = pytest.importorskip("torch")
    _compare(case, semiring, torch.from_numpy, lambda t: t.numpy())


@settings(deadline=None, max_examples=30)
@given(case=equations())
@pytest.mark.parametrize("semiring", SEMIRINGS)
def test_random_equations_array_api_strict(
    case: tuple[str, list[tuple[int, ...]]], semiring: str
) -> None:
    xp = pytest.importorskip("array_api_strict")
    _compare(case, semiring, xp.asarray, np.asarray)


@settings(deadline=None, max_examples=60)
@given(case=equations())
@pytest.mark.parametrize("semiring", ["max", "min"])
def test_random_equations_with_back_pointers(
    case: tuple[str, list[tuple[int, ...]]], semiring: str
) -> None:
    _compare(case, semiring, argmax=True)


def _check_indices(
    equation: str, arrays: list[np.ndarray], semiring: str, values: Any, indices: dict[str, Any]
) -> None:
    """The indices are the brute-force arg-optimum, and the total there is the optimum."""
    total, rank = _total(equation, arrays)
    terms, out = _expand(equation, [a.ndim for a in arrays])
    contracted = sorted({a for t in terms for a in t} - set(out))
    assert sorted(indices) == contracted
    _close(values, brute(equation, arrays, semiring), arrays, semiring)
    grid = np.indices(total.shape[:rank], sparse=True)
    at = tuple(grid) + tuple(np.asarray(indices[a]) for a in contracted)
    for a in contracted:
        assert np.asarray(indices[a]).shape == total.shape[:rank]
    _close(total[at], np.asarray(values), arrays, semiring)  # the optimum is reached there
    flat = total.reshape(*total.shape[:rank], -1)
    arg = (flat.argmax if semiring == "max" else flat.argmin)(-1)
    best = np.take_along_axis(flat, arg[..., None], -1)
    ties = np.isclose(flat, best, rtol=1e-9, atol=1e-9).sum(-1) > 1
    want = np.unravel_index(arg, total.shape[rank:]) if contracted else ()
    for a, expected in zip(contracted, want, strict=True):
        np.testing.assert_array_equal(np.asarray(indices[a])[~ties], expected[~ties])


# --- every notation ----------------------------------------------------------------------


@pytest.mark.parametrize("semiring", SEMIRINGS)
def test_every_notation_agrees(semiring: str) -> None:
    a, b = _operands([(4, 6), (3, 5)], "notation")
    want = brute("ij,jk->ik", [a, b.reshape(3, 5)[:, :].repeat(2, 0)[:6]], semiring)
    b6 = b.repeat(2, 0)[:6]
    forms = [
        tops.einsum("ij,jk->ik", a, b6, semiring=semiring),
        tops.einsum("ij,jk", a, b6, semiring=semiring),  # implicit output
        tops.einsum(a, b6, "i j, j k -> i k", semiring=semiring),  # einops order
        tops.einsum(a, b6, pattern="i j, j k -> i k", semiring=semiring),
        tops.einsum("row inner, inner col -> row col", a, b6, semiring=semiring),
        tops.einsum(a, [0, 1], b6, [1, 2], [0, 2], semiring=semiring),  # sublists
        tops.einsum("ij,jk->ik", [a, b6], semiring=semiring),  # one list of operands
        tops.einsum("...j,jk->...k", a, b6, semiring=semiring),
        tops.einsum("i (g j), (g j) k -> i k", a, b6, g=2, semiring=semiring),
    ]
    for got in forms:
        _close(got, want, [a, b6], semiring)


@pytest.mark.parametrize("semiring", SEMIRINGS)
def test_compositions_in_the_output_and_python_numbers(semiring: str) -> None:
    a, b = _operands([(4, 6), (6, 5)], "compose")
    got = tops.einsum("i j, j k -> (i k)", a, b, semiring=semiring)
    _close(got, brute("ij,jk->ik", [a, b], semiring).reshape(20), [a, b], semiring)
    got = tops.einsum(",ij->ij", 2.0, a, semiring=semiring)  # a number: 0-d operand
    np.testing.assert_allclose(got, a + 2.0)
    diagonal = tops.einsum("ii->i", np.arange(9.0).reshape(3, 3), semiring=semiring)
    np.testing.assert_array_equal(diagonal, [0.0, 4.0, 8.0])


def test_a_semiring_and_the_sum_of_the_same_shapes_are_planned_apart() -> None:
    a, b = _operands([(3, 4), (4, 2)], "cache")
    summed = tops.einsum("ij,jk->ik", a, b)
    maxed = tops.einsum("ij,jk->ik", a, b, semiring="max")
    np.testing.assert_allclose(summed, a @ b)
    np.testing.assert_allclose(maxed, brute("ij,jk->ik", [a, b], "max"))
    np.testing.assert_allclose(tops.einsum("ij,jk->ik", a, b, semiring="sum"), a @ b)


# --- plans: strategies, paths, memory limits -----------------------------------------------

RING = "ab,bc,cd,de,ea->"
RING_SHAPES = [(6, 5), (5, 7), (7, 4), (4, 6), (6, 6)]


@pytest.mark.parametrize("semiring", SEMIRINGS)
@pytest.mark.parametrize(
    "strategy",
    ["auto", "optimal", "dp", "greedy", "hyper", "partition", [(0, 1), (0, 1), (0, 2), (0, 1)]],
)
def test_every_strategy_and_explicit_paths(semiring: str, strategy: Any) -> None:
    arrays = _operands(RING_SHAPES, "ring")
    got = tops.einsum(RING, *arrays, semiring=semiring, strategy=strategy)
    _close(got, brute(RING, arrays, semiring), arrays, semiring)
    numpy_path = ["einsum_path", (0, 1), (0, 1), (0, 2), (0, 1)]
    got = tops.einsum(RING, *arrays, semiring=semiring, optimize=numpy_path)
    _close(got, brute(RING, arrays, semiring), arrays, semiring)
    got = tops.einsum(RING, *arrays, semiring=semiring, optimize=False)  # one step: pairwise
    _close(got, brute(RING, arrays, semiring), arrays, semiring)


@pytest.mark.parametrize("semiring", SEMIRINGS)
@pytest.mark.parametrize("argmax", [False, True])
def test_memory_limit_slices_and_results_agree(semiring: str, argmax: bool) -> None:
    if argmax and semiring == "logsumexp":
        return
    equation, shapes = "ab,bc,cd,da->ac", [(8, 9), (9, 10), (10, 7), (7, 8)]
    arrays = _operands(shapes, "sliced")
    plan = tops.einsum_path(equation, *shapes, semiring=semiring, memory_limit=20)
    assert plan.sliced_axes
    assert plan.largest_intermediate <= 20
    got = tops.einsum(equation, *arrays, semiring=semiring, memory_limit=20, argmax=argmax)
    if argmax:
        _check_indices(equation, arrays, semiring, *got)
    else:
        _close(got, brute(equation, arrays, semiring), arrays, semiring)


@pytest.mark.parametrize("limit", [1, 7, 50, None])
@pytest.mark.parametrize("semiring", ["max", "min"])
def test_max_plus_blocks_never_exceed_the_limit(
    monkeypatch: pytest.MonkeyPatch, semiring: str, limit: int | None
) -> None:
    from tensorops._einsum.semirings import _tropical

    blocks: list[int] = []
    block = _tropical.Tropical._block

    def recorded(self: Any, backend: Any, a: Any, b: Any, found: bool) -> Any:
        blocks.append(a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2])
        return block(self, backend, a, b, found)

    monkeypatch.setattr(_tropical.Tropical, "_block", recorded)
    equation, shapes = "bij,bjk->bik", [(3, 5, 6), (3, 6, 4)]
    arrays = _operands(shapes, "blocks")
    values, indices = tops.einsum(
        equation, *arrays, semiring=semiring, memory_limit=limit, argmax=True
    )
    _check_indices(equation, arrays, semiring, values, indices)
    assert blocks
    assert max(blocks) <= (limit or 360)
    if limit == 1:
        assert len(blocks) == 360


def test_max_plus_peak_memory_follows_the_block_cap() -> None:
    tracemalloc = pytest.importorskip("tracemalloc")
    a, b = _operands([(64, 1200), (1200, 160)], "peak")  # a full block: 12 million elements
    want = (a[:, :, None] + b[None]).max(1)
    for limit, bound in [(10**5, 3 * 10**6), (None, 8 * (1 << 22) + 3 * 10**6)]:
        tracemalloc.start()
        got = tops.einsum("ij,jk->ik", a, b, semiring="max", memory_limit=limit)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        np.testing.assert_array_equal(got, want)
        assert peak < bound, (limit, peak)


def test_the_plan_reports_the_semiring() -> None:
    shapes = [(2, 30), (30, 40), (40, 50)]
    plan = tops.einsum_path("ij,jk,kl->il", *shapes, semiring="logsumexp")
    assert plan.semiring == "logsumexp"
    assert "Semiring:  logsumexp (BLAS on shifted exps" in str(plan)
    assert plan != tops.einsum_path("ij,jk,kl->il", *shapes)
    assert tops.einsum_path("ij,jk,kl->il", *shapes).semiring == "sum"
    assert "Semiring" not in str(tops.einsum_path("ij,jk,kl->il", *shapes))
    assert "no BLAS" in str(tops.einsum_path("ij,jk,kl->il", *shapes, semiring="min"))


def test_logsumexp_plans_pay_for_the_exps_of_intermediates() -> None:
    """A path that writes fewer intermediate elements wins where FLOPs alone tie."""
    from tensorops._einsum.equations._semiring import LOGSUMEXP_WRITE_WEIGHT
    from tensorops._einsum.planning._paths import plan_contraction

    inputs = [("a", "b"), ("b", "c"), ("c", "d")]
    sizes = {"a": 2, "b": 3, "c": 20, "d": 8}  # (ab)c: 880 FLOPs, 40 written; a(bc): 1056, 24
    flops = plan_contraction(inputs, ("a", "d"), sizes, "optimal")
    weighted = plan_contraction(
        inputs, ("a", "d"), sizes, "optimal", write_weight=LOGSUMEXP_WRITE_WEIGHT
    )
    assert flops.path != weighted.path
    shapes = [(2, 3), (3, 20), (20, 8)]
    assert tops.einsum_path("ab,bc,cd->ad", *shapes, strategy="optimal").path == list(flops.path)
    plan = tops.einsum_path("ab,bc,cd->ad", *shapes, strategy="optimal", semiring="logsumexp")
    assert plan.path == list(weighted.path)


# --- numerics ----------------------------------------------------------------------------


@pytest.mark.parametrize("offset", [-1000.0, 1000.0])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_large_magnitudes_are_stable(offset: float, dtype: Any) -> None:
    a, b, c = _operands([(5, 30), (30, 40), (40, 6)], "stable", scale=2.0)
    arrays = [(x + offset).astype(dtype) for x in (a, b, c)]
    want = brute("ij,jk,kl->il", [x.astype(np.float64) for x in arrays], "logsumexp")
    got = tops.einsum("ij,jk,kl->il", *arrays, semiring="logsumexp")
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=8 * np.finfo(dtype).eps * 30)
    # what an exp/matmul/log does with no shift: nothing finite survives
    with np.errstate(all="ignore"):
        naive = np.log(np.exp(arrays[0]) @ np.exp(arrays[1]) @ np.exp(arrays[2]))
    assert not np.isfinite(naive).any()
    # as precise as the hand-written shifted exp/matmul/log, step for step
    shifted = _hand_written([x.astype(np.float64) for x in arrays])
    np.testing.assert_allclose(got, shifted.astype(dtype), rtol=8 * np.finfo(dtype).eps * 30)


def _hand_written(arrays: list[np.ndarray]) -> np.ndarray:
    """log(exp(a - ma) @ exp(b - mb)) + ma + mb along a chain of matrices."""
    x = arrays[0]
    for y in arrays[1:]:
        top_x, top_y = x.max(1, keepdims=True), y.max(0, keepdims=True)
        x = np.log(np.exp(x - top_x) @ np.exp(y - top_y)) + top_x + top_y
    return x


@pytest.mark.parametrize("semiring", SEMIRINGS)
def test_minus_infinity_is_a_value(backend: Any, semiring: str) -> None:
    a, b = _operands([(4, 5), (5, 3)], "inf")
    a[0, :] = -np.inf  # a row of zero probabilities: -inf, not nan
    a[1, 2] = -np.inf
    b[:, 1] = -np.inf
    b[3, 0] = -np.inf
    for equation in ("ij,jk->ik", "ij,jk->", "ij,ij->i", "ij->i", "ij,jk->ijk"):
        other = b if "jk" in equation else a[::-1].copy()
        want = brute(equation, [a, other][: equation.count(",") + 1], semiring)
        arrays = [backend.asarray(x) for x in (a, other)][: equation.count(",") + 1]
        got = backend.to_numpy(tops.einsum(equation, *arrays, semiring=semiring))
        assert not np.isnan(got).any()
        rtol = backend.exp_rtol(1e-12) if semiring == "logsumexp" else 1e-12
        np.testing.assert_allclose(got, want, rtol=rtol)


def test_empty_axes(backend: Any) -> None:
    a, b = np.ones((3, 0)), np.ones((0, 2))
    for semiring, zero in [("logsumexp", -np.inf), ("max", -np.inf), ("min", np.inf)]:
        got = tops.einsum("ij,jk->ik", backend.asarray(a), backend.asarray(b), semiring=semiring)
        np.testing.assert_array_equal(backend.to_numpy(got), np.full((3, 2), zero))
        got = tops.einsum("ij->j", backend.asarray(a), semiring=semiring)
        assert backend.to_numpy(got).shape == (0,)


# --- dtypes and numpy's keywords ---------------------------------------------------------


def test_dtypes() -> None:
    ints = np.arange(12).reshape(3, 4)
    lse = tops.einsum("ij,jk->ik", ints, ints.T, semiring="logsumexp")
    assert lse.dtype == np.float64  # as np.exp converts int64
    np.testing.assert_allclose(lse, brute("ij,jk->ik", [ints, ints.T], "logsumexp"))
    small = tops.einsum("ij->i", ints.astype(np.int16), semiring="logsumexp")
    assert small.dtype == np.float32
    shortest = tops.einsum("ij,jk->ik", ints, ints.T, semiring="min")
    assert shortest.dtype == ints.dtype  # integer weights stay exact
    np.testing.assert_array_equal(shortest, brute("ij,jk->ik", [ints, ints.T], "min"))
    mixed = tops.einsum("ij,jk->ik", ints.astype(np.float32), ints.T, semiring="max")
    assert mixed.dtype == np.result_type(np.float32, ints.dtype)
    short = ints.astype(np.int16)
    single = tops.einsum("ij,jk->ik", short, short.T, semiring="logsumexp", dtype=np.float32)
    assert single.dtype == np.float32


def test_torch_dtypes() -> None:
    torch = pytest.importorskip("torch")
    ints = torch.arange(12).reshape(3, 4)
    assert tops.einsum("ij->i", ints, semiring="logsumexp").dtype == torch.get_default_dtype()
    assert tops.einsum("ij->i", ints, semiring="max").dtype == torch.int64
    half = torch.randn(3, 4, dtype=torch.float16)
    assert tops.einsum("ij,jk->ik", half, half.T, semiring="max").dtype == torch.float16


def test_out_and_order() -> None:
    a, b = _operands([(3, 4), (4, 5)], "out")
    out = np.empty((3, 5))
    result = tops.einsum("ij,jk->ik", a, b, semiring="logsumexp", out=out)
    assert result is out
    np.testing.assert_allclose(out, brute("ij,jk->ik", [a, b], "logsumexp"))
    fortran = tops.einsum("ij,jk->ik", a, b, semiring="max", order="F")
    assert fortran.flags.f_contiguous
    values, indices = tops.einsum("ij,jk->ik", a, b, semiring="max", argmax=True, out=out)
    assert values is out
    assert indices["j"].shape == (3, 5)


# --- back-pointers -----------------------------------------------------------------------


@pytest.mark.parametrize("semiring", ["max", "min"])
@pytest.mark.parametrize(
    ("equation", "shapes"),
    [
        ("ij,jk->ik", [(4, 5), (5, 3)]),
        ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
        ("ij,jk,kl->", [(3, 4), (4, 5), (5, 2)]),
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 3)]),
        ("ij,ij->i", [(3, 6), (3, 6)]),
        ("iij,jk->ik", [(3, 3, 4), (4, 2)]),
        ("ijk->i", [(3, 4, 5)]),
        ("ij,kl->ik", [(3, 4), (2, 5)]),
        ("ab,bc,cd,da->", [(3, 4), (4, 5), (5, 3), (3, 3)]),
    ],
)
def test_back_pointers_against_brute_force(
    backend: Any, semiring: str, equation: str, shapes: list[tuple[int, ...]]
) -> None:
    arrays = _operands(shapes, equation)
    values, indices = tops.einsum(
        equation, *[backend.asarray(a) for a in arrays], semiring=semiring, argmax=True
    )
    found = {axis: backend.to_numpy(index) for axis, index in indices.items()}
    _check_indices(equation, arrays, semiring, backend.to_numpy(values), found)


def test_back_pointers_with_compositions_and_sublists() -> None:
    a, b = _operands([(4, 6), (6, 5)], "shaped")
    values, indices = tops.einsum(
        "i (g j), (g j) k -> (i k)", a, b, g=2, semiring="max", argmax=True
    )
    assert values.shape == (20,)
    assert sorted(indices) == ["g", "j"]
    assert indices["g"].shape == (20,)
    chosen = indices["g"] * 3 + indices["j"]
    np.testing.assert_array_equal(chosen.reshape(4, 5), (a[:, :, None] + b[None]).argmax(1))
    _, named = tops.einsum(
        a, ["row", "mid"], b, ["mid", "col"], ["row", "col"], semiring="min", argmax=True
    )
    assert list(named) == ["mid"]
    np.testing.assert_array_equal(named["mid"], (a[:, :, None] + b[None]).argmin(1))


def test_ties_go_to_the_first_index_in_every_block() -> None:
    a = np.zeros((2, 9))
    b = np.zeros((9, 3))
    b[[4, 7], 1] = 1.0  # two optima for column 1: the first wins
    for limit in (None, 2, 1):
        values, indices = tops.einsum(
            "ij,jk->ik", a, b, semiring="max", argmax=True, memory_limit=limit
        )
        np.testing.assert_array_equal(indices["j"], [[0, 4, 0], [0, 4, 0]])
        np.testing.assert_array_equal(values, [[0.0, 1.0, 0.0]] * 2)


def _hmm(states: int = 3, steps: int = 4, seed: str = "hmm") -> tuple[Any, ...]:
    """Log-parameters of a small HMM, per-step log-emissions, and the chain's equation."""
    generator = rng("test_semiring", seed)
    start = np.log(generator.dirichlet(np.ones(states)))
    transition = np.log(generator.dirichlet(np.ones(states), size=states))
    emissions = [np.log(generator.dirichlet(np.ones(states))) for _ in range(steps)]
    terms = ["z0", "z0"] + [t for i in range(1, steps) for t in (f"z{i - 1} z{i}", f"z{i}")]
    return start, transition, emissions, ", ".join(terms) + " -> "


def _chain(start: Any, transition: Any, emissions: list[Any]) -> list[Any]:
    operands = [start, emissions[0]]
    for emission in emissions[1:]:
        operands += [transition, emission]  # the same transition object at every step
    return operands


def _paths(start: Any, transition: Any, emissions: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Every state sequence and its log-probability, enumerated."""
    states, steps = len(start), len(emissions)
    sequences = np.array(np.meshgrid(*[range(states)] * steps, indexing="ij")).reshape(steps, -1).T
    scores = start[sequences[:, 0]] + sum(emissions[t][sequences[:, t]] for t in range(steps))
    scores = scores + sum(transition[sequences[:, t - 1], sequences[:, t]] for t in range(1, steps))
    return sequences, scores


def test_viterbi_path_of_a_chain() -> None:
    start, transition, emissions, equation = _hmm(steps=5)
    best, path = tops.einsum(
        equation, *_chain(start, transition, emissions), semiring="max", argmax=True
    )
    sequences, scores = _paths(start, transition, emissions)
    np.testing.assert_allclose(best, scores.max())
    assert [int(path[f"z{t}"]) for t in range(5)] == list(sequences[scores.argmax()])
    likelihood = tops.einsum(equation, *_chain(start, transition, emissions), semiring="logsumexp")
    np.testing.assert_allclose(likelihood, logsumexp(scores))


# --- frameworks: autograd, JAX, Dask, torch.compile ----------------------------------------


def _posteriors(start: Any, transition: Any, emissions: list[Any]) -> tuple[Any, Any]:
    """P(z_t = s | x) per step, and the expected transition counts, by enumeration."""
    sequences, scores = _paths(start, transition, emissions)
    weights = np.exp(scores - logsumexp(scores))
    states, steps = len(start), len(emissions)
    marginals = np.zeros((steps, states))
    counts = np.zeros((states, states))
    for sequence, weight in zip(sequences, weights, strict=True):
        marginals[np.arange(steps), sequence] += weight
        for t in range(1, steps):
            counts[sequence[t - 1], sequence[t]] += weight
    return marginals, counts


def test_torch_gradients_are_posterior_marginals() -> None:
    torch = pytest.importorskip("torch")
    start, transition, emissions, equation = _hmm(steps=4)
    logs = [torch.tensor(e, requires_grad=True) for e in emissions]
    shared = torch.tensor(transition, requires_grad=True)
    likelihood = tops.einsum(
        equation, *_chain(torch.tensor(start), shared, logs), semiring="logsumexp"
    )
    likelihood.backward()
    marginals, counts = _posteriors(start, transition, emissions)
    for t, e in enumerate(logs):
        assert e.grad is not None
        np.testing.assert_allclose(e.grad.numpy(), marginals[t], rtol=1e-10, atol=1e-12)
    assert shared.grad is not None
    np.testing.assert_allclose(shared.grad.numpy(), counts, rtol=1e-10, atol=1e-12)


def test_torch_gradients_with_minus_infinity_and_max() -> None:
    torch = pytest.importorskip("torch")
    a = torch.tensor([[0.0, -np.inf], [1.0, 2.0]], requires_grad=True)
    b = torch.tensor([[0.5, -1.0], [-np.inf, 3.0]], requires_grad=True)
    tops.einsum("ij,jk->", a, b, semiring="logsumexp").backward()
    assert a.grad is not None
    assert torch.isfinite(a.grad).all()
    assert a.grad[0, 1] == 0  # a zero probability has no share
    tropical = torch.tensor([[1.0, 5.0], [2.0, 0.0]], requires_grad=True)
    tops.einsum("ij->", tropical, semiring="max").backward()
    assert tropical.grad is not None
    np.testing.assert_array_equal(tropical.grad.numpy(), [[0.0, 1.0], [0.0, 0.0]])


def test_jax_grad_and_jit() -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)
    start, transition, emissions, equation = _hmm(steps=3, seed="jax")

    def likelihood(e0: Any, e1: Any, e2: Any) -> Any:
        chain = _chain(jnp.asarray(start), jnp.asarray(transition), [e0, e1, e2])
        return tops.einsum(equation, *chain, semiring="logsumexp")

    arrays = [jnp.asarray(e) for e in emissions]
    grads = jax.grad(likelihood, argnums=(0, 1, 2))(*arrays)
    marginals, _ = _posteriors(start, transition, emissions)
    for t, grad in enumerate(grads):
        np.testing.assert_allclose(np.asarray(grad), marginals[t], rtol=1e-10, atol=1e-12)
    compiled = jax.jit(likelihood)
    np.testing.assert_allclose(np.asarray(compiled(*arrays)), np.asarray(likelihood(*arrays)))
    viterbi = jax.jit(lambda x, y: tops.einsum("ij,jk->ik", x, y, semiring="max", argmax=True))
    a, b = _operands([(3, 4), (4, 2)], "jit")
    values, indices = viterbi(jnp.asarray(a), jnp.asarray(b))
    _check_indices("ij,jk->ik", [a, b], "max", np.asarray(values), {"j": np.asarray(indices["j"])})


@pytest.mark.parametrize("semiring", SEMIRINGS)
def test_dask_stays_lazy(semiring: str) -> None:
    da = pytest.importorskip("dask.array")
    a, b = _operands([(6, 8), (8, 4)], "dask")
    x, y = da.from_array(a, chunks=3), da.from_array(b, chunks=4)
    got = tops.einsum("ij,jk->ik", x, y, semiring=semiring, memory_limit=10)
    assert isinstance(got, da.Array)
    _close(got.compute(), brute("ij,jk->ik", [a, b], semiring), [a, b], semiring)
    if semiring != "logsumexp":
        values, indices = tops.einsum("ij,jk->ik", x, y, semiring=semiring, argmax=True)
        assert isinstance(values, da.Array)
        assert isinstance(indices["j"], da.Array)
        _check_indices(
            "ij,jk->ik", [a, b], semiring, values.compute(), {"j": indices["j"].compute()}
        )


@pytest.mark.parametrize("semiring", SEMIRINGS)
def test_torch_compile_fullgraph_is_one_node(semiring: str) -> None:
    torch = pytest.importorskip("torch")
    from torch._dynamo.testing import CompileCounter

    from tensorops._compile import stand_ins

    def contract(a: Any, b: Any, c: Any) -> Any:
        return tops.einsum("ij,jk,kl->il", a, b, c, semiring=semiring, memory_limit=64)

    counter = CompileCounter()
    compiled = torch.compile(contract, fullgraph=True, backend=counter)
    arrays = [torch.randn(shape, dtype=torch.float64) for shape in [(3, 4), (4, 5), (5, 2)]]
    torch.testing.assert_close(compiled(*arrays), contract(*arrays))
    assert counter.frame_count == 1
    if stand_ins.installed():  # the keyword reaches the node as plain data
        graph = torch._dynamo.explain(contract)(*arrays).graphs[0].graph
        calls = [node for node in graph.nodes if node.op == "call_function"]
        assert [node.target.__name__ for node in calls] == ["in_graph"]
        assert calls[0].kwargs["semiring"] == semiring


def test_torch_compile_back_pointers() -> None:
    """With plain sizes one node returns the values and the indices, put back in a dict."""
    torch = pytest.importorskip("torch")
    from torch._dynamo.testing import CompileCounter

    from tensorops._compile import checks, stand_ins
    from tests._dynamo import NOT_TRACED, TRACES_TENSOROPS

    if not stand_ins.installed() and not TRACES_TENSOROPS:
        pytest.skip(NOT_TRACED)

    def viterbi(a: Any, b: Any, c: Any) -> Any:
        return tops.einsum(
            "i (g j), (g j) k, k l -> i l", a, b, c, semiring="max", argmax=True, g=2
        )

    def sublists(a: Any, b: Any, c: Any) -> Any:
        return tops.einsum(a, [0, 1], b, [1, 2], c, [2, 3], [0, 3], semiring="min", argmax=True)

    a, b, c = torch.randn(3, 4), torch.randn(4, 5), torch.randn(5, 2)
    for function, keys in [(viterbi, ["g", "j", "k"]), (sublists, [1, 2])]:
        counter = CompileCounter()
        values, indices = torch.compile(function, fullgraph=True, backend=counter)(a, b, c)
        want_values, want_indices = function(a, b, c)
        torch.testing.assert_close(values, want_values)
        assert sorted(indices, key=str) == sorted(want_indices, key=str) == sorted(keys, key=str)
        for axis, index in want_indices.items():
            torch.testing.assert_close(indices[axis], index)
        assert counter.frame_count == 1
        if stand_ins.installed():
            graph = torch._dynamo.explain(function)(a, b, c).graphs[0].graph
            calls = [node for node in graph.nodes if node.op == "call_function"]
            # one node; the others take its tuple apart (the values, an index per axis)
            names = [node.target.__name__ for node in calls]
            assert names == ["in_graph"] + ["getitem"] * (len(keys) + 1)
            assert calls[0].args[0] == checks.INDICES


def test_torch_compile_back_pointers_with_symbolic_sizes() -> None:
    """Symbolic sizes: the call is traced through (its dict is no node), where Dynamo can."""
    torch = pytest.importorskip("torch")
    from tests._dynamo import NOT_TRACED, TRACES_TENSOROPS

    if not TRACES_TENSOROPS:
        pytest.skip(NOT_TRACED)

    def viterbi(a: Any, b: Any) -> Any:
        return tops.einsum("ij,jk->ik", a, b, semiring="max", argmax=True)

    compiled = torch.compile(viterbi, fullgraph=True, backend="eager", dynamic=True)
    for rows in (3, 5):
        a, b = torch.randn(rows, 4), torch.randn(4, 2)
        values, indices = compiled(a, b)
        want_values, want_indices = viterbi(a, b)
        torch.testing.assert_close(values, want_values)
        torch.testing.assert_close(indices["j"], want_indices["j"])


def test_torch_compile_back_pointers_error_is_the_eager_one() -> None:
    torch = pytest.importorskip("torch")

    def viterbi(a: Any, b: Any) -> Any:
        return tops.einsum("ij,jk->ik", a, b, semiring="max", argmax=True)

    a, b = torch.randn(3, 0), torch.randn(0, 2)
    with pytest.raises(tops.TensorOpsError) as eager:
        viterbi(a, b)
    with pytest.raises(tops.TensorOpsError) as compiled:
        torch.compile(viterbi, fullgraph=True, backend="eager")(a, b)
    assert str(compiled.value) == str(eager.value)


@pytest.mark.slow
# inductor itself touches torch.jit, which warns in this torch version
@pytest.mark.filterwarnings("ignore:`torch.jit.*` is deprecated:DeprecationWarning")
@pytest.mark.parametrize("semiring", SEMIRINGS)
def test_torch_compile_with_inductor(semiring: str) -> None:
    torch = pytest.importorskip("torch")

    def contract(a: Any, b: Any) -> Any:
        return tops.einsum("bij,bjk->bik", a, b, semiring=semiring)

    a = torch.randn(2, 3, 4, requires_grad=True)
    b = torch.randn(2, 4, 5)
    compiled = torch.compile(contract, fullgraph=True)
    torch.testing.assert_close(compiled(a, b), contract(a, b))
    compiled(a, b).sum().backward()
    assert a.grad is not None


@pytest.mark.parametrize("semiring", SEMIRINGS)
def test_operands_are_left_untouched(backend: Any, semiring: str) -> None:
    arrays = _operands([(4, 5), (5, 6), (6, 4)], "untouched")
    arrays[0][0, :] = -np.inf
    copies = [a.copy() for a in arrays]
    given = [backend.asarray(a) for a in arrays]
    argmax = semiring != "logsumexp"
    for limit in (None, 4):
        tops.einsum("ij,jk,kl->il", *given, semiring=semiring, memory_limit=limit, argmax=argmax)
        transposed = tops.rearrange(given[0], "i j -> j i")  # a view where the family has them
        tops.einsum("ij,jk,ji->k", given[0], given[1], transposed, semiring=semiring)
    for x, a in zip(given, copies, strict=True):
        np.testing.assert_array_equal(backend.to_numpy(x), a)


# --- an operand passed again pays its exp once ---------------------------------------------


def test_the_same_operand_object_is_exponentiated_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from tensorops._backends._numpy import NumpyBackend

    calls: list[tuple[int, ...]] = []
    shifted_exp = NumpyBackend.shifted_exp

    def counted(self: Any, x: Any, axis: int) -> Any:
        calls.append(x.shape)
        return shifted_exp(self, x, axis)

    monkeypatch.setattr(NumpyBackend, "shifted_exp", counted)
    start, transition, emissions, equation = _hmm(states=6, steps=8, seed="reuse")
    chain = _chain(start, transition, emissions)
    forward = [(0, 1)] + [(0, k) for k in range(len(chain) - 2, 0, -1)]  # step by step
    copies = [x.copy() if x is transition else x for x in chain]
    results = []
    for operands in (chain, copies):
        calls.clear()
        results.append(tops.einsum(equation, *operands, semiring="logsumexp", strategy=forward))
        exps = [shape for shape in calls if shape == (6, 6)]
        assert len(exps) == (1 if operands is chain else 7)
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)
    _sequences, scores = _paths(start, transition, emissions)
    np.testing.assert_allclose(results[0], logsumexp(scores))


@pytest.mark.parametrize("limit", [None, 6, 1])
def test_one_operand_in_several_roles(limit: int | None) -> None:
    """The same object as rows and as columns, sliced or not: its exps are kept apart."""
    (a,) = _operands([(6, 6)], "roles")
    plan = tops.einsum_path("ij,jk,kl->il", a, a, a, memory_limit=limit, semiring="logsumexp")
    assert bool(plan.sliced_axes) == (limit is not None)
    got = tops.einsum("ij,jk,kl->il", a, a, a, semiring="logsumexp", memory_limit=limit)
    _close(got, brute("ij,jk,kl->il", [a, a, a], "logsumexp"), [a, a, a], "logsumexp")
    got = tops.einsum("ij,jk,ji->ik", a, a, a, semiring="logsumexp", memory_limit=limit)
    _close(got, brute("ij,jk,ji->ik", [a, a, a], "logsumexp"), [a, a, a], "logsumexp")


# --- errors --------------------------------------------------------------------------------


def _error(*args: Any, **keywords: Any) -> tops.TensorOpsError:
    with pytest.raises(tops.TensorOpsError) as info:
        tops.einsum(*args, **keywords)
    return info.value


A, B = np.ones((2, 3)), np.ones((3, 4))


def test_unknown_semiring() -> None:
    error = _error("ij,jk->ik", A, B, semiring="tropical")
    assert isinstance(error, (tops.ArgumentError, KeyError))
    assert error.reason == "unknown semiring 'tropical'; valid: sum, logsumexp, max, min"
    assert str(error).startswith("einsum: unknown semiring 'tropical'")
    assert 'pattern: "ij,jk->ik"' in str(error)
    assert "'max' and 'min' are max-plus (Viterbi)" in str(error.hint)
    with pytest.raises(tops.TensorOpsError, match="unknown semiring 'log'"):
        tops.einsum_path("ij,jk->ik", (2, 3), (3, 4), semiring="log")


def test_argmax_errors() -> None:
    for semiring in ("sum", "logsumexp"):
        error = _error("ij,jk->ik", A, B, semiring=semiring, argmax=True)
        assert error.reason == (
            f"argmax=True needs semiring='max' or 'min': semiring {semiring!r} has no "
            "maximizing assignment"
        )
    assert _error("ij,jk->ik", A, B, argmax=True).reason.startswith("argmax=True needs")
    error = _error("ij,jk->ik", A, B, semiring="max", argmax=1)
    assert error.reason == "argmax must be True or False, got 1"
    values = tops.einsum("ij,jk->ik", A, B, semiring="max", argmax=False)
    assert isinstance(values, np.ndarray)


def test_operands_must_be_real() -> None:
    error = _error("ij,jk->ik", A > 0, B, semiring="max")
    assert error.reason == "semiring 'max' takes real numbers, but operand 0 has dtype bool"
    assert "booleans as log-values are 0 and -inf" in str(error.hint)
    assert "input 0: shape=(2, 3) dtype=bool backend=numpy" in str(error)
    error = _error("ij,jk->ik", A, B + 1j, semiring="logsumexp")
    assert error.reason == (
        "semiring 'logsumexp' takes real numbers, but operand 1 has dtype complex128"
    )
    error = _error(
        "ij,jk->ik", A, B, semiring="logsumexp", dtype=np.dtype("int64"), casting="unsafe"
    )
    assert error.reason == "dtype=int64 cannot hold the log-values of semiring 'logsumexp'"


def test_empty_axes_without_a_zero() -> None:
    ints = np.ones((3, 0), dtype=np.int64)
    error = _error("ij->i", ints, semiring="max")
    assert error.reason == "axis 'j' has length 0: a max over it has no max among integers"
    error = _error("ij->i", np.ones((3, 0)), semiring="min", argmax=True)
    assert error.reason == "axis 'j' has length 0: a min over it has no position"
