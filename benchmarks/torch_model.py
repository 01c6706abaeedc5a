"""tensorops layers vs hand-written torch vs einops layers, on the ViT of examples/vit_patches.py.

Measures, in one run and as ratios:

* eager forward + backward of the whole model, three ways: tensorops layers,
  the same model with native torch ops (reshape / permute / matmul), einops layers;
* the compiled model (``torch.compile``) against the compiled native model;
* each layer type alone on a small input (the per-call overhead): Rearrange,
  Reduce, Repeat and EinMix against their einops counterparts.

The three models share their weights (the parameters have the same shapes), and
their outputs are checked to agree before anything is timed.

Run: ``python benchmarks/torch_model.py`` (``--quick``: under 90 s; ``--device cuda``
on a GPU, timed with ``torch.cuda.synchronize`` around every batch of calls).
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import einops
import einops.layers.torch as einops_layers
import torch
from tensorops.layers.torch import EinMix, Rearrange, Reduce, Repeat
from torch import nn

_EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "vit_patches.py"
_spec = importlib.util.spec_from_file_location("vit_patches", _EXAMPLE)
assert _spec is not None
assert _spec.loader is not None
vit = importlib.util.module_from_spec(_spec)
sys.modules["vit_patches"] = vit
_spec.loader.exec_module(vit)


# --- the same model, hand-written in torch ----------------------------------------------------


class NativePatches(nn.Module):
    def __init__(self, patch: int) -> None:
        super().__init__()
        self.patch = patch

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, c, height, width = x.shape
        p = self.patch
        x = x.reshape(b, c, height // p, p, width // p, p).permute(0, 2, 4, 3, 5, 1)
        return x.reshape(b, (height // p) * (width // p), p * p * c)


class NativeMix(nn.Module):
    """An EinMix's parameters with a hand-written forward."""

    def __init__(self, like: EinMix, forward: Callable[..., torch.Tensor]) -> None:
        super().__init__()
        self.weight = nn.Parameter(like.weight.detach().clone())
        assert like.bias is not None
        self.bias = nn.Parameter(like.bias.detach().clone())
        self.function = forward

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.function(x, self.weight, self.bias)


def _linear(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return x @ w + bias.reshape(-1)


def _qkv(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    b, n, d = x.shape
    _, k, h, e = w.shape
    y = (x @ w.reshape(d, k * h * e)).reshape(b, n, k, h, e).permute(2, 0, 3, 1, 4)
    return y + bias


def _heads_out(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    b, h, n, e = x.shape
    return x.transpose(1, 2).reshape(b, n, h * e) @ w.reshape(h * e, -1) + bias.reshape(-1)


_NATIVE_MIX = {
    "b n d -> k b h n e": _qkv,
    "b h n e -> b n d": _heads_out,
}


class _Attention(nn.Module):
    """An attention block like ``like``, with its projections swapped for ``qkv`` and ``out``."""

    def __init__(self, like: Any, qkv: nn.Module, out: nn.Module) -> None:
        super().__init__()
        self.scale = like.scale
        self.qkv, self.out = qkv, out


class NativeAttention(_Attention):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x)
        scores = (q @ k.transpose(-2, -1)) * self.scale
        return self.out(scores.softmax(dim=-1) @ v)


class NativeMean(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=1)


class EinopsAttention(_Attention):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(x)
        scores = einops.einsum(q, k, "b h i e, b h j e -> b h i j") * self.scale
        return self.out(einops.einsum(scores.softmax(dim=-1), v, "b h i j, b h j e -> b h i e"))


def _native(module: nn.Module) -> nn.Module:
    if isinstance(module, Rearrange):
        return NativePatches(module.lengths["p1"])
    if isinstance(module, Reduce):
        return NativeMean()
    if isinstance(module, EinMix):
        return NativeMix(module, _NATIVE_MIX.get(module.pattern, _linear))
    if isinstance(module, vit.Attention):
        return NativeAttention(module, _native(module.qkv), _native(module.out))
    for name, child in module.named_children():
        setattr(module, name, _native(child))
    return module


def _einops(module: nn.Module) -> nn.Module:
    if isinstance(module, Rearrange):
        return einops_layers.Rearrange(module.pattern, **module.lengths)
    if isinstance(module, Reduce):
        return einops_layers.Reduce(module.pattern, str(module.reduction), **module.lengths)
    if isinstance(module, EinMix):
        layer = einops_layers.EinMix(
            module.pattern, module.weight_shape, module.bias_shape, **module.lengths
        )
        layer.load_state_dict(module.state_dict())
        return layer
    if isinstance(module, vit.Attention):
        return EinopsAttention(module, _einops(module.qkv), _einops(module.out))
    for name, child in module.named_children():
        setattr(module, name, _einops(child))
    return module


# --- timing ----------------------------------------------------------------------------------


def _median_seconds(fn: Callable[[], object], repeats: int, number: int) -> float:
    return _interleaved([fn], repeats, number)[0]


def _sync() -> None:
    """Wait for the device's queued work (a no-op on the CPU)."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _interleaved(fns: list[Callable[[], object]], repeats: int, number: int) -> list[float]:
    """Median seconds per call of each function, timed in alternation so drift hits all alike."""
    for fn in fns:
        fn()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for fn, bucket in zip(fns, times, strict=True):
            _sync()
            start = time.perf_counter()
            for _ in range(number):
                fn()
            _sync()
            bucket.append((time.perf_counter() - start) / number)
    return [statistics.median(bucket) for bucket in times]


def _train_step(model: nn.Module, x: torch.Tensor) -> Callable[[], object]:
    def step() -> object:
        model.zero_grad(set_to_none=True)
        loss = model(x).square().mean()
        loss.backward()
        return loss

    return step


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e6:,.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:,.2f} ms"


def _row(name: str, ours: float, other: float, other_name: str) -> str:
    return f"| {name} | {_fmt(ours)} | {_fmt(other)} ({other_name}) | {ours / other:.3f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, under 90 s")
    parser.add_argument("--no-compile", action="store_true", help="skip the compiled models")
    parser.add_argument("--device", default="cpu", help="torch device to run on (cpu, cuda)")
    args = parser.parse_args()
    torch.set_default_device(args.device)  # the models' parameters and every input
    repeats, number = (5, 3) if args.quick else (15, 5)
    torch.manual_seed(0)
    torch.set_num_threads(min(torch.get_num_threads(), 2))

    ours = vit.build_model()
    native = _native(copy.deepcopy(ours))
    with_einops = _einops(copy.deepcopy(ours))
    x = torch.randn(32, 3, 32, 32)
    with torch.no_grad():
        reference = ours(x)
        for other in (native, with_einops):
            torch.testing.assert_close(other(x), reference, rtol=1e-4, atol=1e-4)

    rows = ["| measurement | tensorops | baseline | ratio |", "|---|---|---|---|"]
    models = {"tensorops": ours, "native": native, "einops": with_einops}
    steps = [_train_step(model, x) for model in models.values()]
    eager = dict(zip(models, _interleaved(steps, repeats, number), strict=True))
    rows.append(_row("ViT fwd+bwd, eager", eager["tensorops"], eager["native"], "native"))
    rows.append(_row("ViT fwd+bwd, eager", eager["tensorops"], eager["einops"], "einops"))

    if not args.no_compile:
        compiled: dict[str, float] = {}
        compiled_steps = {}
        for name, model in (("tensorops", ours), ("native", native)):
            try:
                step = _train_step(torch.compile(model, fullgraph=True), x)
                step()  # compile outside the timing
                compiled_steps[name] = step
            except Exception as error:  # report, so the eager numbers still print
                print(f"compiling the {name} model failed: {type(error).__name__}", file=sys.stderr)
        if len(compiled_steps) == 2:
            times = _interleaved(list(compiled_steps.values()), repeats, number)
            compiled = dict(zip(compiled_steps, times, strict=True))
        if len(compiled) == 2:
            rows.append(
                _row("ViT fwd+bwd, compiled", compiled["tensorops"], compiled["native"], "native")
            )
        else:
            rows.append("| ViT fwd+bwd, compiled | failed | | |")

    small = torch.randn(2, 3, 4, 4)
    layers: list[tuple[str, nn.Module, nn.Module, torch.Tensor]] = [
        (
            "Rearrange",
            Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2),
            einops_layers.Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2),
            small,
        ),
        (
            "Reduce",
            Reduce("b c (h 2) (w 2) -> b c h w", "max"),
            einops_layers.Reduce("b c (h 2) (w 2) -> b c h w", "max"),
            small,
        ),
        ("Repeat", Repeat("b c h w -> b c h w r", r=2), _EinopsRepeat(), small),
    ]
    mix = EinMix("b n d -> b n e", weight_shape="d e", bias_shape="e", d=4, e=3)
    their_mix = einops_layers.EinMix("b n d -> b n e", "d e", "e", d=4, e=3)
    their_mix.load_state_dict(mix.state_dict())
    layers.append(("EinMix", mix, their_mix, torch.randn(2, 5, 4)))
    with torch.no_grad():
        for name, layer, theirs, data in layers:
            torch.testing.assert_close(layer(data), theirs(data))
            ours_time, their_time = _interleaved(
                [lambda: layer(data), lambda: theirs(data)],  # noqa: B023
                4 * repeats,
                500,
            )
            rows.append(_row(f"{name} layer, small input", ours_time, their_time, "einops"))
    print("\n".join(rows))


class _EinopsRepeat(nn.Module):
    """einops has no Repeat layer: the function in a module is its closest counterpart."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return einops.repeat(x, "b c h w -> b c h w r", r=2)


if __name__ == "__main__":
    main()
