"""The Paddle layers (`tensorops.layers.paddle`), in the Paddle test process.

Run with ``TENSOROPS_TEST_FRAMEWORK=paddle`` (``tests/test_frameworks.py``). Oracles: the
tensorops functions on NumPy arrays, NumPy itself, ``paddle.nn.Linear`` for EinMix's
training step and einops' Paddle EinMix for its initial parameters.
"""

from __future__ import annotations

import io
import math
import pickle

import numpy as np
import pytest

paddle = pytest.importorskip("paddle")

from tensorops.layers.paddle import (  # noqa: E402
    Check,
    EinMix,
    LogSoftmax,
    Rearrange,
    Reduce,
    Repeat,
    Softmax,
)

import tensorops as tops  # noqa: E402
from tests._seed import derived, rng, tolerance  # noqa: E402

# The first to_static that converts a call walks the members of every module ignored by
# paddle.jit.ignore_module (tensorops among them), and through them of torch where it is
# imported; inspecting torch.distributed's deprecated reduce_op warns (once a process).
pytestmark = pytest.mark.filterwarnings(
    r"ignore:`torch\.distributed\.reduce_op` is deprecated:FutureWarning"
)


def amax_of(x, axes):  # a module-level callable reduction: layers using it pickle
    return paddle.amax(x, axis=list(axes))


def tensor(a: np.ndarray):
    return paddle.to_tensor(np.array(a, copy=True))


# --- the layers compute what the functions compute ----------------------------------------------


def max_pool_2x2(x: np.ndarray) -> np.ndarray:
    return x.reshape(2, 3, 2, 2, 3, 2).max((3, 5))


def logsumexp_but_first(x: np.ndarray) -> np.ndarray:
    return np.log(np.exp(x).sum((1, 2, 3)))


CASES = [
    (Rearrange("b c h w -> b h w c"), lambda x: x.transpose(0, 2, 3, 1)),
    (
        Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2),
        lambda x: tops.rearrange(x, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2),
    ),
    (Rearrange("b ... c -> b c ..."), lambda x: np.moveaxis(x, -1, 1)),
    (Reduce("b c (h 2) (w 2) -> b c h w", "max"), max_pool_2x2),
    (Reduce("b c h w -> b c", "mean"), lambda x: x.mean((2, 3))),
    (Reduce(pattern="b ... -> b", reduction="logsumexp"), logsumexp_but_first),
    (Reduce("b c h w -> b w", amax_of), lambda x: x.max((1, 2))),
    (Repeat("b c h w -> b c h w r", r=2), lambda x: np.repeat(x[..., None], 2, -1)),
    (Softmax("b c h [w]"), lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    (Softmax("b c [h w]"), lambda x: np.exp(x) / np.exp(x).sum((2, 3), keepdims=True)),
    (LogSoftmax("b [c] h w"), lambda x: x - np.log(np.exp(x).sum(1, keepdims=True))),
    (Check("b c (h 2) w", c=3), lambda x: x),
]


@pytest.mark.parametrize(("layer", "expected"), CASES, ids=[repr(c[0]) for c in CASES])
def test_layers_match_numpy(layer, expected):
    x = rng("paddle layers").standard_normal((2, 3, 4, 6)).astype(np.float32)
    got = layer(tensor(x)).numpy()
    want = np.asarray(expected(x), dtype=np.float32)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **tolerance(np.float32, terms=x.size))


def small_model():
    return paddle.nn.Sequential(
        Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2),
        EinMix("b n d -> b n e", weight_shape="d e", bias_shape="e", d=12, e=5),
        Softmax("b n [e]"),
        Repeat("b n e -> b n e r", r=2),
        Reduce("b n e r -> b e", "mean"),
    )


@pytest.mark.filterwarnings(
    # paddle's own backward pass of a static program asks a value for its place
    # (pir_partial_program's full_like, paddle 3.3) and warns so. As an error, raised from
    # inside paddle's program builder, it crashes the process.
    "ignore:Tensor do not have 'place' interface:UserWarning"
)
def test_sequential_matches_numpy_and_to_static():
    paddle.seed(derived("paddle sequential"))
    model = small_model()
    x = rng("paddle sequential").standard_normal((3, 3, 8, 8)).astype(np.float32)
    weight, bias = model[1].weight.numpy(), model[1].bias.numpy()
    patches = x.reshape(3, 3, 4, 2, 4, 2).transpose(0, 2, 4, 3, 5, 1).reshape(3, 16, 12)
    mixed = patches @ weight + bias
    want = (np.exp(mixed) / np.exp(mixed).sum(-1, keepdims=True)).mean(1)
    np.testing.assert_allclose(model(tensor(x)).numpy(), want, **tolerance(np.float32, 12))
    for full_graph in (False, True):
        static = paddle.jit.to_static(small_model(), full_graph=full_graph)
        static.set_state_dict(model.state_dict())
        np.testing.assert_allclose(
            static(tensor(x)).numpy(), want, **tolerance(np.float32, terms=12)
        )


def test_einmix_steps_as_linear():
    data = rng("paddle linear")
    x, y = (tensor(data.standard_normal((16, 7)).astype(np.float32)) for _ in range(2))
    y = y[:, :4]
    mix = EinMix("b d -> b e", weight_shape="d e", bias_shape="e", d=7, e=4)
    linear = paddle.nn.Linear(7, 4)
    assert mix.bias.shape == [1, 4]  # einops' bias shape: broadcastable against the output
    linear.weight.set_value(mix.weight.numpy())  # paddle's Linear keeps (in, out) as einops
    linear.bias.set_value(mix.bias.numpy().reshape(4))
    for layer in (mix, linear):
        optimizer = paddle.optimizer.SGD(learning_rate=0.5, parameters=layer.parameters())
        loss = ((layer(x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
    assert not np.allclose(mix.weight.numpy(), linear.weight.numpy() * 0 + 1e9)
    np.testing.assert_allclose(
        mix.weight.numpy(), linear.weight.numpy(), **tolerance(np.float32, terms=16 * 7)
    )
    np.testing.assert_allclose(
        mix.bias.numpy().reshape(4), linear.bias.numpy(), **tolerance(np.float32, terms=16)
    )


def test_gradient_step_changes_the_weights():
    mix = EinMix("b d -> b e", weight_shape="d e", bias_shape="e", d=3, e=2)
    before = mix.weight.numpy().copy()
    optimizer = paddle.optimizer.SGD(learning_rate=0.1, parameters=mix.parameters())
    mix(paddle.ones([4, 3])).sum().backward()
    optimizer.step()
    # d(sum)/d(weight) is 4 everywhere (4 rows of ones): the step is exactly -0.4
    np.testing.assert_allclose(mix.weight.numpy(), before - 0.4, **tolerance(np.float32))


# --- state_dict, paddle.save, pickle, repr -----------------------------------------------------


def test_state_dict_round_trips(tmp_path):
    model, fresh = small_model(), small_model()
    assert sorted(model.state_dict()) == ["1.bias", "1.weight"]
    fresh.set_state_dict(model.state_dict())
    x = tensor(rng("paddle state").standard_normal((2, 3, 8, 8)).astype(np.float32))
    np.testing.assert_array_equal(fresh(x).numpy(), model(x).numpy())
    path = str(tmp_path / "model.pdparams")
    paddle.save(model.state_dict(), path)
    loaded = small_model()
    loaded.set_state_dict(paddle.load(path))
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())
    buffer = io.BytesIO()
    paddle.save(model.state_dict(), buffer)
    assert buffer.tell() > 0
    assert Rearrange("a b -> b a").state_dict() == {}


LAYERS = [
    ("Rearrange('b c h w -> b h w c')", (2, 3, 4, 5)),
    ("Reduce('b c (h 2) (w 2) -> b c h w', 'max')", (2, 3, 4, 4)),
    ("Reduce('b c -> b', amax_of)", (2, 3)),
    ("Repeat('b c -> b c r', r=3)", (2, 3)),
    (
        "EinMix('b n d_in -> b n d_out', weight_shape='d_in d_out', bias_shape='d_out', "
        "d_in=8, d_out=4)",
        (2, 5, 8),
    ),
    ("EinMix('b (h w) c -> b h w c2', weight_shape='c c2', h=4, c=3, c2=5)", (2, 12, 3)),
    ("Softmax('b h i [j]')", (2, 3, 4, 5)),
    ("LogSoftmax('b [h w] c -> b c [h w]')", (2, 3, 4, 5)),
    ("Check('b c', c=3)", (2, 3)),
]
NAMESPACE = {
    "Rearrange": Rearrange,
    "Reduce": Reduce,
    "Repeat": Repeat,
    "EinMix": EinMix,
    "Softmax": Softmax,
    "LogSoftmax": LogSoftmax,
    "Check": Check,
    "amax_of": amax_of,
}


@pytest.mark.parametrize(("text", "shape"), LAYERS)
def test_repr_and_pickle(text, shape):
    layer = eval(text, NAMESPACE)
    assert repr(layer) == text
    assert text in repr(paddle.nn.Sequential(layer))
    x = tensor(rng("paddle pickle", text).standard_normal(shape).astype(np.float32))
    clone = pickle.loads(pickle.dumps(layer))
    assert repr(clone) == text
    np.testing.assert_array_equal(clone(x).numpy(), layer(x).numpy())


# --- EinMix's parameters: einops' under one seed ------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "weight_shape", "bias_shape", "lengths", "shape"),
    [
        ("b t c -> b t d", "c d", "d", {"c": 32, "d": 48}, (2, 3, 32)),
        ("b h c -> b h e", "h c e", "h e", {"h": 4, "c": 16, "e": 8}, (2, 4, 16)),
        ("b (h w) c -> b h w e", "c e", None, {"h": 2, "w": 3, "c": 5, "e": 7}, (2, 6, 5)),
        ("b n c -> b c n2", "n n2", "n2", {"n": 6, "n2": 9}, (2, 6, 3)),
    ],
)
def test_einmix_starts_from_einops_parameters(pattern, weight_shape, bias_shape, lengths, shape):
    einops_paddle = pytest.importorskip("einops.layers.paddle")
    seed = derived("paddle einops", pattern)
    paddle.seed(seed)
    theirs = einops_paddle.EinMix(pattern, weight_shape, bias_shape, **lengths)
    paddle.seed(seed)
    ours = EinMix(pattern, weight_shape, bias_shape, **lengths)
    np.testing.assert_array_equal(ours.weight.numpy(), theirs.weight.numpy())
    assert (ours.bias is None) == (theirs.bias is None)
    if bias_shape is not None:
        np.testing.assert_array_equal(ours.bias.numpy(), theirs.bias.numpy())
    ours.set_state_dict(theirs.state_dict())  # einops checkpoints load
    x = tensor(rng("paddle einops", pattern).standard_normal(shape).astype(np.float32))
    np.testing.assert_allclose(ours(x).numpy(), theirs(x).numpy(), **tolerance(np.float32, 32))


def test_einmix_bounds_follow_fan_in():
    paddle.seed(derived("paddle bounds"))
    mix = EinMix("b h c -> b h e", weight_shape="h c e", bias_shape="h e", h=4, c=256, e=64)
    assert mix.fan_in == 256
    for parameter, bound in ((mix.weight, math.sqrt(3 / 256)), (mix.bias, 1 / math.sqrt(256))):
        values = parameter.numpy()
        assert np.abs(values).max() <= bound
        assert np.abs(values).max() > 0.9 * bound


# --- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Rearrange("b c -> b d"), "Rearrange: axis 'c' is missing on the right"),
        (lambda: Rearrange("b (c -> c"), "Rearrange: unclosed parenthesis"),
        (lambda: Reduce("b c -> b", "median"), "Reduce: unknown reduction 'median'"),
        (lambda: Repeat("b -> b c"), "Repeat: the length of new axis 'c' is not given"),
        (lambda: EinMix("b c -> b d", weight_shape="c d", c=3), "weight axis 'd' is not given"),
        (lambda: EinMix("b c -> b d", "c d", "x", c=3, d=2), "bias axis 'x' is not in the output"),
        (lambda: EinMix("b c -> b d", "c d", c=3, d=2, q=1), "q=1 is not used"),
        (lambda: Softmax("b h i j"), "Softmax: the axes to normalize must be in brackets"),
        (lambda: Check("b c -> c"), "Check: check patterns have no '->'"),
        (lambda: Rearrange(), "Rearrange: missing the argument 'pattern'"),
    ],
)
def test_bad_layers_fail_when_built(build, message):
    with pytest.raises(tops.TensorOpsError) as info:
        build()
    assert message in str(info.value)
    assert "  input:" not in str(info.value)


def _without_inputs(error: BaseException) -> list[str]:
    """The message's lines but those describing the inputs (they name the backend)."""
    return [line for line in str(error).splitlines() if not line.startswith("  input")]


@pytest.mark.parametrize(
    ("layer", "function"),
    [
        (Rearrange("b c h w -> b h w c"), lambda x: tops.rearrange(x, "b c h w -> b h w c")),
        (Rearrange("b (h k) -> b h k", k=4), lambda x: tops.rearrange(x, "b (h k) -> b h k", k=4)),
        (Reduce("b c h -> b c", "max"), lambda x: tops.reduce(x, "b c h -> b c", "max")),
        (Softmax("b h [j]"), lambda x: tops.softmax(x, "b h [j]")),
    ],
)
def test_bad_input_raises_the_functions_error(layer, function):
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(tops.TensorOpsError) as expected:
        function(x)
    with pytest.raises(type(expected.value)) as eager:
        layer(tensor(x))
    assert _without_inputs(eager.value) == _without_inputs(expected.value)


@pytest.mark.filterwarnings("ignore:Tensor do not have 'place' interface:UserWarning")
def test_a_model_with_an_unknown_batch_saves_and_loads(tmp_path):
    from paddle.static import InputSpec

    paddle.seed(derived("paddle saved"))
    model = small_model()
    model.eval()
    spec = [InputSpec([None, 3, 8, 8], "float32")]  # the batch is -1 in the program
    static = paddle.jit.to_static(model, input_spec=spec, full_graph=True)
    path = str(tmp_path / "model")
    paddle.jit.save(static, path, input_spec=spec)
    loaded = paddle.jit.load(path)
    for batch in (1, 3, 5):
        x = tensor(rng("paddle saved", batch).standard_normal((batch, 3, 8, 8)).astype(np.float32))
        np.testing.assert_allclose(
            loaded(x).numpy(), model(x).numpy(), **tolerance(np.float32, terms=12)
        )
