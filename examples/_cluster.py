"""The local dask.distributed cluster the Dask examples run on (not an example itself)."""

from __future__ import annotations

import contextlib
import importlib.util
from collections.abc import Iterator


def has_dask() -> bool:
    """Whether dask and distributed are installed (pip install 'dask[distributed]')."""
    return all(importlib.util.find_spec(name) is not None for name in ("dask", "distributed"))


@contextlib.contextmanager
def local_cluster() -> Iterator[int]:
    """A LocalCluster of two one-thread workers in this process; yields how many workers run."""
    from dask.distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2, processes=False, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        yield len(client.scheduler_info()["workers"])
