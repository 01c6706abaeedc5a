"""Autograd: float64 gradcheck of every differentiable op and of EinMix."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

import torch
from tensorops.layers.torch import EinMix
from torch.autograd import gradcheck

import tensorops as tops


def _x(*shape):
    return torch.randn(*shape, dtype=torch.float64, requires_grad=True)


def test_rearrange():
    assert gradcheck(lambda x: tops.rearrange(x, "b (h p) w -> b h (w p)", p=2), (_x(2, 4, 3),))


@pytest.mark.parametrize("reduction", ["sum", "mean", "max", "min", "prod"])
def test_reduce(reduction):
    # random values: ties in max / min (where the gradient is not defined) have probability 0
    assert gradcheck(lambda x: tops.reduce(x, "b (h 2) w -> b w", reduction), (_x(2, 4, 3),))


def test_reduce_callable():
    def fn(x):
        return tops.reduce(x, "a b c -> a", lambda t, axes: torch.logsumexp(t, dim=axes))

    assert gradcheck(fn, (_x(2, 3, 4),))


def test_repeat():
    assert gradcheck(lambda x: tops.repeat(x, "a b -> a (b r) k", r=2, k=3), (_x(2, 3),))


def test_einsum_two_operands():
    assert gradcheck(
        lambda a, b: tops.einsum("b i d, b j d -> b i j", a, b), (_x(2, 3, 4), _x(2, 5, 4))
    )


def test_einsum_three_operands_with_a_diagonal():
    def fn(a, b, c):
        return tops.einsum("ii,ij,jk->k", a, b, c)

    assert gradcheck(fn, (_x(3, 3), _x(3, 4), _x(4, 2)))


def test_pack_unpack():
    def fn(a, b):
        packed, shapes = tops.pack([a, b], "b * d")
        first, second = tops.unpack(packed * 2, shapes, "b * d")
        return first, second

    assert gradcheck(fn, (_x(2, 4), _x(2, 3, 4)))


def test_einmix():
    mix = EinMix("b (h w) c -> b h w e", weight_shape="c e", bias_shape="e", h=2, c=3, e=4)
    mix = mix.double()
    x = _x(2, 6, 3)

    def fn(x, weight, bias):
        return torch.func.functional_call(mix, {"weight": weight, "bias": bias}, (x,))

    assert mix.bias is not None
    assert gradcheck(
        fn, (x, mix.weight.detach().requires_grad_(), mix.bias.detach().requires_grad_())
    )


# --- softmax, the new reductions, indexing --------------------------------------------------


@pytest.mark.parametrize(
    "pattern", ["b h [i] j", "b h [i j]", "b [h] i [j]", "b [h i] j -> b j [h i]"]
)
def test_softmax(pattern):
    x = _x(2, 3, 4, 2)
    assert gradcheck(lambda x: tops.softmax(x, pattern), (x,))
    assert gradcheck(lambda x: tops.log_softmax(x, pattern), (x,))


@pytest.mark.parametrize("reduction", ["logsumexp", "var", "std"])
def test_new_reductions(reduction):
    assert gradcheck(lambda x: tops.reduce(x, "b (h 2) w -> b w", reduction), (_x(2, 4, 3),))


def _index(high, *shape):
    return torch.randint(0, high, shape)


@pytest.mark.parametrize(
    ("pattern", "shape", "index"),
    [
        ("b [t] c, b p -> b p c", (2, 5, 3), _index(5, 2, 4)),
        ("[v] d, b n -> b n d", (6, 3), _index(6, 2, 3)),
        (
            "b [h w] c, b p [2] -> p c b",
            (2, 3, 4, 2),
            torch.stack([_index(3, 2, 5), _index(4, 2, 5)], -1),
        ),
    ],
)
def test_get_at(pattern, shape, index):
    assert gradcheck(lambda x: tops.get_at(x, index, pattern), (_x(*shape),))


SCATTER = "b [t] c, b p, b p c -> b [t] c"


def test_set_at():
    index = torch.tensor([[0, 3, 1], [4, 2, 0]])  # no repeats: which value is written is defined
    assert gradcheck(lambda x, v: tops.set_at(x, index, v, SCATTER), (_x(2, 5, 3), _x(2, 3, 3)))


def test_add_at():
    index = torch.tensor([[0, 3, 3], [4, 4, 4]])  # repeats add up
    assert gradcheck(lambda x, v: tops.add_at(x, index, v, SCATTER), (_x(2, 5, 3), _x(2, 3, 3)))
    assert gradcheck(
        lambda x, v: tops.add_at(x, index[0], v, "[t] c, p, c -> c [t]"), (_x(5, 3), _x(3))
    )
