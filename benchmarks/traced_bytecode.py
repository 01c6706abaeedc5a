"""Bytecode instructions Dynamo steps through to capture one call: tensorops vs einops.

Usage: python benchmarks/traced_bytecode.py [--dynamic]

Counts calls of Dynamo's instruction step (torch 2.x internals) while
``torch.compile(fn, backend="eager", fullgraph=True)`` captures a function that
makes one call (``--dynamic``: with ``dynamic=True``, every size symbolic); the
capture time (CPU time) of the same run is printed beside it. The table is in
docs/architecture.md ("torch.compile", "Measured").
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import einops
import torch
import torch._dynamo
from torch._dynamo import symbolic_convert

import tensorops as tops

_COUNT = [0]
_STEP = symbolic_convert.InstructionTranslatorBase.step


def _counting_step(self: Any) -> Any:
    _COUNT[0] += 1
    return _STEP(self)


def cases(lib: Any) -> dict[str, Callable[[], Any]]:
    """One call each, the same for both libraries (einsum's operands come first in einops)."""
    x = torch.randn(2, 3, 4, 6)
    a, b = torch.randn(2, 3, 4), torch.randn(2, 4, 5)
    if lib is einops:
        einsum: Callable[[], Any] = lambda: lib.einsum(a, b, "b i j, b j k -> b i k")  # noqa: E731
    else:
        einsum = lambda: lib.einsum("b i j, b j k -> b i k", a, b)  # noqa: E731
    return {
        "rearrange": lambda: lib.rearrange(x, "b c h (w k) -> b (c h) w k", k=2),
        "repeat": lambda: lib.repeat(x, "b c h w -> b c h w r", r=3),
        "reduce": lambda: lib.reduce(x, "b c h w -> b c", "mean"),
        "pack+unpack": lambda: lib.unpack(*lib.pack([a, x[:, :, 0]], "b c *"), "b c *"),
        "einsum": einsum,
    }


_DYNAMIC = "--dynamic" in sys.argv[1:]


def capture(fn: Callable[[], Any]) -> tuple[int, float]:
    """(instructions stepped, CPU seconds) of one Dynamo capture of `fn`."""
    torch._dynamo.reset()
    _COUNT[0] = 0
    start = time.process_time()
    torch.compile(fn, backend="eager", fullgraph=True, dynamic=_DYNAMIC or None)()
    return _COUNT[0], time.process_time() - start


def main() -> None:
    symbolic_convert.InstructionTranslatorBase.step = _counting_step  # type: ignore[method-assign]
    by_lib = {lib.__name__: cases(lib) for lib in (einops, tops)}
    print(f"{'call':12} {'einops':>18} {'tensorops':>18}")
    for name in by_lib["tensorops"]:
        cells = []
        for calls in by_lib.values():
            calls[name]()  # eager first: caches and adapters ready, as in a model
            capture(calls[name])  # warm Dynamo itself
            count, seconds = capture(calls[name])
            cells.append(f"{count:7d} {seconds * 1e3:7.1f} ms")
        print(f"{name:12} {cells[0]:>18} {cells[1]:>18}")
    print(f"an empty frame: {capture(lambda: torch.ones(1) + 1)[0]} instructions")


if __name__ == "__main__":
    main()
