"""torch.export, ONNX (dynamo exporter, run in onnxruntime) and torch.jit.trace of the layers."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

import torch
from tensorops.layers.torch import LogSoftmax, Softmax

import tensorops as tops
from tests._layer_model import layer_model

pytestmark = pytest.mark.slow


def _model(einmix=True):
    torch.manual_seed(0)
    return layer_model(einmix, "max").eval()


MODELS = pytest.mark.parametrize(
    "einmix",
    [pytest.param(True, id="all-layers"), pytest.param(False, id="no-einmix")],
)


def _export(model):
    batch = torch.export.Dim("batch", min=1, max=1024)
    x = torch.randn(4, 3, 8, 8)
    return torch.export.export(model, (x,), dynamic_shapes=({0: batch},))


@MODELS
def test_export_with_a_dynamic_batch(einmix):
    model = _model(einmix)
    program = _export(model)
    for batch in (1, 3, 7):
        x = torch.randn(batch, 3, 8, 8)
        torch.testing.assert_close(program.module()(x), model(x))
    ops = {str(node.target) for node in program.graph.nodes if node.op == "call_function"}
    assert not any("item" in op or "_local_scalar_dense" in op for op in ops)


@MODELS
@pytest.mark.filterwarnings("ignore:.*treespec, LeafSpec.*:FutureWarning")  # inside torch.onnx
def test_onnx_export_runs_in_onnxruntime(tmp_path, einmix):
    onnxruntime = pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxscript")
    model = _model(einmix)
    path = tmp_path / "model.onnx"
    batch = torch.export.Dim("batch", min=1, max=1024)
    torch.onnx.export(
        model,
        (torch.randn(4, 3, 8, 8),),
        str(path),
        dynamo=True,
        dynamic_shapes=({0: batch},),
        input_names=["x"],
        verbose=False,
    )
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for batch_size in (2, 5):
        x = torch.randn(batch_size, 3, 8, 8)
        (out,) = session.run(None, {"x": x.numpy()})
        torch.testing.assert_close(torch.from_numpy(out), model(x), rtol=1e-5, atol=1e-5)


@pytest.mark.filterwarnings("ignore:`torch.jit.trace.*` is deprecated:DeprecationWarning")
@pytest.mark.filterwarnings("ignore:`torch.jit.trace.*` is deprecated:FutureWarning")
@pytest.mark.filterwarnings("error::torch.jit.TracerWarning")  # no length baked into the trace
def test_jit_trace_runs_at_other_batch_sizes():
    model = _model()
    traced = torch.jit.trace(model, (torch.randn(4, 3, 8, 8),))
    for batch in (1, 3, 7):
        x = torch.randn(batch, 3, 8, 8)
        torch.testing.assert_close(traced(x), model(x))


class _Attention(torch.nn.Module):
    """Attention weights by Softmax, then the top-2 keys of each query gathered with get_at."""

    def __init__(self) -> None:
        super().__init__()
        self.weights = Softmax("b i [j]")
        self.log_weights = LogSoftmax("b i [j]")

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, ...]:
        scores = tops.einsum("b i d, b j d -> b i j", q, k)
        weights = self.weights(scores)
        top = tops.reduce(scores, "b i j -> b i", "argmax")
        keys = tops.get_at(k, top, "b [j] d, b i -> b i d")
        return weights, self.log_weights(scores), keys


def test_export_of_the_new_layers_and_ops():
    model = _Attention().eval()
    batch = torch.export.Dim("batch", min=1, max=1024)
    q, k = torch.randn(4, 5, 3), torch.randn(4, 6, 3)
    program = torch.export.export(model, (q, k), dynamic_shapes=({0: batch}, {0: batch}))
    for size in (1, 3, 7):
        q, k = torch.randn(size, 5, 3), torch.randn(size, 6, 3)
        for got, expected in zip(program.module()(q, k), model(q, k), strict=True):
            torch.testing.assert_close(got, expected)
    ops = {str(node.target) for node in program.graph.nodes if node.op == "call_function"}
    assert any("softmax" in op for op in ops)
    assert any("gather" in op for op in ops)
