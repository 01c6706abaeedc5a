"""PyTensor: unknown dimensions, compiled functions, gradients, dtypes and errors.

Run with ``TENSOROPS_TEST_FRAMEWORK=pytensor`` (``tests/test_frameworks.py`` does). The
suite's own tests run on constants, whose shapes are known; these build graphs on
variables whose dimensions are not, compile them and run them at several shapes, with
NumPy and einops as the oracles.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import einops
import numpy as np
import pytest

pytensor = pytest.importorskip("pytensor")
pt = pytest.importorskip("pytensor.tensor")

import tensorops as tops  # noqa: E402
from tensorops._backends import get_backend  # noqa: E402
from tensorops._backends._pytensor import ADAPTER, adapter_for  # noqa: E402
from tensorops._types import REDUCTIONS  # noqa: E402
from tests._staged import (  # noqa: E402
    CASES,
    EINOPS,
    SIZES,
    Case,
    assert_same,
    case_ids,
    einops_beside,
    flatten,
)

#: The batch lengths every symbolic test runs its compiled function at.
BATCHES = (1, 3, 5)
#: FAST_COMPILE for most graphs (compiling to C costs a second each); the default mode
#: for the tests that name it.
FAST = "FAST_COMPILE"


def _rng() -> np.random.Generator:
    return np.random.default_rng(20240611)


def _run(inputs: Sequence[Any], output: Any, values: Sequence[np.ndarray], mode: Any = FAST) -> Any:
    return pytensor.function(list(inputs), output, mode=mode)(*values)


def _tolerance(dtype: Any, terms: int) -> dict[str, float]:
    """A relative tolerance from the dtype's resolution and the number of terms summed."""
    eps = float(np.finfo(dtype).eps)
    return {"rtol": 8 * eps * max(terms, 1), "atol": 8 * eps * max(terms, 1)}


# -- unknown dimensions ------------------------------------------------------------------

REARRANGES = [
    ("b (h w) -> b h w", {"h": 2}),
    ("b (h w) -> (b h) w", {"h": 3}),
    ("b c -> c b", {}),
    ("b c -> (b c)", {}),
    ("b ... -> ... b", {}),
    ("b (h w) -> w (b h)", {"w": 2}),
]


@pytest.mark.parametrize(("pattern", "lengths"), REARRANGES)
def test_rearrange_with_unknown_dimensions(pattern: str, lengths: dict[str, int]) -> None:
    x = pt.tensor("x", shape=(None, None), dtype="float64")
    out = tops.rearrange(x, pattern, **lengths)
    function = pytensor.function([x], out, mode=FAST)
    for batch in BATCHES:
        a = _rng().normal(size=(batch, 6))
        np.testing.assert_array_equal(function(a), einops.rearrange(a, pattern, **lengths))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_every_reduction_with_unknown_dimensions(reduction: str) -> None:
    x = pt.tensor("x", shape=(None, None, 4), dtype="float64")
    out = tops.reduce(x, "b (h w) c -> h c", reduction, h=2)
    function = pytensor.function([x], out, mode=FAST)
    for batch in BATCHES:
        a = _rng().normal(size=(batch, 6, 4))
        want = tops.reduce(a, "b (h w) c -> h c", reduction, h=2)
        np.testing.assert_allclose(function(a), want, **_tolerance(np.float64, a.size))


def test_repeat_pack_unpack_and_parse_shape_with_unknown_dimensions() -> None:
    x = pt.tensor("x", shape=(None, 3), dtype="float32")
    y = pt.tensor("y", shape=(None, None), dtype="float32")
    shape = tops.parse_shape(x, "b c")
    assert shape["c"] == 3
    # an unknown length is answered as PyTensor's own scalar, usable in graphs and as a length
    assert isinstance(shape["b"], pt.TensorVariable)
    assert shape["b"].ndim == 0
    repeated = tops.repeat(x, "b c -> b c r", r=2)
    grown = tops.repeat(y, "b t -> b t n", n=shape["b"])  # a symbolic length as a keyword
    packed, shapes = tops.pack([x, y], "b *")
    assert shapes[0] == (3,)
    assert len(shapes[1]) == 1
    first, second = tops.unpack(packed, [(3,), (-1,)], "b *")
    function = pytensor.function([x, y], [repeated, grown, packed, first, second], mode=FAST)
    for batch in BATCHES:
        a = np.arange(batch * 3, dtype=np.float32).reshape(batch, 3)
        b = np.arange(batch * 4, dtype=np.float32).reshape(batch, 4)
        got = function(a, b)
        np.testing.assert_array_equal(got[0], einops.repeat(a, "b c -> b c r", r=2))
        np.testing.assert_array_equal(got[1], einops.repeat(b, "b t -> b t n", n=batch))
        np.testing.assert_array_equal(got[2], np.concatenate([a, b], axis=1))
        np.testing.assert_array_equal(got[3], a)
        np.testing.assert_array_equal(got[4], b)
        assert all(g.dtype == np.float32 for g in got)


@pytest.mark.parametrize(
    "equation", ["ij,jk->ik", "bij,bjk->bik", "ij,ij->i", "i,j->ij", "ii->i", "ij->"]
)
def test_einsum_with_unknown_dimensions(equation: str) -> None:
    inputs = equation.split("->")[0].split(",")
    variables = [pt.tensor(f"x{i}", shape=(None,) * len(term)) for i, term in enumerate(inputs)]
    out = tops.einsum(equation, *variables)
    function = pytensor.function(variables, out, mode=FAST)
    for n in (1, 2, 4):
        sizes = {letter: n + k for k, letter in enumerate("bijk")}
        arrays = [_rng().normal(size=[sizes[c] for c in term]) for term in inputs]
        want = np.einsum(equation, *arrays)
        np.testing.assert_allclose(function(*arrays), want, **_tolerance(np.float64, 8))


def test_ops_along_axes_softmax_and_elementwise_with_unknown_dimensions() -> None:
    x = pt.tensor("x", shape=(None, None), dtype="float64")
    w = pt.tensor("w", shape=(None,), dtype="float64")
    outputs = [
        tops.softmax(x, "b [c]"),
        tops.log_softmax(x, "[b c]"),
        tops.flip(x, "b [c]"),
        tops.roll(x, "[b] c", shift=1),
        tops.sort(x, "b [c]"),
        tops.argsort(x, "b [c]", descending=True),
        tops.cumsum(x, "[b] c"),
        tops.multiply(x, w, "b c, c -> b c"),
        tops.rearrange([x, x], "b c1, b c2 -> b (c1 + c2)"),
    ]
    function = pytensor.function([x, w], outputs, mode=FAST)
    for batch in BATCHES:
        a = _rng().normal(size=(batch, 4))
        v = _rng().normal(size=4)
        got = function(a, v)
        wants = [tops.softmax(a, "b [c]"), tops.log_softmax(a, "[b c]")]
        wants += [tops.flip(a, "b [c]"), tops.roll(a, "[b] c", shift=1)]
        wants += [tops.sort(a, "b [c]"), tops.argsort(a, "b [c]", descending=True)]
        wants += [tops.cumsum(a, "[b] c"), a * v, np.concatenate([a, a], axis=1)]
        for g, want in zip(got, wants, strict=True):
            np.testing.assert_allclose(g, want, **_tolerance(np.float64, a.size))


def test_indexing_with_unknown_dimensions() -> None:
    x = pt.tensor("x", shape=(None, None, 2), dtype="float64")
    index = pt.tensor("i", shape=(None, None), dtype="int64")
    values = pt.tensor("v", shape=(None, None, 2), dtype="float64")
    gathered = tops.get_at(x, index, "b [t] c, b p -> b p c")
    written = tops.set_at(x, index, values, "b [t] c, b p, b p c -> b [t] c")
    added = tops.add_at(x, index, values, "b [t] c, b p, b p c -> b [t] c")
    function = pytensor.function([x, index, values], [gathered, written, added], mode=FAST)
    for batch in BATCHES:
        a = _rng().normal(size=(batch, 5, 2))
        i = _rng().integers(0, 5, size=(batch, 3))
        v = _rng().normal(size=(batch, 3, 2))
        got = function(a, i, v)
        np.testing.assert_array_equal(got[0], tops.get_at(a, i, "b [t] c, b p -> b p c"))
        want = tops.add_at(a, i, v, "b [t] c, b p, b p c -> b [t] c")
        np.testing.assert_allclose(got[2], want, **_tolerance(np.float64, 4))
        # set_at with repeated indexes keeps one of the values: compare where they are unique
        if all(len(set(row)) == len(row) for row in i.tolist()):
            want = tops.set_at(a, i, v, "b [t] c, b p, b p c -> b [t] c")
            np.testing.assert_array_equal(got[1], want)


def test_check_with_unknown_dimensions() -> None:
    x = pt.tensor("x", shape=(None, 3))
    assert tops.check(x, "b c", c=3) is x
    solved = tops.check([x, x], "b c, b c")
    assert solved["c"] == 3
    # an unknown length is PyTensor's own scalar, as parse_shape gives it
    assert solved["b"].eval({x: np.zeros((5, 3))}) == 5


def test_a_compiled_function_in_the_default_mode() -> None:
    x = pt.tensor("x", shape=(None, None, 6), dtype="float32")
    w = pt.tensor("w", shape=(3, 5), dtype="float32")
    out = tops.einsum("b t (h d), d e -> b h t e", x, w, h=2)
    function = pytensor.function([x, w], out)  # the default mode: C code
    for batch in BATCHES:
        a = _rng().normal(size=(batch, 4, 6)).astype(np.float32)
        b = _rng().normal(size=(3, 5)).astype(np.float32)
        got = function(a, b)
        assert got.dtype == np.float32
        want = np.einsum("bthd,de->bhte", a.reshape(batch, 4, 2, 3), b)
        np.testing.assert_allclose(got, want, **_tolerance(np.float32, 3))


def test_a_step_that_needs_an_unknown_length_says_so() -> None:
    # the max semiring works in blocks of a bounded size: it needs the lengths as numbers
    a, b = pt.tensor("a", shape=(None, None)), pt.tensor("b", shape=(None, None))
    with pytest.raises(
        tops.TensorOpsError, match="known only when the graph runs \\(in a PyTensor graph\\)"
    ):
        tops.einsum("ij,jk->ik", a, b, semiring="max")
    a_known, b_known = pt.specify_shape(a, (2, 3)), pt.specify_shape(b, (3, 4))
    known = tops.einsum("ij,jk->ik", a_known, b_known, semiring="max")
    function = pytensor.function([a, b], known, mode=FAST)
    x, y = _rng().normal(size=(2, 3)), _rng().normal(size=(3, 4))
    np.testing.assert_array_equal(function(x, y), (x[:, :, None] + y[None]).max(axis=1))


def test_a_length_that_does_not_fit_fails_when_the_function_runs() -> None:
    # an unknown dimension cannot be checked when the graph is built: PyTensor checks it
    x = pt.tensor("x", shape=(None, None))
    function = pytensor.function([x], tops.rearrange(x, "b (h w) -> b h w", h=4), mode=FAST)
    with pytest.raises(ValueError):  # noqa: PT011 - PyTensor's reshape error, its own text
        function(np.zeros((2, 6)))


# -- gradients ---------------------------------------------------------------------------


def test_gradients_flow_through_every_kind_of_op() -> None:
    x = pt.tensor("x", shape=(None, 6), dtype="float64")
    w = pt.tensor("w", shape=(6, 2), dtype="float64")
    cost = (
        tops.reduce(tops.rearrange(x, "b (h w) -> b h w", h=2), "b h w -> ", "sum")
        + tops.einsum("bi,ij->", x, w)
        + tops.reduce(tops.softmax(x, "b [i]") * 0.0, "b i ->", "sum")
        + tops.reduce(tops.repeat(x, "b i -> b i r", r=3), "b i r ->", "mean")
    )
    grad_x, grad_w = pytensor.grad(cost, [x, w])
    function = pytensor.function([x, w], [grad_x, grad_w], mode=FAST)
    for batch in BATCHES:
        a = _rng().normal(size=(batch, 6))
        b = _rng().normal(size=(6, 2))
        got_x, got_w = function(a, b)
        # d/dx: 1 (sum) + w summed over j (einsum) + 0 (softmax * 0) + 1 / (b * i) (mean)
        want_x = 1 + b.sum(axis=1)[None, :] + 1 / a.size
        np.testing.assert_allclose(got_x, np.broadcast_to(want_x, a.shape), rtol=1e-12)
        np.testing.assert_allclose(got_w, np.repeat(a.sum(axis=0)[:, None], 2, 1), rtol=1e-12)


def test_gradient_of_logsumexp_is_the_softmax() -> None:
    x = pt.tensor("x", shape=(None, 4), dtype="float64")
    cost = pt.sum(tops.reduce(x, "b c -> b", "logsumexp"))
    function = pytensor.function([x], pytensor.grad(cost, x), mode=FAST)
    a = _rng().normal(size=(3, 4)) * 50  # large: the shift must not leak into the gradient
    np.testing.assert_allclose(function(a), tops.softmax(a, "b [c]"), rtol=1e-12)


# -- dtypes ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int32", "uint8"])
def test_results_keep_the_input_dtype(dtype: str) -> None:
    a = np.arange(24).reshape(2, 3, 4).astype(dtype)
    x = pt.constant(a, dtype=dtype)
    for out in (
        tops.rearrange(x, "a b c -> c (a b)"),
        tops.repeat(x, "a b c -> a b c r", r=2),
        tops.reduce(x, "a b c -> a c", "max"),
        tops.flip(x, "a [b] c"),
    ):
        assert out.dtype == dtype
        assert get_backend(out) is ADAPTER


def test_reduction_dtypes_follow_pytensor() -> None:
    x = pt.constant(np.ones((2, 3), dtype=np.int8))
    assert tops.reduce(x, "a b -> a", "sum").dtype == pt.sum(x, axis=1).dtype
    assert tops.reduce(x, "a b -> a", "mean").dtype == pt.mean(x, axis=1).dtype
    assert tops.reduce(x, "a b -> a", "argmax").dtype == "int64"


# -- detection, values, errors -----------------------------------------------------------


def test_adapter_for_every_kind_of_tensor_variable() -> None:
    shared = pytensor.shared(np.zeros((2, 3)))
    for x in (pt.tensor("x", shape=(None,)), pt.constant([1.0]), shared, shared * 2):
        assert adapter_for(x) is ADAPTER
        assert get_backend(x) is ADAPTER
    assert adapter_for(np.zeros(2)) is None
    assert adapter_for(pytensor.scalar.float64("s")) is None  # a scalar-type variable


def test_to_numpy_evaluates_graphs_without_inputs() -> None:
    shared = pytensor.shared(np.arange(6.0).reshape(2, 3))
    out = tops.rearrange(shared, "a b -> b a")
    np.testing.assert_array_equal(tops.asnumpy(out), np.arange(6.0).reshape(2, 3).T)
    np.testing.assert_array_equal(tops.asnumpy(pt.constant([1, 2])), [1, 2])


def test_to_numpy_of_a_graph_with_inputs_is_an_error() -> None:
    x = pt.tensor("x", shape=(2,))
    with pytest.raises(tops.TensorOpsError, match=r"depends on inputs \(x\)"):
        tops.asnumpy(x * 2)


def test_splitting_an_unknown_axis_needs_a_length() -> None:
    x = pt.tensor("x", shape=(None, None))
    with pytest.raises(tops.TensorOpsError) as error:
        tops.rearrange(x, "b (h w) -> b h w")
    assert "cannot infer the lengths of h and w in (h w)" in str(error.value)
    assert "shape=(None, None) dtype=float64 backend=pytensor" in str(error.value)


def _first_line(call: Callable[[Any], Any], x: Any) -> str:
    with pytest.raises(tops.TensorOpsError) as error:
        call(x)
    return str(error.value).splitlines()[0]


@pytest.mark.parametrize(
    "call",
    [
        lambda x: tops.rearrange(x, "a (b c) -> a b c", b=4),
        lambda x: tops.rearrange(x, "a b c -> a b"),
        lambda x: tops.reduce(x, "a b -> a", "median"),
        lambda x: tops.repeat(x, "a b -> a b c"),
        lambda x: tops.einsum("ij,jk->ik", x, x),
        lambda x: tops.softmax(x, "a b"),
        lambda x: tops.get_at(x, x, "a [b], a -> a"),
        lambda x: tops.check(x, "a b", b=4),
        lambda x: tops.parse_shape(x, "a b c"),
        lambda x: tops.unpack(x, [(2,), (2,)], "a *"),
        lambda x: tops.reduce(x[:0], "a b -> b", "max"),
    ],
)
def test_errors_read_as_on_numpy(call: Callable[[Any], Any]) -> None:
    a = np.arange(6.0).reshape(2, 3)
    on_numpy = _first_line(call, a).replace("numpy", "pytensor")
    on_pytensor = _first_line(call, pt.constant(a))
    if "variable" in on_pytensor:  # the adapter names what it holds: a variable, not an array
        on_pytensor = on_pytensor.replace("pytensor variable", "pytensor array")
    assert on_pytensor == on_numpy


def test_nothing_the_user_passed_is_modified() -> None:
    a = np.arange(6.0).reshape(2, 3)
    shared = pytensor.shared(a.copy())
    values = pt.constant(np.full((2, 2), 9.0))
    out = tops.set_at(shared, pt.constant(np.array([0, 2])), values, "a [b], p, a p -> a [b]")
    np.testing.assert_array_equal(tops.asnumpy(out), [[9, 1, 9], [9, 4, 9]])
    np.testing.assert_array_equal(shared.get_value(), a)


def _compiled(case: Case, ops: Any) -> Any:
    inputs = [pt.tensor(f"x{i}", shape=x.shape, dtype=x.dtype) for i, x in enumerate(case.inputs)]
    outputs = flatten(case.run(ops, *inputs))
    # a case may check one input and return another: unused inputs are no mistake here
    return pytensor.function(inputs, outputs, mode=FAST, on_unused_input="ignore")


# numba's linker says that a product of a transposed operand could be faster: no mistake
@pytest.mark.filterwarnings("ignore:np.dot.. is faster on contiguous arrays")
@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_every_op_with_unknown_static_shapes(case: Case) -> None:
    _run_at_sizes(_compiled(case, tops), case)
    einops_beside(case, lambda: _run_at_sizes(_compiled(case, EINOPS), case))


def _run_at_sizes(function: Any, case: Case) -> None:
    for n in SIZES:
        assert_same(function(*case.arrays(n)), case.expected(n), np.asarray)


def test_logsumexp_einsum_is_exact_with_unknown_lengths() -> None:
    # no value is known while the graph is built: every position takes the exact path,
    # with unknown lengths in one block
    rng = _rng()
    x, y = 1e4 * rng.normal(size=(4, 5)), 1e4 * rng.normal(size=(5, 3))
    block = x[:, :, None] + y[None]
    top = block.max(1)
    want = np.log(np.exp(block - top[:, None]).sum(1)) + top
    for shapes in (((None, None), (None, None)), ((4, 5), (5, 3))):
        a, b = pt.tensor("a", shape=shapes[0]), pt.tensor("b", shape=shapes[1])
        got = tops.einsum("ij,jk->ik", a, b, semiring="logsumexp")
        np.testing.assert_allclose(pytensor.function([a, b], got, mode=FAST)(x, y), want)
