"""Every torch layer under ``torch.jit.script``, alone and in ``nn.Sequential``; einops beside.

Each layer is scripted, run at three input sizes (batch, spatial sizes and the
dimensions under ``...`` varying) against the eager layer and, where einops has the
layer, against einops' scripted layer of the same pattern, then saved with
``torch.jit.save``, loaded and run again. Errors at run time are TorchScript's
(``torch.jit.Error``, a RuntimeError) with the layer, its pattern and the dimension
in the message.
"""

from __future__ import annotations

import copy
import io
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
einops_torch = pytest.importorskip("einops.layers.torch")

from tensorops.layers import torch as layers  # noqa: E402

import tensorops as tops  # noqa: E402
from tests import strategies  # noqa: E402

nn = torch.nn


@contextmanager
def _quiet() -> Iterator[None]:
    """torch >= 2.14 says the TorchScript API is deprecated: the mode is tested all the same."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        yield


def _script(module: Any) -> Any:
    with _quiet():
        return torch.jit.script(module)


def _reloaded(scripted: Any) -> Any:
    buffer = io.BytesIO()
    with _quiet():
        torch.jit.save(scripted, buffer)
        buffer.seek(0)
        return torch.jit.load(buffer)


def _assert_same(got: Any, want: Any) -> None:
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    if got.dtype.is_floating_point:
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    else:
        assert torch.equal(got, want)


#: (tensorops layer, einops layer of the same call or None, three input shapes, bool input)
Case = tuple[Callable[[], Any], Callable[[], Any] | None, list[tuple[int, ...]], bool]


def _both(name: str, *args: Any, **lengths: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """The layer `name` of tensorops and einops (whose Repeat is Reduce's "repeat")."""
    if name == "Repeat":
        return (
            lambda: layers.Repeat(*args, **lengths),
            lambda: einops_torch.Reduce(*args, "repeat", **lengths),
        )
    return (
        lambda: getattr(layers, name)(*args, **lengths),
        lambda: getattr(einops_torch, name)(*args, **lengths),
    )


CASES: dict[str, Case] = {
    "merge": (
        *_both("Rearrange", "b c h w -> b (h w) c"),
        [(2, 3, 4, 5), (5, 3, 2, 7), (1, 1, 1, 1)],
        False,
    ),
    "patches": (
        *_both("Rearrange", "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2),
        [(2, 3, 4, 6), (3, 3, 8, 2), (1, 2, 2, 2)],
        False,
    ),
    "split-given": (
        *_both("Rearrange", "b (h hh) w -> (b hh) w h", hh=3),
        [(2, 6, 4), (4, 9, 1), (1, 3, 5)],
        False,
    ),
    "dots": (
        *_both("Rearrange", "b ... c -> b c ..."),
        [(2, 3), (2, 4, 3), (1, 2, 3, 4, 5)],
        False,
    ),
    "dots-merged": (
        *_both("Rearrange", "b ... -> b (...)"),
        [(2, 3), (3, 4, 5), (1, 2, 3, 4)],
        False,
    ),
    "unit-axes": (
        *_both("Rearrange", "b 1 c -> c b () 1"),
        [(2, 1, 3), (5, 1, 1), (1, 1, 4)],
        False,
    ),
    "max-pool": (
        *_both("Reduce", "b c (h 2) (w 2) -> b c h w", "max"),
        [(2, 3, 4, 6), (1, 2, 8, 2), (3, 1, 2, 4)],
        False,
    ),
    "mean-pool-given": (
        *_both("Reduce", "b (h hh) (w ww) c -> b h w c", "mean", hh=2, ww=3),
        [(2, 4, 6, 3), (1, 2, 9, 1), (3, 6, 3, 2)],
        False,
    ),
    "sum-keep": (
        *_both("Reduce", "b c h w -> b c 1 1", "sum"),
        [(2, 3, 4, 5), (1, 1, 2, 2), (4, 2, 1, 3)],
        False,
    ),
    "min-dots": (
        *_both("Reduce", "b ... c -> c b", "min"),
        [(2, 3), (2, 4, 3), (1, 2, 3, 4)],
        False,
    ),
    "prod": (
        *_both("Reduce", "b (h 2) c -> c b h", "prod"),
        [(2, 4, 3), (1, 2, 1), (3, 6, 2)],
        False,
    ),
    "any": (
        lambda: layers.Reduce("b h c -> c b", "any"),
        None,
        [(2, 4, 3), (1, 1, 1), (5, 3, 2)],
        True,
    ),
    "all": (
        lambda: layers.Reduce("b (h 2) -> h b", "all"),
        None,
        [(2, 4), (1, 2), (5, 8)],
        True,
    ),
    "logsumexp": (
        lambda: layers.Reduce("b ... -> b", "logsumexp"),
        None,
        [(2, 3), (2, 4, 3), (1, 1)],
        False,
    ),
    "argmax": (
        lambda: layers.Reduce("b h c -> c", "argmax"),
        None,
        [(2, 4, 3), (1, 1, 2), (3, 2, 5)],
        False,
    ),
    "var": (
        lambda: layers.Reduce("b c h -> h b", "var"),
        None,
        [(2, 4, 3), (1, 2, 2), (3, 2, 5)],
        False,
    ),
    "repeat": (*_both("Repeat", "b h w -> b h w c", c=3), [(2, 4, 5), (1, 1, 1), (3, 2, 6)], False),
    "repeat-composed": (
        *_both("Repeat", "b h -> (r b) h 2", r=3),
        [(2, 4), (1, 1), (5, 3)],
        False,
    ),
    "repeat-dots": (*_both("Repeat", "... c -> ... (c s)", s=2), [(3,), (2, 3), (2, 4, 3)], False),
    "reduce-as-repeat": (
        *_both("Reduce", "b ... -> (b s) ...", "repeat", s=4),
        [(2, 3), (2, 3, 5), (1, 1)],
        False,
    ),
    "softmax": (
        lambda: layers.Softmax("b h i [j]"),
        None,
        [(1, 2, 3, 4), (2, 1, 5, 2), (3, 2, 2, 1)],
        False,
    ),
    "softmax-joint": (
        lambda: layers.Softmax("b [h w] c"),
        None,
        [(1, 2, 3, 4), (2, 4, 1, 3), (3, 1, 2, 2)],
        False,
    ),
    "softmax-apart": (
        lambda: layers.LogSoftmax("[b] h [c]"),
        None,
        [(2, 3, 4), (1, 2, 2), (3, 1, 5)],
        False,
    ),
    "softmax-dots": (
        lambda: layers.LogSoftmax("b ... [c]"),
        None,
        [(2, 3), (1, 2, 3, 4), (3, 1, 5)],
        False,
    ),
    "softmax-output": (
        lambda: layers.Softmax("b [h w] c -> b c [(h w)]"),
        None,
        [(1, 2, 3, 4), (2, 4, 1, 3), (3, 1, 2, 2)],
        False,
    ),
    "check": (
        lambda: layers.Check("b (h 2) ... c", c=3),
        None,
        [(2, 4, 3), (1, 2, 5, 3), (3, 6, 1, 2, 3)],
        False,
    ),
    "check-square": (lambda: layers.Check("n n _"), None, [(3, 3, 1), (1, 1, 4), (5, 5, 2)], False),
    "einmix": (
        *_both("EinMix", "b n d -> b n e", weight_shape="d e", bias_shape="e", d=6, e=4),
        [(2, 5, 6), (1, 1, 6), (3, 7, 6)],
        False,
    ),
    "einmix-heads": (
        *_both(
            "EinMix", "b n (h c) -> b h n e", weight_shape="h c e", bias_shape="e", h=2, c=3, e=4
        ),
        [(2, 5, 6), (1, 1, 6), (3, 7, 6)],
        False,
    ),
    "einmix-composed": (
        *_both("EinMix", "b (n t) d -> (b n) (t e)", weight_shape="d e", d=3, e=2, t=2),
        [(2, 4, 3), (1, 2, 3), (3, 6, 3)],
        False,
    ),
    "einmix-dots": (
        *_both("EinMix", "b ... d -> b ... e", weight_shape="d e", bias_shape="e", d=3, e=2),
        [(2, 3), (2, 4, 3), (1, 2, 5, 3)],
        False,
    ),
}


def _input(shape: tuple[int, ...], boolean: bool) -> Any:
    x = torch.randn(shape)
    return x > 0 if boolean else x


@pytest.mark.parametrize("name", list(CASES))
def test_scripted_layer_runs_at_new_sizes_as_eager_and_einops(name: str) -> None:
    make, make_einops, shapes, boolean = CASES[name]
    layer = make()
    scripted = _script(layer)
    reloaded = _reloaded(scripted)
    peer = None
    if make_einops is not None:
        peer = make_einops()
        if isinstance(layer, layers.EinMix):
            peer.load_state_dict(layer.state_dict())
        peer = _script(peer)
    for shape in shapes:
        x = _input(shape, boolean)
        want = layer(x)
        _assert_same(scripted(x), want)
        _assert_same(reloaded(x), want)
        if peer is not None:
            _assert_same(scripted(x), peer(x))


def _vit(module: Any) -> Any:
    """Patches -> attention-like heads (EinMix) -> heads merged -> pooling, in `module`'s layers."""
    return nn.Sequential(
        module.Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2),
        module.EinMix("b n (h c) -> b h n e", weight_shape="h c e", bias_shape="e", h=2, c=6, e=4),
        module.Rearrange("b h n e -> b n (h e)"),
        module.Reduce("b n d -> b d", "mean"),
    )


def test_scripted_sequential_matches_eager_and_einops_and_reloads() -> None:
    model = _vit(layers)
    peer = _vit(einops_torch)
    peer.load_state_dict(model.state_dict())
    eager = copy.deepcopy(model)
    scripted = _script(model)
    reloaded = _reloaded(scripted)
    peer_scripted = _script(peer)
    for shape in [(2, 3, 4, 4), (1, 3, 8, 2), (5, 3, 6, 10)]:
        x = torch.randn(shape)
        want = eager(x)
        _assert_same(scripted(x), want)
        _assert_same(reloaded(x), want)
        _assert_same(peer_scripted(x), want)
        # torch.jit.script puts the scriptable modules in the Sequential it was given:
        # called eagerly they run the layers, which keep their repr and parameters.
        _assert_same(model(x), want)
    assert repr(model) == repr(eager)
    assert list(scripted.state_dict()) == list(eager.state_dict())


class _Block(nn.Module):
    """A module of one's own holding layers as attributes, with a forward that branches."""

    def __init__(self) -> None:
        super().__init__()
        self.heads = layers.Rearrange("b n (h d) -> b h n d", h=2)
        self.scores = layers.Softmax("b h i [j]")
        self.merge = layers.Rearrange("b h n d -> b n (h d)")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q = self.heads(x)
        attention = self.scores(torch.einsum("bhid,bhjd->bhij", q, q))
        return self.merge(torch.einsum("bhij,bhjd->bhid", attention, q))


def test_a_module_holding_layers_scripts_twice() -> None:
    block = _Block()
    eager = copy.deepcopy(block)
    first = _script(block)
    second = _script(block)  # now holding the scriptable modules, which script as they are
    for shape in [(2, 3, 4), (1, 5, 8), (3, 1, 2)]:
        x = torch.randn(shape)
        _assert_same(first(x), eager(x))
        _assert_same(second(x), eager(x))


def test_scripting_shares_einmix_parameters_and_trains() -> None:
    layer = layers.EinMix("b d -> b e", weight_shape="d e", bias_shape="e", d=3, e=2)
    scripted = _script(layer)
    scripted(torch.randn(4, 3)).sum().backward()
    assert layer.weight.grad is not None
    assert layer.weight.grad.shape == (3, 2)
    no_bias = _script(layers.EinMix("b d -> b e", weight_shape="d e", d=3, e=2))
    assert no_bias(torch.ones(1, 3)).shape == (1, 2)


ERRORS = {
    "not-a-multiple": (
        lambda: layers.Reduce("b (h 2) -> b h", "max"),
        (2, 5),
        r"Reduce\('b \(h 2\) -> b h', 'max'\): dimension 1 \(\(h 2\)\) has length 5, not a "
        r"multiple of 2: the length of axis h has no solution",
    ),
    "given-length": (
        lambda: layers.Rearrange("b (h hh) -> b h hh", hh=3),
        (2, 7),
        r"Rearrange\('b \(h hh\) -> b h hh', hh=3\): dimension 1 \(\(h hh\)\) has length 7, "
        r"not a multiple of 3: the length of axis hh|h has no solution",
    ),
    "check-length": (
        lambda: layers.Check("b c", c=3),
        (4, 2),
        r"Check\('b c', c=3\): dimension 1 \(c\) has length 2, expected 3",
    ),
    "check-repeated": (
        lambda: layers.Check("n n"),
        (3, 4),
        r"Check\('n n'\): dimension 1 \(n\) has length 4, expected 3",
    ),
    "rank": (
        lambda: layers.Rearrange("b c -> c b"),
        (2, 3, 4),
        r"Rearrange\('b c -> c b'\): the input has 3 dimensions, the pattern 2",
    ),
    "rank-dots": (
        lambda: layers.Softmax("b ... [c]"),
        (2,),
        r"Softmax\('b ... \[c\]'\): the input has 1 dimensions, the pattern 2 or more",
    ),
    "einmix": (
        lambda: layers.EinMix("b (n t) d -> b n e", weight_shape="t d e", d=3, e=2, t=2),
        (2, 5, 3),
        r"EinMix\(.*\): dimension 1 \(\(n t\)\) has length 5, not a multiple of 2",
    ),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_scripted_layer_errors_name_the_layer_and_the_dimension(name: str) -> None:
    make, shape, message = ERRORS[name]
    scripted = _script(make())
    for module in (scripted, _reloaded(scripted)):
        with pytest.raises(torch.jit.Error, match=message):
            module(torch.zeros(shape))


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda: layers.Reduce("b c -> b", torch.sum), "a reduction given as a Python function"),
        (lambda: layers.Rearrange("b (c + d) -> b (d + c)", c=2), r"a concatenation '\+'"),
        (lambda: layers.Check("(n n) n"), r"an axis repeated inside '\(n n\)'"),
    ],
)
def test_what_cannot_be_scripted_says_why(make: Callable[[], Any], reason: str) -> None:
    with pytest.raises(tops.ArgumentError, match=rf"cannot be scripted: {reason}"):
        _script(make())


@settings(max_examples=30, deadline=None)
@given(case=strategies.cases(), data=st.data())
def test_scripted_rearrange_and_reduce_of_random_layouts_match_eager(
    case: strategies.Case, data: st.DataObject
) -> None:
    """Random compositions and splits, each group's first axis read from the input."""
    right = data.draw(strategies.regroupings(case.axes))
    given_lengths = {name: length for group in case.groups for name, length in group[1:]}
    dropped = data.draw(st.sets(st.sampled_from([name for name, _ in case.axes])))
    kept = " ".join(name for name in right.replace("(", " ").replace(")", " ").split())
    kept = " ".join(name for name in kept.split() if name not in dropped)
    reduction = data.draw(st.sampled_from(["sum", "max", "prod", "argmin"]))
    built = [
        layers.Rearrange(f"{case.left()} -> {right}", **given_lengths),
        layers.Reduce(f"{case.left()} -> {kept}", reduction, **given_lengths),
    ]
    # The same layout with each group's first (unknown) axis one longer: a new size.
    grown = tuple(
        dim // group[0][1] * (group[0][1] + 1)
        for dim, group in zip(case.shape, case.groups, strict=True)
    )
    for layer in built:
        scripted = _script(layer)
        for shape in (case.shape, grown):
            x = torch.randn(shape)
            _assert_same(scripted(x), layer(x))
