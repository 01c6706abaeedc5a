"""The layer-family contract: layers/_family.py, _docs.py, _description.py, _einmix.py.

No framework is needed: the family here works on NumPy arrays, written as
docs/architecture.md says a family is written (a module class, the mixins first, a
parameter hook and a forward pass). Oracles: the tensorops functions, and a NumPy
generator drawing in einops' order. The real families run the same contract in
tests/test_layers.py and tests/frameworks/.
"""

from __future__ import annotations

import numpy as np
import pytest
from tensorops.layers import _docs, _family
from tensorops.layers._description import LayerSpec, describe, fitting_shape
from tensorops.layers._einmix import describe_einmix

import tensorops as tops
from tests._seed import rng


class _Module:
    """A framework's module class: it records the keywords the mixin starts it with."""

    def __init__(self, **keywords: object) -> None:
        self.started_with = keywords

    def __call__(self, x):
        return self._description(x, *self._parameter_values())


class Rearrange(_family.RearrangeLayer, _Module):
    pass


class Reduce(_family.ReduceLayer, _Module):
    pass


class Repeat(_family.RepeatLayer, _Module):
    pass


class Softmax(_family.SoftmaxLayer, _Module):
    pass


class LogSoftmax(_family.LogSoftmaxLayer, _Module):
    pass


class Check(_family.CheckLayer, _Module):
    pass


class EinMix(_family.EinMixLayer, _Module):
    _draws_with = "generator"

    def _new_parameter(self, name, shape, bound, draws):
        self.drawn = [*getattr(self, "drawn", []), (name, shape, bound)]
        return draws.uniform(-bound, bound, shape)


X = rng("layer family").standard_normal((2, 6, 4))

CASES = [
    (
        Rearrange("b (h c) w -> b h w c", h=2),
        lambda x: tops.rearrange(x, "b (h c) w -> b h w c", h=2),
    ),
    (Reduce("b c w -> b w", "max"), lambda x: x.max(1)),
    (Reduce(pattern="b c w -> b c", reduction="mean"), lambda x: x.mean(2)),
    (Repeat("b c w -> b c w r", r=3), lambda x: np.repeat(x[..., None], 3, -1)),
    (Softmax("b c [w]"), lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)),
    (LogSoftmax("b [c] w"), lambda x: x - np.log(np.exp(x).sum(1, keepdims=True))),
    (Check("b c w", c=6), lambda x: x),
]


@pytest.mark.parametrize(("layer", "expected"), CASES, ids=[repr(c[0]) for c in CASES])
def test_each_layer_runs_its_function(layer, expected):
    np.testing.assert_allclose(layer(X), expected(X), rtol=1e-12, atol=1e-12)
    assert repr(eval(repr(layer), globals())) == repr(layer)


def test_the_attributes_are_the_descriptions():
    layer = Reduce("b (h 2) -> b h", "max", h=3)
    assert (layer.pattern, layer.reduction, dict(layer.lengths)) == (
        "b (h 2) -> b h",
        "max",
        {"h": 3},
    )
    assert isinstance(layer._description, LayerSpec)
    assert layer._description.arguments == {"pattern": "b (h 2) -> b h", "reduction": "max"}
    mix = EinMix(
        "b (h c) -> b h e", "h c e", "e", h=2, c=3, e=4, generator=np.random.default_rng(0)
    )
    assert (mix.pattern, mix.weight_shape, mix.bias_shape) == ("b (h c) -> b h e", "h c e", "e")
    assert (mix.fan_in, mix.einsum_pattern, dict(mix.lengths)) == (
        3,
        "adb,dbc->adc",
        {"h": 2, "c": 3, "e": 4},
    )
    assert type(mix).fan_in.name == "fan_in"  # read on the class: the descriptor itself
    with pytest.raises(AttributeError, match="'pattern' is read from the layer's description"):
        layer.pattern = "b h -> h b"


def test_einmix_draws_its_parameters_through_the_hook_in_einops_order():
    mix = EinMix("b n d -> b n e", "d e", "e", d=4, e=3, generator=np.random.default_rng(7))
    bound = 1 / np.sqrt(4)
    assert mix.drawn == [("weight", (4, 3), np.sqrt(3) * bound), ("bias", (1, 1, 3), bound)]
    expected = np.random.default_rng(7)
    np.testing.assert_array_equal(
        mix.weight, expected.uniform(-np.sqrt(3) * bound, np.sqrt(3) * bound, (4, 3))
    )
    np.testing.assert_array_equal(mix.bias, expected.uniform(-bound, bound, (1, 1, 3)))
    x = rng("layer family mix").standard_normal((2, 5, 4))
    np.testing.assert_allclose(mix(x), x @ mix.weight + mix.bias, rtol=1e-12)
    plain = EinMix("b d -> b e", weight_shape="d e", d=4, e=3, generator=np.random.default_rng(7))
    assert plain.bias is None
    assert [name for name, *_ in plain.drawn] == ["weight"]


def test_einmix_without_its_random_numbers_names_the_argument():
    with pytest.raises(tops.ArgumentError) as info:
        EinMix("b d -> b e", weight_shape="d e", d=4, e=3)
    assert isinstance(info.value, TypeError)
    assert str(info.value).startswith("EinMix: missing the argument 'generator'\n")
    assert "EinMix(..., generator=...)" in str(info.value)


def test_a_family_without_the_parameter_hook_says_so():
    class Bare(_family.EinMixLayer, _Module):
        pass

    with pytest.raises(NotImplementedError, match="Bare does not create its parameters"):
        Bare("b d -> b e", weight_shape="d e", d=4, e=3)


def test_the_framework_keywords_go_to_the_framework_class():
    class Named(_family.RearrangeLayer, _Module):
        _keywords = ("name",)

    layer = Named("a b -> b a", name="transpose")
    assert layer.started_with == {"name": "transpose"}
    assert repr(layer) == "Named('a b -> b a')"  # a subclass names itself
    assert Rearrange("a b -> b a").started_with == {}
    with pytest.raises(
        tops.TensorOpsError, match=r"^Rearrange: axis length name='transpose' is not"
    ):
        Rearrange("a b -> b a", name="transpose")  # elsewhere, an axis length


def test_the_probes_a_family_gives_run_the_check():
    seen = []

    def probe(shape):
        seen.append(shape)
        return np.zeros(shape)

    class Probed(_family.EinMixLayer, _Module):
        _probe = probe
        _parameter_probe = probe

        def _new_parameter(self, name, shape, bound, draws):
            return np.zeros(shape)

    class ProbedReduce(_family.ReduceLayer, _Module):
        _probe = probe

    Probed("b (h c) -> b h e", "h c e", "e", h=2, c=3, e=4)
    ProbedReduce("b (h 2) ... -> b h", "sum")
    assert seen == [(1, 6), (2, 3, 4), (1, 1, 4), (1, 2)]
    with pytest.raises(tops.TensorOpsError) as info:
        ProbedReduce("b (h 2) -> b h", "median")
    assert str(info.value).startswith("ProbedReduce: unknown reduction 'median'")


def test_extra_positional_arguments_name_the_layer():
    with pytest.raises(TypeError, match=r"^Rearrange\(\) takes the pattern positionally"):
        Rearrange("a b -> b a", "b")


# --- the descriptions -------------------------------------------------------------------------


def test_an_einmix_plan_lists_its_parameters_and_runs():
    plan = describe_einmix("b n d -> b n e", "d e", None, {"d": 4, "e": 3})
    assert plan.parameters == (
        ("weight", (4, 3), plan.weight_bound),
        ("bias", None, plan.bias_bound),
    )
    assert plan.arguments == {
        "pattern": "b n d -> b n e",
        "weight_shape": "d e",
        "bias_shape": None,
    }
    x, weight = np.ones((2, 5, 4)), np.arange(12.0).reshape(4, 3)
    np.testing.assert_array_equal(plan(x, weight, None), np.broadcast_to(weight.sum(0), (2, 5, 3)))
    assert describe("Check", ("b c",), {"c": 3}).parameters == ()


@pytest.mark.parametrize(
    ("pattern", "lengths", "shape", "unknown", "expected"),
    [
        # the probe: one dimension per element, '...' none, unknown lengths 1
        ("b (h 2) ... c", {"c": 3}, None, 1, (1, 2, 3)),
        ("b [c] (h w)", {"w": 4}, None, 1, (1, 1, 4)),
        ("b (a + c) -> b a c", {"a": 2}, None, 1, (1, 3)),
        ("b (h w)", {"h": 0, "w": 2.0}, None, 1, (1, 1)),  # not positive integers: unknown
        ("b (c", {}, None, 1, ()),  # does not parse: the op reports it
        # Keras' stand-ins: known dimensions kept, unknown ones made to fit
        ("b (h 2) ... c", {"c": 3}, (None, None, None, None, 3), 5, (5, 10, 5, 5, 3)),
        ("b (a + c) -> b a c", {"a": 2}, (None, None), 7, (7, 9)),
        ("b (h w) c", {"h": 2, "w": 3}, (None, None, 4), 2, (2, 6, 4)),
        ("b c", {}, (None, None, None), 3, (3, 3, 3)),  # the wrong rank: the op reports it
        ("b (c", {}, (None, 4), 3, (3, 4)),
    ],
)
def test_shapes_that_fit_a_pattern(pattern, lengths, shape, unknown, expected):
    assert fitting_shape(pattern, lengths, shape, unknown) == expected


# --- the docstrings ---------------------------------------------------------------------------

OWN = """`tensorops.reduce` as a layer.

    A note of the family's.

    Examples:
        >>> 1 + 1
        2
    """


def test_a_docstring_is_the_familys_text_around_the_table():
    text = _docs.layer_docstring("Reduce", "torch", OWN)
    summary, note, args, raises, examples = text.split("\n\n")
    assert (summary, note) == ("`tensorops.reduce` as a layer.", "A note of the family's.")
    assert args.startswith('Args:\n    pattern: e.g. ``"b c (h 2) (w 2) -> b c h w"``')
    assert '\n    reduction: ``"sum"``' in args
    assert args.endswith("**lengths: lengths of axes that cannot be inferred from the input shape.")
    assert raises.startswith(
        "Raises:\n    TensorOpsError: when built, if the pattern, the reduction"
    )
    assert examples == "Examples:\n    >>> 1 + 1\n    2\n"
    assert max(len(line) for line in text.splitlines()) <= 88


def test_the_families_document_their_own_arguments():
    flax = _docs.layer_docstring("Repeat", "flax", OWN)
    assert "\nAttributes:\n    pattern: " in flax
    assert "\n    sizes: lengths of new axes" in flax
    assert "einops' dict ``sizes``" in flax
    assert "**lengths" not in flax
    keras = _docs.layer_docstring("Repeat", "keras", OWN)
    assert "Keras' own ``name``, ``dtype`` and ``trainable``." in " ".join(keras.split())
    einmix = _docs.layer_docstring("EinMix", "nnx", OWN)
    assert einmix.index("is a linear layer") < einmix.index("A note of the family's.")
    for kind in _docs.LAYERS:  # every layer of every family has its text
        for family in _docs.FAMILIES:
            assert "Raises:\n    TensorOpsError" in _docs.layer_docstring(kind, family, OWN)


def test_a_docstring_without_examples_is_refused():
    with pytest.raises(ValueError, match="the docstring of torch's Check has no 'Examples:'"):
        _docs.layer_docstring("Check", "torch", "`tensorops.check` as a layer.")


def test_only_a_familys_public_layers_get_their_docstrings_made():
    class Check(_family.CheckLayer, _Module):
        """`tensorops.check` as a layer.

        Examples:
            >>> 1
            1
        """

        __module__ = "tensorops.layers.torch"

    class Checked(_family.CheckLayer, _Module):  # a subclass under another name
        """Mine."""

        __module__ = "tensorops.layers.torch"

    class Private(_family.CheckLayer, _Module):
        """Mine."""

        __module__ = "tensorops.layers._family"

    own = "`tensorops.check` as a layer.\n\nExamples:\n    >>> 1\n    1\n"
    assert Check.__doc__ == _docs.layer_docstring("Check", "torch", own)
    assert "\nArgs:\n    pattern: the input's axes" in Check.__doc__
    assert (Checked.__doc__, Private.__doc__) == ("Mine.", "Mine.")
