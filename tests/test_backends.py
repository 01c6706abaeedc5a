"""Every Backend method on every installed family, against NumPy; detection and caching."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tensorops._backends as backends
from tensorops._backends import (
    ArrayApiBackend,
    backend_for_name,
    get_backend,
)
from tensorops._errors import BackendError, TensorOpsError
from tensorops._types import REDUCTIONS

ROOT = Path(__file__).resolve().parents[1]
SUPPORTED = (
    "numpy.ndarray, torch.Tensor, tf.Tensor, paddle.Tensor, a tinygrad Tensor, a PyTensor "
    "variable, or an array with __array_namespace__ (JAX, MLX, CuPy, Dask, array-api-strict)"
)


def _data(shape: tuple[int, ...], dtype: Any = np.float64) -> np.ndarray:
    values = np.arange(1, int(np.prod(shape)) + 1).reshape(shape) % 7 + 1
    return values.astype(dtype)


# -- every method on every family -------------------------------------------------------


def _reference(a: np.ndarray, reduction: str, axes: tuple[int, ...]) -> np.ndarray:
    """NumPy's result for a reduction over `axes`; argmax / argmin over them flattened."""
    if reduction in ("argmax", "argmin"):
        rest = [i for i in range(a.ndim) if i not in axes]
        moved = np.transpose(a, rest + list(axes)).reshape(*(a.shape[i] for i in rest), -1)
        return np.asarray(getattr(np, reduction)(moved, axis=-1))
    if reduction == "logsumexp":
        return np.log(np.sum(np.exp(a), axis=axes))
    return np.asarray(getattr(np, reduction)(a, axis=axes))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("axes", [(0,), (2,), (0, 2), (1, 2), (0, 1, 2)])
def test_reduce_float(backend: Any, reduction: str, axes: tuple[int, ...]) -> None:
    a = _data((2, 3, 4)) / 4 + np.arange(24).reshape(2, 3, 4) / 100  # no ties for argmax
    result = get_backend(backend.asarray(a)).reduce(backend.asarray(a), reduction, axes)
    expected = _reference(a, reduction, axes)
    rtol = backend.exp_rtol(1e-12) if reduction == "logsumexp" else 1e-12
    np.testing.assert_allclose(backend.to_numpy(result), expected, rtol=rtol)
    assert backend.to_numpy(result).dtype.kind == expected.dtype.kind


# float-only in torch and the standard: mean, logsumexp, var, std
@pytest.mark.parametrize(
    "reduction", [r for r in REDUCTIONS if r not in ("mean", "logsumexp", "var", "std")]
)
@pytest.mark.parametrize("axes", [(1,), (0, 2)])
def test_reduce_int(backend: Any, reduction: str, axes: tuple[int, ...]) -> None:
    a = _data((2, 3, 4), np.int64) + np.arange(24).reshape(2, 3, 4) * 10
    x = backend.asarray(a)
    result = get_backend(x).reduce(x, reduction, axes)
    np.testing.assert_array_equal(backend.to_numpy(result), _reference(a, reduction, axes))


def test_mean_of_integers_follows_the_framework(backend: Any) -> None:
    a = _data((2, 3), np.int64)
    x = backend.asarray(a)
    # paddle and tensorflow would truncate
    if backend.name in ("torch", "array_api_strict", "paddle", "tensorflow"):
        with pytest.raises(TensorOpsError, match="mean") as info:
            get_backend(x).reduce(x, "mean", (1,))
        if backend.name == "torch":
            assert info.value.reason.startswith(
                "mean of an integer tensor is not defined in torch (dtype int64); "
                "convert to float first"
            )
    else:
        result = get_backend(x).reduce(x, "mean", (1,))
        np.testing.assert_allclose(backend.to_numpy(result), a.mean(axis=1))


@pytest.mark.parametrize("reduction", ["any", "all"])
@pytest.mark.parametrize("axes", [(0,), (0, 1), (1, 2)])
def test_reduce_bool(backend: Any, reduction: str, axes: tuple[int, ...]) -> None:
    a = _data((2, 3, 4), np.int64) % 3 == 0
    x = backend.asarray(a)
    result = get_backend(x).reduce(x, reduction, axes)
    np.testing.assert_array_equal(backend.to_numpy(result), getattr(np, reduction)(a, axis=axes))


def test_reshape_permute_expand(backend: Any) -> None:
    a = _data((2, 3, 4))
    x = backend.asarray(a)
    b = get_backend(x)
    np.testing.assert_array_equal(backend.to_numpy(b.reshape(x, (6, 4))), a.reshape(6, 4))
    np.testing.assert_array_equal(backend.to_numpy(b.reshape(x, (4, 3, 2))), a.reshape(4, 3, 2))
    np.testing.assert_array_equal(backend.to_numpy(b.permute(x, (2, 0, 1))), a.transpose(2, 0, 1))
    small = backend.asarray(_data((3, 1)))
    np.testing.assert_array_equal(
        backend.to_numpy(b.expand(small, (2, 3, 5))), np.broadcast_to(_data((3, 1)), (2, 3, 5))
    )


def test_zero_size_reshape(backend: Any) -> None:
    x = backend.asarray(np.zeros((0, 3, 4)))
    b = get_backend(x)
    assert backend.to_numpy(b.reshape(b.permute(x, (1, 0, 2)), (0, 4))).shape == (0, 4)


def test_stack_concat_split(backend: Any) -> None:
    parts = [_data((2, 3)) * k for k in (1, 2, 3)]
    xs = [backend.asarray(p) for p in parts]
    b = get_backend(xs[0])
    np.testing.assert_array_equal(backend.to_numpy(b.stack(xs)), np.stack(parts))
    np.testing.assert_array_equal(backend.to_numpy(b.concat(xs, 1)), np.concatenate(parts, 1))
    a = _data((2, 7, 3))
    pieces = b.split(backend.asarray(a), [2, 0, 5], 1)
    expected = [a[:, :2], a[:, 2:2], a[:, 2:]]
    assert len(pieces) == 3
    for piece, want in zip(pieces, expected, strict=True):
        np.testing.assert_array_equal(backend.to_numpy(piece), want)
    last = b.split(backend.asarray(a), [1, 2], -1)
    np.testing.assert_array_equal(backend.to_numpy(last[1]), a[..., 1:])


def test_matmul_multiply(backend: Any) -> None:
    a, c = _data((2, 3, 4)), _data((2, 4, 5))
    x, y = backend.asarray(a), backend.asarray(c)
    b = get_backend(x)
    np.testing.assert_allclose(backend.to_numpy(b.matmul(x, y)), a @ c)
    row = _data((1, 4))
    np.testing.assert_array_equal(backend.to_numpy(b.multiply(x, backend.asarray(row))), a * row)


@pytest.mark.parametrize(
    ("shape", "axis1", "axis2"),
    [((3, 3), 0, 1), ((2, 4, 4), 1, 2), ((4, 2, 4), 0, 2), ((4, 2, 4), 2, 0), ((3, 3, 2), -3, -2)],
)
def test_diagonal(backend: Any, shape: tuple[int, ...], axis1: int, axis2: int) -> None:
    a = _data(shape) * np.arange(int(np.prod(shape))).reshape(shape)
    x = backend.asarray(a)
    result = get_backend(x).diagonal(x, axis1, axis2)
    np.testing.assert_array_equal(backend.to_numpy(result), np.diagonal(a, 0, axis1, axis2))


@pytest.mark.parametrize(("shape", "axis1", "axis2"), [((4, 2, 4), 0, 2), ((0, 0), 0, 1)])
def test_diagonal_without_linalg_extension(shape: tuple[int, ...], axis1: int, axis2: int) -> None:
    xp = pytest.importorskip("array_api_strict")
    adapter = ArrayApiBackend(xp)
    adapter._linalg_diagonal = None  # the strided-slice fallback of the standard
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    result = adapter.diagonal(xp.asarray(a), axis1, axis2)
    np.testing.assert_array_equal(np.asarray(result), np.diagonal(a, 0, axis1, axis2))


def test_to_numpy(backend: Any) -> None:
    a = _data((2, 3))
    x = backend.asarray(a)
    result = get_backend(x).to_numpy(x)
    assert type(result) is np.ndarray
    np.testing.assert_array_equal(result, a)


def test_reduce_over_an_empty_axis_is_a_tensorops_error(backend: Any) -> None:
    if backend.name in ("dask", "jax"):
        pytest.skip("lazy / traced libraries report this when computing")
    x = backend.asarray(np.zeros((0, 3)))
    with pytest.raises(TensorOpsError, match=r"cannot take the max over axes \(0,\)"):
        get_backend(x).reduce(x, "max", (0,))


# -- views and no-copy guarantees --------------------------------------------------------


def test_numpy_views() -> None:
    a = _data((2, 3, 4))
    b = get_backend(a)
    assert np.shares_memory(b.reshape(a, (6, 4)), a)
    assert np.shares_memory(b.permute(a, (2, 1, 0)), a)
    assert all(np.shares_memory(p, a) for p in b.split(a, [1, 2], 1))
    square = _data((3, 3))
    assert np.shares_memory(b.diagonal(square, 0, 1), square)
    expanded = b.expand(a[:, :1], (2, 5, 4))
    assert np.shares_memory(expanded, a)
    assert not expanded.flags.writeable
    assert expanded.strides[1] == 0


def test_numpy_scalars_are_0d_arrays() -> None:
    assert get_backend(np.float32(2)) is get_backend(np.zeros(1))
    result = get_backend(np.float32(2)).reshape(np.float32(2), (1, 1))
    np.testing.assert_array_equal(result, [[2.0]])


def test_torch_views_and_no_copy_expand() -> None:
    torch = pytest.importorskip("torch")
    t = torch.arange(12.0).reshape(3, 4)
    b = get_backend(t)
    expanded = b.expand(t[:1], (5, 4))
    assert expanded.stride(0) == 0
    assert expanded.data_ptr() == t.data_ptr()
    assert b.reshape(t, (4, 3)).data_ptr() == t.data_ptr()
    first, second = b.split(t, [1, 2], 0)
    assert first.data_ptr() == t.data_ptr()
    assert second.data_ptr() == t[1:].data_ptr()
    assert b.diagonal(torch.zeros(3, 3), 0, 1).is_contiguous() is False


def test_torch_edge_cases() -> None:
    torch = pytest.importorskip("torch")
    b = backend_for_name("torch")
    t = torch.arange(1, 25).reshape(2, 3, 4)
    assert b.reduce(t, "sum", ()) is t  # torch would read dim=() as "every dim"
    np.testing.assert_array_equal(
        b.reduce(t, "prod", (-1, 0)).numpy(), np.prod(np.arange(1, 25).reshape(2, 3, 4), (0, 2))
    )
    flags = torch.tensor([[True, False], [True, True]])
    assert b.reduce(flags, "max", (0, 1)).item() is True
    np.testing.assert_array_equal(b.reduce(flags, "prod", (0,)).numpy(), [1, 0])


def test_torch_autograd_flows() -> None:
    torch = pytest.importorskip("torch")
    x = torch.arange(1.0, 10.0).reshape(3, 3).requires_grad_()
    b = get_backend(x)
    y = b.permute(b.reshape(x, (3, 3)), (1, 0))
    total = (
        b.reduce(y, "sum", (0, 1))
        + b.reduce(b.expand(y[:1], (4, 3)), "max", (0, 1))
        + b.reduce(b.diagonal(y, 0, 1), "prod", (0,))
        + b.reduce(b.matmul(y, b.multiply(y, y)), "mean", (0, 1))
        + b.reduce(b.concat(b.split(y, [1, 2], 0), 0), "min", (0, 1))
        + b.reduce(b.stack([y, y]), "sum", (0, 1, 2))
    )
    total.backward()
    assert x.grad is not None
    assert x.grad.shape == (3, 3)
    assert torch.all(x.grad != 0)


@pytest.mark.slow
def test_torch_compile_has_no_graph_breaks() -> None:
    torch = pytest.importorskip("torch")

    def f(x: Any) -> Any:
        b = get_backend(x)
        y = b.permute(b.reshape(x, (2, 3, 4)), (2, 0, 1))
        parts = b.split(y, [1, 3], 0)
        z = b.concat([b.expand(parts[0], (3, 2, 3)), parts[1]], 0)
        z = b.multiply(b.matmul(z, b.permute(z, (0, 2, 1))), 2.0)
        out = b.reduce(b.diagonal(b.stack([z, z]), 2, 3), "prod", (0, 2))
        for reduction in ("sum", "mean", "max", "min"):
            out = out + b.reduce(z, reduction, (1, 2))
        return out + b.reduce(z, "any", (1, 2)) + b.reduce(z, "all", (1, 2))

    x = torch.randn(24)
    compiled = torch.compile(f, fullgraph=True, backend="eager")
    torch.testing.assert_close(compiled(x), f(x))
    torch.testing.assert_close(compiled(torch.nn.Parameter(x)), f(x))


# -- Dask stays lazy ---------------------------------------------------------------------


def test_dask_stays_lazy() -> None:
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    from dask.callbacks import Callback

    def boom() -> np.ndarray:
        raise AssertionError("a dask graph was computed")

    def lazy(shape: tuple[int, ...]) -> Any:
        return da.from_delayed(dask.delayed(boom)(), shape, dtype=np.float64)

    started: list[object] = []
    x = lazy((4, 4))
    with Callback(start=started.append):
        b = get_backend(x)
        results = [
            b.reshape(x, (2, 8)),
            b.permute(x, (1, 0)),
            b.expand(x[:1], (3, 4)),
            b.stack([x, x]),
            b.concat([x, x], 1),
            *b.split(x, [1, 3], 0),
            b.matmul(x, x),
            b.multiply(x, x),
            b.diagonal(x, 0, 1),
            *(b.reduce(x, reduction, (0, 1)) for reduction in REDUCTIONS),
        ]
    assert started == []
    assert all(isinstance(r, da.Array) for r in results)


# -- detection and caching ---------------------------------------------------------------


def test_get_backend_names(backend: Any) -> None:
    adapter = get_backend(backend.asarray(np.zeros(2)))
    # the frameworks with an adapter of their own name it after themselves
    own = ("numpy", "torch", *(module for module, _ in backends._FRAMEWORKS))
    expected = backend.name if backend.name in own else "array_api"
    assert adapter.name == expected


def test_get_backend_is_cached_by_type(backend: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    x = backend.asarray(np.zeros(2))
    first = get_backend(x)
    assert backends.ADAPTERS[type(x)] is first

    def no_detection(x: Any) -> Any:
        raise AssertionError("a cache hit must not detect again")

    monkeypatch.setattr(backends, "_detect", no_detection)
    assert get_backend(backend.asarray(np.ones(3))) is first


def test_one_adapter_per_namespace() -> None:
    xp = pytest.importorskip("array_api_strict")

    class Wrapped:
        def __array_namespace__(self, api_version: str | None = None) -> Any:
            return xp

    adapter = get_backend(Wrapped())
    assert isinstance(adapter, ArrayApiBackend)
    assert adapter.xp is xp
    assert adapter is get_backend(xp.asarray([1.0]))


def test_parameter_and_subclasses_are_torch() -> None:
    torch = pytest.importorskip("torch")

    class MyTensor(torch.Tensor):
        pass

    torch_backend = get_backend(torch.zeros(1))
    assert get_backend(torch.nn.Parameter(torch.zeros(2))) is torch_backend
    assert get_backend(torch.zeros(2).as_subclass(MyTensor)) is torch_backend
    assert backends.ADAPTERS[torch.nn.Parameter] is torch_backend


@pytest.mark.parametrize(
    ("value", "type_name"),
    [("text", "str"), ([1, 2], "list"), (None, "NoneType"), (object(), "object"), (3, "int")],
)
def test_unsupported_types(value: Any, type_name: str) -> None:
    with pytest.raises(BackendError) as info:
        get_backend(value)
    assert isinstance(info.value, TypeError)
    assert isinstance(info.value, TensorOpsError)
    assert info.value.reason == f"unsupported input type {type_name}: expected {SUPPORTED}"
    assert type(value) not in backends.ADAPTERS


def test_unsupported_hint_for_lists() -> None:
    with pytest.raises(BackendError) as info:
        get_backend([1, 2])
    assert info.value.hint == "pass an array, e.g. numpy.asarray(x)"


def test_numpy_string_scalar_is_unsupported() -> None:
    with pytest.raises(BackendError, match=r"^unsupported input type str_: "):
        get_backend(np.str_("a"))


def test_broken_array_namespace() -> None:
    class Broken:
        def __array_namespace__(self, api_version: str | None = None) -> Any:
            raise RuntimeError("no namespace today")

    with pytest.raises(BackendError, match="no namespace today") as info:
        get_backend(Broken())
    assert info.value.reason.startswith("unsupported input type Broken: ")


def test_backend_for_name() -> None:
    assert backend_for_name("numpy") is get_backend(np.zeros(1))
    with pytest.raises(TensorOpsError) as info:
        backend_for_name("tensorflow")
    assert info.value.reason == "unknown backend 'tensorflow'; valid: numpy, torch"


def test_backend_for_name_torch() -> None:
    torch = pytest.importorskip("torch")
    assert backend_for_name("torch") is get_backend(torch.zeros(1))


def test_backend_for_name_without_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` fail
    with pytest.raises(TensorOpsError) as info:
        backend_for_name("torch")
    assert info.value.reason == (
        'the torch backend needs PyTorch, which is not installed: pip install "tensorops[torch]"'
    )


def test_importing_backends_loads_no_framework() -> None:
    code = (
        "import sys, tensorops._backends; "
        "loaded = [m for m in ('torch', 'jax', 'dask', 'array_api_strict') if m in sys.modules]; "
        "assert not loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_jax_tracers_use_the_generic_adapter() -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")

    def f(x: Any) -> Any:
        b = get_backend(x)
        return b.diagonal(b.reduce(x, "sum", (0,)), 0, 1)

    result = jax.jit(f)(jnp.ones((2, 3, 3), dtype=jnp.float32))
    np.testing.assert_array_equal(np.asarray(result), [2.0, 2.0, 2.0])
