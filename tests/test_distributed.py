"""The ops on torch DTensors, sharded and replicated over two gloo processes."""

from __future__ import annotations

import socket

import pytest

from tests import _distributed, _seed

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")
if not dist.is_available():
    pytest.skip("this torch build has no torch.distributed", allow_module_level=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_ops_on_dtensors_match_local() -> None:
    import torch.multiprocessing as mp

    context = mp.get_context("spawn")
    results = context.SimpleQueue()
    mp.start_processes(
        _distributed.worker,
        args=(_free_port(), _seed.derived("test_distributed"), results),
        nprocs=_distributed.WORLD,
        join=True,
        start_method="spawn",
    )
    done = results.get()
    assert len(done) == 2 * len(_distributed.CASES), done
