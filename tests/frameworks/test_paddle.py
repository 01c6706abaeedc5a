"""Paddle's own tests: to_static, autograd, dtypes and places, errors, inputs left unmodified.

The op results are checked against NumPy in the suite (``tests/_frameworks.py``); here
the gradients are checked against central differences of paddle's own forward pass in
float64, and ``to_static`` results against the same function run eagerly.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

with warnings.catch_warnings():  # paddle warns on import where ccache is not installed
    warnings.filterwarnings("ignore", "No ccache found", UserWarning)
    paddle = pytest.importorskip("paddle")

import tensorops as tops
from tensorops._backends import get_backend
from tensorops._backends._paddle import ADAPTER
from tensorops._backends._paddle_kernels import promote

RNG_SEED = 20240607

# The first to_static that converts a call walks the members of every module ignored by
# paddle.jit.ignore_module (tensorops among them), and through them of torch where it is
# imported; inspecting torch.distributed's deprecated reduce_op warns (once a process).
pytestmark = pytest.mark.filterwarnings(
    r"ignore:`torch\.distributed\.reduce_op` is deprecated:FutureWarning"
)


def _rng() -> np.random.Generator:
    return np.random.default_rng(RNG_SEED)


def _t(a: np.ndarray, grad: bool = False) -> Any:
    return paddle.to_tensor(np.array(a, copy=True), stop_gradient=not grad)


# -- gradients -----------------------------------------------------------------------------

INDEX = np.array([[0, 3, 1], [2, 2, 0]])
UNIQUE = np.array([[0, 3, 1], [2, 1, 0]])


def _ops() -> dict[str, tuple[Callable[..., Any], list[tuple[int, ...]]]]:
    """Name -> (f(*tensors) -> tensor, shapes of its float64 inputs)."""
    index = paddle.to_tensor(INDEX)
    unique = paddle.to_tensor(UNIQUE)
    cond = paddle.to_tensor(np.arange(4) % 2 == 0)
    ops: dict[str, tuple[Callable[..., Any], list[tuple[int, ...]]]] = {
        "rearrange": (lambda x: tops.rearrange(x, "b c w -> w (b c)"), [(2, 3, 4)]),
        "repeat": (lambda x: tops.repeat(x, "b c w -> b c w r", r=2), [(2, 3, 4)]),
        "einsum": (lambda x, w: tops.einsum("b c w, w d -> b d c", x, w), [(2, 3, 4), (4, 5)]),
        "einsum3": (
            lambda a, b, c: tops.einsum("ij,jk,kl->il", a, b, c),
            [(2, 3), (3, 4), (4, 2)],
        ),
        "einsum_logsumexp": (
            lambda a, b: tops.einsum("ij,jk->ik", a, b, semiring="logsumexp"),
            [(2, 3), (3, 4)],
        ),
        "softmax": (lambda x: tops.softmax(x, "b [c] w"), [(2, 3, 4)]),
        "softmax_joint": (lambda x: tops.softmax(x, "[b] c [w]"), [(2, 3, 4)]),
        "log_softmax": (lambda x: tops.log_softmax(x, "b [c w]"), [(2, 3, 4)]),
        "get_at": (lambda x: tops.get_at(x, index, "b [t] c, b p -> b p c"), [(2, 4, 3)]),
        "set_at": (
            lambda x, v: tops.set_at(x, unique, v, "b [t] c, b p, b p c -> b [t] c"),
            [(2, 4, 3), (2, 3, 3)],
        ),
        "add_at": (
            lambda x, v: tops.add_at(x, index, v, "b [t] c, b p, b p c -> b [t] c"),
            [(2, 4, 3), (2, 3, 3)],
        ),
        "add_at_unbatched": (
            lambda x, v: tops.add_at(x, index, v, "[t] c, b p, b p c -> [t] c"),
            [(4, 3), (2, 3, 3)],
        ),
        "concat": (
            lambda x, y: tops.rearrange([x, y], "b c1 w, b c2 w -> b (c1 + c2) w"),
            [(2, 3, 4), (2, 1, 4)],
        ),
        "pack": (lambda x, y: tops.pack([x, y], "b *")[0], [(2, 3, 4), (2, 5)]),
        "add": (lambda x, y: tops.add(x, y, "b c w, w -> b c w"), [(2, 3, 4), (4,)]),
        "multiply": (lambda x, y: tops.multiply(x, y, "b c w, c -> w b c"), [(2, 3, 4), (3,)]),
        "maximum": (lambda x, y: tops.maximum(x, y, "b w, w -> b w"), [(2, 4), (4,)]),
        "logaddexp": (lambda x, y: tops.logaddexp(x, y, "b w, w -> b w"), [(2, 4), (4,)]),
        "where": (lambda x, y: tops.where(cond, x, y, "w, b w, w -> b w"), [(2, 4), (4,)]),
        "flip": (lambda x: tops.flip(x, "b [c] [w]"), [(2, 3, 4)]),
        "roll": (lambda x: tops.roll(x, "b [c] w", shift=1), [(2, 3, 4)]),
        "sort": (lambda x: tops.sort(x, "b [c] w", descending=True), [(2, 3, 4)]),
        "cumsum": (lambda x: tops.cumsum(x, "b [c] w"), [(2, 3, 4)]),
    }
    for reduction in ("sum", "mean", "max", "min", "prod", "logsumexp", "var", "std"):
        ops[f"reduce_{reduction}"] = (
            lambda x, r=reduction: tops.reduce(x, "b c w -> c", r),
            [(2, 3, 4)],
        )
        # rank 5, several axes: paddle's own amax / amin gradient is wrong there
        ops[f"reduce_{reduction}_rank5"] = (
            lambda x, r=reduction: tops.reduce(x, "a b c d e -> a c", r),
            [(2, 2, 3, 2, 2)],
        )
    return ops


OPS = sorted(_ops())


def _numeric_gradient(
    f: Callable[..., Any], arrays: list[np.ndarray], weight: np.ndarray, k: int
) -> np.ndarray:
    eps = 1e-6
    grad = np.zeros_like(arrays[k])
    for i in np.ndindex(arrays[k].shape):
        values = []
        for step in (eps, -eps):
            moved = [a.copy() for a in arrays]
            moved[k][i] += step
            values.append(float((f(*map(_t, moved)).numpy() * weight).sum()))
        grad[i] = (values[0] - values[1]) / (2 * eps)
    return grad


@pytest.mark.parametrize("name", OPS)
def test_gradient_matches_central_differences(name: str) -> None:
    f, shapes = _ops()[name]
    rng = _rng()
    # distinct values well apart: max, min and sort have no ties a step could cross
    arrays = [rng.permutation(int(np.prod(s))).reshape(s) * 0.1 + 0.5 for s in shapes]
    tensors = [_t(a, grad=True) for a in arrays]
    out = f(*tensors)
    weight = rng.normal(size=tuple(out.shape))
    grads = paddle.grad((out * _t(weight)).sum(), tensors)
    for k, grad in enumerate(grads):
        expected = _numeric_gradient(f, arrays, weight, k)
        # central differences in float64 with eps 1e-6: error about eps^2 * f''' + 1e-16 / eps
        np.testing.assert_allclose(grad.numpy(), expected, rtol=1e-5, atol=1e-7)


def test_backward_fills_parameter_gradients() -> None:
    weight = paddle.create_parameter([4, 5], "float32")
    x = _t(np.ones((2, 3, 4), np.float32))
    loss = tops.reduce(tops.einsum("b c w, w d -> b d", x, weight), "b d ->", "sum")
    loss.backward()
    assert weight.grad is not None
    np.testing.assert_allclose(weight.grad.numpy(), np.full((4, 5), 6.0))


def test_logaddexp_shares_the_gradient_of_a_tie() -> None:
    x = _t(np.array([1.0, -np.inf]), grad=True)
    out = tops.logaddexp(x, x, "i, i -> i")
    (grad,) = paddle.grad(out[0], [x])
    np.testing.assert_allclose(out.numpy(), [1.0 + np.log(2.0), -np.inf])
    np.testing.assert_allclose(grad.numpy(), [1.0, 0.0])


def test_planned_calls_skip_the_slow_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """paddle's Size is a list, which cannot key the plan cache: its tuple does, so a call
    already planned does not go through the slow path (parsing the arguments again)."""
    from tensorops import _dispatch

    x, w = _t(np.zeros((2, 3, 4))), _t(np.zeros((4, 5)))
    want = (tops.rearrange(x, "b c w -> b w c"), tops.einsum(x, w, "b c w, w d -> b c d"))

    def slowly(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the slow path was taken")

    monkeypatch.setattr(_dispatch, "_call_slowly", slowly)
    got = (tops.rearrange(x, "b c w -> b w c"), tops.einsum(x, w, "b c w, w d -> b c d"))
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    with pytest.raises(AssertionError, match="slow path"):  # a list pattern: not planned
        tops.rearrange(x, ["b c w -> b w c"])  # type: ignore[arg-type]


def test_eager_tensors_take_the_c_ops_and_others_the_public_function() -> None:
    from tensorops._backends import _paddle_kernels

    # paddle 3 has them all
    assert set(_paddle_kernels.DIRECT) == {"transpose", "reshape", "expand", "sum", "mean"} | {
        "amax",
        "amin",
    }

    def public(x: Any, sizes: list[int]) -> Any:
        raise AssertionError("the public function was called")

    transpose = _paddle_kernels.eager_or("transpose", public)
    x = _t(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(transpose(x, [1, 0]).numpy(), x.numpy().T)
    weight = paddle.create_parameter([2, 3], "float32")  # a parameter is not a plain Tensor
    with pytest.raises(AssertionError, match="public function"):
        transpose(weight, [1, 0])


#: name -> (the public call it stands for, its argument, the dtypes it takes)
PUBLIC: dict[str, tuple[Callable[[Any, list[int]], Any], list[int], tuple[str, ...]]] = {
    "transpose": (lambda x, a: paddle.transpose(x, a), [2, 0, 1], ("bool", "int32", "float64")),
    "reshape": (lambda x, a: paddle.reshape(x, a), [6, 4], ("bool", "int32", "float64")),
    "expand": (lambda x, a: paddle.expand(x[:, :1], a), [2, 5, 4], ("int64", "float64")),
    "sum": (lambda x, a: paddle.sum(x, axis=a), [0, 2], ("bool", "int32", "float64")),
    "mean": (lambda x, a: paddle.mean(x, axis=a), [1, 2], ("float32", "float64")),
    "amax": (lambda x, a: paddle.amax(x, axis=a), [0, 2], ("int32", "float64")),
    "amin": (lambda x, a: paddle.amin(x, axis=a), [1], ("int64", "float64")),
}


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_c_ops_give_what_the_public_functions_give(name: str) -> None:
    """Values, dtype and gradient of each `DIRECT` op against paddle's own function."""
    from tensorops._backends._paddle_kernels import DIRECT

    public, argument, dtypes = PUBLIC[name]
    direct = DIRECT[name]
    if name == "expand":  # the C++ op is called on the tensor the public call makes
        direct = lambda x, a, op=direct: op(x[:, :1], a)  # noqa: E731
    a = _rng().integers(-3, 4, (2, 3, 4))
    for dtype in dtypes:
        want, got = public(_t(a.astype(dtype)), argument), direct(_t(a.astype(dtype)), argument)
        assert got.dtype == want.dtype, dtype
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=dtype)
    x, y = _t(a.astype("float64"), grad=True), _t(a.astype("float64"), grad=True)
    (want_grad,) = paddle.grad(public(x, argument).sum(), [x])
    (got_grad,) = paddle.grad(direct(y, argument).sum(), [y])
    np.testing.assert_array_equal(got_grad.numpy(), want_grad.numpy())


def test_without_c_ops_the_public_functions_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fallback of `_paddle.DIRECT` (a paddle whose ``_C_ops`` lacks an op)."""
    from tensorops import _dispatch
    from tensorops._backends import _paddle

    called: set[str] = set()

    def public(name: str) -> Callable[[Any, list[int]], Any]:
        def call(x: Any, sizes: list[int]) -> Any:
            called.add(name)
            return getattr(paddle, name)(x, sizes)

        return call

    for name in ("transpose", "reshape", "expand"):
        monkeypatch.setattr(_paddle, name.upper(), public(name))
    _dispatch.bound_plan.cache_clear()  # plans hold the functions they were made with
    try:
        a = np.arange(24.0).reshape(2, 3, 4)
        x = _t(a, grad=True)
        y = tops.rearrange(x, "b c (h w) -> b h (w c)", w=2)
        z = tops.repeat(x, "b c w -> b c w r", r=2)
        np.testing.assert_array_equal(
            y.numpy(), a.reshape(2, 3, 2, 2).transpose(0, 2, 3, 1).reshape(2, 2, 6)
        )
        np.testing.assert_array_equal(z.numpy(), np.repeat(a[..., None], 2, axis=-1))
        (grad,) = paddle.grad((y * y).sum() + z.sum(), [x])
        np.testing.assert_array_equal(grad.numpy(), 2 * a + 2)
        assert called == {"transpose", "reshape", "expand"}
    finally:
        _dispatch.bound_plan.cache_clear()


def test_a_shape_type_not_entered_takes_the_slow_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without paddle's ``Size`` entered (a paddle without it), every call is still right."""
    from tensorops import _backends, _dispatch

    x, w = _t(np.arange(24.0).reshape(2, 3, 4)), _t(np.ones((4, 5)))
    want = (tops.rearrange(x, "b c w -> b w c"), tops.einsum(x, w, "b c w, w d -> b c d"))
    monkeypatch.setattr(_dispatch, "UNKEYED_SHAPES", set())
    slow: list[str] = []
    real = _dispatch._call_slowly

    def slowly(op: Any, *args: Any, **kwargs: Any) -> Any:
        slow.append(op.name)
        return real(op, *args, **kwargs)

    monkeypatch.setattr(_dispatch, "_call_slowly", slowly)
    got = (tops.rearrange(x, "b c w -> b w c"), tops.einsum(x, w, "b c w, w d -> b c d"))
    assert slow == ["rearrange", "einsum"]
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert type(x.shape) in _backends.UNKEYED_SHAPES


# -- to_static -----------------------------------------------------------------------------


def _many(x: Any, w: Any) -> tuple[Any, ...]:
    y = tops.rearrange(x, "b c (h w) -> b h w c", w=2)
    return (
        y,
        tops.reduce(y, "b h w c -> b c", "max"),
        tops.reduce(x, "b c hw -> b", "logsumexp"),
        tops.repeat(x, "b c hw -> b c hw r", r=2),
        tops.einsum("b c k, k d -> b d c", x, w),
        tops.softmax(x, "b [c] hw"),
        tops.get_at(x, paddle.to_tensor(INDEX[:, :2]), "b c [t], b p -> b c p"),
        tops.add_at(x, paddle.to_tensor(INDEX[:, :2]), 1.0, "b c [t], b p, -> b c [t]"),
        tops.rearrange([x, x], "b c1 k, b c2 k -> b (c1 + c2) k"),
        tops.multiply(x, w[:, 0], "b c k, k -> b c k"),
        tops.sort(x, "b c [k]", descending=True),
        tops.cumsum(x, "b [c] k"),
        tops.pack([x, x[0]], "* k")[0],
    )


@pytest.mark.parametrize("full_graph", [True, False], ids=["ast", "sot"])
def test_to_static_matches_eager(full_graph: bool) -> None:
    tops.clear_caches()  # the patterns planned afresh inside to_static, not found cached
    rng = _rng()
    x, w = _t(rng.normal(size=(2, 3, 4))), _t(rng.normal(size=(4, 5)))
    compiled = paddle.jit.to_static(_many, full_graph=full_graph)
    for got, expected in zip(compiled(x, w), _many(x, w), strict=True):
        assert isinstance(got, paddle.Tensor)
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-12)


def test_to_static_default_mode_with_paddle_imported_first() -> None:
    """Paddle imported before tensorops: its hook runs while tensorops is importing, and
    still marks every public function for SOT to call as it is (a fresh process)."""
    script = """
import warnings
warnings.simplefilter("ignore")
import paddle
import tensorops as tops

@paddle.jit.to_static
def f(t):
    return tops.reduce(tops.rearrange(t, "b c (h w) -> b h w c", h=2), "b h w c -> b c", "max")

print(list(f(paddle.ones([2, 3, 4])).shape))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "[2, 3]"


# paddle's own backward pass for a static program warns so (pir_partial_program, paddle 3.3)
@pytest.mark.filterwarnings("ignore:Tensor do not have 'place' interface:UserWarning")
def test_to_static_gradients() -> None:
    rng = _rng()
    w0 = rng.normal(size=(4, 5))
    x = _t(rng.normal(size=(2, 3, 4)))

    def loss(x: Any, w: Any) -> Any:
        return tops.reduce(
            tops.softmax(tops.einsum("b c k, k d -> b c d", x, w), "b c [d]"), "b c d ->", "max"
        )

    grads = []
    for f in (loss, paddle.jit.to_static(loss, full_graph=True)):
        w = _t(w0, grad=True)
        f(x, w).backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


def test_to_static_bad_pattern_is_a_tensorops_error() -> None:
    eager = "rearrange: cannot split axis of length 4 into (h w) with h=3: 4 is not divisible by 3"

    def bad(x: Any) -> Any:
        return tops.rearrange(x, "b c (h w) -> b c h w", h=3)

    x = _t(np.zeros((2, 3, 4)))
    with pytest.raises(tops.ShapeError) as numpy_error:
        bad(np.zeros((2, 3, 4)))
    with pytest.raises(tops.ShapeError) as paddle_error:
        bad(x)
    assert str(paddle_error.value) == str(numpy_error.value).replace("numpy", "paddle")
    assert str(paddle_error.value).startswith(eager)
    # to_static's AST mode raises the same type with the source location of the call above.
    with pytest.raises(tops.ShapeError) as static_error:
        paddle.jit.to_static(bad, full_graph=True)(x)
    assert str(paddle_error.value) in str(static_error.value)
    # Its SOT mode (full_graph=False) wraps an error of a function it calls as it is in its
    # own InnerError (paddle 3.3), whose text holds the eager message.
    with pytest.raises(Exception, match="cannot split axis of length 4") as sot_error:
        paddle.jit.to_static(bad, full_graph=False)(x)
    assert str(paddle_error.value) in str(sot_error.value)


# -- dtypes and places ---------------------------------------------------------------------

FLOATS = ["float16", "bfloat16", "float32", "float64"]


@pytest.mark.parametrize("dtype", [*FLOATS, "int8", "uint8", "int32", "int64"])
def test_ops_keep_dtype_and_place(dtype: str) -> None:
    x = paddle.to_tensor(np.arange(24).reshape(2, 3, 4) % 7).astype(dtype)
    results = [
        tops.rearrange(x, "b c w -> w b c"),
        tops.repeat(x, "b c w -> b c w 2"),
        tops.reduce(x, "b c w -> b c", "max"),
        tops.flip(x, "b [c] w"),
        tops.roll(x, "[b] c w", shift=1),
        tops.rearrange([x, x], "b c1 w, b c2 w -> b (c1 + c2) w"),
        tops.get_at(x, paddle.to_tensor(INDEX[:, :2]), "b c [t], b p -> b c p"),
        tops.set_at(x, paddle.to_tensor(UNIQUE[:, :2]), 1, "b c [t], b p, -> b c [t]"),
        tops.add(x, x, "b c w, b c w -> b c w"),
    ]
    if dtype in FLOATS:
        results += [tops.softmax(x, "b [c] w"), tops.einsum("bcw,bdw->bcd", x, x)]
    for result in results:
        assert result.dtype == x.dtype
        assert result.place == x.place


def test_reductions_follow_paddle_dtypes() -> None:
    x = paddle.to_tensor(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert tops.reduce(x, "a b -> a", "sum").dtype == paddle.int64  # as paddle.sum
    assert tops.reduce(x, "a b -> a", "argmax").dtype == paddle.int64
    assert tops.reduce(x > 2, "a b -> a", "any").dtype == paddle.bool
    assert tops.reduce(x > 2, "a b -> a", "max").dtype == paddle.bool  # paddle has no bool max
    np.testing.assert_array_equal(tops.reduce(x > 2, "a b -> b", "max").numpy(), [True, True, True])


def test_bool_sort_and_cumsum() -> None:
    a = np.array([[True, False, True], [False, False, True]])
    x = paddle.to_tensor(a)
    np.testing.assert_array_equal(tops.sort(x, "b [t]").numpy(), np.sort(a, axis=1))
    np.testing.assert_array_equal(tops.argsort(x, "b [t]").numpy(), np.argsort(a, 1, "stable"))
    np.testing.assert_array_equal(tops.cumsum(x, "b [t]").numpy(), np.cumsum(a, axis=1))


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("int32", "int64", "int64"),
        ("uint8", "int8", "int16"),
        ("int64", "float16", "float16"),
        ("bool", "int8", "int8"),
        ("float16", "bfloat16", "float32"),
        ("bfloat16", "float64", "float64"),
        ("complex64", "float64", "complex128"),
    ],
)
def test_promote(a: str, b: str, expected: str) -> None:
    assert promote(getattr(paddle, a), getattr(paddle, b)) == getattr(paddle, expected)
    assert promote(getattr(paddle, b), getattr(paddle, a)) == getattr(paddle, expected)
    x = paddle.ones([2], dtype=a)
    y = paddle.ones([2], dtype=b)
    assert tops.add(x, y, "i, i -> i").dtype == getattr(paddle, expected)


def test_numbers_take_paddle_dtype_rule() -> None:
    x = paddle.to_tensor(np.arange(3, dtype=np.int32))
    assert tops.multiply(x, 2, "i, -> i").dtype == paddle.int32
    assert tops.multiply(x, 2.5, "i, -> i").dtype == paddle.float32
    assert tops.maximum(x.astype("float16"), 1.5, "i, -> i").dtype == paddle.float16
    np.testing.assert_array_equal(tops.subtract(2, x, ", i -> i").numpy(), [2, 1, 0])


def test_to_numpy_and_from_numpy() -> None:
    a = np.arange(6.0).reshape(2, 3)
    x = ADAPTER.from_numpy(a, None)
    a[0, 0] = 42.0  # zero-copy: the tensor sees it
    assert float(x[0, 0]) == 42.0
    back = ADAPTER.to_numpy(paddle.transpose(x, [1, 0]))
    np.testing.assert_array_equal(back, a.T)
    frozen = np.arange(3.0)
    frozen.flags.writeable = False
    copied = ADAPTER.from_numpy(frozen, "cpu")  # a writable tensor may not alias it
    np.testing.assert_array_equal(copied.numpy(), frozen)
    assert ADAPTER.from_numpy(np.arange(3, dtype=">i4"), None).dtype == paddle.int32
    assert ADAPTER.to_numpy(paddle.ones([2], "bfloat16")).dtype == np.float32
    assert ADAPTER.to_numpy(_t(np.ones(2), grad=True)).dtype == np.float64
    with pytest.raises(tops.BackendError, match="dtype uint16 to paddle"):
        ADAPTER.from_numpy(np.zeros(2, np.uint16), None)


def test_parameters_and_static_values_are_paddle() -> None:
    parameter = paddle.create_parameter([2, 3], "float32")
    assert get_backend(parameter) is ADAPTER
    assert tops.parse_shape(parameter, "a b") == {"a": 2, "b": 3}
    assert tops.check(parameter, "a b", b=3) is parameter


# -- errors and inputs ---------------------------------------------------------------------


def _message(error: pytest.ExceptionInfo[Exception]) -> str:
    return str(error.value.reason)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "call",
    [
        lambda x: tops.rearrange(x, "b c -> b c d"),
        lambda x: tops.reduce(x, "b c -> b", "median"),
        lambda x: tops.repeat(x, "b c -> b c r"),
        lambda x: tops.einsum("ij,jk->ik", x, x),
        lambda x: tops.softmax(x, "b c"),
        lambda x: tops.check(x, "b c", c=4),
        lambda x: tops.reduce(x[:0], "b c -> c", "max"),
        lambda x: tops.reduce(x[:0], "b c -> c", "argmin"),
        lambda x: tops.get_at(x, x[:, 0].astype("int64") + 7, "b [t], b -> b"),
        lambda x: tops.get_at(x, x[:, 0].astype("int64") - 1, "b [t], b -> b"),
    ],
)
def test_errors_read_as_on_numpy(call: Callable[[Any], Any]) -> None:
    a = np.arange(6.0).reshape(2, 3)
    with pytest.raises(tops.TensorOpsError) as on_numpy:
        call(a)
    x = _t(a)
    with pytest.raises(tops.TensorOpsError) as on_paddle:
        call(x)
    assert type(on_paddle.value) is type(on_numpy.value)
    assert _message(on_paddle) == _message(on_numpy).replace("numpy array", "paddle tensor")
    np.testing.assert_array_equal(x.numpy(), a)


def test_integer_mean_is_refused() -> None:
    x = paddle.to_tensor(np.arange(6, dtype=np.int32).reshape(2, 3))
    with pytest.raises(tops.BackendError) as info:
        tops.reduce(x, "a b -> a", "mean")
    assert _message(info).startswith(
        "mean of an integer tensor is not defined in paddle (dtype int32): paddle.mean "
        "truncates it; convert to float first"
    )


def test_inputs_are_not_modified() -> None:
    rng = _rng()
    a, index, values = rng.normal(size=(2, 4, 3)), UNIQUE, rng.normal(size=(2, 3, 3))
    x, i, v = _t(a), paddle.to_tensor(index), _t(values)
    tops.set_at(x, i, v, "b [t] c, b p, b p c -> b [t] c")
    tops.add_at(x, i, v, "b [t] c, b p, b p c -> b [t] c")
    tops.add_at(x[0], i, v, "[t] c, b p, b p c -> [t] c")
    tops.rearrange(x, "b t c -> c t b")
    tops.sort(x, "b [t] c")
    tops.softmax(x, "b [t] c")
    for tensor, original in ((x, a), (i, index), (v, values)):
        np.testing.assert_array_equal(tensor.numpy(), original)


def test_exp_of_minus_infinity_is_zero_in_float64() -> None:
    x = _t(np.array([[-np.inf, 0.0, -800.0]]))
    np.testing.assert_array_equal(tops.softmax(x, "b [i]").numpy(), [[0.0, 1.0, 0.0]])
    got = tops.reduce(_t(np.full((1, 2), -np.inf)), "b i -> b", "logsumexp")
    np.testing.assert_array_equal(got.numpy(), [-np.inf])


def test_logsumexp_einsum_is_exact_in_dynamic_and_static_graphs() -> None:
    rng = np.random.default_rng(3)
    a, b = 1e4 * rng.standard_normal((4, 5)), 1e4 * rng.standard_normal((5, 3))
    block = a[:, :, None] + b[None]
    top = block.max(1)
    want = np.log(np.exp(block - top[:, None]).sum(1)) + top

    def contract(x: Any, y: Any) -> Any:
        return tops.einsum("ij,jk->ik", x, y, semiring="logsumexp")

    for run in (contract, paddle.jit.to_static(contract, full_graph=True)):
        got = run(paddle.to_tensor(a), paddle.to_tensor(b)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-13)
