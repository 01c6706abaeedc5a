"""MLX: gradients, mx.compile, dtypes, integer einsum, scatter, errors, conversion.

Run in a process of its own (``TENSOROPS_TEST_FRAMEWORK=mlx``, tests/_frameworks.py).
Gradients are checked against torch's autograd of the same tensorops call, values against
NumPy, dtypes against MLX's own operations. MLX computes exponentials of float64 arrays
in float32 (``Family.exp_dtypes``), so tolerances of those come from float32.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import mlx.core as mx
import numpy as np
import pytest
import torch

import tensorops as tops
from tensorops._backends import ArrayApiBackend, get_backend
from tests._seed import rng, tolerance
from tests.frameworks._gradients import CASES, INDEX, VALUES, Case, W, X

RNG = rng("tests/frameworks/test_mlx.py")


def _mx(a: np.ndarray) -> Any:
    name = "bool_" if a.dtype == np.bool_ else a.dtype.name
    return mx.array(np.array(a, copy=True), dtype=getattr(mx, name))


def _softmax(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    e = np.exp(a - a.max(axes, keepdims=True))
    return np.asarray(e / e.sum(axes, keepdims=True))


# -- gradients: mx.grad against torch's autograd ------------------------------------------

#: name -> f(arrays...) for both families; every floating argument is differentiated.
GRADIENT_CASES: dict[str, Case] = {
    **CASES,
    "einsum_diagonal": (lambda x: tops.einsum("aba->b", x), (RNG.standard_normal((3, 2, 3)),)),
    "get_at_points": (
        lambda x, i: tops.get_at(x, i, "[a b] c, p [2] -> p c"),
        (X, np.array([[0, 1], [1, 2], [0, 0]])),
    ),
    "add_at_unbatched": (
        lambda x, i, v: tops.add_at(x, i, v, "[t] c, p, p c -> [t] c"),
        (X[0], INDEX[0], VALUES[0]),
    ),
    "split": (lambda x: tops.rearrange(x, "a b (c + d) -> a b c, a b d", c=1)[1], (X,)),
    "pack": (lambda x, y: tops.pack([x, y], "a * c")[0], (X, X[:, 0])),
    "where": (lambda x, y: tops.where(x > 0, x, y, "a b c, a b c, c -> a b c"), (X, W[:, 0])),
    "sort_descending": (lambda x: tops.sort(x, "a [b c]", descending=True), (X,)),
}


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_grad_matches_torch(name: str) -> None:
    function, arrays = GRADIENT_CASES[name]
    floating = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
    theirs = [
        torch.tensor(np.ascontiguousarray(a), requires_grad=a.dtype.kind == "f") for a in arrays
    ]
    expected = function(*theirs)
    weights = RNG.standard_normal(tuple(expected.shape))  # a loss with every output counted
    (expected * torch.tensor(weights)).sum().backward()

    def loss(*mine: Any) -> Any:
        return (function(*mine) * _mx(weights)).sum()

    mine = [_mx(a) for a in arrays]
    value, grads = mx.value_and_grad(loss, argnums=floating)(*mine)
    if isinstance(grads, mx.array):  # one argument differentiated
        grads = (grads,)
    # exponentials of float64 arrays are computed in float32 (Family.exp_dtypes)
    through_exp = name in ("logsumexp", "softmax", "log_softmax", "logaddexp", "semiring")
    size = tolerance(np.float32 if through_exp else np.float64, 64)
    np.testing.assert_allclose(
        value.item(), float((expected.detach().numpy() * weights).sum()), **size
    )
    for i, grad in zip(floating, grads, strict=True):
        assert grad.dtype == mx.float64
        np.testing.assert_allclose(
            np.array(grad), theirs[i].grad.numpy(), **size, err_msg=f"{name}, argument {i}"
        )


# -- mx.compile -------------------------------------------------------------------------------


def test_compiled_function_matches_eager() -> None:
    def step(x: Any, w: Any, index: Any, values: Any) -> Any:
        y = tops.rearrange(x, "b (h w) c -> b h w c", h=2)
        z = tops.einsum(y, w, "b h w c, c d -> b h d")
        z = tops.softmax(tops.reduce(z, "b h d -> b d", "max"), "b [d]")
        z = tops.add_at(z, index, values, "b [d], b p, b p -> b [d]")
        z = tops.sort(tops.repeat(z, "b d -> b (d r)", r=2), "b [k]", descending=True)
        return tops.cumsum(z, "b [k]") + tops.get_at(z, index, "b [k], b p -> b p").sum()

    compiled = mx.compile(step)
    for _ in range(3):  # the first call traces, the later ones replay
        x = RNG.standard_normal((3, 4, 5)).astype(np.float32)
        w = RNG.standard_normal((5, 6)).astype(np.float32)
        index = RNG.integers(0, 6, (3, 2)).astype(np.int32)
        values = RNG.standard_normal((3, 2)).astype(np.float32)
        arrays = [_mx(a) for a in (x, w, index, values)]
        got = compiled(*arrays)
        eager = step(*arrays)
        assert got.dtype == mx.float32
        np.testing.assert_allclose(np.array(got), np.array(eager), **tolerance(np.float32, 64))


def test_compiled_gradient() -> None:
    def loss(x: Any, w: Any) -> Any:
        return tops.reduce(tops.einsum(x, w, "a b c, c d -> a d"), "a d ->", "logsumexp")

    x, w = _mx(X.astype(np.float32)), _mx(W.astype(np.float32))
    eager = mx.grad(loss, argnums=(0, 1))(x, w)
    compiled = mx.compile(mx.grad(loss, argnums=(0, 1)))(x, w)
    for a, b in zip(eager, compiled, strict=True):
        np.testing.assert_allclose(np.array(a), np.array(b), **tolerance(np.float32, 64))


def test_vmap_sees_one_example() -> None:
    batched = mx.vmap(lambda x: tops.rearrange(x, "b c -> c b"))(_mx(X))
    np.testing.assert_array_equal(np.array(batched), X.transpose(0, 2, 1))


# -- dtypes -------------------------------------------------------------------------------

DTYPES = ["bool", "int8", "uint8", "int16", "int32", "int64", "uint32"]
DTYPES += ["float16", "bfloat16", "float32", "float64", "complex64"]


def _of(dtype: str, a: np.ndarray) -> Any:
    if dtype == "bfloat16":
        return mx.array(a.astype(np.float32), dtype=mx.bfloat16)
    return _mx(a.astype(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtypes_are_kept(dtype: str) -> None:
    a = np.arange(24).reshape(2, 3, 4) % 7
    x = _of(dtype, a)
    a = np.array(x) if dtype != "bfloat16" else a.astype(np.float32)
    outputs = {
        "rearrange": (tops.rearrange(x, "a b c -> (c a) b"), a.transpose(2, 0, 1).reshape(8, 3)),
        "repeat": (tops.repeat(x, "a b c -> a b c r", r=2), np.repeat(a[..., None], 2, -1)),
        "max": (tops.reduce(x, "a b c -> a c", "max"), a.max(1)),
        "flip": (tops.flip(x, "a [b] c"), a[:, ::-1]),
        "roll": (tops.roll(x, "a b [c]", shift=2), np.roll(a, 2, 2)),
        "concat": (
            tops.rearrange([x, x], "a b c, a b d -> a b (c + d)"),
            np.concatenate([a, a], 2),
        ),
        "get_at": (tops.get_at(x, _mx(INDEX), "b [t] c, b p -> b p c"), a[[[0], [1]], INDEX]),
        "set_at": (
            tops.set_at(x, _mx(INDEX[:, :2]), x[:, :2], "b [t] c, b p, b p c -> b [t] c"),
            _set(a, INDEX[:, :2], a[:, :2]),
        ),
        "einsum": (tops.einsum("abc,abd->cd", x, x), np.einsum("abc,abd->cd", a, a)),
        "sort": (tops.sort(x, "a b [c]"), np.sort(a, -1)),
    }
    if dtype == "bool":
        outputs["einsum"] = (outputs["einsum"][0], np.einsum("abc,abd->cd", a, a).astype(bool))
    for name, (got, expected) in outputs.items():
        assert got.dtype == x.dtype, name
        assert isinstance(get_backend(got), ArrayApiBackend)
        np.testing.assert_array_equal(tops.asnumpy(got), expected, err_msg=name)


def _set(a: np.ndarray, index: np.ndarray, values: np.ndarray) -> np.ndarray:
    out = a.copy()
    out[np.arange(len(a))[:, None], index] = values
    return out


@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "uint32", "float32"])
def test_reductions_follow_mlx(dtype: str) -> None:
    a = (np.arange(24).reshape(2, 3, 4) % 5).astype(dtype)
    x = _mx(a)
    for reduction in ("sum", "prod", "any", "all", "min", "max"):
        got = tops.reduce(x, "a b c -> a", reduction)
        own = getattr(mx, reduction)(x, axis=(1, 2))
        assert got.dtype == own.dtype, reduction
        np.testing.assert_array_equal(np.array(got), np.array(own), err_msg=reduction)
    assert tops.cumsum(x, "a b [c]").dtype == mx.cumsum(x, axis=2).dtype
    if dtype != "bool":
        got = tops.reduce(x, "a b c -> a", "argmax")
        assert got.dtype == mx.int32  # MLX's indexing dtype, signed as every family's
        np.testing.assert_array_equal(np.array(got), a.reshape(2, 12).argmax(1))
        assert tops.argsort(x, "a [b c]").dtype == mx.int32


@pytest.mark.timeout(120)
@pytest.mark.parametrize("dtype", ["bool", "int32", "float32", "float64"])
def test_reductions_over_an_empty_axis_finish(dtype: str) -> None:
    """MLX's own kernels may loop forever here (about one call in three): never run them.

    Each call is repeated, so that a regression hangs the test (and pytest-timeout fails it)
    rather than passing by luck.
    """
    a = np.zeros((3, 0, 2), dtype)
    for reduction in ("sum", "prod", "mean", "any", "all", "var", "std"):
        with warnings.catch_warnings():  # NumPy warns of a mean of nothing
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = getattr(np, reduction)(a, 1)
        own = getattr(mx, reduction)(_mx(np.ones((3, 1, 2), dtype)), axis=1)
        for _ in range(50):
            got = tops.reduce(_mx(a), "a b c -> a c", reduction)
            assert got.dtype == own.dtype, reduction
            np.testing.assert_array_equal(np.array(got), expected, err_msg=reduction)
    for equation, shapes in [
        ("ij->i", [(3, 0)]),
        ("ijk->ik", [(3, 0, 2)]),
        ("ij,jk->ik", [(3, 0), (0, 4)]),
        ("ij,j->i", [(3, 0), (0,)]),
    ]:
        arrays = [np.zeros(shape, dtype) for shape in shapes]
        for _ in range(50):
            got = np.array(tops.einsum(equation, *map(_mx, arrays)))
            np.testing.assert_array_equal(got, np.einsum(equation, *arrays), err_msg=equation)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_floating_results_keep_the_dtype(dtype: str) -> None:
    a = RNG.standard_normal((2, 3, 4)).astype(dtype)
    x = _mx(a)
    exp = tolerance(np.float32 if dtype == "float64" else dtype, 24)
    wide = a.astype(np.float64)
    for result, expected, rtol in [
        (tops.softmax(x, "a [b c]"), _softmax(wide, (1, 2)), exp),
        (tops.log_softmax(x, "a [b] c"), np.log(_softmax(wide, (1,))), exp),
        (tops.reduce(x, "a b c -> a", "logsumexp"), np.log(np.exp(wide).sum((1, 2))), exp),
        (
            tops.einsum("abc,abd->cd", x, x),
            np.einsum("abc,abd->cd", wide, wide),
            tolerance(dtype, 24, scale=5.0),
        ),
        (tops.reduce(x, "a b c -> c", "std"), wide.std((0, 1)), tolerance(dtype, 24)),
        (tops.reduce(x, "a b c -> c", "var"), wide.var((0, 1)), tolerance(dtype, 24)),
    ]:
        assert result.dtype == x.dtype
        np.testing.assert_allclose(np.array(result), expected, **rtol)


def test_float64_sums_and_products_are_float64_exact() -> None:
    # MLX's float32 rounding is of its exponentials only: contractions and sums are float64
    a, b = RNG.standard_normal((30, 40)), RNG.standard_normal((40, 50))
    got = np.array(tops.einsum("ij,jk->ik", _mx(a), _mx(b)))
    np.testing.assert_allclose(got, a @ b, **tolerance(np.float64, 40))
    got = np.array(tops.reduce(_mx(a), "i j -> j", "mean"))
    np.testing.assert_allclose(got, a.mean(0), **tolerance(np.float64, 30))


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint8", "bool"])
@pytest.mark.parametrize(
    "equation", ["ij,jk->ik", "bij,bjk->bik", "ij,kj->ki", "i,i->", "ijk,kl,lj->i"]
)
def test_integer_einsum_is_exact(dtype: str, equation: str) -> None:
    """MLX's matmul and einsum take floating dtypes only: tensorops multiplies exactly."""
    shapes = {"i": 9, "j": 40, "k": 7, "l": 6, "b": 3}  # large enough for the planned program
    terms = equation.split("->")[0].split(",")
    arrays = [RNG.integers(0, 100, tuple(shapes[c] for c in t)).astype(dtype) for t in terms]
    got = tops.einsum(equation, *map(_mx, arrays))
    expected = np.einsum(equation, *arrays)  # wraps around as MLX does for int8 and uint8
    assert np.array(got).dtype == expected.dtype
    np.testing.assert_array_equal(np.array(got), expected)
    tiny = [a[(slice(0, 2),) * a.ndim] for a in arrays]  # mx.einsum's size, ints by hand
    np.testing.assert_array_equal(
        np.array(tops.einsum(equation, *map(_mx, tiny))), np.einsum(equation, *tiny)
    )


def test_tiny_einsum_is_mlx_own() -> None:
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 5))
    got = tops.einsum("ij,jk->ki", _mx(a), _mx(b))
    own = mx.einsum("ij,jk->ki", _mx(a), _mx(b))
    np.testing.assert_array_equal(np.array(got), np.array(own))


def test_argsort_is_stable_both_ways() -> None:
    a = np.array([[3, 1, 2, 1, 3, 1]])
    x = _mx(a)
    np.testing.assert_array_equal(np.array(tops.argsort(x, "a [b]")), [[1, 3, 5, 2, 0, 4]])
    descending = tops.argsort(x, "a [b]", descending=True)
    np.testing.assert_array_equal(np.array(descending), [[0, 4, 2, 1, 3, 5]])
    np.testing.assert_array_equal(
        np.array(tops.sort(x, "a [b]", descending=True)), [[3, 3, 2, 1, 1, 1]]
    )
    assert tops.argsort(_mx(np.zeros((2, 0))), "a [b]", descending=True).shape == (2, 0)


def test_logsumexp_of_minus_infinity_is_minus_infinity() -> None:
    x = _mx(np.array([[-np.inf, -np.inf], [0.0, -np.inf], [np.inf, 0.0]]))
    np.testing.assert_array_equal(
        np.array(tops.reduce(x, "a b -> a", "logsumexp")), [-np.inf, 0.0, np.inf]
    )
    logs = np.array(tops.log_softmax(x[1:2], "a [b]"))
    np.testing.assert_array_equal(logs, [[0.0, -np.inf]])


def test_log_softmax_keeps_small_differences_beside_a_large_maximum() -> None:
    a = np.full((1, 3), 1e30)
    got = np.array(tops.log_softmax(_mx(a), "a [b]"))
    np.testing.assert_allclose(got, np.full((1, 3), -np.log(3.0)), **tolerance(np.float32))


# -- scatter, errors and inputs -----------------------------------------------------------


def test_scatter_matches_numpy() -> None:
    rows = np.arange(2)[:, None]
    got = tops.add_at(_mx(X), _mx(INDEX), _mx(VALUES), "b [t] c, b p, b p c -> b [t] c")
    expected = X.copy()
    np.add.at(expected, (rows, INDEX), VALUES)
    np.testing.assert_allclose(np.array(got), expected, **tolerance(np.float64, 3))
    points = np.array([[0, 1], [1, 2], [1, 0]])
    got = tops.set_at(_mx(X), _mx(points), 7.0, "[a b] c, p [2], -> [a b] c")
    expected = X.copy()
    expected[points[:, 0], points[:, 1]] = 7.0
    np.testing.assert_array_equal(np.array(got), expected)


BAD_CALLS: list[tuple[str, Callable[[Any], Any]]] = [
    ("divide", lambda x: tops.rearrange(x, "a (b h) c -> a b h c", h=2)),
    ("unknown axis", lambda x: tops.rearrange(x, "a b c -> a b d")),
    ("rank", lambda x: tops.reduce(x, "a b -> a", "sum")),
    ("reduction", lambda x: tops.reduce(x, "a b c -> a", "median")),
    ("einsum", lambda x: tops.einsum("ab,bc->ac", x, x)),
    ("softmax", lambda x: tops.softmax(x, "a b c")),
    ("check", lambda x: tops.check(x, "a b c", b=4)),
    ("pack", lambda x: tops.pack([x], "a b")),
    ("unpack", lambda x: tops.unpack(x, [(5,)], "a * c")),
    ("elementwise", lambda x: tops.add(x, x[0], "a b c, b d -> a b c")),
    ("sort", lambda x: tops.sort(x, "a b c")),
]


def _same_error(call: Callable[[Any], Any], mine: Callable[[Any], Any]) -> None:
    with pytest.raises(tops.TensorOpsError) as numpy_error:
        call(np.array(X))
    with pytest.raises(tops.TensorOpsError) as mlx_error:
        mine(_mx(X))
    assert type(mlx_error.value) is type(numpy_error.value)
    expected = str(numpy_error.value).replace("backend=numpy", "backend=mlx")
    assert str(mlx_error.value) == expected.replace("dtype=float64", "dtype=mlx.core.float64")


@pytest.mark.parametrize(("name", "call"), BAD_CALLS, ids=[name for name, _ in BAD_CALLS])
def test_errors_say_what_numpy_says(name: str, call: Callable[[Any], Any]) -> None:
    _same_error(call, call)


@pytest.mark.parametrize(("name", "call"), BAD_CALLS, ids=[name for name, _ in BAD_CALLS])
def test_errors_inside_mx_compile_say_what_numpy_says(
    name: str, call: Callable[[Any], Any]
) -> None:
    _same_error(call, mx.compile(call))


def test_an_index_out_of_range_is_numpy_error() -> None:
    index = INDEX.copy()
    index[1, 2] = 7
    for op, arguments, pattern in [
        (tops.get_at, (), "b [t] c, b p -> b p c"),
        (tops.add_at, (VALUES,), "b [t] c, b p, b p c -> b [t] c"),
        (tops.set_at, (VALUES,), "b [t] c, b p, b p c -> b [t] c"),
    ]:
        with pytest.raises(tops.ShapeError) as numpy_error:
            op(X, index, *arguments, pattern)
        with pytest.raises(tops.ShapeError) as mlx_error:
            op(_mx(X), _mx(index), *map(_mx, arguments), pattern)
        assert mlx_error.value.reason == numpy_error.value.reason
        assert "index 7 is out of range for axis t of length 3" in mlx_error.value.reason
    with pytest.raises(tops.ShapeError, match="index -1 is out of range for axis b"):
        tops.get_at(_mx(X), _mx(np.array([[0, 1], [1, -1]])), "[a b] c, p [2] -> p c")


def test_inputs_are_not_modified() -> None:
    arrays = [X, INDEX, VALUES, W]
    x, index, values, w = (_mx(a) for a in arrays)
    tops.set_at(x, index, values, "b [t] c, b p, b p c -> b [t] c")
    tops.set_at(x[0], index[0], values[0], "[t] c, p, p c -> [t] c")
    tops.add_at(x, index, values, "b [t] c, b p, b p c -> b [t] c")
    tops.einsum(x, w, "a b c, c d -> a d")
    tops.rearrange([x, x], "a b c, a b d -> a b (c + d)")
    tops.softmax(x, "a [b] c")
    tops.sort(x, "a b [c]", descending=True)
    for t, a in zip((x, index, values, w), arrays, strict=True):
        np.testing.assert_array_equal(np.array(t), a)


# -- conversion ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["bool", "uint16", "int64", "float16", "float64", "complex64"])
def test_convert_round_trip(dtype: str) -> None:
    a = (np.arange(6).reshape(2, 3) % 4).astype(dtype)
    x = tops.convert(a, mx)
    assert isinstance(x, mx.array)
    assert x.dtype == getattr(mx, "bool_" if dtype == "bool" else dtype)
    np.testing.assert_array_equal(np.array(x), a)
    back = tops.asnumpy(x)
    assert back.dtype == a.dtype
    np.testing.assert_array_equal(back, a)
    np.testing.assert_array_equal(tops.convert(x, "numpy"), a)
    assert tops.convert(a, mx.array(0).__array_namespace__()).dtype == x.dtype
    t = tops.convert(x, "torch")
    np.testing.assert_array_equal(t.numpy(), a)
    y = tops.convert(t, mx)
    assert y.dtype == x.dtype
    np.testing.assert_array_equal(np.array(y), a)
    assert tops.convert(x, mx) is x


def test_a_dtype_mlx_lacks_is_refused() -> None:
    with pytest.raises(tops.BackendError, match="MLX has no such dtype"):
        tops.convert(np.zeros(2, np.complex128), mx)


def test_bfloat16_reaches_numpy_as_float32() -> None:
    x = mx.array([1.5, -2.0], dtype=mx.bfloat16)
    got = tops.asnumpy(x)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [1.5, -2.0])


def test_a_lazy_array_is_computed_for_numpy() -> None:
    x = tops.rearrange(_mx(X), "a b c -> c (a b)")  # not evaluated yet
    np.testing.assert_array_equal(tops.asnumpy(x), X.transpose(2, 0, 1).reshape(4, 6))
