"""A larger-than-one-chunk Dask array processed lazily with tensorops, on a local cluster.

rearrange, reduce and einsum only build the task graph; nothing is computed
until .compute() is called, and then the work runs on the workers of a
dask.distributed LocalCluster.

Usage: python examples/dask_scale.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a source checkout

from _cluster import has_dask, local_cluster  # beside this file

import tensorops as tops


def main() -> int:
    if not has_dask():
        print("dask or distributed is not installed: skipped (pip install 'dask[distributed]')")
        return 0
    import dask.array as da

    with local_cluster() as workers:
        print(f"cluster: {workers} workers")
        # 64 images of 3 x 256 x 256, float32: 48 MiB in 16 chunks.
        images = da.random.default_rng(0).random((64, 3, 256, 256), chunks=(16, 3, 128, 128))
        images = images.astype(np.float32)
        print(f"input:   {images.shape} in {images.npartitions} chunks")

        started = time.perf_counter()
        pooled = tops.reduce(images, "b c (h 4) (w 4) -> b c h w", "max")
        patches = tops.rearrange(pooled, "b c (h p) (w q) -> b (h w) (p q c)", p=8, q=8)
        weights = da.ones((8 * 8 * 3, 16), chunks=(96, 16), dtype=np.float32)
        features = tops.einsum(patches, weights, "b t f, f e -> b t e")
        summary = tops.reduce(features, "b t e -> e", "mean")
        elapsed = time.perf_counter() - started
        for name, array in [
            ("pooled", pooled),
            ("patches", patches),
            ("features", features),
            ("summary", summary),
        ]:
            assert isinstance(array, da.Array), type(array)
            print(f"{name + ':':<9} lazy {type(array).__name__} {array.shape}")
        tasks = len(summary.dask)
        print(f"graph built in {elapsed * 1000:.0f} ms, {tasks} tasks; nothing computed yet")

        started = time.perf_counter()
        result = summary.compute()
        print(
            f"computed on the cluster in {time.perf_counter() - started:.2f} s: "
            f"{type(result).__name__} {result.shape}"
        )

        # The same pipeline on one chunk's worth of NumPy data gives the same numbers.
        sample = images[:16].compute()
        expected = np.einsum(
            "btf,fe->bte",
            tops.rearrange(
                tops.reduce(sample, "b c (h 4) (w 4) -> b c h w", "max"),
                "b c (h p) (w q) -> b (h w) (p q c)",
                p=8,
                q=8,
            ),
            np.ones((192, 16), np.float32),
        ).mean(axis=(0, 1))
        lazy_sample = tops.reduce(features[:16], "b t e -> e", "mean").compute()
        assert np.allclose(lazy_sample, expected, rtol=1e-4)
        print("matches NumPy on the first 16 images")
    return 0


if __name__ == "__main__":
    sys.exit(main())
