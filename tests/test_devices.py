"""Every op, layer and einsum on every torch device, against the same op on NumPy.

The ``torch_device`` fixture runs each test on ``cpu``, ``meta`` (shapes and dtypes
only: it fails if the torch path reads a value, syncs with the host or goes through
NumPy) and ``cuda`` when present. NumPy results are the reference; they are checked
against plain NumPy, einops and opt_einsum in the other test files.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import tensorops as tops
from tests._devices import TorchDevice
from tests._seed import rng, tolerance

torch = pytest.importorskip("torch")

_R = rng("test_devices")
X = _R.standard_normal((2, 6, 4)).astype(np.float32)  # b t c
IMAGE = _R.standard_normal((2, 3, 4, 5))  # b c h w, float64
INDEX = _R.integers(0, 6, (2, 5))  # b p, with repeats
UNIQUE = np.array([[0, 4, 2, 1], [2, 1, 3, 0]])
VALUES = _R.standard_normal((2, 5, 4)).astype(np.float32)

# name -> (op over tensorops' namespace-free calls, its inputs)
OPS: dict[str, tuple[Callable[..., Any], tuple[np.ndarray, ...]]] = {
    "rearrange": (lambda x: tops.rearrange(x, "b c (h h2) w -> b (h w) (c h2)", h2=2), (IMAGE,)),
    "rearrange-list": (lambda x: tops.rearrange([x, x], "n b c h w -> b n c h w"), (IMAGE,)),
    "repeat": (lambda x: tops.repeat(x, "b t c -> b t r c", r=3), (X,)),
    "softmax": (lambda x: tops.softmax(x, "b t [c]"), (X,)),
    "log_softmax": (lambda x: tops.log_softmax(x, "b [t] c"), (X,)),
    "get_at": (lambda x, i: tops.get_at(x, i, "b [t] c, b p -> b p c"), (X, INDEX)),
    "set_at": (
        lambda x, i, v: tops.set_at(x, i, v, "b [t] c, b p, b p c -> b [t] c"),
        (X, UNIQUE, VALUES[:, :4]),
    ),
    "add_at": (
        lambda x, i, v: tops.add_at(x, i, v, "b [t] c, b p, b p c -> b [t] c"),
        (X, INDEX, VALUES),
    ),
}
REDUCTIONS = ["sum", "mean", "max", "min", "prod", "logsumexp", "var", "std", "argmax"]
EINSUMS: list[tuple[str, tuple[tuple[int, ...], ...]]] = [
    ("ij,jk->ik", ((3, 4), (4, 5))),
    ("ii->i", ((4, 4),)),
    ("bij,bjk->bik", ((2, 3, 4), (2, 4, 5))),
    ("...ij,...jk", ((2, 3, 4), (4, 5))),
    ("ab,bc,cd,de->ae", ((3, 4), (4, 5), (5, 6), (6, 3))),
    ("i,i->", ((7,), (7,))),
    ("b h w c, c d -> b (h w) d", ((2, 3, 4, 5), (5, 6))),
]


def _on(device: TorchDevice, arrays: tuple[np.ndarray, ...]) -> list[Any]:
    return [device.tensor(a) for a in arrays]


def _check_like_numpy(device: TorchDevice, result: Any, expected: Any, terms: int = 1) -> None:
    expected = np.asarray(expected)
    device.check(result, expected, **tolerance(expected.dtype, terms))


@pytest.mark.parametrize("name", OPS)
def test_op(torch_device: TorchDevice, name: str) -> None:
    op, arrays = OPS[name]
    expected = op(*arrays)
    _check_like_numpy(torch_device, op(*_on(torch_device, arrays)), expected, terms=8)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_reduce(torch_device: TorchDevice, reduction: str) -> None:
    pattern = "b c (h h2) w -> b h c"
    expected = tops.reduce(IMAGE, pattern, reduction, h2=2)
    result = tops.reduce(torch_device.tensor(IMAGE), pattern, reduction, h2=2)
    if reduction == "argmax":  # NumPy's index type is intp, torch's int64
        expected = expected.astype(np.int64)
    _check_like_numpy(torch_device, result, expected, terms=10)


def test_pack_unpack_parse_shape(torch_device: TorchDevice) -> None:
    a, b = torch_device.tensor(X[:, 0]), torch_device.tensor(X)
    packed, shapes = tops.pack([a, b], "b * c")
    torch_device.check(packed, np.concatenate([X[:, :1], X], axis=1))
    first, second = tops.unpack(packed, shapes, "b * c")
    torch_device.check(first, X[:, 0])
    torch_device.check(second, X)
    assert tops.parse_shape(b, "b t c") == {"b": 2, "t": 6, "c": 4}


@pytest.mark.parametrize(("equation", "shapes"), EINSUMS, ids=[e for e, _ in EINSUMS])
def test_einsum(torch_device: TorchDevice, equation: str, shapes: tuple[tuple[int, ...]]) -> None:
    generator = rng("test_devices", equation)
    arrays = tuple(generator.standard_normal(shape).astype(np.float32) for shape in shapes)
    expected = tops.einsum(equation, *arrays)
    terms = int(np.prod([n for shape in shapes for n in shape])) // max(1, expected.size)
    result = tops.einsum(equation, *_on(torch_device, arrays))
    _check_like_numpy(torch_device, result, expected, terms)
    plan = tops.einsum_path(equation, *_on(torch_device, arrays))
    assert plan.path == tops.einsum_path(equation, *arrays).path


def test_layers(torch_device: TorchDevice) -> None:
    from tensorops.layers.torch import LogSoftmax, Rearrange, Reduce, Repeat, Softmax

    x = torch_device.tensor(IMAGE)
    layers = [
        Rearrange("b c h w -> b (h w) c"),
        Reduce("b c (h h2) w -> b c h", "max", h2=2),
        Repeat("b c h w -> b c h w r", r=2),
        Softmax("b [c] h w"),
        LogSoftmax("b c [h w]"),
    ]
    for layer in layers:
        expected = layer(torch.from_numpy(IMAGE)).numpy()
        _check_like_numpy(torch_device, layer.to(torch_device.name)(x), expected, terms=20)


def test_einmix_layer(torch_device: TorchDevice) -> None:
    from tensorops.layers.torch import EinMix

    mix = EinMix("b t c -> b t e", weight_shape="c e", bias_shape="e", c=4, e=3)
    expected = mix(torch.from_numpy(X)).detach().numpy()
    result = mix.to(torch_device.name)(torch_device.tensor(X))
    _check_like_numpy(torch_device, result, expected, terms=4)


def test_meta_has_no_values(torch_device: TorchDevice) -> None:
    x = torch_device.tensor(X)
    if not torch_device.meta:
        np.testing.assert_array_equal(tops.asnumpy(x), X)
        return
    with pytest.raises(tops.BackendError, match="meta tensor"):
        tops.asnumpy(x)
    with pytest.raises(tops.BackendError, match="meta tensor"):
        tops.convert(x, "numpy")
