"""asnumpy and convert: values, dtypes, devices, and zero-copy where it is promised."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any

import numpy as np
import pytest

from tensorops._convert import asnumpy, convert
from tensorops._errors import BackendError, TensorOpsError


def _torch() -> Any:
    return pytest.importorskip("torch")


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


# -- asnumpy ------------------------------------------------------------------------------


def test_asnumpy_every_family(backend: Any) -> None:
    a = np.arange(6.0).reshape(2, 3)
    result = asnumpy(backend.asarray(a))
    assert type(result) is np.ndarray
    np.testing.assert_array_equal(result, a)


def test_asnumpy_numpy_is_identity() -> None:
    a = np.arange(3)
    assert asnumpy(a) is a
    scalar = asnumpy(np.float32(2.5))
    assert scalar.shape == ()
    assert scalar.dtype == np.float32


def test_asnumpy_rejects_unsupported_types() -> None:
    with pytest.raises(BackendError, match=r"^asnumpy: unsupported input type list: "):
        asnumpy([1, 2])


def test_asnumpy_computes_dask() -> None:
    da = pytest.importorskip("dask.array")
    from dask.callbacks import Callback

    started: list[object] = []
    with Callback(start=started.append):
        result = asnumpy(da.arange(6, chunks=2) * 2)
    assert started
    np.testing.assert_array_equal(result, np.arange(6) * 2)


def test_asnumpy_jax_is_a_read_only_view() -> None:
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.arange(4.0, dtype=jnp.float32)
    result = asnumpy(x)
    np.testing.assert_array_equal(result, [0, 1, 2, 3])
    assert not result.flags.writeable  # JAX arrays are immutable


# -- numpy -> torch -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.arange(12.0).reshape(3, 4),
        lambda: np.arange(12.0).reshape(3, 4)[:, ::2],  # positive strides, not contiguous
        lambda: np.arange(12.0).reshape(3, 4).T,
        lambda: np.array(5.0),
        lambda: np.zeros((0, 3), np.float32),
        lambda: np.arange(6, dtype=np.uint16),
        lambda: np.array([True, False]),
        lambda: np.array([1 + 2j], np.complex64),
    ],
    ids=["contiguous", "strided", "transposed", "0d", "empty", "uint16", "bool", "complex"],
)
def test_numpy_to_torch_shares_memory(make: Any) -> None:
    torch = _torch()
    a = make()
    t = convert(a, "torch")
    assert isinstance(t, torch.Tensor)
    assert tuple(t.shape) == a.shape
    np.testing.assert_array_equal(t.numpy(), a)
    if a.size:
        assert t.data_ptr() == _address(a)
        assert tuple(s * a.itemsize for s in t.stride()) == a.strides


def test_numpy_to_torch_writes_through() -> None:
    _torch()
    a = np.zeros(3)
    convert(a, "torch")[1] = 7.0
    assert a[1] == 7.0


def test_negative_strides_are_copied() -> None:
    _torch()
    a = np.arange(12.0).reshape(3, 4)[::-1, ::-2]
    t = convert(a, "torch")
    np.testing.assert_array_equal(t.numpy(), a)
    assert t.data_ptr() != _address(a)


def test_read_only_arrays_are_copied() -> None:
    _torch()
    a = np.arange(4.0)
    a.flags.writeable = False
    t = convert(a, "torch")  # no warning: pytest turns warnings into errors
    t[0] = 9.0
    assert a[0] == 0.0


def test_broadcast_views_are_copied() -> None:
    _torch()
    a = np.broadcast_to(np.arange(3.0), (2, 3))
    t = convert(a, "torch")
    np.testing.assert_array_equal(t.numpy(), a)
    t[0, 0] = 5.0
    assert a[1, 0] == 0.0


def test_big_endian_is_copied_to_native() -> None:
    torch = _torch()
    a = np.arange(4, dtype=">f4")
    t = convert(a, "torch")
    assert t.dtype == torch.float32
    np.testing.assert_array_equal(t.numpy(), [0, 1, 2, 3])


def test_unaligned_arrays_are_copied() -> None:
    _torch()
    raw = np.zeros(4 * 8 + 1, np.uint8)[1:]
    a = raw.view(np.float32).reshape(4, 2)
    assert not a.flags.aligned
    np.testing.assert_array_equal(convert(a, "torch").numpy(), a)


def test_numpy_scalar_becomes_0d_tensor() -> None:
    torch = _torch()
    t = convert(np.float32(3), "torch")
    assert t.shape == ()
    assert t.dtype == torch.float32
    assert t.item() == 3.0


@pytest.mark.parametrize("dtype", ["U3", "S2", object, "datetime64[s]", "timedelta64[s]", "V4"])
def test_dtypes_torch_lacks(dtype: Any) -> None:
    _torch()
    a = np.zeros(2, dtype)
    with pytest.raises(TensorOpsError) as info:
        convert(a, "torch")
    assert info.value.reason == (
        f"cannot convert a numpy array of dtype {a.dtype} to torch: torch has no such dtype"
    )
    assert "complex128" in (info.value.hint or "")


def test_long_double_is_rejected() -> None:
    _torch()
    if np.dtype(np.longdouble).itemsize == 8:
        pytest.skip("long double is float64 on this platform")
    with pytest.raises(TensorOpsError, match=r"float128|float96|longdouble"):
        convert(np.zeros(2, np.longdouble), "torch")


# -- devices ------------------------------------------------------------------------------


def test_cpu_device_keeps_the_tensor() -> None:
    torch = _torch()
    a = np.arange(3.0)
    assert convert(a, "torch", device="cpu").data_ptr() == _address(a)
    t = torch.arange(3.0)
    assert convert(t, "torch") is t
    assert convert(t, "torch", device=torch.device("cpu")) is t


def test_bad_device() -> None:
    _torch()
    with pytest.raises(
        TensorOpsError, match=r"^convert: cannot move a torch tensor to device 'nowhere'"
    ):
        convert(np.zeros(2), "torch", device="nowhere")


def test_cuda_when_unavailable() -> None:
    torch = _torch()
    if torch.cuda.is_available():
        pytest.skip("CUDA is available")
    with pytest.raises(
        TensorOpsError, match=r"^convert: cannot move a torch tensor to device 'cuda'"
    ):
        convert(np.zeros(2), "torch", device="cuda")


def test_cuda_round_trip() -> None:
    torch = _torch()
    if not torch.cuda.is_available():
        pytest.skip("CUDA is not available")
    t = convert(np.arange(3.0), "torch", device="cuda")
    assert t.device.type == "cuda"
    np.testing.assert_array_equal(convert(t, "numpy"), [0, 1, 2])
    np.testing.assert_array_equal(asnumpy(t.conj() if t.is_complex() else t), [0, 1, 2])


def test_numpy_target_lives_on_cpu() -> None:
    a = np.zeros(2)
    assert convert(a, "numpy", device="cpu") is a
    with pytest.raises(TensorOpsError, match=r"^convert: numpy arrays live on the cpu"):
        convert(a, "numpy", device="cuda")


# -- torch -> numpy -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda torch: torch.arange(12.0).reshape(3, 4),
        lambda torch: torch.arange(12.0).reshape(3, 4)[:, ::2],
        lambda torch: torch.arange(12.0).reshape(3, 4).t(),
        lambda torch: torch.tensor(2.0),
        lambda torch: torch.arange(6.0).requires_grad_(),
    ],
    ids=["contiguous", "strided", "transposed", "0d", "requires_grad"],
)
def test_torch_to_numpy_shares_memory(make: Any) -> None:
    torch = _torch()
    t = make(torch)
    a = convert(t, "numpy")
    assert type(a) is np.ndarray
    assert a.shape == tuple(t.shape)
    np.testing.assert_array_equal(a, t.detach().numpy())
    assert _address(a) == t.data_ptr()


def test_empty_tensor_to_numpy() -> None:
    torch = _torch()
    assert asnumpy(torch.zeros(0, 3)).shape == (0, 3)


def test_conjugate_bit_is_resolved() -> None:
    torch = _torch()
    t = torch.tensor([1 + 2j, 3 - 4j]).conj()
    assert t.is_conj()
    np.testing.assert_array_equal(asnumpy(t), [1 - 2j, 3 + 4j])


def test_negative_bit_is_resolved() -> None:
    torch = _torch()
    t = torch.tensor([1 + 2j, 3 - 4j]).conj().imag  # a view with the negative bit
    assert t.is_neg()
    np.testing.assert_array_equal(asnumpy(t), [-2.0, 4.0])


@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_low_precision_floats_become_float32(name: str) -> None:
    torch = _torch()
    if not hasattr(torch, name):
        pytest.skip(f"torch has no {name}")
    t = torch.tensor([1.0, -2.0, 0.5]).to(getattr(torch, name))
    a = asnumpy(t)
    assert a.dtype == np.float32
    np.testing.assert_array_equal(a, [1.0, -2.0, 0.5])


@pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental:UserWarning")
def test_complex32_becomes_complex64() -> None:
    torch = _torch()
    t = torch.tensor([1 + 1j], dtype=torch.complex64).to(torch.complex32)
    a = asnumpy(t)
    assert a.dtype == np.complex64
    np.testing.assert_array_equal(a, [1 + 1j])


def test_torch_target_module_objects() -> None:
    torch = _torch()
    compat_torch = pytest.importorskip("array_api_compat.torch")
    a = np.arange(3.0)
    assert isinstance(convert(a, torch), torch.Tensor)
    assert isinstance(convert(a, compat_torch), torch.Tensor)
    assert type(convert(torch.arange(2), np)) is np.ndarray


def test_torch_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` fail
    with pytest.raises(TensorOpsError) as info:
        convert(np.zeros(2), "torch")
    assert info.value.reason == (
        'converting to torch needs PyTorch, which is not installed: pip install "tensorops[torch]"'
    )


# -- targets ------------------------------------------------------------------------------

TARGETS = (
    "'numpy', 'torch', 'tensorflow', 'paddle', 'tinygrad', 'pytensor', "
    "or an array namespace module (array_api_strict, jax.numpy, mlx.core, ...)"
)


@pytest.mark.parametrize(
    ("target", "described", "hint"),
    [
        ("mxnet", "'mxnet'", None),
        ("np", "'np'", "did you mean 'numpy'?"),
        ("jax", "'jax'", "pass the namespace module itself: import jax.numpy"),
        (object(), "of type object", None),
        (sys, "module sys", None),
    ],
)
def test_unknown_targets(target: Any, described: str, hint: str | None) -> None:
    with pytest.raises(TensorOpsError) as info:
        convert(np.zeros(2), target)
    assert info.value.reason == f"unknown conversion target {described}: expected {TARGETS}"
    assert info.value.hint == hint


def test_jax_module_is_not_a_namespace() -> None:
    jax = pytest.importorskip("jax")
    with pytest.raises(TensorOpsError) as info:
        convert(np.zeros(2), jax)
    assert info.value.hint == "pass jax.numpy, not jax"


def test_numpy_module_target() -> None:
    compat_numpy = pytest.importorskip("array_api_compat.numpy")
    a = np.zeros(2)
    assert convert(a, np) is a
    assert convert(a, compat_numpy) is a


def test_every_family_to_every_family(backend: Any) -> None:
    pytest.importorskip("torch")
    a = np.arange(6.0).reshape(2, 3)
    x = backend.asarray(a)
    np.testing.assert_array_equal(convert(x, "numpy"), a)
    np.testing.assert_array_equal(convert(x, "torch").numpy(), a)


#: The conversion target naming each framework with an adapter of its own.
FRAMEWORK_TARGETS = {"tensorflow", "paddle", "tinygrad", "pytensor"}
#: The namespace module each array-API family converts to.
NAMESPACE_TARGETS = {
    "jax": "jax.numpy",
    "dask": "dask.array",
    "array_api_strict": "array_api_strict",
    "mlx": "mlx.core",
}


def test_every_family_from_numpy_and_torch_and_back(backend: Any) -> None:
    a = np.arange(6.0).reshape(2, 3)
    x = backend.asarray(a)
    target: Any = backend.name
    if backend.name in NAMESPACE_TARGETS:
        target = importlib.import_module(NAMESPACE_TARGETS[backend.name])
    from_numpy = convert(a, target)
    assert type(from_numpy) is type(x)
    np.testing.assert_array_equal(backend.to_numpy(from_numpy), a)
    np.testing.assert_array_equal(convert(from_numpy, "numpy"), a)
    np.testing.assert_array_equal(asnumpy(x), a)
    if importlib.util.find_spec("torch"):
        from_torch = convert(convert(a, "torch"), target)
        np.testing.assert_array_equal(backend.to_numpy(from_torch), a)


@pytest.mark.parametrize("name", sorted(FRAMEWORK_TARGETS))
def test_missing_framework_names_its_extra(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, name, None)  # `import name` raises ImportError
    with pytest.raises(TensorOpsError) as info:
        convert(np.zeros(2), name)
    assert info.value.reason == f'{name} is not installed: pip install "tensorops[{name}]"'


def test_errors_name_the_function_and_the_input() -> None:
    with pytest.raises(TensorOpsError) as info:
        convert(np.zeros((2, 3)), "mxnet")
    assert str(info.value).splitlines() == [
        f"convert: unknown conversion target 'mxnet': expected {TARGETS}",
        "  input:   shape=(2, 3) dtype=float64 backend=numpy",
    ]
    with pytest.raises(BackendError) as backend_info:
        asnumpy("text")
    assert str(backend_info.value).startswith("asnumpy: unsupported input type str: ")
