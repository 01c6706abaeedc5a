"""Real einops client models from the package index, run with tensorops standing in for einops.

The libraries' files are untouched: while the module-scoped fixture runs, ``einops``,
``einops.einops``, ``einops.packing``, ``einops.layers`` and ``einops.layers.torch`` in
``sys.modules`` are stand-ins built from tensorops' public API, and the libraries are
imported afresh under them (the copies imported on real einops stay as they are). Each
model is built twice from one seed, the tensorops copy gets the einops copy's
``state_dict``, and both run on the same input: outputs and gradients must agree, eagerly
and under ``torch.compile`` (``backend="eager"``: Dynamo's capture, which is where
tensorops differs; the kernels are torch's either way).

That the substitution took effect is checked twice: every einops name the fresh library
modules hold is tensorops' object, and tensorops' plan cache counts the calls a forward
makes.
"""

from __future__ import annotations

import importlib
import math
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("einops")

from tensorops.layers import torch as tops_layers  # noqa: E402

import tensorops as tops  # noqa: E402

# The clients, and their modules that import einops: imported now on real einops.
_CLIENTS = (
    "torch_einops_utils",
    "hyper_connections",
    "local_attention",
    "perceiver_pytorch",
    "x_transformers",
    "vector_quantize_pytorch",
)
for _name in _CLIENTS:
    pytest.importorskip(_name)

pytestmark = [
    # a client scripts a helper with torch.jit.script when it is imported
    pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning"),
]

_FUNCTIONS = ("rearrange", "reduce", "repeat", "einsum", "pack", "unpack", "parse_shape")


def _shim_modules() -> dict[str, types.ModuleType]:
    """``einops`` and the submodules clients import, made of tensorops' public names."""
    functions = {name: getattr(tops, name) for name in _FUNCTIONS}
    common = {**functions, "asnumpy": tops.asnumpy, "EinopsError": tops.TensorOpsError}
    layers = {
        "Rearrange": tops_layers.Rearrange,
        "Reduce": tops_layers.Reduce,
        "EinMix": tops_layers.EinMix,
    }
    contents = {
        "einops": {**common, "__version__": "0.8.2"},
        "einops.einops": common,
        "einops.packing": {"pack": tops.pack, "unpack": tops.unpack},
        "einops.layers": {},
        "einops.layers.torch": layers,
    }
    modules = {}
    for name, names in contents.items():
        module = types.ModuleType(name, f"tensorops standing in for {name}")
        module.__dict__.update(names)
        module.__path__ = []  # a package: its submodules import
        modules[name] = module
    modules["einops"].einops = modules["einops.einops"]  # type: ignore[attr-defined]
    modules["einops"].layers = modules["einops.layers"]  # type: ignore[attr-defined]
    modules["einops.layers"].torch = modules["einops.layers.torch"]  # type: ignore[attr-defined]
    return modules


def _owned(name: str) -> bool:
    """Whether `name` is a module the substitution replaces or imports afresh."""
    roots = ("einops", *_CLIENTS)
    return any(name == root or name.startswith(root + ".") for root in roots)


class Clients:
    """The client packages twice: imported on real einops, and afresh on tensorops."""

    def __init__(self, real: dict[str, Any], substituted: dict[str, Any]) -> None:
        self.real = real
        self.substituted = substituted


@pytest.fixture(scope="module")
def clients() -> Iterator[Clients]:
    real = {name: importlib.import_module(name) for name in _CLIENTS}
    # real einops imports its torch backend on first use, from the package then substituted
    einops = importlib.import_module("einops")
    einops.rearrange(torch.zeros(1), "a -> a")
    saved = {name: module for name, module in sys.modules.items() if _owned(name)}
    try:
        for name in saved:
            del sys.modules[name]
        sys.modules.update(_shim_modules())
        substituted = {name: importlib.import_module(name) for name in _CLIENTS}
        yield Clients(real, substituted)
    finally:
        for name in [name for name in sys.modules if _owned(name)]:
            del sys.modules[name]
        sys.modules.update(saved)


def _local_transformer(lib: dict[str, Any]) -> tuple[Any, tuple[Any, ...]]:
    # hyper-connections' residual streams: Reduce(pattern=..., reduction="repeat", s=...)
    model = lib["local_attention"].LocalTransformer(
        num_tokens=64,
        max_seq_len=32,
        dim=32,
        depth=1,
        heads=2,
        dim_head=16,
        local_attn_window_size=8,
        num_residual_streams=2,
    )
    return model, (torch.randint(0, 64, (2, 32)),)


def _decoder(lib: dict[str, Any]) -> tuple[Any, tuple[Any, ...]]:
    xt = lib["x_transformers"]
    model = xt.TransformerWrapper(
        num_tokens=64,
        max_seq_len=32,
        attn_layers=xt.Decoder(dim=32, depth=1, heads=2, rotary_pos_emb=True),
    )
    return model, (torch.randint(0, 64, (2, 16)),)


def _vit(lib: dict[str, Any]) -> tuple[Any, tuple[Any, ...]]:
    xt = lib["x_transformers"]
    model = xt.ViTransformerWrapper(
        image_size=16,
        patch_size=4,
        num_classes=10,
        attn_layers=xt.Encoder(dim=32, depth=1, heads=2),
    )
    return model, (torch.randn(2, 3, 16, 16),)


def _perceiver(lib: dict[str, Any]) -> tuple[Any, tuple[Any, ...]]:
    model = lib["perceiver_pytorch"].Perceiver(
        num_freq_bands=4,
        depth=1,
        max_freq=10.0,
        input_channels=3,
        input_axis=2,
        num_latents=8,
        latent_dim=32,
        cross_dim_head=16,
        latent_dim_head=16,
        latent_heads=2,
        num_classes=10,
    )
    return model, (torch.randn(2, 8, 8, 3),)


def _residual_vq(lib: dict[str, Any]) -> tuple[Any, tuple[Any, ...]]:
    model = lib["vector_quantize_pytorch"].ResidualVQ(
        dim=16, num_quantizers=2, codebook_size=32, decay=0.8, commitment_weight=1.0
    )
    return model, (torch.randn(2, 10, 16),)


_MODELS: dict[str, Callable[[dict[str, Any]], tuple[Any, tuple[Any, ...]]]] = {
    "local_attention.LocalTransformer": _local_transformer,
    "x_transformers.Decoder": _decoder,
    "x_transformers.ViT": _vit,
    "perceiver_pytorch.Perceiver": _perceiver,
    "vector_quantize_pytorch.ResidualVQ": _residual_vq,
}


def _tensors(value: Any) -> list[Any]:
    """The tensors in a model's output (a tensor, or tuples / lists of them)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for item in value for t in _tensors(item)]
    return []


def _run(
    model: Any, inputs: tuple[Any, ...], forward: Any = None
) -> tuple[list[Any], dict[str, Any]]:
    """Outputs and the gradients of a fixed random projection of them, by parameter name.

    ``forward`` (``model`` by default) is what is called: a compiled ``model``.
    """
    outputs = _tensors((model if forward is None else forward)(*inputs))
    generator = torch.Generator().manual_seed(1)
    floats = [out for out in outputs if out.is_floating_point()]
    loss = sum((out * torch.randn(out.shape, generator=generator)).sum() for out in floats)
    model.zero_grad(set_to_none=True)
    loss.backward()  # type: ignore[union-attr]
    grads = {name: p.grad for name, p in model.named_parameters() if p.grad is not None}
    return [out.detach() for out in outputs], grads


def _assert_close(actual: Any, expected: Any, what: str) -> None:
    """Equal up to float rounding: a few ulps per sqrt of the elements that meet in a sum."""
    assert actual.shape == expected.shape, what
    if not expected.is_floating_point():  # code indices, token ids: equal
        assert torch.equal(actual, expected), what
        return
    eps = torch.finfo(expected.dtype).eps
    tolerance = 64 * eps * math.sqrt(max(expected.numel(), 1))
    scale = expected.abs().max().clamp_min(1.0)
    torch.testing.assert_close(actual, expected, rtol=0, atol=float(tolerance * scale), msg=what)


def _build(lib: dict[str, Any], name: str) -> tuple[Any, tuple[Any, ...]]:
    torch.manual_seed(0)
    return _MODELS[name](lib)


def _pair(clients: Clients, name: str) -> tuple[Any, Any, tuple[Any, ...]]:
    """The einops model, its tensorops twin with the same state, and the input."""
    reference, inputs = _build(clients.real, name)
    model, _ = _build(clients.substituted, name)
    model.load_state_dict(reference.state_dict())
    return reference, model, inputs


def _compare(reference: Any, model: Any, inputs: tuple[Any, ...], forward: Any = None) -> None:
    expected, expected_grads = _run(reference, inputs)
    actual, grads = _run(model, inputs, forward)
    assert len(actual) == len(expected)
    for i, (out, ref) in enumerate(zip(actual, expected, strict=True)):
        _assert_close(out, ref, f"output {i}")
    assert grads.keys() == expected_grads.keys()
    for key, grad in grads.items():
        _assert_close(grad, expected_grads[key], f"gradient of {key}")


def _plan_lookups() -> int:
    """How many calls tensorops' plan cache has answered (hits and misses)."""
    info = tops.cache_info()["tensorops._dispatch.bound_plan"]
    return int(info.hits + info.misses)


def test_the_clients_run_on_tensorops(clients: Clients) -> None:
    einops_names = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith(_CLIENTS):
            continue
        for attribute, value in vars(module).items():
            origin = getattr(value, "__module__", None) or ""
            assert not origin.startswith("einops"), f"{name}.{attribute} is einops' {value!r}"
            einops_names += origin.startswith("tensorops")
    assert einops_names > 20
    attention = sys.modules["local_attention.transformer"]
    assert attention.rearrange is tops.rearrange
    connections = sys.modules["hyper_connections.hyper_connections"]
    assert connections.Reduce is tops_layers.Reduce
    assert clients.real["local_attention"] is not clients.substituted["local_attention"]


@pytest.mark.parametrize("name", _MODELS)
def test_eager(clients: Clients, name: str) -> None:
    reference, model, inputs = _pair(clients, name)
    before = _plan_lookups()
    _compare(reference, model, inputs)
    assert _plan_lookups() - before >= 3  # tensorops made the einops calls


#: The models einops itself cannot compile as one graph: the client branches on data.
_GRAPH_BREAKS = {"vector_quantize_pytorch.ResidualVQ": "a branch on a tensor's value"}


@pytest.mark.slow
# Dynamo reads .grad of non-leaf tensors when it resumes after a graph break (with einops too)
@pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf:UserWarning")
@pytest.mark.parametrize("name", _MODELS)
def test_compiled(clients: Clients, name: str) -> None:
    torch._dynamo.reset()
    reference, model, inputs = _pair(clients, name)
    compiled = torch.compile(model, backend="eager", fullgraph=name not in _GRAPH_BREAKS)
    _compare(reference, model, inputs, compiled)
