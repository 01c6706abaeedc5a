"""flip, roll, sort, argsort, cumsum along bracketed axes: every family against NumPy and einx."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorops as tops
from tests._seed import rng
from tests.messages import caret

X = rng("test_along").standard_normal((2, 3, 4, 5))
#: Small integers: many ties, where a stable sort must keep the order.
TIES = rng("test_along ties").integers(0, 3, (2, 3, 4, 5)).astype(np.int32)


def _joint(a: np.ndarray, axes: tuple[int, ...], f: Callable[[np.ndarray], np.ndarray]) -> Any:
    """``f`` along the last axis of `a` with `axes` moved last and flattened, put back."""
    rest = [i for i in range(a.ndim) if i not in axes]
    perm = (*rest, *axes)
    moved = a.transpose(perm)
    out = f(moved.reshape(*moved.shape[: len(rest)], -1)).reshape(moved.shape)
    return out.transpose(np.argsort(perm))


def _stable_argsort(a: np.ndarray, descending: bool) -> np.ndarray:
    """The stable argsort along the last axis, by hand: sort keys (value, position)."""
    out = np.empty(a.shape, dtype=np.int64)
    for index in np.ndindex(*a.shape[:-1]):
        row = list(a[index])
        order = sorted(range(len(row)), key=lambda i: (-row[i] if descending else row[i], i))
        out[index] = order
    return out


# pattern, bracketed axes of X
CASES = [
    ("b h i [j]", (3,)),
    ("b [h] i j", (1,)),
    ("b h [i j]", (2, 3)),  # adjacent: merged in place
    ("b [h] i [j]", (1, 3)),  # apart: moved last, merged
    ("[b h i j]", (0, 1, 2, 3)),
    ("b h i [(j)]", (3,)),
    ("... [j]", (3,)),
    ("b [...] j", (1, 2)),
]


def _on(backend: Any, op: Callable[..., Any], a: np.ndarray, pattern: str, **kw: Any) -> Any:
    x = backend.asarray(a)
    got = backend.to_numpy(op(x, pattern, **kw))
    np.testing.assert_array_equal(backend.to_numpy(x), a)  # the input is not modified
    return got


@pytest.mark.parametrize(("pattern", "axes"), CASES)
def test_flip_and_roll_match_numpy(backend: Any, pattern: str, axes: tuple[int, ...]) -> None:
    np.testing.assert_array_equal(_on(backend, tops.flip, X, pattern), np.flip(X, axes))
    shifts = tuple(range(1, len(axes) + 1))
    rolled = _on(backend, tops.roll, X, pattern, shift=shifts)
    np.testing.assert_array_equal(rolled, np.roll(X, shifts, axes))
    for shift in (-2, 7):  # one int: every bracketed axis
        rolled = _on(backend, tops.roll, X, pattern, shift=shift)
        np.testing.assert_array_equal(rolled, np.roll(X, (shift,) * len(axes), axes))


@pytest.mark.parametrize(("pattern", "axes"), CASES)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_and_argsort_are_stable(
    backend: Any, pattern: str, axes: tuple[int, ...], descending: bool
) -> None:
    def values(a: np.ndarray) -> np.ndarray:
        order = _stable_argsort(a, descending)
        return np.take_along_axis(a, order, -1)

    got = _on(backend, tops.sort, TIES, pattern, descending=descending)
    assert got.dtype == TIES.dtype
    np.testing.assert_array_equal(got, _joint(TIES, axes, values))
    order = _on(backend, tops.argsort, TIES, pattern, descending=descending)
    assert order.dtype.kind == "i"
    expected = _joint(TIES, axes, lambda a: _stable_argsort(a, descending))
    np.testing.assert_array_equal(order, expected)


@pytest.mark.parametrize(("pattern", "axes"), CASES)
def test_cumsum_matches_numpy(backend: Any, pattern: str, axes: tuple[int, ...]) -> None:
    def cumsum(a: np.ndarray) -> np.ndarray:
        return np.cumsum(a, -1)

    tolerance = 8 * X.size * np.finfo(X.dtype).eps  # sums in another order on some families
    got = _on(backend, tops.cumsum, X, pattern)
    np.testing.assert_allclose(got, _joint(X, axes, cumsum), rtol=tolerance, atol=tolerance)
    got = _on(backend, tops.cumsum, TIES, pattern, reverse=True)
    np.testing.assert_array_equal(
        got, _joint(TIES, axes, lambda a: np.flip(cumsum(a[..., ::-1]), -1))
    )


def test_the_output_may_be_rearranged(backend: Any) -> None:
    x = backend.asarray(X)
    got = backend.to_numpy(tops.flip(x, "b h [i] j -> (b j) h [i]"))
    np.testing.assert_array_equal(got, np.flip(X, 2).transpose(0, 3, 1, 2).reshape(10, 3, 4))
    got = backend.to_numpy(tops.sort(x, "b h [i j] -> h b [j i]"))
    expected = np.sort(X.reshape(2, 3, 20), -1, kind="stable").reshape(X.shape)
    np.testing.assert_array_equal(got, expected.transpose(1, 0, 3, 2))
    got = backend.to_numpy(tops.roll(x, "b [h] i j -> [h] (b i j)", shift=-1))
    np.testing.assert_array_equal(got, np.roll(X, -1, 1).transpose(1, 0, 2, 3).reshape(3, 40))


def test_compositions_and_lengths_in_brackets(backend: Any) -> None:
    a = X.reshape(2, 3, 20)
    x = backend.asarray(a)
    got = backend.to_numpy(tops.argsort(x, "b h [(i j)]", i=4))
    np.testing.assert_array_equal(got, np.argsort(a, -1, kind="stable"))
    got = backend.to_numpy(tops.flip(x, "b h [(i j)] -> b h [i j]", i=4))
    np.testing.assert_array_equal(got, np.flip(a, -1).reshape(X.shape))


def test_no_axis_in_brackets_is_one_axis_of_length_one(backend: Any) -> None:
    a = X[0, 0]
    x = backend.asarray(a)
    for op in (tops.flip, tops.sort, tops.cumsum):
        np.testing.assert_array_equal(backend.to_numpy(op(x, "i j [...]")), a)
    np.testing.assert_array_equal(backend.to_numpy(tops.roll(x, "i j [...]", shift=3)), a)
    np.testing.assert_array_equal(backend.to_numpy(tops.argsort(x, "i j [...]")), 0 * a)


def test_empty_axes(backend: Any) -> None:
    a = np.zeros((2, 0, 3))
    for op in (tops.flip, tops.sort, tops.argsort, tops.cumsum):
        assert backend.to_numpy(op(backend.asarray(a), "b [t c]")).shape == (2, 0, 3)
    assert backend.to_numpy(tops.roll(backend.asarray(a), "b [t] c", shift=1)).shape == (2, 0, 3)


def test_matches_einx() -> None:
    einx = pytest.importorskip("einx")
    for pattern in ("b h i [j]", "b [h] i j", "b [h] w -> b w [h]"):
        a = X if "->" not in pattern else X[0]
        np.testing.assert_array_equal(tops.flip(a, pattern), einx.flip(pattern, a))
        np.testing.assert_array_equal(
            tops.roll(a, pattern, shift=2), einx.roll(pattern, a, shift=2)
        )
        np.testing.assert_array_equal(tops.sort(a, pattern), einx.sort(pattern, a))
        np.testing.assert_array_equal(tops.argsort(a, pattern), einx.argsort(pattern, a))
    for pattern, shift in (("b [h w] c", (1, -2)), ("b [h w] c", 1), ("[b] h w [c]", (3, 1))):
        got = tops.roll(X, pattern, shift=shift)
        np.testing.assert_array_equal(got, einx.roll(pattern, X, shift=shift))
        np.testing.assert_array_equal(tops.flip(X, pattern), einx.flip(pattern, X))


def test_dtypes_follow_the_framework() -> None:
    small = np.arange(6, dtype=np.int32).reshape(2, 3)
    assert tops.cumsum(small, "b [t]").dtype == np.cumsum(small, 1).dtype
    assert tops.cumsum(small > 2, "b [t]").dtype == np.cumsum(small > 2, 1).dtype
    assert tops.argsort(small, "b [t]").dtype == np.intp
    assert tops.sort(small.astype(np.float32), "b [t]").dtype == np.float32
    torch = pytest.importorskip("torch")
    x = torch.from_numpy(small)
    assert tops.cumsum(x, "b [t]").dtype == torch.cumsum(x, 1).dtype
    assert tops.argsort(x, "b [t]").dtype == torch.int64
    assert tops.roll(x.half(), "b [t]", shift=1).dtype == torch.float16


def test_flip_on_numpy_is_a_view() -> None:
    a = X.copy()
    flipped = tops.flip(a, "b [h] i [j]")
    assert np.shares_memory(flipped, a)
    np.testing.assert_array_equal(flipped, np.flip(a, (1, 3)))
    rearranged = tops.flip(a, "b [h] i j -> i [h] b j")
    assert np.shares_memory(rearranged, a)


def test_torch_calls_its_own_kernels() -> None:
    torch = pytest.importorskip("torch")
    x = torch.randn(2, 3, 4)
    exact = {"rtol": 0, "atol": 0}
    torch.testing.assert_close(tops.flip(x, "a [b] c"), torch.flip(x, (1,)), **exact)
    torch.testing.assert_close(tops.roll(x, "a [b c]", shift=(1, 2)), x.roll((1, 2), (1, 2)))
    values, indices = torch.sort(x, dim=2, descending=True, stable=True)
    torch.testing.assert_close(tops.sort(x, "a b [c]", descending=True), values, **exact)
    torch.testing.assert_close(tops.argsort(x, "a b [c]", descending=True), indices, **exact)
    torch.testing.assert_close(tops.cumsum(x, "a [b] c"), torch.cumsum(x, 1), **exact)


def test_dask_stays_lazy() -> None:
    da = pytest.importorskip("dask.array")
    from dask.callbacks import Callback

    x = da.from_array(X, chunks=(1, 2, 2, 3))
    started: list[object] = []
    with Callback(start=started.append):
        outs = [
            tops.flip(x, "b [h] i j"),
            tops.roll(x, "b [h i] j", shift=1),
            tops.sort(x, "b [h] i [j]"),
            tops.cumsum(x, "b h [i] j"),
        ]
    assert started == []
    np.testing.assert_array_equal(outs[0].compute(), np.flip(X, 1))
    np.testing.assert_allclose(outs[3].compute(), np.cumsum(X, 2))


# --- properties -----------------------------------------------------------------------------


@st.composite
def _marked(draw: st.DrawFn) -> tuple[np.ndarray, str, tuple[int, ...]]:
    """A random array, a pattern with at least one bracketed axis, and those axes."""
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    marks = draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
    if not any(marks):
        marks[draw(st.integers(0, len(shape) - 1))] = True
    names = "abcd"[: len(shape)]
    pattern = " ".join(f"[{n}]" if m else n for n, m in zip(names, marks, strict=True))
    a = np.random.default_rng(draw(st.integers(0, 2**16))).integers(-3, 4, shape)
    return a, pattern, tuple(i for i, m in enumerate(marks) if m)


@settings(max_examples=60, deadline=None)
@given(case=_marked(), shifts=st.lists(st.integers(-9, 9), min_size=4, max_size=4))
def test_flip_and_roll_undo_themselves(case: Any, shifts: list[int]) -> None:
    a, pattern, axes = case
    np.testing.assert_array_equal(tops.flip(tops.flip(a, pattern), pattern), a)
    shift = tuple(shifts[: len(axes)])
    rolled = tops.roll(a, pattern, shift=shift)
    np.testing.assert_array_equal(rolled, np.roll(a, shift, axes))
    back = tops.roll(rolled, pattern, shift=tuple(-s for s in shift))
    np.testing.assert_array_equal(back, a)


def _flat(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """`a` with `axes` moved last and flattened into one."""
    rest = [i for i in range(a.ndim) if i not in axes]
    return a.transpose(*rest, *axes).reshape(*[a.shape[i] for i in rest], -1)


@settings(max_examples=60, deadline=None)
@given(case=_marked(), descending=st.booleans())
def test_argsort_gathers_the_sort(case: Any, descending: bool) -> None:
    a, pattern, axes = case
    values = _flat(tops.sort(a, pattern, descending=descending), axes)
    expected = np.sort(_flat(a, axes), -1, kind="stable")
    np.testing.assert_array_equal(values, expected[..., ::-1] if descending else expected)
    order = _flat(tops.argsort(a, pattern, descending=descending), axes)
    np.testing.assert_array_equal(np.take_along_axis(_flat(a, axes), order, -1), values)
    ties = values[..., 1:] == values[..., :-1]
    assert (order[..., 1:] > order[..., :-1])[ties].all()  # stable: ties in their order


@settings(max_examples=60, deadline=None)
@given(case=_marked())
def test_cumsum_ends_with_the_sum(case: Any) -> None:
    a, pattern, axes = case
    got = tops.cumsum(a, pattern)
    np.testing.assert_array_equal(_flat(got, axes)[..., -1], a.sum(axis=axes))
    np.testing.assert_array_equal(np.diff(_flat(got, axes), axis=-1), _flat(a, axes)[..., 1:])
    reverse = tops.cumsum(a, pattern, reverse=True)
    np.testing.assert_array_equal(_flat(reverse, axes)[..., 0], a.sum(axis=axes))


# --- errors ---------------------------------------------------------------------------------


def _message(call: Callable[[], Any]) -> list[str]:
    with pytest.raises(tops.TensorOpsError) as info:
        call()
    return str(info.value).splitlines()


HINT = "  hint:    e.g. roll(x, 'b [t] c', shift=1), or shift=(1, -2) for '[h w]'"
SHAPE = "  input:   shape=(2, 3, 4, 5) dtype=float64 backend=numpy"


@pytest.mark.parametrize("op", ["flip", "sort", "argsort", "cumsum"])
def test_missing_brackets_message(op: str) -> None:
    what = {"flip": "flip", "cumsum": "sum along"}.get(op, "sort along")
    assert _message(lambda: getattr(tops, op)(X, "b h i j")) == [
        f"{op}: the axes to {what} must be in brackets",
        '  pattern: "b h i j"',
        "            ^^^^^^^",
        SHAPE,
        "  hint:    e.g. 'b [t] c'",
    ]


def test_shift_count_message() -> None:
    assert _message(lambda: tops.roll(X, "b [h i] j", shift=(1, 2, 3))) == [
        "roll: shift has 3 values but 2 axes are in brackets: one per axis",
        '  pattern: "b [h i] j"',
        caret("b [h i] j", "[h i]"),
        SHAPE,
        HINT,
    ]
    lines = _message(lambda: tops.roll(X, "b [h] i [j]", shift=[1]))
    assert lines[:3] == [
        "roll: shift has 1 value but 2 axes are in brackets: one per axis",
        '  pattern: "b [h] i [j]"',
        caret("b [h] i [j]", "[h] i [j]"),
    ]


@pytest.mark.parametrize(
    ("shift", "reason"),
    [
        (None, "shift must be an int, or a tuple of ints (one per bracketed axis): got no shift"),
        (1.5, "shift must be an int, or a tuple of ints (one per bracketed axis): got shift=1.5"),
        (
            {"h": 1},
            "shift must be an int, or a tuple of ints (one per bracketed axis): got shift={'h': 1}",
        ),
        ((1, 2.0), "shift must hold ints, got 2.0"),
        (True, "shift must hold ints, got True"),
    ],
)
def test_bad_shift_messages(shift: Any, reason: str) -> None:
    with pytest.raises(tops.ArgumentError) as info:
        tops.roll(X, "b [h] i j", shift=shift)
    assert isinstance(info.value, TypeError)
    assert str(info.value).splitlines() == [
        f"roll: {reason}",
        '  pattern: "b [h] i j"',
        SHAPE,
        HINT,
    ]


def test_options_equal_to_valid_ones_are_not_their_cached_plans() -> None:
    # 1 == True and 1.0 == 1: as cache keys they would reach the plan of the valid option
    tops.roll(X, "b [h] i [j]", shift=1)
    tops.roll(X, "b [h] i [j]", shift=(1, 2))
    for shift in (True, 1.0, (1.0, 2), (True, 2), [1.0, 2]):
        with pytest.raises(tops.ArgumentError, match="shift must"):
            tops.roll(X, "b [h] i [j]", shift=shift)
    for op, option in (("sort", "descending"), ("argsort", "descending"), ("cumsum", "reverse")):
        for valid in (True, False):
            getattr(tops, op)(X, "b [h] i j", **{option: valid})
        for value in (1, 0, 1.0):
            with pytest.raises(tops.ArgumentError, match=f"{option} must be True or False"):
                getattr(tops, op)(X, "b [h] i j", **{option: value})


def test_numpy_integers_are_shifts() -> None:
    got = tops.roll(X, "b [h] i [j]", shift=(np.int64(1), np.int8(-2)))
    np.testing.assert_array_equal(got, np.roll(X, (1, -2), (1, 3)))


@pytest.mark.parametrize(
    ("op", "option"), [("sort", "descending"), ("argsort", "descending"), ("cumsum", "reverse")]
)
def test_bad_flag_messages(op: str, option: str) -> None:
    assert _message(lambda: getattr(tops, op)(X, "b [h] i j", **{option: "yes"})) == [
        f"{op}: {option} must be True or False, got 'yes'",
        '  pattern: "b [h] i j"',
        SHAPE,
        f"  hint:    e.g. {op}(x, 'b [t]', {option}=True)",
    ]


@pytest.mark.parametrize(
    ("op", "options"),
    [
        ("flip", ""),
        ("roll", "shift= and "),
        ("sort", "descending= and "),
        ("cumsum", "reverse= and "),
    ],
)
def test_unknown_keyword_message(op: str, options: str) -> None:
    keywords = {"shift": 1} if op == "roll" else {}
    with pytest.raises(tops.ArgumentError) as info:
        getattr(tops, op)(X, "b [h] i j", descendng=True, **keywords)
    assert str(info.value).splitlines() == [
        f"{op}: unexpected keyword descendng=True: not an option of {op}, nor an axis of the "
        "pattern",
        '  pattern: "b [h] i j"',
        SHAPE,
        "  lengths: descendng=True",
        f"  hint:    {op} takes {options}the lengths of the pattern's axes",
    ]


@pytest.mark.parametrize(
    ("pattern", "reason", "fragment", "occurrence"),
    [
        (
            "b [h] i j -> b h i j",
            "axis 'h' is in brackets on one side only: mark it on the right too",
            "h",
            0,
        ),
        ("b h i j -> b [h] i j", "the axes to sort along must be in brackets", "b h i j", 0),
        ("b [h] i j -> b [h] i k", "axis 'j' is missing on the right", "j", 0),
        ("b [h] i j -> b [h] i, j", "sort takes one term on the right, got 2", ", ", 0),
        ("b [h] i", "the pattern has 3 axes but the input has 4 dimensions", "b [h] i", 0),
        ("b [h [i]] j", "nested brackets are not allowed", "[", 1),
        (
            "b [(h k)] i j",
            "cannot split axis of length 3 into (h k) with k=2: 3 is not divisible by 2",
            "(h k)",
            0,
        ),
    ],
)
def test_pattern_error_messages(pattern: str, reason: str, fragment: str, occurrence: int) -> None:
    lengths = {"k": 2} if "k" in pattern else {}
    lines = _message(lambda: tops.sort(X, pattern, **lengths))
    assert lines[0] == f"sort: {reason}"
    assert lines[1] == f'  pattern: "{pattern}"'
    assert lines[2] == caret(pattern, fragment, occurrence)


def test_a_length_of_no_axis_is_an_unknown_keyword() -> None:
    lines = _message(lambda: tops.cumsum(X, "b h i [j] -> b h i [j]", z=3))
    assert lines[0] == (
        "cumsum: unexpected keyword z=3: not an option of cumsum, nor an axis of the pattern"
    )
    lines = _message(lambda: tops.cumsum(X, "b h i [j]", j=True))
    assert lines[0] == "cumsum: axis length j=True is not an integer"


def test_swapped_arguments() -> None:
    assert (
        _message(lambda: tops.flip("b [t]", X))[0] == "flip: the pattern must be a str, got ndarray"
    )  # type: ignore[arg-type]


def test_a_framework_refusal_is_a_tensorops_error() -> None:
    xp = pytest.importorskip("array_api_strict")
    lines = _message(lambda: tops.cumsum(xp.asarray([[True, False]]), "b [t]"))
    assert lines[0].startswith("cumsum: array_api refused a step")


# --- torch autograd, torch.compile, torch.export --------------------------------------------


@pytest.mark.parametrize("pattern", ["b [t] c", "[b] t [c]", "b [t c] -> [c t] b"])
def test_torch_autograd(pattern: str) -> None:
    torch = pytest.importorskip("torch")
    from torch.autograd import gradcheck

    x = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    assert gradcheck(lambda x: tops.flip(x, pattern), (x,))
    assert gradcheck(lambda x: tops.roll(x, pattern, shift=1), (x,))
    assert gradcheck(lambda x: tops.sort(x, pattern, descending=True), (x,))
    assert gradcheck(lambda x: tops.cumsum(x, pattern), (x,))
    assert gradcheck(lambda x: tops.cumsum(x, pattern, reverse=True), (x,))


def _compiled_calls(x: Any) -> list[Any]:
    return [
        tops.flip(x, "b [t] c"),
        tops.roll(x, "b [t c]", shift=(1, -2)),
        tops.roll(x, "b [t] c", shift=1),
        tops.roll(x, "b [t] c", 2),
        tops.sort(x, "b [t c]", descending=True),
        tops.argsort(x, "[b] t [c]"),
        tops.cumsum(x, "b [t] c -> c b [t]", reverse=True),
    ]


@pytest.mark.parametrize("mode", ["static", "dynamic", "mark_dynamic"])
def test_torch_compile_without_breaks_or_recompiles(mode: str) -> None:
    torch = pytest.importorskip("torch")
    dynamo = pytest.importorskip("torch._dynamo")
    from torch._dynamo.testing import CompileCounter

    from tensorops._compile import stand_ins

    dynamo.reset()
    counter = CompileCounter()
    compiled = torch.compile(
        _compiled_calls,
        backend=counter,
        fullgraph=True,
        dynamic=True if mode == "dynamic" else None,
    )
    for batch in (9, 10, 11):
        x = torch.randn(batch, 3, 4)
        if mode == "mark_dynamic":
            dynamo.mark_dynamic(x, 0)
        for got, expected in zip(compiled(x), _compiled_calls(x), strict=True):
            torch.testing.assert_close(got, expected, rtol=0, atol=0)
    assert counter.frame_count == (2 if mode == "static" else 1)
    dynamo.reset()
    if stand_ins.installed():  # one node per call
        graphs = dynamo.explain(_compiled_calls)(torch.randn(2, 3, 4)).graphs
        nodes = [n.target for n in graphs[0].graph.nodes if n.op == "call_function"]
        assert [getattr(n, "__name__", "") for n in nodes] == ["in_graph"] * 7
    dynamo.reset()


@pytest.mark.parametrize("dynamic", [False, True])
def test_errors_inside_torch_compile_are_the_eager_errors(dynamic: bool) -> None:
    torch = pytest.importorskip("torch")
    dynamo = pytest.importorskip("torch._dynamo")

    calls = [
        lambda x: tops.roll(x, "b [t c]", shift=(1, 2, 3)),
        lambda x: tops.sort(x, "b t c"),
        lambda x: tops.cumsum(x, "b [t] c", reverse=1),
        lambda x: tops.flip(x, "b [t]"),
    ]
    for fn in calls:
        x = torch.randn(2, 3, 4)
        with pytest.raises(tops.TensorOpsError) as eager:
            fn(x)
        dynamo.reset()
        with pytest.raises(type(eager.value)) as compiled:
            torch.compile(fn, backend="eager", fullgraph=True, dynamic=dynamic)(x)
        assert str(compiled.value) == str(eager.value)
    dynamo.reset()


def test_torch_export() -> None:
    torch = pytest.importorskip("torch")

    class Along(torch.nn.Module):
        def forward(self, x: Any) -> Any:
            y = tops.flip(x, "b [t] c") + tops.roll(x, "b [t c]", shift=(1, 2))
            y = tops.cumsum(tops.sort(y, "b [t] c", descending=True), "b t [c]")
            return y, tops.argsort(x, "[b t] c")

    x = torch.randn(2, 3, 4)
    program = torch.export.export(Along(), (x,))
    ops = [str(n.target) for n in program.graph.nodes if n.op == "call_function"]
    for name in ("flip", "roll", "sort", "cumsum"):
        assert any(name in op for op in ops), (name, ops)
    for got, expected in zip(program.module()(x), Along()(x), strict=True):
        torch.testing.assert_close(got, expected, rtol=0, atol=0)


# --- JAX --------------------------------------------------------------------------------------


def test_jax_jit_grad_vmap() -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    jax.config.update("jax_enable_x64", True)

    def f(x: Any) -> Any:
        y = tops.roll(tops.flip(x, "b [t] c"), "b [t c]", shift=(1, -1))
        return tops.cumsum(tops.sort(y, "b [t c]", descending=True), "[b] t c")

    x = jnp.asarray(X[0])
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(x)), np.asarray(f(x)))
    expected = np.cumsum(
        _joint(np.roll(np.flip(X[0], 1), (1, -1), (1, 2)), (1, 2), lambda m: -np.sort(-m, -1)), 0
    )
    np.testing.assert_allclose(np.asarray(f(x)), expected, rtol=1e-12)
    grad = jax.grad(lambda x: (tops.cumsum(x, "b [t] c") * jnp.arange(5.0)).sum())(x)
    # d/dx[t] of sum_s<=... : each element counts once per position at or after it
    np.testing.assert_allclose(
        np.asarray(grad), np.broadcast_to(np.arange(4, 0, -1)[:, None] * np.arange(5.0), X[0].shape)
    )
    batched = jax.vmap(lambda row: tops.argsort(row, "[t] c"))(x)
    np.testing.assert_array_equal(np.asarray(batched), np.argsort(X[0], 1, kind="stable"))


# --- devices, namespaces ----------------------------------------------------------------------


def test_torch_devices(torch_device: Any) -> None:
    x = torch_device.tensor(TIES)
    torch_device.check(tops.flip(x, "b [h] i [j]"), np.flip(TIES, (1, 3)))
    torch_device.check(tops.roll(x, "b [h i] j", shift=(1, -1)), np.roll(TIES, (1, -1), (1, 2)))
    order = _joint(TIES, (1, 3), lambda a: _stable_argsort(a, True))
    torch_device.check(tops.argsort(x, "b [h] i [j]", descending=True), order)
    values = _joint(TIES, (2,), lambda a: np.sort(a, -1, kind="stable"))
    torch_device.check(tops.sort(x, "b h [i] j"), values)
    torch_device.check(
        tops.cumsum(x, "b h [i j]"), _joint(TIES, (2, 3), lambda a: np.cumsum(a, -1))
    )


def test_a_namespace_without_cumulative_sum() -> None:
    import types

    from tensorops._backends._array_api import ArrayApiBackend

    older = ArrayApiBackend(types.SimpleNamespace(__name__="older", cumsum=np.cumsum))
    np.testing.assert_array_equal(older.cumsummer(1)(TIES, None), np.cumsum(TIES, 1))
    with pytest.raises(tops.BackendError) as info:
        ArrayApiBackend(types.SimpleNamespace(__name__="bare")).cumsummer(0)
    assert str(info.value).splitlines()[0] == "bare has neither cumulative_sum nor cumsum"
