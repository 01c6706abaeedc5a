"""Einsum over other semirings: logsumexp, max, min (and the adapters' primitives for them)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tensorops._backends import get_backend

# --- the adapters' primitives ------------------------------------------------------------


def test_primitives_on_every_family(backend: Any) -> None:
    x = np.array([[0.5, -np.inf, 2.0], [-np.inf, -np.inf, -np.inf]])
    adapter = get_backend(backend.asarray(x))
    exps, shift = adapter.shifted_exp(backend.asarray(x), 1)
    np.testing.assert_allclose(backend.to_numpy(shift), [[2.0], [0.0]])  # all -inf: 0
    np.testing.assert_allclose(backend.to_numpy(exps), np.exp(x - [[2.0], [0.0]]))
    logs = adapter.log(backend.asarray(np.array([0.0, 1.0, np.e])))
    np.testing.assert_allclose(backend.to_numpy(logs), [-np.inf, 0.0, 1.0])
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


def test_dtype_kinds_and_floating(backend: Any) -> None:
    for values, kind in [([True], "b"), ([1], "i"), (np.array([1], np.uint8), "i"), ([1.0], "f")]:
        x = backend.asarray(np.asarray(values))
        adapter = get_backend(x)
        assert adapter.dtype_kind(x.dtype) == kind
        assert adapter.dtype_kind(adapter.floating(x).dtype) == "f"
    if backend.name != "array_api_strict":  # no complex64 from NumPy's complex there
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
