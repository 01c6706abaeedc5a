"""The compile-time zoo (benchmarks/_compile_zoo.py): its three variants of each model agree.

tensorops, einops and plain torch give the same outputs and gradients, eagerly and
under ``torch.compile(backend="eager")``; the benchmark's table and counting are checked
on made-up numbers and on the plain torch variant.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("einops")

import torch
import torch._dynamo
from torch._dynamo.testing import CompileCounter

_BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _load(name):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, _BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


zoo = _load("_compile_zoo")
compile_time = _load("compile_time")

LENGTHS = {"vit": 3, "decoder": 7, "perceiver": 9, "unet": 6, "vq": 5}


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _outputs(output):
    return [output] if isinstance(output, torch.Tensor) else list(output)


def _run(model, name):
    """Outputs, and gradients of the objective for every parameter and the input, in float64."""
    x = zoo.example_input(name, 3, LENGTHS[name], small=True).double().requires_grad_()
    output = model(x)
    zoo.objective(output).backward()
    module = getattr(model, "_orig_mod", model)  # a compiled module's parameters are its own
    grads = {key: p.grad for key, p in module.named_parameters()}
    return [o.detach() for o in _outputs(output)], grads, x.grad


def _assert_agree(got, expected):
    outputs, grads, input_grad = got
    for a, b in zip(outputs, expected[0], strict=True):
        torch.testing.assert_close(a, b)
    assert grads.keys() == expected[1].keys()
    for key, grad in grads.items():
        assert grad is not None, key
        torch.testing.assert_close(grad, expected[1][key], msg=key)
    torch.testing.assert_close(input_grad, expected[2])


@pytest.mark.parametrize("name", zoo.MODELS)
def test_variants_agree_eagerly(name):
    expected = _run(zoo.build(name, "torch", small=True).double(), name)
    for impl in ("tensorops", "einops"):
        _assert_agree(_run(zoo.build(name, impl, small=True).double(), name), expected)


@pytest.mark.slow
@pytest.mark.parametrize("name", zoo.MODELS)
def test_variants_agree_compiled(name):
    expected = _run(zoo.build(name, "torch", small=True).double(), name)
    for impl in zoo.IMPLS:
        torch._dynamo.reset()
        counter = CompileCounter()
        model = zoo.build(name, impl, small=True).double()
        compiled = torch.compile(model, backend=counter, fullgraph=True)
        _assert_agree(_run(compiled, name), expected)
        assert counter.frame_count == 1, impl


def test_same_seed_same_parameters_different_seed_different():
    a, b = zoo.build("vit", "tensorops", small=True), zoo.build("vit", "torch", small=True)
    c = zoo.build("vit", "torch", small=True, seed=1)
    for (key, p), q in zip(a.named_parameters(), b.parameters(), strict=True):
        assert torch.equal(p, q), key
    assert not all(torch.equal(p, r) for p, r in zip(a.parameters(), c.parameters(), strict=True))


def test_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="impl must be one of"):
        zoo.build("vit", "jax")


def test_unknown_model_is_refused(capsys):
    with pytest.raises(SystemExit):
        compile_time._parse(["--models", "vit,resnet"])
    assert "unknown models ['resnet']" in capsys.readouterr().err


def test_schedule_changes_batch_then_length_then_both():
    (b0, n0), (b1, n1), (b2, n2), (b3, n3) = compile_time.schedule("decoder")
    assert (b1 != b0, n1 == n0) == (True, True)
    assert (b2 == b1, n2 != n1) == (True, True)
    assert len({b0, b1, b3}) == 3
    assert len({n0, n2, n3}) == 3


def test_table_rows_ratios_and_geometric_means():
    results = {}
    for name, scale in (("vit", 1.0), ("vq", 4.0)):
        results[(name, "tensorops")] = {"capture": 2.0 * scale, "graphs": 1, "recompiles": 2}
        results[(name, "einops")] = {"capture": 1.0 * scale, "graphs": 1, "recompiles": 2}
        results[(name, "torch")] = {"capture": 0.5 * scale, "graphs": 1, "recompiles": 2}
    results[("vq", "einops")]["capture"] = 16.0  # ratio 0.5 there, 2.0 for vit: mean 1.0
    rows = compile_time.table(results, ["vit", "vq"])
    assert "| vit | dynamo capture, s | 2.00 | 1.00 | 0.50 | 2.00 | 4.00 |" in rows
    assert "| vq | recompiles over 3 new shapes | 2 | 2 | 2 | 1.00 | 1.00 |" in rows
    assert rows[-1] == "| all | geometric mean, dynamo capture, s | | | | 1.00 | 4.00 |"
    assert not any("inductor" in row for row in rows)  # not measured: no row
    assert math.isclose(float(rows[-1].split("|")[-3]), 1.0)


@pytest.mark.slow
def test_child_counts_graphs_and_recompiles_of_plain_torch():
    measured = compile_time.child("vq", "torch", "eager")
    assert measured["capture"] > 0
    # one graph, then automatic dynamic shapes: one recompile for the batch, one for the length
    assert (measured["graphs"], measured["recompiles"]) == (1, 2)
