"""Element-wise ops with named broadcasting: every family against NumPy, einx and torch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorops as tops
from tests._seed import rng, tolerance
from tests.messages import caret

R = rng("test_elementwise")
X = R.standard_normal((2, 3, 4))
W = R.standard_normal(4)
M = R.standard_normal((2, 3))
MASK = X > 0

BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "logaddexp": np.logaddexp,
}

#: (pattern, x, y, the expected result from NumPy's own broadcasting, as f(op, x, y)).
CASES: list[tuple[str, np.ndarray, np.ndarray, Callable[..., Any]]] = [
    ("b t c, c -> b t c", X, W, lambda f, x, y: f(x, y[None, None, :])),
    ("b t c, c", X, W, lambda f, x, y: f(x, y[None, None, :])),
    ("c, b t c", W, X, lambda f, x, y: f(x[None, None, :], y).transpose(2, 0, 1)),
    ("b t c, c -> c b t", X, W, lambda f, x, y: f(x, y).transpose(2, 0, 1)),
    ("b t c, b t -> b t c", X, M, lambda f, x, y: f(x, y[:, :, None])),
    ("b t c, b t -> (b t) c", X, M, lambda f, x, y: f(x, y[:, :, None]).reshape(6, 4)),
    ("b t c, t b -> t c b", X, M.T, lambda f, x, y: f(x, y.T[:, :, None]).transpose(1, 2, 0)),
    ("i, j -> i j", W, M[0], lambda f, x, y: f(x[:, None], y[None, :])),
    ("i, j", W, M[0], lambda f, x, y: f(x[:, None], y[None, :])),
    ("b (t c), t", X.reshape(2, 12), M[0], lambda f, x, y: f(X, y[None, :, None])),
    ("b t c, (b t) -> b t c", X, M.reshape(6), lambda f, x, y: f(x, M[:, :, None])),
    ("b 1 c, b t c", X[:, :1], X, lambda f, x, y: f(x, y).transpose(0, 2, 1)),
    ("... c, c -> ... c", X, W, lambda f, x, y: f(x, y)),
    ("b ..., b ... -> ... b", X, X[::-1], lambda f, x, y: f(x, y).transpose(1, 2, 0)),
    ("b t c, c -> b 1 t c", X, W, lambda f, x, y: f(x, y)[:, None]),
    (", c -> c", np.array(2.5), W, lambda f, x, y: f(x, y)),
]


def _ids(cases: list[Any]) -> list[str]:
    return [case[0] for case in cases]


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize(("pattern", "x", "y", "expected"), CASES, ids=_ids(CASES))
def test_binary_ops_match_numpy_broadcasting(
    backend: Any, name: str, pattern: str, x: np.ndarray, y: np.ndarray, expected: Any
) -> None:
    got = getattr(tops, name)(backend.asarray(x), backend.asarray(y), pattern)
    want = expected(BINARY[name], x, y)
    values = backend.to_numpy(got)  # not got.shape: a graph of its own on PyTensor
    assert values.shape == want.shape
    dtype = backend.exp_precision(np.float64) if name == "logaddexp" else np.float64
    np.testing.assert_allclose(values, want, **tolerance(dtype, terms=2))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_python_numbers_on_either_side(backend: Any, name: str) -> None:
    x = np.abs(X) + 0.5  # divide and logaddexp on either side
    got = getattr(tops, name)(backend.asarray(x), 2.0, "b t c, -> b t c")
    np.testing.assert_allclose(backend.to_numpy(got), BINARY[name](x, 2.0))
    got = getattr(tops, name)(3, backend.asarray(x), ", b t c -> c b t")
    np.testing.assert_allclose(backend.to_numpy(got), BINARY[name](3, x).transpose(2, 0, 1))


def test_where_matches_numpy(backend: Any) -> None:
    mask, x = backend.asarray(MASK), backend.asarray(X)
    got = tops.where(mask, x, backend.asarray(W), "b t c, b t c, c -> c b t")
    np.testing.assert_array_equal(
        backend.to_numpy(got), np.where(MASK, X, W[None, None, :]).transpose(2, 0, 1)
    )
    got = tops.where(backend.asarray(MASK[:, :, 0]), x, 0.0, "b t, b t c, ")
    np.testing.assert_array_equal(backend.to_numpy(got), np.where(MASK[:, :, :1], X, 0.0))
    two_numbers = lambda: tops.where(backend.asarray(MASK[0, 0]), 1.0, -1.0, "c, , -> c")  # noqa: E731
    if backend.name == "array_api_strict":  # the standard wants an array among x and y
        # array-api-strict's wording: the pinned release's, then 2.3's (the minimum)
        refused = r"Two scalars not allowed|One of x1, x2 arguments must be an array"
        with pytest.raises(tops.BackendError, match=refused):
            two_numbers()
    else:
        np.testing.assert_array_equal(
            backend.to_numpy(two_numbers()), np.where(MASK[0, 0], 1.0, -1.0)
        )


def test_elementwise_applies_any_function(backend: Any) -> None:
    x, w = backend.asarray(X), backend.asarray(W)
    got = tops.elementwise(lambda a, b: a * b + a, x, w, "b t c, c -> (t b) c")
    want = (X * W + X).transpose(1, 0, 2).reshape(6, 4)
    np.testing.assert_allclose(backend.to_numpy(got), want, **tolerance(np.float64, terms=2))
    three = tops.elementwise(lambda a, b, c: a * b - c, x, w, 2.0, "b t c, c, ")
    np.testing.assert_allclose(backend.to_numpy(three), X * W - 2.0, **tolerance(np.float64))


def test_elementwise_gets_the_operands_aligned() -> None:
    seen: list[tuple[int, ...]] = []

    def f(a: Any, b: Any, c: Any) -> Any:
        seen.extend([a.shape, b.shape, (c,)])
        return a + b + c

    tops.elementwise(f, X, M.T, 1, "b t c, t b, -> c b t")
    assert seen[:2] == [(4, 2, 3), (1, 2, 3)]  # the output's order: no permute after f
    assert seen[2] == (1,)


def test_lengths_open_compositions() -> None:
    got = tops.multiply(X.reshape(6, 4), W, "(b t) c, c -> b t c", b=2)
    np.testing.assert_allclose(got, X * W)
    got = tops.add(X.reshape(24), M, "(b t c), b t -> b t c", c=4)
    np.testing.assert_allclose(got, X + M[:, :, None])


def test_dtypes_follow_the_framework() -> None:
    x32 = X.astype(np.float32)
    assert tops.add(x32, 1.0, "b t c, ").dtype == np.float32  # a Python number is weak
    assert tops.add(x32, W, "b t c, c").dtype == np.float64
    assert tops.divide(np.arange(3), 2, "i, ").dtype == np.float64
    assert tops.maximum(np.arange(3, dtype=np.int8), 1, "i, ").dtype == np.int8
    torch = pytest.importorskip("torch")
    half = torch.ones(2, 3, dtype=torch.float16)
    assert tops.maximum(half, 0.5, "a b, -> b a").dtype == torch.float16
    assert tops.logaddexp(2.0, half, ", a b").dtype == torch.float16
    assert tops.add(torch.arange(3), 1.5, "i, ").dtype == torch.float32
    assert tops.where(half > 0, half, 0, "a b, a b, ").dtype == torch.float16


def test_torch_calls_are_the_framework_ones() -> None:
    torch = pytest.importorskip("torch")
    x, w = torch.randn(2, 3, 4), torch.randn(4)
    torch.testing.assert_close(tops.multiply(x, w, "b t c, c"), x * w, rtol=0, atol=0)
    torch.testing.assert_close(tops.subtract(2.0, x, ", b t c"), 2.0 - x, rtol=0, atol=0)
    torch.testing.assert_close(
        tops.logaddexp(x, w, "b t c, c -> c b t"), torch.logaddexp(x, w).permute(2, 0, 1)
    )


def test_matches_einx() -> None:
    einx = pytest.importorskip("einx")
    for pattern, x, y in (
        ("b t c, c -> b t c", X, W),
        ("b t c, c", X, W),
        ("b t c, b t -> c t b", X, M),
        ("b (t c), t -> b t c", X.reshape(2, 12), M[0]),
        ("i, j -> j i", W, M[0]),
    ):
        for name in sorted(BINARY):
            np.testing.assert_allclose(
                getattr(tops, name)(x, y, pattern), getattr(einx, name)(pattern, x, y)
            )
    np.testing.assert_array_equal(
        tops.where(MASK, X, 0.0, "b t c, b t c, -> c b t"),
        einx.where("b t c, b t c, -> c b t", MASK, X, 0.0),
    )
    np.testing.assert_array_equal(
        tops.add(X, 1.0, "b t c, -> b t c"), einx.add("b t c, -> b t c", X, 1.0)
    )


@st.composite
def _layouts(draw: Any) -> tuple[str, list[tuple[int, ...]], list[list[str]], list[str]]:
    """A random element-wise call: the pattern, the shapes, each term's and the output's axes."""
    names = draw(st.lists(st.sampled_from("abcde"), min_size=1, max_size=4, unique=True))
    lengths = {name: draw(st.integers(1, 3)) for name in names}
    count = draw(st.integers(2, 3))
    terms = [draw(st.permutations(names)) for _ in range(count)]
    terms = [t[: draw(st.integers(0, len(t)))] for t in terms]
    terms[0] = draw(st.permutations(names))  # every axis in some operand
    output = list(draw(st.permutations(names)))
    right = " ".join(output)
    if len(output) > 1 and draw(st.booleans()):  # the first two output axes composed
        right = f"({output[0]} {output[1]}) " + " ".join(output[2:])
    text = ", ".join(" ".join(t) for t in terms) + " -> " + right.strip()
    shapes = [tuple(lengths[n] for n in t) for t in terms]
    return text, shapes, [list(t) for t in terms], output


def _by_hand(x: np.ndarray, term: list[str], output: list[str]) -> np.ndarray:
    """`x` (axes `term`) transposed to the output's order with unit dims where it has none."""
    order = sorted(range(len(term)), key=lambda i: output.index(term[i]))
    aligned = x.transpose(order)
    return aligned.reshape([x.shape[term.index(n)] if n in term else 1 for n in output])


@settings(max_examples=60, deadline=None)
@given(layout=_layouts(), seed=st.integers(0, 2**16))
def test_random_patterns_match_numpy(layout: Any, seed: int) -> None:
    text, shapes, terms, output = layout
    generator = np.random.default_rng(seed)
    arrays = [generator.standard_normal(shape) for shape in shapes]
    aligned = [_by_hand(a, t, output) for a, t in zip(arrays, terms, strict=True)]
    full = np.broadcast_shapes(*(a.shape for a in aligned))
    composed = (-1, *full[2:]) if "(" in text else full

    def shaped(result: np.ndarray) -> np.ndarray:
        return np.broadcast_to(result, full).reshape(composed)

    if len(arrays) == 2:
        np.testing.assert_allclose(tops.add(*arrays, text), shaped(aligned[0] + aligned[1]))
        np.testing.assert_allclose(tops.maximum(*arrays, text), shaped(np.maximum(*aligned)))
    got = tops.elementwise(lambda *xs: sum(xs[1:], xs[0] * 2), *arrays, text)
    want = shaped(sum(aligned[1:], aligned[0] * 2))
    np.testing.assert_allclose(got, want, **tolerance(np.float64, 3))
    implicit = text.split(" ->")[0]  # the output: every axis once, in first-seen order
    first_seen = list(dict.fromkeys(n for t in terms for n in t))
    want = np.broadcast_to(aligned[0] - aligned[1], full)
    np.testing.assert_allclose(
        tops.elementwise(lambda *xs: xs[0] - xs[1] + 0 * sum(xs[2:], 0), *arrays, implicit),
        want.transpose([output.index(n) for n in first_seen]),
    )


def test_operands_are_views_and_left_unchanged() -> None:
    x, w = X.copy(), W.copy()
    aligned = tops._elementwise.align_operands(x, w, "b t c, c -> c t b")
    assert all(np.shares_memory(a, b) for a, b in zip(aligned, (x, w), strict=True))
    tops.multiply(x, w, "b t c, c -> c t b")
    tops.where(x > 0, x, w, "b t c, b t c, c")
    np.testing.assert_array_equal(x, X)
    np.testing.assert_array_equal(w, W)
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(X.reshape(2, 12).copy())
    views = tops._elementwise.align_operands(t, torch.ones(3), "b (t c), t -> c b t")
    assert views[0].data_ptr() == t.data_ptr()


def test_dask_stays_lazy() -> None:
    da = pytest.importorskip("dask.array")
    from dask.callbacks import Callback

    x = da.from_array(X, chunks=(1, 3, 2))
    started: list[object] = []
    with Callback(start=started.append):
        out = tops.multiply(x, da.from_array(W, chunks=2), "b t c, c -> c b t")
    assert started == []
    np.testing.assert_allclose(out.compute(), (X * W).transpose(2, 0, 1))


# --- autograd, torch.compile, torch.export, JAX --------------------------------------------


def test_torch_gradients() -> None:
    torch = pytest.importorskip("torch")
    x = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    w = torch.randn(4, dtype=torch.float64, requires_grad=True)
    for fn in (
        lambda x, w: tops.multiply(x, w, "b t c, c -> c (b t)"),
        lambda x, w: tops.logaddexp(x, w, "b t c, c"),
        lambda x, w: tops.where(x > 0, x, w, "b t c, b t c, c -> t b c"),
        lambda x, w: tops.elementwise(lambda a, b: a * torch.tanh(b), x, w, "b t c, c"),
        lambda x, w: tops.divide(x, 2.0, "b t c, ") + tops.maximum(w, 0.1, "c, "),
    ):
        assert torch.autograd.gradcheck(fn, (x, w))


def _compiled_once(fn: Callable[..., Any], make: Callable[[int], tuple[Any, ...]]) -> None:
    """fn compiles with fullgraph=True (no graph break) once for every batch size."""
    torch = pytest.importorskip("torch")
    from torch._dynamo.testing import CompileCounter

    for dynamic in (None, True):
        torch._dynamo.reset()
        counter = CompileCounter()
        compiled = torch.compile(fn, backend=counter, fullgraph=True, dynamic=dynamic)
        for batch in (5, 6, 7):
            inputs = make(batch)
            torch.testing.assert_close(compiled(*inputs), fn(*inputs))
        assert counter.frame_count == (2 if dynamic is None else 1)


COMPILED = {
    "add": lambda x, w: tops.add(x, w, "b t c, c -> c b t"),
    "subtract-number": lambda x, w: tops.subtract(1.0, x, ", b t c"),
    "multiply": lambda x, w: tops.multiply(x, w, "b t c, c -> (b t) c"),
    "divide": lambda x, w: tops.divide(x, w, "b t c, c"),
    "maximum-number": lambda x, w: tops.maximum(x, 0.0, "b t c, -> b t c"),
    "minimum": lambda x, w: tops.minimum(w, x, "c, b t c -> b t c"),
    "logaddexp": lambda x, w: tops.logaddexp(x, w, "b t c, c"),
    "where": lambda x, w: tops.where(x > 0, x, w, "b t c, b t c, c"),
    "where-number": lambda x, w: tops.where(x > 0, x, 0.0, "b t c, b t c, "),
    "elementwise": lambda x, w: tops.elementwise(
        lambda a, b: a * b.sigmoid(), x, w, "b t c, c -> c b t"
    ),
}


@pytest.mark.parametrize("name", sorted(COMPILED))
def test_compiles_without_graph_breaks(name: str) -> None:
    torch = pytest.importorskip("torch")
    _compiled_once(COMPILED[name], lambda b: (torch.randn(b, 3, 4), torch.randn(4)))


def test_export() -> None:
    torch = pytest.importorskip("torch")

    class Gate(torch.nn.Module):
        def forward(self, x: Any, w: Any) -> Any:
            y = tops.multiply(x, w, "b t c, c -> b c t")
            return tops.where(y > 0, y, 0.0, "b c t, b c t, ")

    x, w = torch.randn(2, 3, 4), torch.randn(4)
    exported = torch.export.export(Gate(), (x, w))
    torch.testing.assert_close(exported.module()(x, w), Gate()(x, w))


def test_errors_inside_compile_are_the_eager_errors() -> None:
    torch = pytest.importorskip("torch")

    def fn(x: Any, w: Any) -> Any:
        return tops.add(x, w, "b t c, t -> b t c")

    x, w = torch.randn(2, 3, 4), torch.randn(4)
    with pytest.raises(tops.TensorOpsError) as eager:
        fn(x, w)
    for dynamic in (False, True):
        torch._dynamo.reset()
        with pytest.raises(tops.TensorOpsError) as traced:
            torch.compile(fn, backend="eager", fullgraph=True, dynamic=dynamic)(x, w)
        assert str(traced.value) == str(eager.value)
        assert isinstance(traced.value, type(eager.value))


def test_jax_jit_grad_vmap() -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    x, w = jnp.asarray(X), jnp.asarray(W)

    def f(x: Any, w: Any) -> Any:
        y = tops.multiply(x, w, "b t c, c -> c b t")
        return tops.logaddexp(y, 0.0, "c b t, ").sum()

    np.testing.assert_allclose(jax.jit(f)(x, w), f(x, w), rtol=1e-12)
    grad = jax.grad(f, argnums=1)(x, w)
    sig = 1 / (1 + np.exp(-(X * W)))
    np.testing.assert_allclose(grad, (sig * X).sum(axis=(0, 1)), rtol=1e-10)
    rows = jax.vmap(lambda row: tops.add(row, w, "t c, c -> c t"))(x)
    np.testing.assert_allclose(rows, (X + W).transpose(0, 2, 1))


# --- errors ---------------------------------------------------------------------------------


def _message(call: Callable[[], Any]) -> str:
    with pytest.raises(tops.TensorOpsError) as info:
        call()
    return str(info.value)


def test_mismatch_message() -> None:
    assert _message(lambda: tops.multiply(X, np.ones(1), "b t c, c -> b t c")) == (
        "multiply: axis 'c' has length 1 in operand 1 but 4 in operand 0\n"
        '  pattern: "b t c, c -> b t c"\n'
        "                   ^\n"
        "  input 0: shape=(2, 3, 4) dtype=float64 backend=numpy\n"
        "  input 1: shape=(1,) dtype=float64 backend=numpy\n"
        "  hint:    a dimension of length 1 broadcasts only where its term says 1, "
        "e.g. 'b 1 c, b t c'"
    )


ERRORS = [
    ("b t c, t", "axis 't' has length 4 in operand 1 but 3 in operand 0", "t", 1),
    (
        "b t c, c -> b t",
        "axis 'c' is missing on the right: an element-wise op keeps every axis",
        "c",
        0,
    ),
    ("b t c, c -> b t c d", "axis 'd' on the right is in no operand", "d", 0),
    ("b t c, c c", "axis 'c' appears twice on the left", "c", 2),
    ("b t c, c -> b t t c", "axis 't' appears twice on the right", "t", 2),
    ("b t c", "the pattern has 1 term(s) on the left for 2 operand(s)", "b t c", 0),
    ("b t c, c, c", "the pattern has 3 term(s) on the left for 2 operand(s)", "b t c, c, c", 0),
    ("b t c, 4", "an anonymous axis of length 4 is not allowed in add", "4", 0),
    ("b t, c", "operand 0 has 3 dimension(s) but its term 'b t' has 2", "b t", 0),
    ("b t c, c -> b t c, c", "add takes one term on the right, got 2", ", ", 1),
    ("b t c, c -> ...", "'...' on the right is in no operand", "...", 0),
    (
        "... c, c -> c",
        "'...' is missing on the right: an element-wise op keeps every axis",
        "...",
        0,
    ),
    ("b t [c], c", "'[c]' is not allowed in add", "[c]", 0),
    ("b t _, c", "'_' is not allowed in add", "_", 0),
    (
        "b (t c), t",
        "cannot split axis of length 12 into (t c) with t=5: 12 is not divisible by 5",
        "(t c)",
        0,
    ),
    ("b t c, (c", "unclosed parenthesis", "(", 0),
]


@pytest.mark.parametrize(("pattern", "reason", "fragment", "occurrence"), ERRORS)
def test_error_messages(pattern: str, reason: str, fragment: str, occurrence: int) -> None:
    x, y = (X, W) if "(t c)" not in pattern else (X.reshape(2, 12), np.ones(5))
    lines = _message(lambda: tops.add(x, y, pattern)).splitlines()
    assert lines[0].startswith(f"add: {reason}")
    assert lines[1] == f'  pattern: "{pattern}"'
    assert lines[2] == caret(pattern, fragment, occurrence)


def test_ellipsis_counts_must_agree() -> None:
    lines = _message(lambda: tops.add(X, M, "..., ... -> ...")).splitlines()
    assert lines[0] == "add: '...' stands for 2 dimension(s) in operand 1 but for 3 in operand 0"
    assert lines[2] == caret("..., ... -> ...", "...", 1)


def test_number_errors() -> None:
    assert "operand 1 is a Python number: its term must be empty" in _message(
        lambda: tops.add(X, 1.0, "b t c, c")
    )
    assert "the condition of where must be an array" in _message(
        lambda: tops.where(True, X, 0.0, ", b t c, ")
    )
    assert "needs at least one array" in _message(lambda: tops.add(1.0, 2.0, ", "))


def test_argument_errors() -> None:
    assert "must be a str" in _message(lambda: tops.multiply(X, W, 3))  # type: ignore[arg-type]
    assert "elementwise needs operands and a pattern" in _message(lambda: tops.elementwise(np.add))
    message = _message(lambda: tops.elementwise(lambda a, b: a[:1] * b, X, W, "b t c, c"))
    assert "f returned an array of shape (1, 3, 4) but the operands broadcast to (2, 3, 4)" in (
        message
    )
    assert "axis length z=3 is given but 'z' is not in the pattern" in _message(
        lambda: tops.add(X, W, "b t c, c", z=3)
    )
    assert "axis 'c' has length 4 in operand 0 but c=5 was given" in _message(
        lambda: tops.add(X, W, "b t c, c", c=5)
    )


def test_mixed_families_are_an_error() -> None:
    torch = pytest.importorskip("torch")
    message = _message(lambda: tops.add(X, torch.ones(4), "b t c, c"))
    assert "all operands must be of one array family" in message


def test_errors_of_f_reach_the_caller_as_they_are() -> None:
    """f's own exception is not the framework's: it is raised unchanged, not wrapped."""

    class MineError(Exception):
        pass

    def f(a: Any, b: Any) -> Any:
        raise MineError("from f")

    with pytest.raises(MineError, match="from f"):
        tops.elementwise(f, X, W, "b t c, c")
    with pytest.raises(ZeroDivisionError):
        tops.elementwise(lambda a, b, c: 1 // 0, X, W, 2.0, "b t c, c, ")
    with pytest.raises(tops.ShapeError, match="f returned an array of shape"):
        tops.elementwise(lambda a, b: a[:1], X, W, "b t c, c")
    with pytest.raises(tops.ArgumentError, match="f returned a Python int"):
        tops.elementwise(lambda a, b: 3, X, W, "b t c, c")
