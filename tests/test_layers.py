"""The torch layers: semantics, construction-time checks, repr, serialization, dtypes, devices."""

from __future__ import annotations

import copy
import doctest
import importlib
import io
import math
import pickle

import pytest

pytest.importorskip("torch")

import torch
from tensorops.layers.torch import EinMix, LogSoftmax, Rearrange, Reduce, Repeat, Softmax

import tensorops as tops

CUDA = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available")


def amax_of(x, axes):  # a module-level callable reduction: layers using it pickle
    return torch.amax(x, dim=axes)


# --- the layers compute what the functions compute ----------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "shape", "lengths"),
    [
        ("b c h w -> b h w c", (2, 3, 4, 5), {}),
        ("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", (2, 3, 8, 8), {"p1": 4, "p2": 4}),
        ("b ... c -> b c ...", (2, 3, 4, 5, 6), {}),
        ("... -> (...)", (2, 3, 4), {}),
        # more dims under "..." than einops' layers accept (8)
        ("b ... -> ... b", (2,) + (1,) * 10 + (3,), {}),
        ("b 1 c -> b c", (2, 1, 3), {}),
    ],
)
def test_rearrange_matches_function(pattern, shape, lengths):
    x = torch.randn(shape)
    layer = Rearrange(pattern, **lengths)
    torch.testing.assert_close(layer(x), tops.rearrange(x, pattern, **lengths), rtol=0, atol=0)


@pytest.mark.parametrize("reduction", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize(
    ("pattern", "shape"),
    [
        ("b c (h 2) (w 2) -> b c h w", (2, 3, 4, 6)),
        ("b ... c -> b c", (2, 3, 4, 5)),
        ("b ... -> b 1", (2,) + (2,) * 9),
    ],
)
def test_reduce_matches_function(pattern, shape, reduction):
    x = torch.randn(shape)
    layer = Reduce(pattern, reduction)
    torch.testing.assert_close(layer(x), tops.reduce(x, pattern, reduction))


@pytest.mark.parametrize("reduction", ["any", "all"])
def test_reduce_any_all(reduction):
    x = torch.rand(4, 6, 5) > 0.5
    layer = Reduce("a (b 2) c -> a c", reduction)
    expected = getattr(torch, reduction)(x.reshape(4, 3, 2, 5), dim=2)
    expected = getattr(torch, reduction)(expected, dim=1)
    assert torch.equal(layer(x), expected)


def test_reduce_callable():
    x = torch.randn(2, 3, 4)
    layer = Reduce("a b c -> a", amax_of)
    torch.testing.assert_close(layer(x), x.amax(dim=(1, 2)))
    assert torch.equal(Reduce("a b c -> a c", torch.logsumexp)(x), torch.logsumexp(x, dim=(1,)))


def test_softmax_layers_match_the_functions():
    x = torch.randn(2, 3, 4, 5)
    torch.testing.assert_close(Softmax("b h i [j]")(x), torch.softmax(x, -1))
    torch.testing.assert_close(LogSoftmax("b [h] i j")(x), torch.log_softmax(x, 1))
    joint = Softmax("b h [i j]")(x)
    torch.testing.assert_close(joint, torch.softmax(x.flatten(2), -1).view(x.shape))
    attention = torch.nn.Sequential(Rearrange("b (h i) j -> b h i j", h=3), Softmax("b h i [j]"))
    assert attention(torch.randn(2, 12, 5)).sum(-1).allclose(torch.ones(2, 3, 4))
    # '...' in brackets: every axis between b and c, at any rank
    for shape in ((2, 3, 4, 5), (2, 6, 5)):
        y = torch.randn(shape)
        inner = tuple(range(1, y.ndim - 1))
        want = torch.softmax(y.movedim(-1, 1).flatten(2), -1).view(y.movedim(-1, 1).shape)
        torch.testing.assert_close(Softmax("b [...] c")(y), want.movedim(1, -1))
        assert Softmax("b [...] c")(y).sum(inner).allclose(torch.ones(shape[0], shape[-1]))


def test_repeat_matches_function():
    x = torch.randn(2, 3)
    assert torch.equal(Repeat("b c -> b c r", r=4)(x), tops.repeat(x, "b c -> b c r", r=4))
    assert Repeat("... c -> ... (c 2)")(torch.zeros(2, 3, 4)).shape == (2, 3, 8)


def test_layers_in_sequential():
    model = torch.nn.Sequential(
        Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2),
        EinMix("b n d -> b n e", weight_shape="d e", bias_shape="e", d=12, e=8),
        Repeat("b n e -> b n e r", r=2),
        Reduce("b n e r -> b e", "mean"),
    )
    assert model(torch.randn(3, 3, 4, 4)).shape == (3, 8)


# --- EinMix --------------------------------------------------------------------------------------


def test_einmix_is_a_linear_layer():
    mix = EinMix("b n d_in -> b n d_out", weight_shape="d_in d_out", bias_shape="d_out",
                 d_in=6, d_out=5)  # fmt: skip
    assert mix.weight.shape == (6, 5)
    assert mix.bias is not None
    assert mix.bias.shape == (1, 1, 5)
    x = torch.randn(2, 3, 6)
    torch.testing.assert_close(mix(x), x @ mix.weight + mix.bias.reshape(5))


def test_einmix_composes_axes_around_the_einsum():
    mix = EinMix("b (h w) c -> b h w c2", weight_shape="c c2", bias_shape="c2", h=4, c=3, c2=5)
    x = torch.randn(2, 12, 3)
    assert mix.bias is not None
    expected = (x @ mix.weight + mix.bias.reshape(5)).reshape(2, 4, 3, 5)
    torch.testing.assert_close(mix(x), expected)


def test_einmix_per_head_weights_and_composed_output():
    mix = EinMix("b n (h c) -> b n (h e)", weight_shape="h c e", bias_shape="h e", h=2, c=3, e=4)
    x = torch.randn(5, 7, 6)
    assert mix.bias is not None
    expected = torch.einsum("bnhc,hce->bnhe", x.reshape(5, 7, 2, 3), mix.weight) + mix.bias
    torch.testing.assert_close(mix(x), expected.reshape(5, 7, 8))


def test_einmix_with_ellipsis_and_single_axis_terms():
    mix = EinMix("b ... c -> b ... d", weight_shape="c d", bias_shape="d", c=3, d=2)
    x = torch.randn(2, 4, 5, 3)
    assert mix.bias is not None
    torch.testing.assert_close(mix(x), x @ mix.weight + mix.bias.reshape(2))
    scale = EinMix("c -> c", weight_shape="c", c=4)
    y = torch.randn(4)
    torch.testing.assert_close(scale(y), y * scale.weight)
    long_names = EinMix("ch -> out", weight_shape="ch out", ch=3, out=2)
    torch.testing.assert_close(long_names(torch.ones(3)), long_names.weight.sum(0))


def test_einmix_initialization_follows_fan_in():
    torch.manual_seed(0)
    mix = EinMix("b h c -> b h e", weight_shape="h c e", bias_shape="h e", h=4, c=256, e=64)
    assert mix.fan_in == 256  # h is kept in the output, so fan_in is c alone
    # einops' bounds: sqrt(3 / fan_in) for the weight, 1 / sqrt(fan_in) for the bias
    for parameter, bound in ((mix.weight, math.sqrt(3 / 256)), (mix.bias, 1 / math.sqrt(256))):
        assert parameter is not None
        assert parameter.abs().max() <= bound
        assert parameter.abs().max() > 0.9 * bound
        assert abs(parameter.mean().item()) < 0.1 * bound


@pytest.mark.parametrize(
    ("pattern", "weight_shape", "bias_shape", "lengths"),
    [
        ("b t c -> b t d", "c d", "d", {"c": 32, "d": 48}),
        ("b h c -> b h e", "h c e", "h e", {"h": 4, "c": 16, "e": 8}),
        ("b (h w) c -> b h w e", "c e", None, {"h": 2, "w": 3, "c": 5, "e": 7}),
        ("b n c -> b c n2", "n n2", "n2", {"n": 6, "n2": 9}),
    ],
)
def test_einmix_starts_from_einops_parameters_under_one_seed(
    pattern: str, weight_shape: str, bias_shape: str | None, lengths: dict[str, int]
) -> None:
    """A model that swaps einops' EinMix for tensorops' starts from the same weights."""
    einops_torch = pytest.importorskip("einops.layers.torch")
    torch.manual_seed(1234)
    theirs = einops_torch.EinMix(pattern, weight_shape, bias_shape, **lengths)
    torch.manual_seed(1234)
    ours = EinMix(pattern, weight_shape, bias_shape, **lengths)
    torch.testing.assert_close(ours.weight, theirs.weight, rtol=0, atol=0)
    if bias_shape is None:
        assert ours.bias is None
        assert theirs.bias is None
    else:
        assert ours.bias is not None
        torch.testing.assert_close(ours.bias, theirs.bias, rtol=0, atol=0)


def test_einmix_parameters_have_einops_shapes():
    einops_torch = pytest.importorskip("einops.layers.torch")
    cases = [
        ("b n d -> b n e", "d e", "e", {"d": 4, "e": 3}, (2, 5, 4)),
        ("b (h w) c -> b h w c2", "c c2", "c2", {"h": 2, "c": 3, "c2": 5}, (2, 4, 3)),
        ("b ... c -> b ... d", "c d", "d", {"c": 3, "d": 2}, (2, 5, 6, 3)),
        ("t b (g c) -> t b (g e)", "g c e", "g e", {"g": 2, "c": 3, "e": 4}, (2, 5, 6)),
    ]
    for pattern, weight_shape, bias_shape, lengths, shape in cases:
        ours = EinMix(pattern, weight_shape=weight_shape, bias_shape=bias_shape, **lengths)
        theirs = einops_torch.EinMix(pattern, weight_shape, bias_shape, **lengths)
        assert ours.weight.shape == theirs.weight.shape
        assert ours.bias is not None
        assert ours.bias.shape == theirs.bias.shape
        ours.load_state_dict(theirs.state_dict())  # einops checkpoints load
        x = torch.randn(shape)
        torch.testing.assert_close(ours(x), theirs(x))


# --- construction-time checks and errors --------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Rearrange("b c -> b d"), "Rearrange: axis 'c' is missing on the right"),
        (lambda: Rearrange("b (c -> c"), "Rearrange: unclosed parenthesis"),
        (lambda: Rearrange("b (h w) -> b h w", h=2, q=3), "'q' is not in the pattern"),
        (lambda: Reduce("b c -> b", "median"), "Reduce: unknown reduction 'median'"),
        (lambda: Repeat("b -> b c"), "Repeat: the length of new axis 'c' is not given"),
        (lambda: EinMix("b c -> b d", weight_shape="c d", c=3), "weight axis 'd' is not given"),
        (lambda: EinMix("b c -> b d", weight_shape="c", c=3), "output axis 'd' is neither"),
        (lambda: EinMix("b c -> b c", weight_shape="c z", c=3, z=2), "weight axis 'z' is neither"),
        (lambda: EinMix("b c -> b d", "(c d)", c=3, d=2), "must be axis names"),
        (lambda: EinMix("b c -> b d", "c d", "b", c=3, d=2), "length of bias axis 'b'"),
        (lambda: EinMix("b c -> b d", "c d", "x", c=3, d=2), "bias axis 'x' is not in the output"),
        (lambda: EinMix("b c -> b d", "c d", c=3, d=2, q=1), "q=1 is not used"),
        (lambda: EinMix("b ... c -> b d", "c d", c=3, d=2), "'...' must appear on both sides"),
        (lambda: EinMix("b c", "c d", c=3, d=2), "one 'left -> right'"),
        (lambda: Softmax("b h i j"), "Softmax: the axes to normalize must be in brackets"),
        (lambda: LogSoftmax("b [c] -> b c"), "LogSoftmax: axis 'c' is in brackets on one side"),
        (lambda: Softmax("b [c]", z=2), "z=2 is given but 'z' is not in the pattern"),
    ],
)
def test_bad_layers_fail_when_built(build, message):
    with pytest.raises(tops.TensorOpsError) as info:
        build()
    assert message in str(info.value)
    assert "  input:" not in str(info.value)  # the internal probe is not reported


def test_wrong_rank_is_a_tensorops_error():
    for layer in (
        Rearrange("b c h w -> b h w c"),
        Reduce("b c h w -> b c", "max"),
        Repeat("b c -> b c r", r=2),
        EinMix("b n d -> b n e", weight_shape="d e", d=3, e=2),
        Softmax("b h i [j]"),
        LogSoftmax("b [c]"),
    ):
        with pytest.raises(tops.TensorOpsError) as info:
            layer(torch.zeros(3))
        assert not isinstance(info.value, (KeyError, IndexError))


# --- repr, state_dict, pickle, deepcopy ---------------------------------------------------------

LAYERS = [
    ("Rearrange('b c h w -> b h w c')", (2, 3, 4, 5)),
    ("Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)', p1=4, p2=4)", (2, 3, 8, 8)),
    ("Reduce('b c h w -> b c', 'mean')", (2, 3, 4, 5)),
    ("Reduce('b c (h 2) (w 2) -> b c h w', 'max')", (2, 3, 4, 4)),
    ("Reduce('b c -> b', amax_of)", (2, 3)),
    ("Repeat('b c -> b c r', r=3)", (2, 3)),
    (
        "EinMix('b n d_in -> b n d_out', weight_shape='d_in d_out', bias_shape='d_out', "
        "d_in=48, d_out=64)",
        (2, 5, 48),
    ),
    ("EinMix('b (h w) c -> b h w c2', weight_shape='c c2', h=4, c=3, c2=5)", (2, 12, 3)),
    ("Softmax('b h i [j]')", (2, 3, 4, 5)),
    ("Softmax('b [(h w)] c', h=2)", (2, 6, 3)),
    ("LogSoftmax('b [h w] c -> b c [h w]')", (2, 3, 4, 5)),
]
NAMESPACE = {
    "Rearrange": Rearrange,
    "Reduce": Reduce,
    "Repeat": Repeat,
    "EinMix": EinMix,
    "amax_of": amax_of,
    "Softmax": Softmax,
    "LogSoftmax": LogSoftmax,
}


@pytest.mark.parametrize(("text", "shape"), LAYERS)
def test_repr_reproduces_the_call(text, shape):
    layer = eval(text, NAMESPACE)
    assert repr(layer) == text
    assert repr(eval(repr(layer), NAMESPACE)) == text
    assert text in repr(torch.nn.Sequential(layer))


@pytest.mark.parametrize(("text", "shape"), LAYERS)
def test_pickle_and_deepcopy(text, shape):
    layer = eval(text, NAMESPACE)
    x = torch.randn(shape)
    for clone in (pickle.loads(pickle.dumps(layer)), copy.deepcopy(layer)):
        assert repr(clone) == repr(layer)
        assert torch.equal(clone(x), layer(x))


def test_state_dict_round_trip():
    mix = EinMix("b n d -> b n e", weight_shape="d e", bias_shape="e", d=4, e=3)
    fresh = EinMix("b n d -> b n e", weight_shape="d e", bias_shape="e", d=4, e=3)
    assert set(mix.state_dict()) == {"weight", "bias"}
    fresh.load_state_dict(mix.state_dict())
    x = torch.randn(2, 5, 4)
    assert torch.equal(fresh(x), mix(x))
    buffer = io.BytesIO()
    torch.save(torch.nn.Sequential(Rearrange("b n d -> b d n"), mix).state_dict(), buffer)
    buffer.seek(0)
    model = torch.nn.Sequential(Rearrange("b n d -> b d n"), fresh)
    model.load_state_dict(torch.load(buffer, weights_only=True))
    assert Rearrange("a b -> b a").state_dict() == {}


def test_lambda_reductions_deepcopy_but_do_not_pickle():
    layer = Reduce("a b -> a", lambda x, axes: x.sum(dim=axes))
    x = torch.randn(2, 3)
    torch.testing.assert_close(copy.deepcopy(layer)(x), x.sum(1))
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        pickle.dumps(layer)


# --- dtypes and devices ------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_outputs_follow_the_input_dtype(dtype):
    x = torch.randn(2, 3, 4, 4).to(dtype)
    assert Rearrange("b c h w -> b (h w) c")(x).dtype == dtype
    assert Reduce("b c h w -> b c", "max")(x).dtype == dtype
    assert Repeat("b c h w -> b c h w r", r=2)(x).dtype == dtype
    assert Softmax("b c h [w]")(x).dtype == dtype
    assert LogSoftmax("b [c] h w")(x).dtype == dtype
    mix = EinMix("b c h w -> b h w e", weight_shape="c e", bias_shape="e", c=3, e=2).to(dtype)
    assert mix.weight.dtype == dtype
    assert mix(x).dtype == dtype


def test_to_float64_keeps_values():
    mix = EinMix("b d -> b e", weight_shape="d e", bias_shape="e", d=3, e=2)
    double = copy.deepcopy(mix).to(torch.float64)
    x = torch.randn(4, 3, dtype=torch.float64)
    torch.testing.assert_close(double(x), mix(x.float()).double(), rtol=1e-6, atol=1e-6)


def test_meta_tensors_are_supported():
    mix = EinMix("b n d -> b n e", weight_shape="d e", bias_shape="e", d=3, e=2).to("meta")
    out = Reduce("b n e -> b e", "mean")(mix(torch.empty(2, 5, 3, device="meta")))
    assert out.device.type == "meta"
    assert out.shape == (2, 2)


@CUDA
def test_layers_on_cuda():
    model = torch.nn.Sequential(
        Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2),
        EinMix("b n d -> b n e", weight_shape="d e", bias_shape="e", d=12, e=8),
        Reduce("b n e -> b e", "max"),
        Repeat("b e -> b e r", r=2),
    )
    x = torch.randn(3, 3, 4, 4)
    expected = model(x)
    out = model.cuda()(x.cuda())
    assert out.device.type == "cuda"
    torch.testing.assert_close(out.cpu(), expected, rtol=1e-4, atol=1e-4)
    assert model.half()(x.cuda().half()).dtype == torch.float16


@pytest.mark.parametrize("name", ["tensorops.layers", "tensorops.layers.torch"])
def test_docstring_examples(name):
    module = importlib.import_module(name)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, optionflags=flags, verbose=False)
    assert result.failed == 0


# --- Check ---------------------------------------------------------------------------------------


def test_check_layer_returns_its_input_and_reports_a_bad_shape():
    from tensorops.layers.torch import Check

    layer = Check("b c (h 2) w", c=3)
    x = torch.randn(2, 3, 4, 5)
    assert layer(x) is x
    assert repr(layer) == "Check('b c (h 2) w', c=3)"
    with pytest.raises(tops.ShapeError, match="does not match c = 3"):
        layer(torch.randn(2, 4, 4, 5))
    with pytest.raises(tops.PatternError, match=r"^Check: check patterns have no '->'"):
        Check("b c -> c")
    model = torch.nn.Sequential(Check("b c", c=3), torch.nn.Linear(3, 2), Check("b 2"))
    assert model(torch.randn(4, 3)).shape == (4, 2)
    for copied in (copy.deepcopy(layer), pickle.loads(pickle.dumps(layer))):
        assert repr(copied) == repr(layer)
        assert copied(x) is x
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    fresh = torch.nn.Sequential(Check("b c", c=3), torch.nn.Linear(3, 2), Check("b 2"))
    fresh.load_state_dict(torch.load(buffer))
    torch.testing.assert_close(fresh(torch.ones(1, 3)), model(torch.ones(1, 3)))


def test_check_layer_compiles_in_one_graph():
    import torch._dynamo
    from tensorops.layers.torch import Check
    from torch._dynamo.testing import CompileCounter

    model = torch.nn.Sequential(Check("b c", c=3), torch.nn.Linear(3, 2), Check("b 2"))
    for dynamic in (None, True):
        torch._dynamo.reset()
        counter = CompileCounter()
        compiled = torch.compile(model, backend=counter, fullgraph=True, dynamic=dynamic)
        for batch in (9, 10, 11):
            x = torch.randn(batch, 3)
            torch.testing.assert_close(compiled(x), model(x))
        assert counter.frame_count == (2 if dynamic is None else 1)
    torch._dynamo.reset()
