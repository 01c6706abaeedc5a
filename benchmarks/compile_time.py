"""Compile time of a model zoo written three ways: tensorops, einops, plain torch.

The five models of ``benchmarks/_compile_zoo.py`` (a ViT block, a decoder block
with rotary attention, a Perceiver cross-attention, a U-Net stage with 12
pack/unpack calls, a vector-quantizer step) share their parameters across the
three variants; their outputs are checked to agree before anything is timed.
Measured in one run, side by side:

* dynamo capture: the first training step (forward + backward) of
  ``torch.compile(model, backend="eager")``, cold;
* inductor first call: the same first step with ``backend="inductor"``, cold
  (the backward's kernels are compiled during that step);
* graphs at the first call (more than 1 means graph breaks), and recompilations
  over three more calls that change the batch, then the length, then both
  (automatic dynamic shapes: plain torch recompiles twice);
* eager step: forward + backward, warm, the fastest of repeated rounds.

Cold means each compiled measurement runs in a fresh process with a fresh, empty
inductor cache directory, so no parse, plan, graph or kernel cache carries over.
In each such process dynamo (or inductor) first compiles a tiny unrelated torch
function, so their one-time start-up is not charged to the first model measured.
Each timed step starts after a full garbage collection (``gc.collect()``): the
collector stays on, so what the step allocates it pays for, but a full collection
that the set-up (imports, the warm-up compile, building the model) made due is not
charged to whichever variant happens to cross the threshold. Without it, one full
collection of 0.13-0.16 s (the whole heap of torch) landed inside some variants'
capture and not others'. ``timeit`` turns the collector off altogether.
One thread for torch everywhere. Ratios are tensorops / einops and tensorops /
torch (below 1: tensorops is faster); the last rows are their geometric means.

Run: ``python benchmarks/compile_time.py``; ``--quick``: fewer eager repeats and no
inductor; ``--skip-inductor``, ``--models vit,unet``, ``--runs N`` (fresh processes
per cold measurement, the fastest counts; default 1), ``--json out.json`` (the raw
numbers, to compare two runs). On a 2-core VM shared with other jobs (load average 10
to 18) ``--quick`` took 13 min, dynamo's tracing most of it, and the full run of two
models (``--models vit,vq``) 15 min, inductor's kernel builds most of it.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import einops
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _compile_zoo as zoo

import tensorops

BATCH = 8
LENGTH = {"vit": 8, "decoder": 64, "perceiver": 256, "unet": 16, "vq": 16}
MEASURES = ("capture", "inductor", "graphs", "recompiles", "eager")
_LABELS = {
    "capture": "dynamo capture, s",
    "inductor": "inductor first call, s",
    "graphs": "graphs at first call",
    "recompiles": "recompiles over 3 new shapes",
    "eager": "eager step, ms",
}


def schedule(name: str) -> list[tuple[int, int]]:
    """(batch, length) of the calls: a first shape, then batch, length, both changed."""
    n = LENGTH[name]
    return [(BATCH, n), (BATCH + 2, n), (BATCH + 2, n * 3 // 4), (BATCH + 6, n * 5 // 4)]


def _step(model: Callable[[torch.Tensor], Any], x: torch.Tensor) -> None:
    zoo.objective(model(x)).backward()


# --- one cold measurement, in a fresh process -----------------------------------------------------


class _CountingBackend:
    """Counts the graphs dynamo hands over, and runs them as the "eager" backend does."""

    def __init__(self) -> None:
        self.graphs = 0

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: Sequence[Any]) -> Any:
        self.graphs += 1
        return gm.forward


def _warm_up(backend: Any) -> None:
    """Compile an unrelated torch function: dynamo's and inductor's start-up is paid here."""
    weight = torch.randn(4, 4, requires_grad=True)
    compiled = torch.compile(lambda t: torch.nn.functional.gelu(t @ weight).sum(), backend=backend)
    compiled(torch.randn(3, 4)).backward()
    torch._dynamo.reset()


def child(name: str, impl: str, backend_name: str) -> dict[str, float]:
    """Time the first compiled step of one model variant; with dynamo, count recompilations."""
    torch.set_num_threads(1)
    counting = _CountingBackend()
    backend: Any = counting if backend_name == "eager" else "inductor"
    _warm_up(backend)
    counting.graphs = 0
    model = zoo.build(name, impl)
    inputs = [zoo.example_input(name, b, n) for b, n in schedule(name)]
    compiled = torch.compile(model, backend=backend)
    gc.collect()  # the set-up's garbage is not the step's to collect (see the module's doc)
    start = time.perf_counter()
    _step(compiled, inputs[0])
    seconds = time.perf_counter() - start
    if backend_name != "eager":
        return {"inductor": seconds}
    graphs = counting.graphs
    for x in inputs[1:]:
        _step(compiled, x)
    return {"capture": seconds, "graphs": graphs, "recompiles": counting.graphs - graphs}


def _cold(name: str, impl: str, backend: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="compile_time_") as cache:
        env = dict(os.environ, OMP_NUM_THREADS="1", TORCHINDUCTOR_CACHE_DIR=cache)
        env.update(TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0")
        env.update(TORCHINDUCTOR_COMPILE_THREADS="1")
        command = [sys.executable, __file__, "--child", name, impl, backend]
        result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        print(result.stderr[-3000:], file=sys.stderr)
        raise SystemExit(f"{name}/{impl} with backend {backend!r} failed")
    measured: dict[str, float] = json.loads(result.stdout.strip().splitlines()[-1])
    return measured


def cold_measurements(
    names: Sequence[str], backends: Sequence[str], runs: int
) -> dict[tuple[str, str], dict[str, float]]:
    """Per (model, variant): the fastest first step over ``runs`` fresh processes, and counts.

    The variants of a model take turns, so a change in the machine's load hits all alike.
    """
    best: dict[tuple[str, str], dict[str, float]] = {}
    for backend in backends:
        for run in range(runs):
            for name in names:
                for impl in zoo.IMPLS:
                    started = time.perf_counter()
                    measured = _cold(name, impl, backend)
                    print(
                        f"  {backend} run {run + 1}/{runs} {name}/{impl}: {measured} "
                        f"({time.perf_counter() - started:.1f} s in all)",
                        file=sys.stderr,
                        flush=True,
                    )
                    entry = best.setdefault((name, impl), {})
                    for key, value in measured.items():
                        entry[key] = min(entry.get(key, math.inf), value)
    return best


# --- warm eager steps, in this process ------------------------------------------------------


def check_agree(name: str, models: dict[str, zoo.ZooModel]) -> None:
    """The three variants give the same outputs (and losses) on the first shape."""
    batch, length = schedule(name)[0]
    x = zoo.example_input(name, batch, length)
    with torch.no_grad():
        outputs = {impl: model(x) for impl, model in models.items()}
    for impl in ("einops", "torch"):
        torch.testing.assert_close(
            outputs[impl], outputs["tensorops"], rtol=1e-4, atol=1e-4, msg=f"{name}: {impl}"
        )


def eager_steps(name: str, repeats: int, number: int) -> dict[str, float]:
    """Best seconds of a warm forward + backward step per variant, timed in alternation.

    The fastest of `repeats` rounds of `number` steps: the three variants make the
    same kernel calls, so what separates them is small beside the machine's noise,
    which only adds time (as ``timeit`` advises, the minimum).
    """
    models = {impl: zoo.build(name, impl) for impl in zoo.IMPLS}
    check_agree(name, models)
    batch, length = schedule(name)[0]
    x = zoo.example_input(name, batch, length)
    times: dict[str, list[float]] = {impl: [] for impl in models}
    for model in models.values():
        _step(model, x)
    for _ in range(repeats):
        for impl, model in models.items():
            start = time.perf_counter()
            for _ in range(number):
                model.zero_grad(set_to_none=True)
                _step(model, x)
            times[impl].append((time.perf_counter() - start) / number)
    return {impl: min(bucket) for impl, bucket in times.items()}


# --- the table ---------------------------------------------------------------------------------


def _cell(measure: str, value: float | None) -> str:
    if value is None:
        return ""
    if measure in ("graphs", "recompiles"):
        return str(int(value))
    return f"{value * 1e3:.2f}" if measure == "eager" else f"{value:.2f}"


def _ratio(ours: float | None, other: float | None) -> str:
    if ours is None or other is None or other == 0:
        return ""
    return f"{ours / other:.2f}"


def table(results: dict[tuple[str, str], dict[str, float]], names: Sequence[str]) -> list[str]:
    """Markdown rows: per model and measurement the three variants and two ratios."""
    rows = [
        "| model | measurement | tensorops | einops | torch | tops/einops | tops/torch |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    ratios: dict[tuple[str, str], list[float]] = {}
    for name in names:
        for measure in MEASURES:
            value = {impl: results.get((name, impl), {}).get(measure) for impl in zoo.IMPLS}
            if all(v is None for v in value.values()):
                continue
            cells = " | ".join(_cell(measure, value[impl]) for impl in zoo.IMPLS)
            ours = value["tensorops"]
            to_einops, to_torch = _ratio(ours, value["einops"]), _ratio(ours, value["torch"])
            rows.append(f"| {name} | {_LABELS[measure]} | {cells} | {to_einops} | {to_torch} |")
            if measure not in ("graphs", "recompiles") and to_einops and to_torch:
                ratios.setdefault(measure, []).append((float(to_einops), float(to_torch)))
    for measure, pairs in ratios.items():
        means = [math.exp(statistics.fmean(math.log(p[i]) for p in pairs)) for i in (0, 1)]
        label = f"geometric mean, {_LABELS[measure]}"
        rows.append(f"| all | {label} | | | | {means[0]:.2f} | {means[1]:.2f} |")
    return rows


def _parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer eager repeats, no inductor")
    parser.add_argument("--skip-inductor", action="store_true", help="no inductor first call")
    parser.add_argument("--models", default=",".join(zoo.MODELS), help="e.g. vit,unet")
    parser.add_argument("--runs", type=int, default=1, help="fresh processes per cold measurement")
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    parser.add_argument(
        "--child", nargs=3, metavar=("MODEL", "IMPL", "BACKEND"), help=argparse.SUPPRESS
    )
    args = parser.parse_args(argv)
    args.models = [name.strip() for name in args.models.split(",") if name.strip()]
    unknown = sorted(set(args.models) - set(zoo.MODELS))
    if unknown:
        parser.error(f"unknown models {unknown}; choose from {', '.join(zoo.MODELS)}")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = _parse(argv)
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    torch.set_num_threads(1)
    repeats, number = (20, 3) if args.quick else (40, 5)
    results: dict[tuple[str, str], dict[str, float]] = {}
    for name in args.models:
        for impl, seconds in eager_steps(name, repeats, number).items():
            results.setdefault((name, impl), {})["eager"] = seconds
    backends = ["eager"] if args.quick or args.skip_inductor else ["eager", "inductor"]
    for key, measured in cold_measurements(args.models, backends, args.runs).items():
        results[key].update(measured)
    print(
        f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"torch {torch.__version__}, einops {einops.__version__}, "
        f"tensorops {tensorops.__version__}; cold runs per measurement: {args.runs}"
    )
    print("\n".join(table(results, args.models)))
    if args.json:
        raw = [{"model": m, "impl": i, **values} for (m, i), values in results.items()]
        args.json.write_text(json.dumps(raw, indent=1) + "\n")


if __name__ == "__main__":
    main()
