"""A contraction too big for its memory limit, sliced, and the slices run on a Dask cluster.

A ring of six matrices traced to one number: every pairwise path makes an
intermediate of n * n elements. Under a memory limit smaller than that, the plan
slices one axis instead of giving up: each slice is the same small contraction,
and their results add up. On Dask arrays each slice is an independent branch of
the task graph, so a dask.distributed LocalCluster (or any cluster) runs them on
its workers; nothing is computed until .compute().

Usage: python examples/sliced_contraction.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a source checkout

from _cluster import has_dask, local_cluster  # beside this file

import tensorops as tops

RING = "ab,bc,cd,de,ef,fa->"
N = 64  # each matrix is N x N
LIMIT = 1024  # the most elements an intermediate may have (each pairwise one has N * N)


def main() -> int:
    rng = np.random.default_rng(0)
    matrices = [rng.standard_normal((N, N)) / np.sqrt(N) for _ in range(6)]
    shapes = [m.shape for m in matrices]

    whole = tops.einsum_path(RING, *shapes)
    sliced = tops.einsum_path(RING, *shapes, memory_limit=LIMIT)
    print(f"ring of six {N}x{N} matrices: {RING}")
    print(
        f"  unsliced: {whole.flops:.3g} FLOPs, largest intermediate "
        f"{whole.largest_intermediate} elements"
    )
    print(
        f"  memory_limit={LIMIT}: {sliced.slices} slices along {sliced.sliced_axes}, "
        f"{sliced.flops:.3g} FLOPs ({sliced.flops / whole.flops:.2f}x), largest intermediate "
        f"{sliced.largest_intermediate} elements"
    )
    assert sliced.largest_intermediate <= LIMIT
    expected = tops.einsum(RING, *matrices)
    on_numpy = tops.einsum(RING, *matrices, memory_limit=LIMIT)
    print(f"  NumPy, slice by slice: {float(on_numpy):.6f} (unsliced: {float(expected):.6f})")
    assert np.allclose(on_numpy, expected)

    if not has_dask():
        print("dask or distributed is not installed: the cluster part is skipped")
        return 0
    import dask.array as da

    with local_cluster() as workers:
        lazy = [da.from_array(m, chunks=(N, N)) for m in matrices]
        started = time.perf_counter()
        result = tops.einsum(RING, *lazy, memory_limit=LIMIT)
        assert isinstance(result, da.Array), type(result)
        print(
            f"Dask: a lazy {type(result).__name__} of {len(result.dask)} tasks, built in "
            f"{(time.perf_counter() - started) * 1000:.0f} ms; nothing computed yet"
        )
        started = time.perf_counter()
        value = result.compute()
        print(
            f"  computed on a LocalCluster of {workers} workers in "
            f"{time.perf_counter() - started:.2f} s: {float(value):.6f}"
        )
        assert np.allclose(value, expected)
    return 0


if __name__ == "__main__":
    sys.exit(main())
