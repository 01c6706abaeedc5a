"""einsum against numpy.einsum: a catalogue of tricky equations and random equations."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings

import tensorops as tops
from tensorops._backends import backend_for_namespace
from tensorops._config import Settings
from tensorops._einsum.programs._execute import run_program
from tensorops._einsum.programs._program import einsum_program, plan_einsum
from tests._seed import tolerance
from tests.strategies import equations


def _rand(*shape: int, dtype: Any = np.float64) -> np.ndarray:
    # NumPy's global generator, seeded per test from the run's seed (tests/conftest.py)
    return np.random.standard_normal(shape).astype(dtype)


def _check(result: np.ndarray, expected: np.ndarray, operands: Any = ()) -> None:
    """Compare within the rounding of the contraction's sums (``tests._seed.tolerance``).

    The number of summed products is at most the operands' sizes over the output's;
    without operands, 64 bounds the hand-written cases of this file.
    """
    expected = np.asarray(expected)
    assert result.shape == expected.shape
    sizes = [np.size(a) for a in operands]
    terms = int(np.prod(sizes)) // max(1, expected.size) if sizes else 64
    np.testing.assert_allclose(result, expected, **tolerance(expected.dtype, terms))


CATALOGUE: list[tuple[str, tuple[tuple[int, ...], ...]]] = [
    ("ij,jk->ik", ((2, 3), (3, 4))),
    ("ii->i", ((3, 3),)),
    ("ii", ((3, 3),)),
    ("ij->", ((2, 3),)),
    ("ij->ji", ((2, 3),)),
    ("ij", ((2, 3),)),
    ("ji", ((2, 3),)),
    ("...ii->...i", ((2, 3, 3),)),
    ("i,i->", ((4,), (4,))),
    ("i,i", ((4,), (4,))),
    ("i,j->ij", ((3,), (2,))),
    ("ijk,jil->kl", ((2, 3, 4), (3, 2, 5))),
    ("bhid,bhjd->bhij", ((2, 3, 4, 5), (2, 3, 6, 5))),
    ("iij,jk->ik", ((3, 3, 4), (4, 5))),
    ("iii->i", ((3, 3, 3),)),
    ("ij,jk,kl->il", ((2, 3), (3, 4), (4, 5))),
    ("bi,ij,bj->b", ((3, 4), (4, 5), (3, 5))),
    ("ij,ij->ij", ((3, 4), (1, 4))),
    ("ij,ij->ij", ((3, 1), (1, 4))),
    ("ij,jk->ik", ((3, 1), (4, 5))),
    ("...i,...i", ((2, 1, 3), (4, 3))),
    ("...ij,...jk", ((2, 3, 4), (4, 5))),
    ("...ij,...jk->...ik", ((5, 1, 2, 3), (4, 3, 2))),
    ("i...->...", ((2, 3, 4),)),
    (",i->i", ((), (3,))),
    (",->", ((), ())),
    ("->", ((),)),
    ("", ((),)),
    ("ij,jk", ((0, 3), (3, 2))),
    ("ij,jk->ik", ((2, 0), (0, 3))),
    ("ij->", ((3, 0),)),
    ("ab,cd,ef->", ((2, 2), (2, 2), (2, 2))),
    ("ijk,klm,mno,opq->ijnpq", ((2, 2, 3), (3, 2, 2), (2, 3, 2), (2, 2, 3))),
    ("Ab,bA->A", ((2, 3), (3, 2))),
    ("ij ,jk -> ik", ((2, 3), (3, 4))),
    ("ij,ji->", ((3, 3), (3, 3))),
    ("ij,ijk,k->j", ((2, 3), (2, 3, 4), (4,))),
]


@pytest.mark.parametrize(("equation", "shapes"), CATALOGUE)
def test_catalogue(backend: Any, equation: str, shapes: tuple[tuple[int, ...], ...]) -> None:
    arrays = [_rand(*shape) for shape in shapes]
    expected = np.einsum(equation, *arrays)
    result = tops.einsum(equation, *[backend.asarray(a) for a in arrays])
    _check(backend.to_numpy(result), expected, arrays)


@pytest.mark.parametrize(("equation", "shapes"), CATALOGUE)
def test_generic_path_on_numpy(equation: str, shapes: tuple[tuple[int, ...], ...]) -> None:
    """The array-API adapter runs every program too (the standard has no einsum)."""
    arrays = [_rand(*shape) for shape in shapes]
    compiled = einsum_program(
        plan_einsum(
            equation,
            tuple(a.shape for a in arrays),
            (),
            None,
            Settings("auto", None, None, "flops"),
        )
    )
    result = run_program(backend_for_namespace(np), arrays, compiled.program)
    _check(np.asarray(result), np.einsum(equation, *arrays))


NUMBERS: list[tuple[str, tuple[Any, ...]]] = [
    (",i->i", (2.0, (3,))),
    ("i,->i", ((3,), -3)),
    ("i,,i->", ((4,), 0.5, (4,))),
    (",ij,->j", (2, (2, 3), 1.5)),
    (",->", (2, 3)),
    (",", (2.5, 4)),
    (",i", (True, (3,))),
    ("i,->i", ((2,), 3j)),
]


@pytest.mark.parametrize(("equation", "operands"), NUMBERS)
def test_python_numbers_against_numpy(equation: str, operands: tuple[Any, ...]) -> None:
    """Python numbers are 0-d operands, as numpy.einsum takes them (dtypes included)."""
    values = [_rand(*x) if isinstance(x, tuple) else x for x in operands]
    expected = np.asarray(np.einsum(equation, *values))
    result = np.asarray(tops.einsum(equation, *values))
    assert result.dtype == expected.dtype
    _check(result, expected)
    plan = tops.einsum_path(equation, *operands)
    assert plan.path  # shapes and numbers plan alike


@pytest.mark.parametrize(("equation", "operands"), NUMBERS[:4])
def test_python_numbers_on_every_family(
    backend: Any, equation: str, operands: tuple[Any, ...]
) -> None:
    values = [_rand(*x) if isinstance(x, tuple) else x for x in operands]
    family = [backend.asarray(v) if isinstance(v, np.ndarray) else v for v in values]
    result = tops.einsum(equation, *family)
    assert hasattr(result, "dtype")  # an array of the family (or a NumPy scalar)
    _check(backend.to_numpy(result), np.einsum(equation, *values))


@pytest.mark.parametrize(
    ("dtype", "number", "expected"),
    [("float16", 2.0, "float16"), ("int64", 2.5, "float32"), ("int32", 3, "int32")],
)
def test_python_numbers_follow_torch_promotion(dtype: str, number: Any, expected: str) -> None:
    """On torch a number combines with the tensor as in ``tensor * number``."""
    torch = pytest.importorskip("torch")
    x = torch.ones(3, dtype=getattr(torch, dtype))
    result = tops.einsum("i,->i", x, number)
    assert result.dtype == getattr(torch, expected) == (x * number).dtype
    torch.testing.assert_close(result, x * number)


def test_python_numbers_follow_the_array_api_rule() -> None:
    """array-api-strict: a number of a fitting kind takes the array's dtype."""
    xp = pytest.importorskip("array_api_strict")
    x = xp.ones(3, dtype=xp.float32)
    assert tops.einsum("i,->i", x, 2).dtype == xp.float32
    assert tops.einsum("i,->i", x, 2.0).dtype == xp.float32
    ints = xp.ones(3, dtype=xp.int16)
    assert tops.einsum("i,->i", ints, 2).dtype == xp.int16
    with pytest.raises(tops.TensorOpsError, match="cannot be type promoted"):
        tops.einsum("i,->i", ints, 2.5)  # the standard does not mix integers and floats


def test_spaced_and_compact_agree() -> None:
    a, b = _rand(2, 3, 4, 5), _rand(2, 3, 6, 5)
    compact = tops.einsum("bhid,bhjd->bhij", a, b)
    spaced = tops.einsum("b h i d, b h j d -> b h i j", a, b)
    words = tops.einsum("batch head i dim, batch head j dim -> batch head i j", a, b)
    np.testing.assert_array_equal(compact, spaced)
    np.testing.assert_array_equal(compact, words)
    # a single-letter spaced equation means its compact twin, implicit output included
    np.testing.assert_array_equal(tops.einsum("j i", a[0, 0]), tops.einsum("ji", a[0, 0]))


def test_einops_argument_order() -> None:
    a, b = _rand(2, 3), _rand(3, 4)
    np.testing.assert_allclose(tops.einsum(a, b, "i j, j k -> i k"), a @ b)
    # equation last is einops' order: its terms are always spaced names, one word one axis
    np.testing.assert_allclose(tops.einsum(a[0], "index ->"), a[0].sum())
    with pytest.raises(tops.ShapeError, match="its term 'ij' has 1"):
        tops.einsum(a, b, "ij,jk->ik")


def test_composition() -> None:
    x, w = _rand(5, 8 * 4), _rand(4, 6)
    result = tops.einsum("b (h d), d e -> b h e", x, w, h=8)
    _check(result, np.einsum("bhd,de->bhe", x.reshape(5, 8, 4), w))
    merged = tops.einsum("b h d, d e -> b (h e)", x.reshape(5, 8, 4), w)
    _check(merged, np.einsum("bhd,de->bhe", x.reshape(5, 8, 4), w).reshape(5, 48))


def test_composition_values() -> None:
    x = _rand(6, 2)
    result = tops.einsum("(a b) c -> c (b a)", x, a=2)
    _check(result, x.reshape(2, 3, 2).transpose(2, 1, 0).reshape(2, 6))


def test_many_axes_in_spaced_equations() -> None:
    names = [f"a{i}" for i in range(60)]
    x = np.ones((1,) * 60)
    result = tops.einsum(f"{' '.join(names)} -> {' '.join(reversed(names))}", x)
    assert result.shape == (1,) * 60


@pytest.mark.parametrize("strategy", ["auto", "optimal", "dp", "greedy"])
def test_strategies_agree(strategy: str) -> None:
    shapes = [(3, 4), (4, 5), (5, 2), (2, 6), (6, 3)]
    arrays = [_rand(*shape) for shape in shapes]
    equation = "ab,bc,cd,de,ef->af"
    _check(tops.einsum(equation, *arrays, strategy=strategy), np.einsum(equation, *arrays))
    with tops.config(strategy=strategy):
        _check(tops.einsum(equation, *arrays), np.einsum(equation, *arrays))


def test_memory_limit_is_respected() -> None:
    arrays = [_rand(4, 5), _rand(5, 6), _rand(6, 7)]
    plan = tops.einsum_path("ab,bc,cd->ad", *arrays, memory_limit=30)
    assert plan.largest_intermediate <= 30 or len(plan.path) == 1
    _check(tops.einsum("ab,bc,cd->ad", *arrays, memory_limit=30), arrays[0] @ arrays[1] @ arrays[2])


@pytest.mark.parametrize(
    "path", [[(0, 1), (0, 1)], [(1, 2), (0, 1)], [(0, 1, 2)], ["einsum_path", (0, 2), (0, 1)]]
)
def test_explicit_paths(path: list[Any]) -> None:
    arrays = [_rand(2, 3), _rand(3, 4), _rand(4, 5)]
    _check(tops.einsum("ij,jk,kl->il", *arrays, strategy=path), arrays[0] @ arrays[1] @ arrays[2])


def test_numpy_path_interoperates() -> None:
    arrays = [_rand(2, 30), _rand(30, 40), _rand(40, 2)]
    numpy_path, _ = np.einsum_path("ij,jk,kl->il", *arrays, optimize="optimal")
    _check(tops.einsum("ij,jk,kl->il", *arrays, strategy=numpy_path), np.linalg.multi_dot(arrays))


def test_plan_table_and_fields() -> None:
    plan = tops.einsum_path("b h i d, b h j d -> b h i j", (2, 3, 4, 5), (2, 3, 6, 5))
    assert plan.equation == "b h i d, b h j d -> b h i j"
    assert plan.path == [(0, 1)]
    assert plan.flops == plan.naive_flops == 2 * 3 * 4 * 5 * 6 * 2
    assert plan.speedup == 1.0
    assert plan.largest_intermediate == 2 * 3 * 4 * 6
    assert plan.strategy == "auto"
    text = str(plan)
    assert "Complete contraction:  b h i d, b h j d -> b h i j" in text
    assert "b h i d, b h j d -> b h i j" in text.splitlines()[-1]
    assert "(2, 3, 4, 6)" in text
    # einops order and arrays work as well as shape tuples
    again = tops.einsum_path(np.zeros((2, 3, 4, 5)), (2, 3, 6, 5), "b h i d, b h j d -> b h i j")
    assert again == plan
    assert tops.einsum_path("ij,jk->ik", (2, 3), (3, 4), strategy=[(0, 1)]).strategy == "explicit"


def test_plan_matches_opt_einsum_counts() -> None:
    opt_einsum = pytest.importorskip("opt_einsum")
    shapes = [(2, 30), (30, 40), (40, 2)]
    plan = tops.einsum_path("ij,jk,kl->il", *shapes, strategy="optimal")
    _, info = opt_einsum.contract_path("ij,jk,kl->il", *shapes, shapes=True, optimize=plan.path)
    assert plan.flops == info.opt_cost
    assert plan.naive_flops == info.naive_cost


def test_mixed_dtypes_promote() -> None:
    a, b = _rand(2, 3, dtype=np.float32), np.arange(12, dtype=np.int64).reshape(3, 4)
    result = tops.einsum("ij,jk->ik", a, b)
    assert result.dtype == np.einsum("ij,jk->ik", a, b).dtype
    torch = pytest.importorskip("torch")
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    promoted = tops.einsum("ij,jk->ik", ta, tb)
    assert promoted.dtype == torch.promote_types(ta.dtype, tb.dtype)
    _check(promoted.numpy(), a.astype(np.float32) @ b.astype(np.float32))


def test_small_int_and_bool_sums_keep_dtype() -> None:
    x = np.arange(6, dtype=np.int8).reshape(2, 3)
    assert tops.einsum("ij->", x).dtype == np.einsum("ij->", x).dtype
    flags = np.array([True, False, True])
    assert tops.einsum("i,i->", flags, flags) == np.einsum("i,i->", flags, flags)


def test_torch_autograd() -> None:
    torch = pytest.importorskip("torch")
    a = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    b = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
    tops.einsum("ij,jk->", a, b).backward()
    assert a.grad is not None
    torch.testing.assert_close(a.grad, b.sum(1).expand(3, 4))


def test_dask_stays_lazy() -> None:
    da = pytest.importorskip("dask.array")
    a = da.ones((4, 6), chunks=2)
    result = tops.einsum("ij,jk->ik", a, a.T)
    assert isinstance(result, da.Array)
    np.testing.assert_allclose(result.compute(), np.full((4, 4), 6.0))


# -- random equations -------------------------------------------------------------------


def _compare(equation: str, shapes: list[tuple[int, ...]], convert: Any, back: Any) -> None:
    arrays = [_rand(*shape) for shape in shapes]
    try:
        expected = np.einsum(equation, *arrays)
    except ValueError:
        with pytest.raises(tops.TensorOpsError):
            tops.einsum(equation, *[convert(a) for a in arrays])
        return
    _check(back(tops.einsum(equation, *[convert(a) for a in arrays])), expected, arrays)


@settings(deadline=None, max_examples=300)
@given(equations())
def test_random_equations_numpy(case: tuple[str, list[tuple[int, ...]]]) -> None:
    _compare(*case, np.asarray, np.asarray)


@settings(deadline=None, max_examples=150)
@given(equations())
def test_random_equations_torch(case: tuple[str, list[tuple[int, ...]]]) -> None:
    torch = pytest.importorskip("torch")
    _compare(*case, torch.from_numpy, lambda t: t.numpy())


@settings(deadline=None, max_examples=60)
@given(equations())
def test_random_equations_array_api_strict(case: tuple[str, list[tuple[int, ...]]]) -> None:
    xp = pytest.importorskip("array_api_strict")
    _compare(*case, xp.asarray, np.asarray)


@settings(deadline=None, max_examples=100)
@given(equations())
def test_spaced_twin_of_random_equations(case: tuple[str, list[tuple[int, ...]]]) -> None:
    equation, shapes = case
    if "->" not in equation:
        return  # implicit output sorts words, which differs from letters only in spelling
    arrays = [_rand(*shape) for shape in shapes]
    try:
        compact = tops.einsum(equation, *arrays)
    except tops.TensorOpsError:
        return
    inputs, output = equation.split("->")
    spell = [
        " ".join(["..."] * t.startswith("...") + list(t.lstrip("."))) for t in inputs.split(",")
    ]
    out = " ".join(["..."] * output.startswith("...") + list(output.lstrip(".")))
    spaced = ", ".join(s if s else "" for s in spell) + " -> " + out
    _check(tops.einsum(spaced, *arrays), compact)


@pytest.mark.slow
def test_torch_compile_fullgraph_dynamic_shapes() -> None:
    torch = pytest.importorskip("torch")

    def attention(q: Any, k: Any) -> Any:
        return tops.einsum("b h i d, b h j d -> b h i j", q, k)

    compiled = torch.compile(attention, fullgraph=True, dynamic=True, backend="eager")
    for shape in [(2, 3, 4, 5), (3, 2, 6, 5)]:
        q, k = torch.randn(shape), torch.randn(shape)
        torch.testing.assert_close(compiled(q, k), q @ k.transpose(-1, -2))


# --- tiny pairs under auto: the framework's own einsum --------------------------------------


@pytest.fixture
def einsummer_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The equations `auto` hands to NumPy's einsum, recorded (caches cleared around)."""
    from tensorops._backends import NUMPY_BACKEND

    calls: list[str] = []
    original = type(NUMPY_BACKEND).einsummer

    def recording(self: Any, equation: str) -> Any:
        calls.append(equation)
        return original(self, equation)

    tops.clear_caches()
    monkeypatch.setattr(type(NUMPY_BACKEND), "einsummer", recording)
    yield calls
    tops.clear_caches()


@pytest.mark.parametrize(
    ("equation", "shapes", "expected"),
    [
        ("a b c, c d -> a b d", [(2, 3, 4), (4, 5)], "abc,cd->abd"),
        ("ij,jk->ik", [(16, 16), (16, 16)], None),  # a matrix product past 1024: BLAS
        ("ij,ij->i", [(64, 64), (64, 64)], "ab,ab->a"),  # no matrix product, 4096
        ("ij,ij->i", [(65, 64), (65, 64)], None),  # past 4096
        ("i,j->ij", [(16,), (32,)], "a,b->ab"),
        ("ii,ij->j", [(3, 3), (3, 4)], "aa,ab->b"),  # a diagonal
        ("...ij,jk->...ik", [(2, 3, 4), (4, 5)], "abc,cd->abd"),
        ("ij,jk->ik", [(1, 3), (3, 4)], "ab,bc->ac"),
        ("bij,jk->bik", [(2, 1, 3), (3, 4)], "abc,cd->abd"),
        ("ij,j->i", [(2, 3), (1,)], None),  # a broadcast axis is dropped first: the program
        ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], None),  # three operands: planned
    ],
)
def test_auto_hands_tiny_pairs_to_numpy_einsum(
    einsummer_calls: list[str],
    equation: str,
    shapes: list[tuple[int, ...]],
    expected: str | None,
) -> None:
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(shape) for shape in shapes]
    result = tops.einsum(equation, *arrays)
    np.testing.assert_allclose(result, np.einsum(equation.replace(" ", ""), *arrays))
    np.testing.assert_allclose(result, tops.einsum(equation, *arrays, strategy="greedy"))
    assert einsummer_calls == ([] if expected is None else [expected])


def test_tiny_pairs_keep_every_option_and_dtype(einsummer_calls: list[str]) -> None:
    a, b = np.arange(6).reshape(2, 3), np.arange(12).reshape(3, 4)
    assert tops.einsum("ij,jk->ik", a, b).dtype == np.einsum("ij,jk->ik", a, b).dtype
    np.testing.assert_array_equal(tops.einsum("ij,jk->ik", a, b), a @ b)
    out = np.zeros((2, 4))
    assert tops.einsum("ij,jk->ik", a, b, out=out) is out
    np.testing.assert_array_equal(out, a @ b)
    np.testing.assert_array_equal(tops.einsum("ij,jk->ik", a, b, dtype=np.float64), a @ b)
    assert tops.einsum("ij,jk->ik", a, b, dtype=np.float64).dtype == np.float64
    flags = a > 2, b > 5
    np.testing.assert_array_equal(tops.einsum("ij,jk->ik", *flags), np.einsum("ij,jk->ik", *flags))
    assert einsummer_calls == ["ab,bc->ac"]
    objects = a.astype(object)
    total = tops.einsum("ij,ij->", objects, objects)  # NumPy's loop gives a bare int here
    assert (total.dtype, total.shape, total.item()) == (np.dtype(object), (), int((a * a).sum()))
    assert einsummer_calls == ["ab,bc->ac", "ab,ab->"]
    assert tops.einsum("ij,jk->ik", a, b, strategy="dp") is not None
    assert einsummer_calls == ["ab,bc->ac", "ab,ab->"]  # only under auto
