"""reduce's argmax, argmin, logsumexp, var and std on every family, against NumPy and einx."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorops as tops
from tests._seed import rng

X = rng("test_reductions").standard_normal((2, 3, 4, 5))


def _flat_arg(a: np.ndarray, axes: tuple[int, ...], name: str) -> np.ndarray:
    """argmax / argmin over `axes` flattened in their order, by hand."""
    rest = [i for i in range(a.ndim) if i not in axes]
    moved = np.transpose(a, rest + list(axes)).reshape(*(a.shape[i] for i in rest), -1)
    return np.asarray(getattr(np, name)(moved, axis=-1))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize(
    ("pattern", "axes"),
    [
        ("b c h w -> b c h", (3,)),
        ("b c h w -> b c", (2, 3)),  # as if written (h w)
        ("b c h w -> c w", (0, 2)),  # apart: brought last, in their order
        ("b c h w -> w h", (0, 1)),  # and the result rearranged
        ("b c h w -> b 1 h 1", (1, 3)),
        ("b c h w ->", (0, 1, 2, 3)),
    ],
)
def test_arg_reductions(backend: Any, name: str, pattern: str, axes: tuple[int, ...]) -> None:
    got = backend.to_numpy(tops.reduce(backend.asarray(X), pattern, name))
    expected = _flat_arg(X, axes, name)
    if pattern.endswith("-> w h"):
        expected = expected.T
    np.testing.assert_array_equal(got.reshape(expected.shape), expected)
    assert got.dtype.kind == "i"  # the framework's index dtype


def test_arg_index_dtype_is_the_framework_s() -> None:
    assert tops.reduce(X, "b c h w -> b", "argmax").dtype == np.intp
    torch = pytest.importorskip("torch")
    assert tops.reduce(torch.from_numpy(X), "b c h w -> b", "argmin").dtype == torch.int64


def test_arg_reduction_of_a_composed_axis_is_the_flattened_one() -> None:
    flat = tops.reduce(X, "b c h w -> b c", "argmax")
    composed = tops.reduce(X.reshape(2, 3, 20), "b c (h w) -> b c", "argmax", h=4)
    np.testing.assert_array_equal(flat, composed)
    h, w = np.unravel_index(flat, (4, 5))
    np.testing.assert_array_equal(X[0, 0, h[0, 0], w[0, 0]], X[0, 0].max())


@pytest.mark.parametrize(
    ("pattern", "axes"), [("b c h w -> b c", (2, 3)), ("b c h w -> h", (0, 1, 3))]
)
def test_logsumexp_var_std(backend: Any, pattern: str, axes: tuple[int, ...]) -> None:
    x = backend.asarray(X)
    np.testing.assert_allclose(
        backend.to_numpy(tops.reduce(x, pattern, "logsumexp")),
        np.log(np.exp(X).sum(axis=axes)),
        rtol=backend.exp_rtol(1e-12),
    )
    for name in ("var", "std"):  # population statistics, NumPy's default
        got = backend.to_numpy(tops.reduce(backend.asarray(X), pattern, name))
        np.testing.assert_allclose(got, getattr(np, name)(X, axis=axes), rtol=1e-12)


def test_logsumexp_of_every_axis_and_of_integers() -> None:
    # every axis reduced: NumPy's sum is a scalar (no array to take the log in place)
    whole = tops.reduce(X, "b c h w ->", "logsumexp")
    np.testing.assert_allclose(whole, np.log(np.exp(X).sum()), rtol=1e-12)
    assert np.ndim(whole) == 0
    ints = np.arange(12).reshape(3, 4)  # the maximum is an integer, the sum a float
    got = tops.reduce(ints, "a b -> a", "logsumexp")
    np.testing.assert_allclose(got, np.log(np.exp(ints).sum(axis=1)), rtol=1e-12)
    assert got.dtype == np.float64


@pytest.mark.parametrize("scale", [1000.0, -1000.0])
def test_logsumexp_is_stable(backend: Any, scale: float) -> None:
    a = np.array([[0.0, 1.0, 2.0], [5.0, 5.0, 5.0]]) * scale
    got = backend.to_numpy(tops.reduce(backend.asarray(a), "b c -> b", "logsumexp"))
    top = a.max(axis=1)
    np.testing.assert_allclose(got, top + np.log(np.exp(a - top[:, None]).sum(axis=1)))


# NumPy's log(0) warns for an axis of -inf only (its mass is 0): as np.log does
@pytest.mark.filterwarnings("ignore:divide by zero encountered in log:RuntimeWarning")
def test_logsumexp_of_infinities(backend: Any) -> None:
    a = np.array([[-np.inf, -np.inf], [np.inf, 0.0], [-np.inf, 0.0]])
    got = backend.to_numpy(tops.reduce(backend.asarray(a), "b c -> b", "logsumexp"))
    np.testing.assert_array_equal(got, [-np.inf, np.inf, 0.0])


def test_matches_einx() -> None:
    einx = pytest.importorskip("einx")
    for name in ("logsumexp", "var", "std"):
        np.testing.assert_allclose(
            tops.reduce(X, "b c h w -> b c", name), getattr(einx, name)("b c [h w]", X)
        )
    for name in ("argmax", "argmin"):
        ours = tops.reduce(X, "b c h w -> b c h", name)
        np.testing.assert_array_equal(ours, getattr(einx, name)("b c h [w]", X)[..., 0])
        # several axes: einx gives coordinates, tensorops the flattened position
        coordinates = getattr(einx, name)("b c [h w]", X)
        flat = tops.reduce(X, "b c h w -> b c", name)
        np.testing.assert_array_equal(np.stack(np.unravel_index(flat, (4, 5)), -1), coordinates)


@settings(max_examples=40, deadline=None)
@given(
    shape=st.lists(st.integers(1, 4), min_size=1, max_size=4),
    data=st.data(),
    name=st.sampled_from(["argmax", "argmin", "logsumexp", "var", "std"]),
)
def test_reductions_match_numpy(shape: list[int], data: Any, name: str) -> None:
    names = "abcd"[: len(shape)]
    kept = data.draw(st.lists(st.booleans(), min_size=len(shape), max_size=len(shape)))
    if all(kept):
        kept[-1] = False
    a = np.random.default_rng(sum(shape)).standard_normal(shape)
    axes = tuple(i for i, keep in enumerate(kept) if not keep)
    pattern = f"{' '.join(names)} -> {' '.join(n for n, k in zip(names, kept, strict=True) if k)}"
    got = tops.reduce(a, pattern, name)
    if name.startswith("arg"):
        np.testing.assert_array_equal(got, _flat_arg(a, axes, name))
    elif name == "logsumexp":
        np.testing.assert_allclose(got, np.log(np.exp(a).sum(axis=axes)), rtol=1e-12)
    else:
        np.testing.assert_allclose(got, getattr(np, name)(a, axis=axes), rtol=1e-9, atol=1e-15)


def test_layers_take_the_new_reductions() -> None:
    torch = pytest.importorskip("torch")
    from tensorops.layers.torch import Reduce

    x = torch.from_numpy(X)
    layer = Reduce("b c h w -> b c", "logsumexp")
    assert repr(layer) == "Reduce('b c h w -> b c', 'logsumexp')"
    torch.testing.assert_close(layer(x), torch.logsumexp(x, (2, 3)))
    torch.testing.assert_close(Reduce("b c h w -> b", "std")(x), x.std((1, 2, 3), correction=0))
    assert torch.equal(Reduce("b c h w -> b c", "argmax")(x), x.flatten(2).argmax(-1))


def test_empty_axis_is_a_tensorops_error() -> None:
    with pytest.raises(tops.BackendError) as info:
        tops.reduce(np.zeros((2, 0)), "a b -> a", "argmax")
    assert info.value.reason.startswith("cannot take the argmax over axes (1,) of a numpy array")


def test_unknown_reduction_lists_the_new_ones() -> None:
    with pytest.raises(tops.ArgumentError) as info:
        tops.reduce(X, "b c h w -> b", "argmedian")
    assert str(info.value) == (
        "reduce: unknown reduction 'argmedian'; valid: sum, mean, max, min, prod, any, all, "
        "argmax, argmin, logsumexp, var, std, or a callable f(x, axes)\n"
        '  pattern: "b c h w -> b"\n'
        "  input:   shape=(2, 3, 4, 5) dtype=float64 backend=numpy"
    )


def test_dask_stays_lazy() -> None:
    da = pytest.importorskip("dask.array")
    from dask.callbacks import Callback

    x = da.from_array(X, chunks=(1, 3, 2, 5))
    names = ("argmax", "argmin", "logsumexp", "var", "std")
    started: list[object] = []
    with Callback(start=started.append):
        results = [tops.reduce(x, "b c h w -> b c", name) for name in names]
    assert started == []
    np.testing.assert_array_equal(results[0].compute(), _flat_arg(X, (2, 3), "argmax"))
    np.testing.assert_allclose(results[3].compute(), X.var(axis=(2, 3)))
