"""einops' calling conventions: every keyword form einops accepts, against einops itself.

The rule: ``pattern=`` (and ``tensor=``) is the argument only when it was not given
positionally; when it was, a keyword of that name is the length of an axis.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import tensorops as tops

einops = pytest.importorskip("einops")
torch = pytest.importorskip("torch")
einops_layers = pytest.importorskip("einops.layers.torch")

from tensorops.layers import torch as layers  # noqa: E402

X = np.random.default_rng(0).standard_normal((2, 6, 4))


def _same(actual, expected) -> None:
    """Of one type and shape, equal up to a few ulps of the dtype (sums may be ordered apart)."""
    assert type(actual) is type(expected)
    actual, expected = tops.asnumpy(actual), tops.asnumpy(expected)
    assert actual.shape == expected.shape
    eps = 64 * np.finfo(expected.dtype).eps
    np.testing.assert_allclose(actual, expected, rtol=eps, atol=eps * np.abs(expected).max())


# each called with tensorops and with einops as `m`, on a NumPy array and a torch tensor
_FUNCTION_FORMS = {
    "rearrange-keywords": lambda m, x: m.rearrange(tensor=x, pattern="b (h c) w -> b h w c", h=2),
    "rearrange-pattern": lambda m, x: m.rearrange(x, pattern="b (h c) w -> b h w c", c=3),
    "reduce-keywords": lambda m, x: m.reduce(tensor=x, pattern="b c w -> b w", reduction="max"),
    "reduce-pattern": lambda m, x: m.reduce(x, pattern="b c (w 2) -> b c w", reduction="mean"),
    "reduce-reduction": lambda m, x: m.reduce(x, "b c w -> c", reduction="sum"),
    "reduce-repeat": lambda m, x: m.reduce(x, "b c w -> b c w s", "repeat", s=3),
    "reduce-repeat-keywords": lambda m, x: m.reduce(
        tensor=x, pattern="b ... -> (b s) ...", reduction="repeat", s=2
    ),
    "reduce-rearrange": lambda m, x: m.reduce(x, pattern="b c w -> w c b", reduction="rearrange"),
    "repeat-keywords": lambda m, x: m.repeat(tensor=x, pattern="b c w -> b c w r", r=2),
    "repeat-pattern": lambda m, x: m.repeat(x, pattern="b c w -> b (c r) w", r=2),
    "einsum-pattern": lambda m, x: (
        m.einsum(x, x, pattern="b c w, b d w -> b c d")
        if m is tops
        else m.einsum(x, x, "b c w, b d w -> b c d")
    ),  # einops: positional only
    "pack-keywords": lambda m, x: m.pack(tensors=[x, x[:, 0]], pattern="b * w")[0],
    "unpack-keywords": lambda m, x: m.unpack(tensor=x, packed_shapes=[(2,), (4,)], pattern="b * w")[
        1
    ],
    "parse-shape-keywords": lambda m, x: m.parse_shape(x=x, pattern="b _ w"),
}


@pytest.mark.parametrize("family", ["numpy", "torch"])
@pytest.mark.parametrize("form", _FUNCTION_FORMS)
def test_keyword_forms_match_einops(form, family):
    call = _FUNCTION_FORMS[form]
    x = X if family == "numpy" else torch.from_numpy(X)
    actual, expected = call(tops, x), call(einops, x)
    if isinstance(expected, dict):
        assert actual == expected
    else:
        _same(actual, expected)


@pytest.mark.parametrize(
    ("call", "renamed"),
    [
        (
            lambda m: tops.rearrange(X, "b (pattern c) w -> b pattern c w", pattern=2),
            lambda: einops.rearrange(X, "b (p c) w -> b p c w", p=2),
        ),
        (
            lambda m: tops.repeat(X, "b c w -> b c w tensor", tensor=2),
            lambda: einops.repeat(X, "b c w -> b c w t", t=2),
        ),
        (
            lambda m: tops.reduce(X, "b (c reduction) w -> b c", "max", reduction=3),
            lambda: einops.reduce(X, "b (c r) w -> b c", "max", r=3),
        ),
        (
            lambda m: tops.einsum(X, X, "b (pattern c) w, b d w -> b c d", pattern=2),
            lambda: einops.einsum(X.reshape(2, 2, 3, 4), X, "b p c w, b d w -> b c d"),
        ),
        (
            lambda m: layers.Rearrange("b (pattern c) w -> b c w pattern", pattern=3)(
                torch.from_numpy(X)
            ),
            lambda: einops.rearrange(torch.from_numpy(X), "b (p c) w -> b c w p", p=3),
        ),
    ],
    ids=["rearrange", "repeat", "reduce", "einsum", "Rearrange"],
)
def test_a_keyword_beside_a_positional_argument_is_an_axis(call, renamed):
    _same(call(tops), renamed())


def _copy_state(layer, reference):
    layer.load_state_dict(reference.state_dict())
    return layer


_LAYER_FORMS = {
    "Rearrange": (
        lambda: layers.Rearrange(pattern="b (h c) w -> b h w c", h=2),
        lambda: einops_layers.Rearrange(pattern="b (h c) w -> b h w c", h=2),
    ),
    "Reduce": (
        lambda: layers.Reduce(pattern="b c (w 2) -> b c w", reduction="max"),
        lambda: einops_layers.Reduce(pattern="b c (w 2) -> b c w", reduction="max"),
    ),
    "Reduce-repeat": (
        lambda: layers.Reduce(pattern="b ... -> (b s) ...", reduction="repeat", s=3),
        lambda: einops_layers.Reduce(pattern="b ... -> (b s) ...", reduction="repeat", s=3),
    ),
    "Reduce-repeat-positional": (
        lambda: layers.Reduce("b c w -> b c w s", "repeat", s=2),
        lambda: einops_layers.Reduce("b c w -> b c w s", "repeat", s=2),
    ),
    "Repeat": (
        lambda: layers.Repeat(pattern="b c w -> b c (w r)", r=2),
        lambda: einops_layers.Reduce("b c w -> b c (w r)", "repeat", r=2),
    ),
    "EinMix": (
        lambda: layers.EinMix(
            pattern="b c w -> b c d", weight_shape="w d", bias_shape="d", w=4, d=5
        ),
        lambda: einops_layers.EinMix(
            pattern="b c w -> b c d", weight_shape="w d", bias_shape="d", w=4, d=5
        ),
    ),
}


def _layer_pair(form):
    make, make_reference = _LAYER_FORMS[form]
    reference = make_reference()
    return _copy_state(make(), reference), reference


@pytest.mark.parametrize("form", _LAYER_FORMS)
def test_layer_keyword_forms_match_einops(form):
    layer, reference = _layer_pair(form)
    x = torch.from_numpy(X).float()
    _same(layer(x), reference(x))


def _all_forms(m, x, w):
    """Every keyword form of `m`'s functions in one function, for one compiled graph."""
    a = m.rearrange(tensor=x, pattern="b (h c) w -> b h w c", h=2)
    b = m.reduce(x, pattern="b c w -> b w", reduction="max")
    c = m.reduce(tensor=x, pattern="b ... -> (b s) ...", reduction="repeat", s=2)
    d = m.repeat(x, pattern="b c w -> b c w r", r=2)
    e = (
        m.einsum(x, w, pattern="b c w, w d -> b c d")
        if m is tops
        else m.einsum(x, w, "b c w, w d -> b c d")
    )
    packed, shapes = m.pack(tensors=[x, x], pattern="b c *")
    f = m.unpack(tensor=packed, packed_shapes=shapes, pattern="b c *")[1]
    return a.sum() + b.sum() + c.sum() + d.sum() + e.sum() + f.sum(), (a, b, c, d, e, f)


@pytest.mark.slow
def test_keyword_forms_compile_as_in_einops():
    x, w = torch.from_numpy(X).float(), torch.ones(4, 3)
    expected = _all_forms(einops, x, w)
    for dynamic in (False, True):
        torch._dynamo.reset()
        compiled = torch.compile(
            lambda x, w: _all_forms(tops, x, w), backend="eager", fullgraph=True, dynamic=dynamic
        )
        actual = compiled(x, w)
        for got, want in zip(actual[1], expected[1], strict=True):
            _same(got, want)


@pytest.mark.slow
def test_keyword_layers_compile_as_in_einops():
    x = torch.from_numpy(X).float()
    for form in _LAYER_FORMS:
        torch._dynamo.reset()
        layer, reference = _layer_pair(form)
        compiled = torch.compile(layer, backend="eager", fullgraph=True)
        _same(compiled(x), reference(x))


@pytest.mark.parametrize(
    ("call", "op", "reason"),
    [
        (lambda: tops.rearrange(pattern="a b c -> c b a"), "rearrange", "'tensor'"),
        (lambda: tops.rearrange(X), "rearrange", "'pattern'"),
        (lambda: tops.reduce(tensor=X, reduction="sum"), "reduce", "'pattern'"),
        (lambda: tops.repeat(), "repeat", "'tensor'"),
        (lambda: layers.Rearrange(), "Rearrange", "'pattern'"),
        (lambda: layers.Reduce(reduction="max"), "Reduce", "'pattern'"),
        (lambda: layers.Repeat(r=2), "Repeat", "'pattern'"),
        (lambda: layers.EinMix(weight_shape="w d", d=2), "EinMix", "'pattern'"),
        (lambda: layers.EinMix(pattern="b w -> b d", d=2), "EinMix", "'weight_shape'"),
    ],
)
def test_a_missing_argument_names_the_public_function(call, op, reason):
    with pytest.raises(tops.ArgumentError) as error:
        call()
    assert isinstance(error.value, TypeError)
    assert error.value.op == op
    assert str(error.value).startswith(f"{op}: missing the argument {reason}\n")


@pytest.mark.parametrize("layer", [layers.Rearrange, layers.Repeat, layers.Softmax])
def test_extra_positional_arguments_name_the_layer(layer):
    with pytest.raises(TypeError, match=re.escape(f"{layer.__name__}() takes the pattern")):
        layer("b c -> c b", "b")


def test_unpack_names_its_arguments_as_einops():
    with pytest.raises(TypeError, match=r"unpack\(\) missing 1 required positional argument"):
        tops.unpack(tensor=X, pattern="b * w")


def test_repeat_as_a_reduction_reports_as_repeat_does():
    pattern = "b c w -> b c w s"
    with pytest.raises(tops.TensorOpsError) as as_reduction:
        tops.reduce(X, pattern, "repeat")
    with pytest.raises(tops.TensorOpsError) as as_repeat:
        tops.repeat(X, pattern)
    assert as_reduction.value.reason == as_repeat.value.reason
    assert as_reduction.value.op == "reduce"
    with pytest.raises(tops.TensorOpsError, match=r"^Reduce: "):
        layers.Reduce(pattern=pattern, reduction="repeat")


def test_an_equation_keyword_needs_no_positional_equation():
    # a str equation given positionally: pattern= is an axis length, here one of no axis
    with pytest.raises(tops.TensorOpsError):
        tops.einsum(X, X, "b c w, b d w -> b c d", pattern="b c w, b d w -> b c d")
    with pytest.raises(tops.ArgumentError, match="the equation must be a str"):
        tops.einsum(X, X)


@pytest.mark.slow
@pytest.mark.parametrize(
    "fn",
    [
        lambda x: tops.reduce(tensor=x, pattern="b (c 4) w -> b c", reduction="repeat"),
        lambda x: tops.rearrange(tensor=x),
        lambda x: tops.repeat(pattern="b c w -> b c w r", r=2),
    ],
    ids=["bad-pattern", "no-pattern", "no-tensor"],
)
def test_errors_of_keyword_calls_inside_compile_are_the_eager_errors(fn):
    x = torch.from_numpy(X)
    with pytest.raises(tops.TensorOpsError) as eager:
        fn(x)
    torch._dynamo.reset()
    with pytest.raises(tops.TensorOpsError) as traced:
        torch.compile(fn, backend="eager", fullgraph=True)(x)
    assert str(traced.value) == str(eager.value)
    assert isinstance(traced.value, type(eager.value))
