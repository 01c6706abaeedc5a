"""A model exported to ONNX by both of torch's exporters, run in onnxruntime at new batch sizes.

The model (patches, attention, pooling, pack and unpack) is written once against an ``ops``
namespace: tensorops, and einops beside it. Each exporter's graph runs in onnxruntime at
batch sizes it was not exported at and gives the eager results; tensorops' graphs have no
more nodes than einops'.
"""

from __future__ import annotations

import io
import warnings
from typing import Any

import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
onnxruntime = pytest.importorskip("onnxruntime")
pytest.importorskip("onnxscript")
einops = pytest.importorskip("einops")

import tensorops as tops  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:.*treespec, LeafSpec.*:FutureWarning"),  # torch.onnx's
]


class Model(torch.nn.Module):
    """Patches, attention, max-pooling, pack and unpack, in the namespace `ops`."""

    def __init__(self, ops: Any) -> None:
        super().__init__()
        self.ops = ops
        self.project = torch.nn.Linear(12, 8)

    def forward(self, x: Any) -> Any:
        ops = self.ops
        patches = ops.rearrange(x, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2)
        q = ops.rearrange(self.project(patches), "b n (h d) -> b h n d", h=2)
        scores = ops.einsum(q, q, "b h i d, b h j d -> b h i j")
        mixed = ops.einsum(scores.softmax(-1), q, "b h i j, b h j d -> b h i d")
        tokens = ops.rearrange(mixed, "b h n d -> b n (h d)")
        packed, shapes = ops.pack([tokens[:, 0], tokens], "b * d")
        first, rest = ops.unpack(packed, shapes, "b * d")
        pooled = ops.reduce(x, "b c (h 2) (w 2) -> b c h w", "max")
        return (
            first
            + ops.reduce(rest, "b n d -> b d", "mean")
            + ops.reduce(pooled, "b c h w -> b", "mean")[:, None]
        )


def _model(ops: Any) -> Model:
    torch.manual_seed(0)
    return Model(ops).eval()


def _export(model: Model, dynamo: bool) -> bytes:
    x = torch.randn(4, 3, 8, 8)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        # the TorchScript-based exporter is deprecated from torch 2.9 on; it is tested
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", torch.jit.TracerWarning)  # einops' trace warns
        if dynamo:
            batch = torch.export.Dim("batch", min=1, max=1024)
            program = torch.onnx.export(
                model, (x,), dynamo=True, dynamic_shapes=({0: batch},), input_names=["x"]
            )
            program.save(buffer)
        else:
            torch.onnx.export(
                model,
                (x,),
                buffer,
                dynamo=False,
                input_names=["x"],
                output_names=["y"],
                dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
            )
    return buffer.getvalue()


def _nodes(exported: bytes) -> int:
    return len(onnx.load_from_string(exported).graph.node)


def _run_at_batch_sizes(exported: bytes, model: Model) -> None:
    session = onnxruntime.InferenceSession(exported, providers=["CPUExecutionProvider"])
    for batch in (1, 3, 7):
        x = torch.randn(batch, 3, 8, 8)
        (got,) = session.run(None, {"x": x.numpy()})
        torch.testing.assert_close(torch.from_numpy(got), model(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dynamo", [False, True], ids=["torchscript", "dynamo"])
def test_onnx_graph_runs_at_new_batch_sizes_and_is_no_larger_than_einops(dynamo: bool) -> None:
    model = _model(tops)
    exported = _export(model, dynamo)
    _run_at_batch_sizes(exported, model)
    twin = _model(einops)
    theirs = _export(twin, dynamo)
    assert _nodes(exported) <= _nodes(theirs)
