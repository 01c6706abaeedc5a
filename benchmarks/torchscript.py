"""Scripted torch layers: tensorops against einops under ``torch.jit.script``.

A small ViT front (patches, attention-like heads as an EinMix, heads merged, mean
pooling) built of each library's layers, with the same weights, is scripted and
called at two input sizes; the eager models run beside. The four take turns on every
repetition, so a change in machine load hits them alike; the table gives medians in
microseconds and the ratios tensorops / einops. One thread (``torch.set_num_threads``).

Run: ``python benchmarks/torchscript.py`` (``--quick``: fewer repetitions).
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
import warnings
from typing import Any

import einops.layers.torch as einops_layers
import torch
from tensorops.layers import torch as tops_layers


def _model(layers: Any) -> torch.nn.Module:
    return torch.nn.Sequential(
        layers.Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=4, p2=4),
        layers.EinMix(
            "b n (h c) -> b h n e", weight_shape="h c e", bias_shape="e", h=4, c=12, e=16
        ),
        layers.Rearrange("b h n e -> b n (h e)"),
        layers.Reduce("b n d -> b d", "mean"),
    )


def _models() -> dict[str, Any]:
    torch.manual_seed(0)
    ours, theirs = _model(tops_layers), _model(einops_layers)
    theirs.load_state_dict(ours.state_dict())
    with warnings.catch_warnings():  # torch >= 2.14 says TorchScript is deprecated
        warnings.simplefilter("ignore")
        scripted = {
            "tensorops scripted": torch.jit.script(copy.deepcopy(ours)),
            "einops scripted": torch.jit.script(copy.deepcopy(theirs)),
        }
    return {**scripted, "tensorops eager": ours, "einops eager": theirs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    repeats = 100 if args.quick else 500
    models = _models()
    print(f"torch {torch.__version__}; medians of {repeats} calls, microseconds")
    columns = ["tensorops scripted", "einops scripted", "ratio"]
    columns += ["tensorops eager", "einops eager", "ratio"]
    print("| input | " + " | ".join(columns) + " |")
    print("|---|---|---|---|---|---|---|")
    for shape in [(2, 3, 16, 16), (16, 3, 32, 32)]:
        x = torch.randn(shape)
        outputs = [model(x) for model in models.values()]  # also warms each up
        for output in outputs[1:]:
            torch.testing.assert_close(output, outputs[0], rtol=1e-5, atol=1e-5)
        times: dict[str, list[float]] = {name: [] for name in models}
        for _ in range(repeats):
            for name, model in models.items():
                start = time.perf_counter()
                model(x)
                times[name].append(time.perf_counter() - start)
        us = {name: statistics.median(values) * 1e6 for name, values in times.items()}
        print(
            f"| {tuple(shape)} | {us['tensorops scripted']:.0f} | {us['einops scripted']:.0f} | "
            f"{us['tensorops scripted'] / us['einops scripted']:.2f} | "
            f"{us['tensorops eager']:.0f} | {us['einops eager']:.0f} | "
            f"{us['tensorops eager'] / us['einops eager']:.2f} |"
        )


if __name__ == "__main__":
    main()
