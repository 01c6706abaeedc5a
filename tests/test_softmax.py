"""softmax and log_softmax along bracketed axes: every family against NumPy, torch and einx."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorops as tops
from tests._seed import rng
from tests.messages import caret


def _softmax(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The hand-written NumPy softmax over `axes` jointly."""
    exp = np.exp(a - a.max(axis=axes, keepdims=True))
    return exp / exp.sum(axis=axes, keepdims=True)


X = rng("test_softmax").standard_normal((2, 3, 4, 5))

CASES = [
    ("b h i [j]", (3,)),
    ("b [h] i j", (1,)),
    ("b h [i j]", (2, 3)),  # adjacent: one kernel on torch
    ("b [h] i [j]", (1, 3)),  # apart: through logsumexp on torch
    ("[b h i j]", (0, 1, 2, 3)),
    ("b h i [(j)]", (3,)),
    ("... [j]", (3,)),
    ("b [...] j", (1, 2)),
]


@pytest.mark.parametrize(("pattern", "axes"), CASES)
def test_softmax_matches_numpy(backend: Any, pattern: str, axes: tuple[int, ...]) -> None:
    got = backend.to_numpy(tops.softmax(backend.asarray(X), pattern))
    rtol = backend.exp_rtol(1e-12)
    np.testing.assert_allclose(got, _softmax(X, axes), rtol=rtol, atol=1e-15)
    logs = backend.to_numpy(tops.log_softmax(backend.asarray(X), pattern))
    np.testing.assert_allclose(logs, np.log(_softmax(X, axes)), rtol=rtol, atol=rtol)


def test_the_output_may_be_rearranged(backend: Any) -> None:
    x = backend.asarray(X)
    got = backend.to_numpy(tops.softmax(x, "b h [i] j -> (b j) h [i]"))
    expected = _softmax(X, (2,)).transpose(0, 3, 1, 2).reshape(10, 3, 4)
    np.testing.assert_allclose(got, expected, rtol=backend.exp_rtol(1e-12))
    composed = backend.to_numpy(tops.log_softmax(backend.asarray(X), "b h i [j] -> [j] b h i"))
    np.testing.assert_allclose(composed, np.log(_softmax(X, (3,))).transpose(3, 0, 1, 2))


def test_lengths_and_compositions_in_brackets() -> None:
    x = X.reshape(2, 3, 20)
    got = tops.softmax(x, "b h [(i j)]", i=4)
    np.testing.assert_allclose(got, _softmax(x, (2,)))


@pytest.mark.parametrize("scale", [1000.0, -1000.0, 1e30])
def test_stable_at_large_magnitudes(backend: Any, scale: float) -> None:
    a = np.array([[0.0, 1.0, -2.0], [3.0, 3.0, 3.0]]) * scale
    got = backend.to_numpy(tops.softmax(backend.asarray(a), "b [c]"))
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, _softmax(a, (1,)), atol=1e-15)
    logs = backend.to_numpy(tops.log_softmax(backend.asarray(a), "b [c]"))
    assert np.isfinite(logs).all()
    np.testing.assert_allclose(
        logs,
        a
        - a.max(1, keepdims=True)
        - np.log(np.exp(a - a.max(1, keepdims=True)).sum(1, keepdims=True)),
    )


def test_torch_calls_its_own_kernels() -> None:
    torch = pytest.importorskip("torch")
    x = torch.randn(2, 3, 4, dtype=torch.float32)
    torch.testing.assert_close(tops.softmax(x, "a b [c]"), torch.softmax(x, -1), rtol=0, atol=0)
    torch.testing.assert_close(tops.log_softmax(x, "a [b] c"), torch.log_softmax(x, 1))
    assert tops.softmax(x.half(), "a b [c]").dtype == torch.float16


def test_dtypes_follow_the_framework() -> None:
    assert tops.softmax(np.zeros((2, 3), np.float32), "a [b]").dtype == np.float32
    assert tops.softmax(np.zeros((2, 3), np.int64), "a [b]").dtype == np.float64


def test_matches_einx() -> None:
    einx = pytest.importorskip("einx")
    for pattern, x in (("b h i [j]", X), ("b [h w] c", X), ("b [h] w -> b w [h]", X[0])):
        np.testing.assert_allclose(tops.softmax(x, pattern), einx.softmax(pattern, x))
        np.testing.assert_allclose(
            tops.log_softmax(x, pattern), einx.log_softmax(pattern, x), atol=1e-12
        )


@settings(max_examples=40, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    data=st.data(),
)
def test_sums_to_one_along_the_brackets(shape: list[int], data: Any) -> None:
    names = "abcd"[: len(shape)]
    marked = data.draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
    if not any(marked):
        marked[0] = True
    pattern = " ".join(f"[{n}]" if m else n for n, m in zip(names, marked, strict=True))
    a = np.random.default_rng(len(shape)).standard_normal(shape) * 50
    axes = tuple(i for i, m in enumerate(marked) if m)
    got = tops.softmax(a, pattern)
    np.testing.assert_allclose(got.sum(axis=axes), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.exp(tops.log_softmax(a, pattern)), got, rtol=1e-9, atol=1e-300)


def test_dask_stays_lazy() -> None:
    da = pytest.importorskip("dask.array")
    from dask.callbacks import Callback

    x = da.from_array(X, chunks=(1, 3, 2, 5))
    started: list[object] = []
    with Callback(start=started.append):
        out = tops.softmax(x, "b h [i] j")
    assert started == []
    np.testing.assert_allclose(out.compute(), _softmax(X, (2,)))


# --- errors ---------------------------------------------------------------------------------


def _message(call: Any) -> str:
    with pytest.raises(tops.TensorOpsError) as info:
        call()
    return str(info.value)


def test_missing_brackets_message() -> None:
    assert _message(lambda: tops.softmax(X, "b h i j")) == (
        "softmax: the axes to normalize must be in brackets\n"
        '  pattern: "b h i j"\n'
        "            ^^^^^^^\n"
        "  input:   shape=(2, 3, 4, 5) dtype=float64 backend=numpy\n"
        "  hint:    e.g. 'b h i [j]'"
    )


@pytest.mark.parametrize(
    ("pattern", "reason", "fragment", "occurrence"),
    [
        (
            "b h [i] j -> b h i j",
            "axis 'i' is in brackets on one side only: mark it on the right too",
            "i",
            0,
        ),
        ("b h i j -> b h i [j]", "the axes to normalize must be in brackets", "b h i j", 0),
        ("b h [i], j", "log_softmax takes one term on the left, got 2", "j", 0),
        ("b h [i [j]]", "nested brackets are not allowed", "[", 1),
        ("b h [i] j -> b h [i] k", "axis 'j' is missing on the right", "j", 0),
        ("b h [i]", "the pattern has 3 axes but the input has 4 dimensions", "b h [i]", 0),
        ("b h [_] j", "'_' is not allowed inside brackets", "_", 0),
        ("b h [i] (j", "unclosed parenthesis", "(", 0),
    ],
)
def test_error_messages(pattern: str, reason: str, fragment: str, occurrence: int) -> None:
    lines = _message(lambda: tops.log_softmax(X, pattern)).splitlines()
    assert lines[0] == f"log_softmax: {reason}"
    assert lines[1] == f'  pattern: "{pattern}"'
    assert lines[2] == caret(pattern, fragment, occurrence)


def test_an_unused_length_is_an_error() -> None:
    assert "axis length z=3 is given but 'z' is not in the pattern" in _message(
        lambda: tops.softmax(X, "b h i [j]", z=3)
    )


def test_integer_input_on_torch_is_a_tensorops_error() -> None:
    torch = pytest.importorskip("torch")
    assert "torch refused a step" in _message(
        lambda: tops.softmax(torch.zeros(2, 3, dtype=torch.int64), "a [b]")
    )
