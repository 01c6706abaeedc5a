"""The public ops under Dynamo as one graph node per call (tensorops/_compile/stand_ins.py).

A call on torch tensors is one node of Dynamo's graph that runs the eager op, with
plain or symbolic sizes; everything else (NumPy arrays, a function as reduction) is
traced as the op's own code. Either way the result, the gradients and the errors are
eager mode's. Where the stand-ins are not installed (``TENSOROPS_COMPILE=traced``, as
CI runs this file too, or a torch without the features) the same tests check that
every call is traced as the op's own code instead.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("torch")

import torch
import torch._dynamo
from torch._dynamo.testing import CompileCounter

import tensorops as tops
from tensorops._compile import checks, stand_ins
from tests._dynamo import CACHES_NODES, NOT_TRACED, TRACES_TENSOROPS, untraceable_tolerated

_NODES = {"in_graph"}
#: Whether Dynamo traces the stand-ins here (False: the fallback).
INSTALLED = stand_ins.installed()


def _targets(fn, *args):
    """The call targets of Dynamo's graph of fn, by name (one graph, no break)."""
    result = torch._dynamo.explain(fn)(*args)
    assert result.graph_break_count == 0
    return [
        getattr(node.target, "__name__", str(node.target))
        for graph in result.graphs
        for node in graph.graph.nodes
        if node.op in ("call_function", "call_method")
    ]


def _compiled(fn, *args, backend="eager", dynamic=None, fullgraph=True):
    torch._dynamo.reset()
    return torch.compile(fn, backend=backend, fullgraph=fullgraph, dynamic=dynamic)(*args)


_X = torch.randn(2, 6, 4)
_W = torch.randn(4, 5)
_NODE_CALLS = {
    "rearrange": (lambda x: tops.rearrange(x, "b (h d) c -> b h c d", h=3), (_X,)),
    "rearrange-no-lengths": (lambda x: tops.rearrange(x, "b n c -> c b n"), (_X,)),
    "repeat": (lambda x: tops.repeat(x, "b n c -> b n c r", r=2), (_X,)),
    "reduce": (lambda x: tops.reduce(x, "b (n 2) c -> b c", "max"), (_X,)),
    "reduce-repeat": (lambda x: tops.reduce(x, "b n c -> (b s) n c", "repeat", s=2), (_X,)),
    "einsum-first": (lambda x, w: tops.einsum("bnc,ce->bne", x, w), (_X, _W)),
    "einsum-last": (lambda x, w: tops.einsum(x, w, "b n c, c e -> b e n"), (_X, _W)),
    "einsum-parameter": (
        lambda x, w: tops.einsum(x, w, "b n c, c e -> b n e"),
        (_X, torch.nn.Parameter(_W.clone())),
    ),
    "pack": (lambda x, w: tops.pack([x, w], "* e")[0], (_X[..., :4], _W[:, :4])),
    "unpack": (lambda x: tops.unpack(x, [(2,), (4,)], "b * c"), (_X,)),
}


@pytest.mark.parametrize("name", sorted(_NODE_CALLS))
def test_a_call_with_plain_sizes_is_one_node(name):
    fn, args = _NODE_CALLS[name]
    targets = _targets(fn, *args)
    if INSTALLED:
        assert [t for t in targets if t in _NODES] == [targets[0]]
        assert all(t in _NODES or t == "getitem" for t in targets)
    else:  # the fallback: the op's own code, traced to the framework calls
        assert not _NODES & set(targets)
        assert targets
    expected = fn(*args)
    for backend in ("eager", "aot_eager"):
        torch.testing.assert_close(_compiled(fn, *args, backend=backend), expected)


def test_pack_gives_its_shapes_as_constants():
    a, b = torch.randn(2, 3), torch.randn(2, 4, 5)

    def fn(a, b):
        packed, shapes = tops.pack([a, b], "n *")
        assert shapes == [(3,), (4, 5)]  # a constant in the trace: checked while tracing
        return tops.unpack(packed * 2, shapes, "n *")

    nodes = [t for t in _targets(fn, a, b) if t in _NODES]
    assert nodes == (["in_graph", "in_graph"] if INSTALLED else [])
    for got, want in zip(_compiled(fn, a, b), fn(a, b), strict=True):
        torch.testing.assert_close(got, want)


def test_pack_gives_symbolic_shapes_with_symbolic_sizes():
    def fn(a, b):
        packed, shapes = tops.pack([a, b], "n *")
        return tops.unpack(packed * 2, shapes, "n *")

    counter = CompileCounter()
    torch._dynamo.reset()
    compiled = torch.compile(fn, backend=counter, fullgraph=True, dynamic=True)
    for n, m in ((3, 6), (5, 8), (7, 10)):  # no two sizes equal: no duck-sized equality
        a, b = torch.randn(9, n), torch.randn(9, m, 4)
        for got, want in zip(compiled(a, b), fn(a, b), strict=True):
            torch.testing.assert_close(got, want)
    assert counter.frame_count == 1


_TRACED_CALLS = {
    "reduction-callable": (
        lambda x: tops.reduce(x, "b n c -> b c", lambda t, axes: t.sum(dim=axes)),
        (_X,),
    ),
}
# every other way of calling: one node too
_NODE_CALLS.update(
    {
        "list-of-arrays": (lambda x: tops.rearrange([x, x], "s b n c -> b s n c"), (_X,)),
        "pattern-keyword": (lambda x: tops.rearrange(x, pattern="b n c -> c b n"), (_X,)),
        "tensor-keyword": (lambda x: tops.repeat(tensor=x, pattern="b n c -> b n c 2"), (_X,)),
        "reduction-keyword": (lambda x: tops.reduce(x, "b n c -> b", reduction="sum"), (_X,)),
        "einsum-three-operands": (
            lambda x, w: tops.einsum("bnc,ce,ef->bnf", x, w, w.T),
            (_X, _W),
        ),
        "einsum-option": (
            lambda x, w: tops.einsum("bnc,ce->bne", x, w, strategy="greedy"),
            (_X, _W),
        ),
        "einsum-sublists": (lambda x, w: tops.einsum(x, [0, 1, 2], w, [2, 3], [0, 1, 3]), (_X, _W)),
        "zero-size": (lambda x: tops.rearrange(x[:, :0], "b n c -> c b n"), (_X,)),
        "length-from-a-size": (
            lambda x: tops.rearrange(x, "b (h d) c -> b h d c", h=x.shape[0] + 1),
            (_X,),
        ),
        "get_at": (
            lambda x: tops.get_at(x, torch.tensor([[0, 2], [1, 1]]), "b [n] c, b p -> b p c"),
            (_X,),
        ),
        "parse_shape-then-repeat": (
            lambda x: tops.repeat(x, "b n c -> b n c r", r=tops.parse_shape(x, "b n _")["b"]),
            (_X,),
        ),
    }
)


@pytest.mark.parametrize("name", sorted(_TRACED_CALLS))
def test_other_calls_are_traced_as_the_ops_own_code(name):
    fn, args = _TRACED_CALLS[name]
    expected = fn(*args)
    # where Dynamo cannot trace tensorops' Python, the call breaks the graph (NOT_TRACED)
    with untraceable_tolerated():
        torch.testing.assert_close(_compiled(fn, *args, fullgraph=TRACES_TENSOROPS), expected)
    if TRACES_TENSOROPS:
        assert not _NODES & set(_targets(fn, *args))


def test_symbolic_sizes_are_one_node_too():
    fn, args = _NODE_CALLS["rearrange"]
    x = args[0].clone()
    torch._dynamo.mark_dynamic(x, 0)
    targets = _targets(fn, x)
    if INSTALLED:
        assert targets == ["in_graph"]
    else:
        assert "permute" in targets
    torch.testing.assert_close(_compiled(fn, x, dynamic=True), fn(x))


def test_numpy_arrays_under_dynamo_stay_numpy_arrays():
    a = np.arange(24.0).reshape(2, 3, 4)

    def fn(a):
        return tops.rearrange(a, "b n c -> c b n")

    with untraceable_tolerated():
        out = _compiled(fn, a, fullgraph=TRACES_TENSOROPS)  # NOT_TRACED: a graph break
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, fn(a))


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: tops.rearrange(x, "b (h d) c -> b h d c", h=4),
        lambda x: tops.rearrange(x, "b n -> n b"),
        lambda x: tops.reduce(x, "b n c -> b", "median"),
        lambda x: tops.einsum("bnc,cd->bnd", x, x),
        lambda x: tops.unpack(x, [(2,), (5,)], "b * c"),
    ],
)
def test_errors_are_the_eager_errors(fn):
    with pytest.raises(tops.TensorOpsError) as eager:
        fn(_X)
    with pytest.raises(tops.TensorOpsError) as compiled:
        _compiled(fn, _X)
    assert isinstance(compiled.value, type(eager.value))
    assert str(compiled.value) == str(eager.value)


def test_gradients_and_mutations_through_nodes():
    def fn(x, w):
        y = tops.rearrange(x, "b (h d) c -> b h d c", h=2)
        z = tops.einsum(y, w, "b h d c, c e -> b h d e")
        packed, shapes = tops.pack([z, x], "b *")
        first, second = tops.unpack(packed, shapes, "b *")
        return tops.reduce(first, "b h d e -> b", "mean").sum() + second.pow(2).sum()

    x, w = torch.randn(2, 6, 4, requires_grad=True), torch.randn(4, 5, requires_grad=True)
    fn(x, w).backward()
    expected = (x.grad.clone(), w.grad.clone())
    for backend in ("eager", "aot_eager"):
        x.grad = w.grad = None
        _compiled(fn, x, w, backend=backend).backward()
        torch.testing.assert_close((x.grad, w.grad), expected)

    def mutate(x):
        view = tops.rearrange(x, "a b -> b a")  # a view of x, changed in place
        view.add_(1)
        return x * 2

    a, b = torch.arange(12.0).reshape(3, 4), torch.arange(12.0).reshape(3, 4)
    for backend in ("eager", "aot_eager"):
        b = torch.arange(12.0).reshape(3, 4)
        out = _compiled(mutate, b, backend=backend)
        a = torch.arange(12.0).reshape(3, 4)
        torch.testing.assert_close(out, mutate(a))
        torch.testing.assert_close(b, a)


def test_eager_calls_run_the_public_functions():
    # the stand-ins are Dynamo's only: the public names are the functions themselves
    assert tops.rearrange is checks.NODE_OPS["rearrange"]
    assert checks.OWN["reduce"] is not tops.reduce
    assert checks.OWN["reduce"].__code__ is tops.reduce.__code__
    assert tops.rearrange.__module__ == "tensorops._ops"


# Dynamo may be imported before tensorops, or only by the first torch.compile.
_ORDERS = {
    "dynamo-first": "import torch, torch._dynamo\nimport tensorops as tops\n",
    "tensorops-first": "import tensorops as tops\nimport torch\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("order", sorted(_ORDERS))
def test_stand_ins_are_registered_in_any_import_order(order):
    script = _ORDERS[order] + (
        "def f(x):\n"
        "    return tops.rearrange(x, 'a (b c) -> c b a', c=2)\n"
        "graph = torch._dynamo.explain(f)(torch.ones(3, 4)).graphs[0]\n"
        "print(sorted({getattr(n.target, '__name__', '') for n in graph.graph.nodes}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", script],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert ("'in_graph'" in result.stdout) == INSTALLED


class _Attention(torch.nn.Module):
    def forward(self, x, w):
        y = tops.rearrange(x, "b (h d) -> b h d", h=2)
        return tops.einsum(y, w, "b h d, d e -> b h e")


def test_strict_export_traces_through_the_nodes():
    x, w = torch.randn(3, 4), torch.randn(2, 5)
    graphs = {}
    for strict in (True, False):
        program = torch.export.export(_Attention(), (x, w), strict=strict)
        graphs[strict] = [str(n.target) for n in program.graph.nodes if n.op == "call_function"]
        torch.testing.assert_close(program.module()(x, w), _Attention()(x, w))
    assert graphs[True] == graphs[False]
    assert "aten.matmul.default" in graphs[True]


def test_nodes_inside_checkpoint_vmap_and_autocast():
    x = torch.randn(3, 4, requires_grad=True)

    def checkpointed(x):
        def block(a):
            return tops.reduce(tops.rearrange(a, "b (h d) -> b h d", h=2), "b h d -> b", "sum")

        return torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False).sum()

    _compiled(checkpointed, x, backend="aot_eager").backward()
    torch.testing.assert_close(x.grad, torch.ones_like(x))

    def mapped(x):
        return torch.func.vmap(lambda row: tops.rearrange(row, "(h d) -> d h", h=2))(x)

    torch.testing.assert_close(_compiled(mapped, x.detach(), backend="aot_eager"), mapped(x))

    def autocast(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return tops.einsum(x, x, "b i, b j -> i j")

    out = _compiled(autocast, x.detach(), backend="aot_eager")
    assert out.dtype == torch.bfloat16
    torch.testing.assert_close(out, autocast(x.detach()))


def test_softmax_is_one_node():
    for fn in (
        lambda x: tops.softmax(x, "b [n] c"),
        lambda x: tops.log_softmax(x, "b [n c] -> b [c n]", c=4),
    ):
        assert [t for t in _targets(fn, _X) if t in _NODES] == (["in_graph"] if INSTALLED else [])
        torch.testing.assert_close(_compiled(fn, _X, backend="aot_eager"), fn(_X))


@pytest.mark.slow
def test_graphs_with_nodes_are_cached_across_processes(tmp_path):
    # the nodes are marked cacheable: a second process loads AOTAutograd's compiled
    # graph instead of compiling it again
    script = (
        "import torch, tensorops as tops\n"
        "from torch._dynamo.utils import counters\n"
        "def f(x, w):\n"
        "    y = tops.rearrange(x, 'b (h d) -> b h d', h=2)\n"
        "    return tops.einsum(y, w, 'b h d, d e -> b h e').relu()\n"
        "x, w = torch.randn(3, 4, requires_grad=True), torch.randn(2, 5)\n"
        "torch.compile(f)(x, w).sum().backward()\n"
        "print(sorted(counters['aot_autograd']))\n"
    )
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path)}
    runs = [
        subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
        )
        for _ in range(2)
    ]
    for run in runs:
        assert run.returncode == 0, run.stderr
    if not CACHES_NODES:  # a torch whose AOTAutograd cache cannot take the nodes: compiled anew
        assert "autograd_cache_hit" not in runs[1].stdout
        return
    assert "autograd_cache_saved" in runs[0].stdout
    assert "autograd_cache_hit" in runs[1].stdout


_FALLBACK_SCRIPT = (
    "import torch, torch._dynamo\n"
    "{before}"
    "import tensorops as tops\n"
    "from tensorops._compile import stand_ins\n"
    "def f(x):\n"
    "    return tops.reduce(tops.rearrange(x, 'a (b c) -> c b a', c=2), 'c b a -> c a', 'max')\n"
    "x = torch.randn(3, 4)\n"
    "graph = torch._dynamo.explain(f)(x).graphs[0]\n"
    "names = {{getattr(n.target, '__name__', n.target) for n in graph.graph.nodes}}\n"
    "assert not stand_ins.installed(), 'installed'\n"
    "assert 'in_graph' not in names and 'permute' in names, names\n"
    "out = torch.compile(f, fullgraph=True, backend='eager', dynamic=True)(x)\n"
    "torch.testing.assert_close(out, f(x))\n"
    "try:\n"
    "    torch.compile(f, fullgraph=True, backend='eager')(torch.randn(3, 5))\n"
    "except tops.ShapeError as error:\n"
    "    assert 'not divisible by 2' in str(error), error\n"
    "else:\n"
    "    raise AssertionError('no error')\n"
)


@pytest.mark.slow
@pytest.mark.skipif(not TRACES_TENSOROPS, reason=NOT_TRACED)
@pytest.mark.parametrize(
    ("env", "before"),
    [
        pytest.param({"TENSOROPS_COMPILE": "traced"}, "", id="switch"),
        pytest.param({}, "del torch._dynamo.substitute_in_graph\n", id="no-substitute_in_graph"),
    ],
)
def test_the_fallback_traces_the_ops_own_code(env, before):
    """Forced by the switch, or taken where torch lacks a feature: correct, and no node."""
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", _FALLBACK_SCRIPT.format(before=before)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]


def test_the_features_used_are_found_on_this_torch():
    """What `tensorops._compile.dynamo` checks for exists here (else the fallback runs)."""
    from tensorops._staging.compiler import stand_ins_wanted

    assert callable(getattr(torch._dynamo, "substitute_in_graph", None))
    assert callable(torch.compiler.allow_in_graph)
    assert stand_ins_wanted() == INSTALLED
