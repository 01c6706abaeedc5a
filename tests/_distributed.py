"""The ops on ``DTensor``s over two processes (gloo), against the same ops on local tensors.

``tests/test_distributed.py`` spawns :func:`worker` in two processes. Each builds a
one-axis device mesh over both, makes every input a ``DTensor`` sharded on its first
axis and then replicated, runs each op and compares ``full_tensor()`` with the op on
the plain local tensor. Rank 0 returns the names of the cases that ran.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import tensorops as tops

WORLD = 2

# name -> op over (x: b t c, w: c d)
CASES: dict[str, Callable[[Any, Any], Any]] = {
    "rearrange": lambda x, w: tops.rearrange(x, "b t c -> b c t"),
    "rearrange-merge": lambda x, w: tops.rearrange(x, "b t c -> b (t c)"),
    "reduce-sum": lambda x, w: tops.reduce(x, "b t c -> b c", "sum"),
    "reduce-max": lambda x, w: tops.reduce(x, "b t c -> t", "max"),
    "reduce-mean": lambda x, w: tops.reduce(x, "b t c -> c", "mean"),
    "repeat": lambda x, w: tops.repeat(x, "b t c -> b t c r", r=2),
    "einsum": lambda x, w: tops.einsum("b t c, c d -> b t d", x, w),
    "einsum-over-shards": lambda x, w: tops.einsum("b t c, c d -> t d", x, w),
    "softmax": lambda x, w: tops.softmax(x, "b t [c]"),
    "log_softmax": lambda x, w: tops.log_softmax(x, "b [t] c"),
}


def worker(rank: int, port: int, seed: int, results: Any) -> None:
    """One process of the group: run every case, assert, put the names run in ``results``."""
    import torch
    import torch.distributed as dist
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor, init_device_mesh

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    # a rank that fails makes the other time out instead of waiting for ever
    dist.init_process_group("gloo", rank=rank, world_size=WORLD, timeout=timedelta(seconds=60))
    try:
        mesh = init_device_mesh("cpu", (WORLD,))
        generator = torch.Generator().manual_seed(seed)  # the same inputs on both ranks
        x = torch.randn(4, 6, 8, generator=generator, dtype=torch.float64)
        w = torch.randn(8, 5, generator=generator, dtype=torch.float64)
        done = []
        for name, op in CASES.items():
            expected = op(x, w)
            for placement in (Shard(0), Replicate()):
                dx = distribute_tensor(x, mesh, [placement])
                dw = distribute_tensor(w, mesh, [Replicate()])
                result = op(dx, dw)
                assert type(result).__name__ == "DTensor", (name, type(result))
                torch.testing.assert_close(result.full_tensor(), expected, rtol=1e-12, atol=1e-12)
                done.append(f"{name}/{placement}")
        if rank == 0:
            results.put(done)
        # both ranks are done before either tears the group down: a rank that left while
        # the other's last collective was in flight aborted it ("terminate called ...")
        dist.barrier()
    finally:
        dist.destroy_process_group()
