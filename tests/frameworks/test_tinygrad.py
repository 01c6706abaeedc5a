"""tinygrad: gradients, TinyJit, dtypes, laziness, errors, inputs left alone.

Run in a process of its own (``TENSOROPS_TEST_FRAMEWORK=tinygrad``, tests/_frameworks.py).
Gradients are checked against torch's autograd of the same tensorops call, values against
NumPy, dtypes against tinygrad's own operations.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from tinygrad import Tensor, TinyJit, dtypes
from tinygrad.helpers import GlobalCounters

import tensorops as tops
from tensorops._backends import get_backend
from tensorops._backends._tinygrad import ADAPTER, TinygradBackend
from tests._seed import tolerance
from tests.frameworks._gradients import CASES, INDEX, VALUES, W, X

RNG = np.random.default_rng(20240617)


def _tensor(a: np.ndarray, device: str | None = None) -> Tensor:
    return Tensor(np.array(a, copy=True), device=device)


# -- gradients: tinygrad's backward() against torch's autograd ----------------------------

#: name -> f(tops-callable arrays...) for both families; the floating arguments are
#: differentiated.
GRADIENT_CASES = CASES


@pytest.mark.parametrize("name", sorted(GRADIENT_CASES))
def test_backward_matches_torch(name: str) -> None:
    function, arrays = GRADIENT_CASES[name]
    floating = [a.dtype.kind == "f" for a in arrays]
    mine = [_tensor(a) for a in arrays]
    theirs = [
        torch.tensor(np.ascontiguousarray(a), requires_grad=bool(f))
        for a, f in zip(arrays, floating, strict=True)
    ]
    out = function(*mine)
    expected = function(*theirs)
    weights = RNG.standard_normal(tuple(expected.shape))  # a loss with every output counted
    (out * _tensor(weights)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(out.numpy(), expected.detach().numpy(), **tolerance(np.float64, 64))
    for x, t, f in zip(mine, theirs, floating, strict=True):
        if f:
            assert x.grad is not None, name
            np.testing.assert_allclose(
                x.grad.numpy(), t.grad.numpy(), **tolerance(np.float64, 64), err_msg=name
            )


def test_tinyjit_replays_the_ops() -> None:
    @TinyJit
    def step(x: Tensor, w: Tensor) -> Tensor:
        y = tops.rearrange(x, "b (h w) c -> b h w c", h=2)
        z = tops.einsum(y, w, "b h w c, c d -> b h d")
        return tops.softmax(tops.reduce(z, "b h d -> b d", "max"), "b [d]").realize()

    for _ in range(4):  # the first two calls capture, the later ones replay the kernels
        x, w = RNG.standard_normal((3, 4, 5)), RNG.standard_normal((5, 6))
        got = step(_tensor(x), _tensor(w)).numpy()
        z = np.einsum("bhwc,cd->bhd", x.reshape(3, 2, 2, 5), w).max(axis=1)
        expected = np.exp(z - z.max(-1, keepdims=True))
        expected /= expected.sum(-1, keepdims=True)
        np.testing.assert_allclose(got, expected, **tolerance(np.float64, 20))


# -- dtypes ----------------------------------------------------------------------------------

DTYPES = [
    "bool",
    "int8",
    "uint8",
    "int16",
    "int32",
    "int64",
    "uint32",
    "float16",
    "float32",
    "float64",
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtypes_are_kept(dtype: str) -> None:
    a = (np.arange(24).reshape(2, 3, 4) % 7).astype(dtype)
    x = _tensor(a)
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
    }
    for name, (got, expected) in outputs.items():
        assert got.dtype == x.dtype, name
        np.testing.assert_array_equal(got.numpy(), expected, err_msg=name)
    if dtype != "bool":
        sort = tops.sort(x, "a b [c]")
        assert sort.dtype == x.dtype
        np.testing.assert_array_equal(sort.numpy(), np.sort(a, -1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions_follow_tinygrad(dtype: str) -> None:
    a = (np.arange(24).reshape(2, 3, 4) % 5).astype(dtype)
    x = _tensor(a)
    for reduction in ("sum", "prod", "any", "all", "min"):
        got = tops.reduce(x, "a b c -> a", reduction)
        own = getattr(x, reduction)((1, 2))
        assert got.dtype == own.dtype, reduction
        np.testing.assert_array_equal(got.numpy(), own.numpy(), err_msg=reduction)
    if dtype != "bool":
        got = tops.reduce(x, "a b c -> a", "argmax")
        np.testing.assert_array_equal(got.numpy(), a.reshape(2, 12).argmax(1))
        assert tops.cumsum(x, "a b [c]").dtype == x.cumsum(2).dtype


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_floating_results_keep_the_dtype(dtype: str) -> None:
    a = RNG.standard_normal((2, 3, 4)).astype(dtype)
    x = _tensor(a)
    rtol = tolerance(np.dtype(dtype), 24)
    for result, expected in [
        (tops.softmax(x, "a [b c]"), _softmax(a.astype(np.float64), (1, 2))),
        (
            tops.reduce(x, "a b c -> a", "logsumexp"),
            np.log(np.exp(a.astype(np.float64)).sum((1, 2))),
        ),
        (tops.einsum("abc,abd->cd", x, x), np.einsum("abc,abd->cd", a, a, dtype=np.float64)),
        (tops.reduce(x, "a b c -> c", "std"), a.astype(np.float64).std((0, 1))),
    ]:
        assert result.dtype == x.dtype
        np.testing.assert_allclose(result.numpy(), expected, **rtol)


def _softmax(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    e = np.exp(a - a.max(axes, keepdims=True))
    return e / e.sum(axes, keepdims=True)


def test_logsumexp_of_minus_infinity_is_minus_infinity() -> None:
    x = _tensor(np.array([[-np.inf, -np.inf], [0.0, -np.inf]]))
    np.testing.assert_array_equal(tops.reduce(x, "a b -> a", "logsumexp").numpy(), [-np.inf, 0.0])
    np.testing.assert_array_equal(
        tops.logaddexp(x, x, "a b, a b -> a b").numpy(),
        [[-np.inf, -np.inf], [np.log(2.0), -np.inf]],
    )


def test_results_stay_on_the_device() -> None:
    # the Python emulator: another device than the default, and what tinygrad runs without
    # a C compiler (DEV=PYTHON)
    a = RNG.standard_normal((2, 3))
    x = _tensor(a, device="PYTHON")
    results = [
        tops.rearrange(x, "a b -> b a"),
        tops.einsum("ab,cb->ac", x, x),
        tops.get_at(x, _tensor(np.array([1, 0]), device="PYTHON"), "a [b], p -> a p"),
        tops.argsort(x, "a [b]"),
        tops.cumsum(x, "[a] b"),
    ]
    assert all(r.device == "PYTHON" for r in results)
    np.testing.assert_allclose(results[1].numpy(), a @ a.T, rtol=1e-12)
    np.testing.assert_array_equal(results[3].numpy(), np.argsort(a, 1, kind="stable"))


def test_argsort_is_stable_both_ways() -> None:
    a = np.array([[3, 1, 2, 1, 3, 1]])
    x = _tensor(a)
    np.testing.assert_array_equal(tops.argsort(x, "a [b]").numpy(), [[1, 3, 5, 2, 0, 4]])
    np.testing.assert_array_equal(
        tops.argsort(x, "a [b]", descending=True).numpy(), [[0, 4, 2, 1, 3, 5]]
    )


# -- laziness: nothing realized that the op does not need ------------------------------------


def test_ops_build_graph_without_running_kernels() -> None:
    x, w = _tensor(X).realize(), _tensor(W).realize()
    index, values = _tensor(INDEX).realize(), _tensor(VALUES).realize()
    before = GlobalCounters.kernel_count
    results = [
        tops.rearrange(x, "a b c -> c (a b)"),
        tops.repeat(x, "a b c -> a b c r", r=2),
        tops.reduce(x, "a b c -> a", "argmax"),
        tops.reduce(x, "a b c -> b", "logsumexp"),
        tops.einsum(x, w, "a b c, c d -> a d"),
        tops.einsum("abc,cd->ad", x, w, semiring="max"),
        tops.softmax(x, "[a] b [c]"),
        tops.get_at(x, index, "b [t] c, b p -> b p c"),
        tops.add_at(x, index, values, "b [t] c, b p, b p c -> b [t] c"),
        tops.set_at(x, index, values, "b [t] c, b p, b p c -> b [t] c"),
        *tops.unpack(*tops.pack([x, w[:4, :4]], "* d"), "* d"),
        tops.sort(x, "a b [c]"),
        tops.maximum(x, 0.0, "a b c, -> a b c"),
    ]
    assert GlobalCounters.kernel_count == before  # graph only: nothing ran
    Tensor.realize(*results)
    assert GlobalCounters.kernel_count > before  # the work was deferred, not skipped


# -- errors and inputs --------------------------------------------------------------------


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
]


@pytest.mark.parametrize(("name", "call"), BAD_CALLS, ids=[name for name, _ in BAD_CALLS])
def test_errors_say_what_numpy_says(name: str, call: Callable[[Any], Any]) -> None:
    with pytest.raises(tops.TensorOpsError) as numpy_error:
        call(np.array(X))
    with pytest.raises(tops.TensorOpsError) as tinygrad_error:
        call(_tensor(X))
    assert type(tinygrad_error.value) is type(numpy_error.value)
    expected = str(numpy_error.value).replace("backend=numpy", "backend=tinygrad")
    assert str(tinygrad_error.value) == expected


def test_a_float_index_is_refused_as_on_numpy() -> None:
    with pytest.raises(tops.ArgumentError) as numpy_error:
        tops.get_at(X, INDEX * 1.0, "b [t] c, b p -> b p c")
    with pytest.raises(tops.ArgumentError) as tinygrad_error:
        tops.get_at(_tensor(X), _tensor(INDEX * 1.0), "b [t] c, b p -> b p c")
    expected = str(numpy_error.value).replace("backend=numpy", "backend=tinygrad")
    assert str(tinygrad_error.value) == expected


def test_max_over_an_empty_axis_is_an_error_as_on_numpy() -> None:
    x = _tensor(np.zeros((0, 3)))
    for reduction in ("max", "min", "argmax", "argmin"):
        with pytest.raises(tops.BackendError, match=rf"cannot take the {reduction} over axes"):
            tops.reduce(x, "a b -> b", reduction)
    np.testing.assert_array_equal(tops.reduce(x, "a b -> b", "sum").numpy(), np.zeros(3))


def test_complex_values_are_refused() -> None:
    with pytest.raises(tops.BackendError, match="tinygrad has no dtype for numpy's complex128"):
        ADAPTER.from_numpy(np.zeros(2, np.complex128), None)
    with pytest.raises(tops.BackendError, match="no complex dtype"):
        ADAPTER.constant(1j, _tensor(X))


def test_an_index_outside_its_axis_selects_nothing() -> None:
    # documented: checking it would read the index's values (a realize inside a lazy graph)
    x = _tensor(np.arange(6.0).reshape(2, 3))
    got = tops.get_at(x, _tensor(np.array([[0, 3], [1, -1]])), "b [t], b p -> b p")
    np.testing.assert_array_equal(got.numpy(), [[0.0, 0.0], [4.0, 0.0]])


def test_inputs_are_not_modified() -> None:
    arrays = [X, INDEX, VALUES, W]
    x, index, values, w = (_tensor(a).realize() for a in arrays)
    uops = [t.uop for t in (x, index, values, w)]
    tops.set_at(x, index, values, "b [t] c, b p, b p c -> b [t] c").realize()
    tops.add_at(x, index, values, "b [t] c, b p, b p c -> b [t] c").realize()
    tops.einsum(x, w, "a b c, c d -> a d").realize()
    tops.rearrange([x, x], "a b c, a b d -> a b (c + d)").realize()
    tops.softmax(x, "a [b] c").realize()
    tops.sort(x, "a b [c]").realize()
    assert [t.uop for t in (x, index, values, w)] == uops
    for t, a in zip((x, index, values, w), arrays, strict=True):
        np.testing.assert_array_equal(t.numpy(), a)


# -- the adapter ---------------------------------------------------------------------------


def test_numpy_round_trip() -> None:
    for dtype in ("bool", "uint16", "int64", "float16", "float64"):
        a = (np.arange(6).reshape(2, 3) % 4).astype(dtype)
        x = ADAPTER.from_numpy(a[:, ::-1], None)  # not contiguous
        assert isinstance(get_backend(x), TinygradBackend)
        back = ADAPTER.to_numpy(x)
        assert back.dtype == a.dtype
        np.testing.assert_array_equal(back, a[:, ::-1])
        np.testing.assert_array_equal(tops.asnumpy(x), a[:, ::-1])
    assert ADAPTER.from_numpy(np.zeros(2), "PYTHON").device == "PYTHON"


def test_bfloat16_reaches_numpy_as_float32() -> None:
    x = Tensor([1.5, -2.0], dtype=dtypes.bfloat16, device="PYTHON")  # clang may lack __bf16
    got = ADAPTER.to_numpy(x)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [1.5, -2.0])


def test_einsum_out_writes_into_the_tensor() -> None:
    out = _tensor(np.zeros((2, 5)))
    result = tops.einsum("abc,cd->ad", _tensor(X), _tensor(W), out=out)
    assert result is out
    np.testing.assert_allclose(out.numpy(), np.einsum("abc,cd->ad", X, W), rtol=1e-12)
