"""Edge shapes and layouts: empty axes, 0-d and 32-d arrays, huge broadcast views, odd strides."""

from __future__ import annotations

import string
from typing import Any

import numpy as np
import pytest

import tensorops as tops

_FAMILIES = ["numpy", "torch"]


def _family(name: str) -> tuple[Any, Any]:
    if name == "numpy":
        return (lambda a: np.array(a, copy=True)), np.asarray
    torch = pytest.importorskip("torch")
    return (lambda a: torch.from_numpy(np.array(a, copy=True))), (lambda t: t.numpy())


@pytest.mark.parametrize("family", _FAMILIES)
def test_zero_size_axes(family: str) -> None:
    asarray, to_numpy = _family(family)
    x = np.zeros((0, 3, 4), dtype=np.float32)
    assert to_numpy(tops.rearrange(asarray(x), "a b c -> c (a b)")).shape == (4, 0)
    assert to_numpy(tops.rearrange(asarray(x), "a b (c d) -> d a b c", d=2)).shape == (2, 0, 3, 2)
    np.testing.assert_array_equal(to_numpy(tops.reduce(asarray(x), "a b c -> b c", "sum")),
                                  np.zeros((3, 4)))  # fmt: skip
    assert to_numpy(tops.reduce(asarray(x), "a b c -> a", "sum")).shape == (0,)
    assert to_numpy(tops.repeat(asarray(x), "a b c -> a b c r", r=2)).shape == (0, 3, 4, 2)
    assert to_numpy(tops.repeat(asarray(x), "a b c -> a b c r", r=0)).shape == (0, 3, 4, 0)
    a = np.zeros((2, 0))
    b = np.zeros((0, 5))
    np.testing.assert_array_equal(
        to_numpy(tops.einsum("ij,jk->ik", asarray(a), asarray(b))), np.zeros((2, 5))
    )
    packed, shapes = tops.pack([asarray(x), asarray(x)], "* b c")
    assert to_numpy(packed).shape == (0, 3, 4)
    assert [tuple(s) for s in shapes] == [(0,), (0,)]


@pytest.mark.parametrize("family", _FAMILIES)
def test_zero_size_axis_cannot_be_inferred_from_a_split(family: str) -> None:
    asarray, _ = _family(family)
    x = asarray(np.zeros((0, 3)))
    with pytest.raises(tops.TensorOpsError):
        tops.rearrange(x, "(a b) c -> a b c")


@pytest.mark.parametrize("family", _FAMILIES)
def test_zero_dimensional_arrays(family: str) -> None:
    asarray, to_numpy = _family(family)
    x = asarray(np.array(3.5))
    assert to_numpy(tops.rearrange(x, " -> ")).shape == ()
    assert to_numpy(tops.rearrange(x, " -> 1 1")).shape == (1, 1)
    assert to_numpy(tops.rearrange(x, "... -> ...")).shape == ()
    np.testing.assert_array_equal(to_numpy(tops.repeat(x, " -> n", n=3)), [3.5, 3.5, 3.5])
    assert float(to_numpy(tops.reduce(x, " -> ", "sum"))) == 3.5
    assert float(to_numpy(tops.einsum(",->", x, x))) == 3.5**2
    assert tops.parse_shape(x, "") == {}


@pytest.mark.parametrize("family", _FAMILIES)
def test_32_dimensional_arrays(family: str) -> None:
    asarray, to_numpy = _family(family)
    names = [f"a{i}" for i in range(32)]
    shape = [2 if i % 8 == 0 else 1 for i in range(32)]
    x = np.arange(int(np.prod(shape))).reshape(shape)
    pattern = f"{' '.join(names)} -> {' '.join(reversed(names))}"
    np.testing.assert_array_equal(to_numpy(tops.rearrange(asarray(x), pattern)), x.transpose())
    np.testing.assert_array_equal(
        to_numpy(tops.reduce(asarray(x), f"{' '.join(names)} -> a0", "sum")),
        x.sum(axis=tuple(range(1, 32))),
    )
    np.testing.assert_array_equal(to_numpy(tops.rearrange(asarray(x), "... -> (...)")), x.ravel())
    letters = string.ascii_letters[:32]
    np.testing.assert_array_equal(
        to_numpy(tops.einsum(f"{letters}->{letters[::-1]}", asarray(x))), x.transpose()
    )


def test_broadcast_input_beyond_2_to_32_elements_stays_a_view() -> None:
    x = np.broadcast_to(np.float32(1), (2**17, 2**16))  # 2**33 logical elements, 4 bytes
    y = tops.rearrange(x, "a b -> b a")
    assert y.shape == (2**16, 2**17)
    assert np.shares_memory(x, y)
    z = tops.rearrange(x, "(a c) b -> a b c", c=2)
    assert z.shape == (2**16, 2**16, 2)
    assert np.shares_memory(x, z)
    r = tops.repeat(x, "a b -> a b r", r=4)
    assert r.shape == (2**17, 2**16, 4)
    assert np.shares_memory(x, r)
    assert tops.parse_shape(x, "a _") == {"a": 2**17}
    small = np.broadcast_to(np.float32(1), (2**10, 2**10))
    np.testing.assert_array_equal(tops.reduce(small, "a b -> a", "sum"), np.full(2**10, 2**10))


def test_torch_broadcast_input_beyond_2_to_32_elements_stays_a_view() -> None:
    torch = pytest.importorskip("torch")
    x = torch.ones(()).expand(2**17, 2**16)
    y = tops.rearrange(x, "a b -> b a")
    assert tuple(y.shape) == (2**16, 2**17)
    assert y.data_ptr() == x.data_ptr()
    assert y.stride() == (0, 0)
    r = tops.repeat(x, "a b -> r a b", r=3)
    assert tuple(r.shape) == (3, 2**17, 2**16)
    assert r.data_ptr() == x.data_ptr()


@pytest.mark.parametrize("family", _FAMILIES)
def test_einsum_size_one_broadcasting(family: str) -> None:
    asarray, to_numpy = _family(family)
    a = np.arange(3.0).reshape(3, 1)
    b = np.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(
        to_numpy(tops.einsum("ij,ij->ij", asarray(a), asarray(b))), np.einsum("ij,ij->ij", a, b)
    )
    c = np.arange(4.0).reshape(1, 4)
    d = np.arange(20.0).reshape(4, 5)
    np.testing.assert_allclose(
        to_numpy(tops.einsum("...j,jk->...k", asarray(c), asarray(d))), c @ d
    )
    e = np.arange(6.0).reshape(2, 1, 3)
    f = np.arange(12.0).reshape(1, 4, 3)
    np.testing.assert_allclose(
        to_numpy(tops.einsum("...i,...i->...", asarray(e), asarray(f))),
        np.einsum("...i,...i->...", e, f),
    )


@pytest.mark.parametrize("family", _FAMILIES)
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_, np.complex64, np.complex128])
def test_dtypes(family: str, dtype: Any) -> None:
    asarray, to_numpy = _family(family)
    x = (np.arange(24).reshape(2, 3, 4) % 3).astype(dtype)
    if dtype in (np.complex64, np.complex128):
        x = x + 1j * x[::-1]
    out = to_numpy(tops.rearrange(asarray(x), "a b c -> c (b a)"))
    assert out.dtype == x.dtype
    np.testing.assert_array_equal(out, x.transpose(2, 1, 0).reshape(4, 6))
    rep = to_numpy(tops.repeat(asarray(x), "a b c -> a b c r", r=2))
    assert rep.dtype == x.dtype
    np.testing.assert_array_equal(rep[..., 1], x)
    reduction = "any" if dtype is np.bool_ else "max" if dtype in (np.int32, np.int64) else "sum"
    got = to_numpy(tops.reduce(asarray(x), "a b c -> a", reduction))
    expected = {"any": np.any, "max": np.max, "sum": np.sum}[reduction](x, axis=(1, 2))
    np.testing.assert_array_equal(got, expected)
    if dtype is not np.bool_:
        m = x[0]
        np.testing.assert_allclose(
            to_numpy(tops.einsum("ij,kj->ik", asarray(m), asarray(m))), m @ m.T
        )


def test_numpy_non_contiguous_and_negative_strides() -> None:
    base = np.arange(2 * 6 * 8, dtype=np.float64).reshape(2, 6, 8)
    for x in (base[:, ::2, ::-1], base[::-1, :, 1::3], base.transpose(2, 0, 1)[::-2]):
        np.testing.assert_array_equal(tops.rearrange(x, "a b c -> c a b"), x.transpose(2, 0, 1))
        np.testing.assert_array_equal(
            tops.rearrange(x, "a b c -> (a b c)"), np.ascontiguousarray(x).ravel()
        )
        np.testing.assert_array_equal(tops.reduce(x, "a b c -> b", "sum"), x.sum(axis=(0, 2)))
        np.testing.assert_array_equal(tops.repeat(x, "a b c -> a b c 2")[..., 0], x)
        np.testing.assert_allclose(tops.einsum("abc,abc->b", x, x), np.einsum("abc,abc->b", x, x))


def test_torch_non_contiguous_and_flipped() -> None:
    torch = pytest.importorskip("torch")
    base = torch.arange(2 * 6 * 8, dtype=torch.float64).reshape(2, 6, 8)
    for x in (base[:, ::2, 1::3], base.flip(-1), base.permute(2, 0, 1)[:, :, ::2]):
        ref = x.numpy()
        np.testing.assert_array_equal(
            tops.rearrange(x, "a b c -> c a b").numpy(), ref.transpose(2, 0, 1)
        )
        np.testing.assert_array_equal(tops.rearrange(x, "a b c -> (a b c)").numpy(), ref.ravel())
        np.testing.assert_array_equal(
            tops.reduce(x, "a b c -> b", "sum").numpy(), ref.sum(axis=(0, 2))
        )
        np.testing.assert_allclose(
            tops.einsum("abc,abc->b", x, x).numpy(), np.einsum("abc,abc->b", ref, ref)
        )
