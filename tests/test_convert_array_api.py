"""convert to and from array-API namespaces: array-api-strict, JAX and Dask."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tensorops._convert import convert
from tensorops._errors import TensorOpsError


def _torch() -> Any:
    return pytest.importorskip("torch")


def _address(a: np.ndarray) -> int:
    return int(a.__array_interface__["data"][0])


def test_numpy_to_array_api_strict_shares_memory() -> None:
    xp = pytest.importorskip("array_api_strict")
    a = np.arange(6.0).reshape(2, 3)
    x = convert(a, xp)
    assert isinstance(x, type(xp.asarray(0.0)))
    assert _address(np.from_dlpack(x)) == _address(a)
    assert convert(x, xp) is x


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.arange(4, dtype=">f8"),
        lambda: np.arange(6.0)[::-1],
        lambda: np.float64(2.0),
        lambda: np.zeros((0, 2)),
    ],
    ids=["big_endian", "negative_strides", "scalar", "empty"],
)
def test_numpy_to_array_api_strict_copies_when_needed(make: Any) -> None:
    xp = pytest.importorskip("array_api_strict")
    a = make()
    x = convert(a, xp)
    assert x.dtype == xp.float64
    np.testing.assert_array_equal(np.from_dlpack(x), a)


def test_read_only_numpy_to_array_api_strict() -> None:
    xp = pytest.importorskip("array_api_strict")
    a = np.arange(3.0)
    a.flags.writeable = False
    np.testing.assert_array_equal(np.from_dlpack(convert(a, xp)), a)


def test_torch_to_array_api_strict() -> None:
    torch = _torch()
    xp = pytest.importorskip("array_api_strict")
    t = torch.arange(4.0)
    x = convert(t, xp)
    assert _address(np.from_dlpack(x)) == t.data_ptr()
    np.testing.assert_array_equal(np.from_dlpack(convert(t.requires_grad_(), xp)), [0, 1, 2, 3])
    z = torch.tensor([1 + 2j]).conj()
    np.testing.assert_array_equal(np.from_dlpack(convert(z, xp)), [1 - 2j])
    np.testing.assert_array_equal(np.from_dlpack(convert(z.imag, xp)), [-2.0])


def test_array_api_strict_to_torch_and_numpy() -> None:
    torch = _torch()
    xp = pytest.importorskip("array_api_strict")
    x = xp.asarray(np.arange(4.0))
    t = convert(x, "torch")
    assert isinstance(t, torch.Tensor)
    a = convert(x, "numpy")
    assert t.data_ptr() == _address(a)


def test_array_api_strict_devices() -> None:
    xp = pytest.importorskip("array_api_strict")
    device = xp.Device("device1")
    x = convert(np.arange(3.0), xp, device=device)
    assert x.device == device
    assert convert(x, xp, device=xp.Device("CPU_DEVICE")).device == xp.Device("CPU_DEVICE")
    with pytest.raises(
        TensorOpsError, match=r"^convert: cannot move an array of array_api_strict to device"
    ):
        convert(x, xp, device="gpu")


def test_to_jax() -> None:
    jnp = pytest.importorskip("jax.numpy")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = convert(a, jnp)
    assert x.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(x), a)
    np.testing.assert_array_equal(np.asarray(convert(a[:, ::2], jnp)), a[:, ::2])
    np.testing.assert_array_equal(np.asarray(convert(a[::-1], jnp)), a[::-1])
    assert convert(x, jnp) is x


def test_torch_to_jax_and_back() -> None:
    torch = _torch()
    jnp = pytest.importorskip("jax.numpy")
    t = torch.arange(4, dtype=torch.float32)
    x = convert(t, jnp)
    np.testing.assert_array_equal(np.asarray(x), [0, 1, 2, 3])
    back = convert(x, "torch")
    assert back.data_ptr() == x.unsafe_buffer_pointer()  # zero-copy through DLPack
    np.testing.assert_array_equal(back.numpy(), [0, 1, 2, 3])
    bf = convert(torch.ones(2, dtype=torch.bfloat16), jnp)
    assert str(bf.dtype) == "bfloat16"


def test_to_dask() -> None:
    da = pytest.importorskip("dask.array")
    a = np.arange(6.0).reshape(2, 3)
    x = convert(a, da)
    assert isinstance(x, da.Array)
    np.testing.assert_array_equal(x.compute(), a)
    assert convert(x, da) is x
    assert convert(x, da, device="cpu") is not None


def test_torch_to_dask() -> None:
    torch = _torch()
    da = pytest.importorskip("dask.array")
    x = convert(torch.tensor([1 + 2j]).conj(), da)
    assert isinstance(x, da.Array)
    np.testing.assert_array_equal(x.compute(), [1 - 2j])


def test_dask_to_other_families() -> None:
    _torch()
    da = pytest.importorskip("dask.array")
    xp = pytest.importorskip("array_api_strict")
    x = da.arange(6.0, chunks=2)
    np.testing.assert_array_equal(convert(x, "numpy"), np.arange(6.0))
    np.testing.assert_array_equal(convert(x, "torch").numpy(), np.arange(6.0))
    np.testing.assert_array_equal(np.from_dlpack(convert(x, xp)), np.arange(6.0))


def test_dask_has_no_gpu_device() -> None:
    da = pytest.importorskip("dask.array")
    with pytest.raises(
        TensorOpsError, match=r"^convert: cannot move an array of array_api_compat.dask.array"
    ):
        convert(np.zeros(2), da, device="cuda")
