"""Run the ops under ``jax.jit`` on arrays sharded over four host devices (a process of its own).

``XLA_FLAGS`` must ask for the devices before JAX is imported, so
``tests/test_jax_sharded.py`` runs this module in a subprocess: ``python -m
tests._jax_sharded``. Each case checks the values against the same op on NumPy and
the output's sharding: batch-sharded in, batch-sharded out; a reduction over the
sharded axis, replicated out; replicated in, replicated out. Prints one line per case.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

import tensorops as tops

DEVICES = 4
_R = np.random.default_rng(int(os.environ.get("TENSOROPS_TEST_SEED", "0")))
X = _R.standard_normal((8, 6, 4)).astype(np.float32)  # b t c, b sharded
W = _R.standard_normal((4, 5)).astype(np.float32)  # c d, replicated
INDEX = _R.integers(0, 6, (8, 3))  # b p

# name -> (op, whether the output keeps the batch axis first and so its sharding)
CASES: dict[str, tuple[Callable[..., Any], bool]] = {
    "rearrange": (lambda x, w, i: tops.rearrange(x, "b t (c k) -> b (k t) c", k=2), True),
    "reduce": (lambda x, w, i: tops.reduce(x, "b t c -> b c", "max"), True),
    "repeat": (lambda x, w, i: tops.repeat(x, "b t c -> b t c r", r=2), True),
    "einsum": (lambda x, w, i: tops.einsum("b t c, c d -> b t d", x, w), True),
    "softmax": (lambda x, w, i: tops.softmax(x, "b t [c]"), True),
    "logsumexp": (lambda x, w, i: tops.reduce(x, "b t c -> b t", "logsumexp"), True),
    "get_at": (lambda x, w, i: tops.get_at(x, i, "b [t] c, b p -> b p c"), True),
    "pack": (lambda x, w, i: tops.pack([x, x], "b * c")[0], True),
    "einsum-over-shards": (lambda x, w, i: tops.einsum("b t c, c d -> t d", x, w), False),
    "sum-over-shards": (lambda x, w, i: tops.reduce(x, "b t c -> c", "sum"), False),
}


def _run(name: str, mesh: Any, replicated: bool) -> None:
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    op, keeps_batch = CASES[name]
    spec = PartitionSpec() if replicated else PartitionSpec("d")
    x, i = (jax.device_put(a, NamedSharding(mesh, spec)) for a in (X, INDEX))
    w = jax.device_put(W, NamedSharding(mesh, PartitionSpec()))
    result = jax.jit(op)(x, w, i)
    expected = op(X, W, INDEX)
    np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-5, atol=1e-5)
    if replicated or not keeps_batch:
        assert result.sharding.is_fully_replicated, (name, result.sharding)
    else:
        assert result.sharding.spec[0] == "d", (name, result.sharding)
        assert len(result.addressable_shards) == DEVICES
    print(f"ok {name} {'replicated' if replicated else 'sharded'} {result.sharding.spec}")


def main() -> None:
    """Check every case sharded and replicated; raise on the first mismatch."""
    import jax
    from jax.sharding import Mesh

    assert len(jax.devices()) == DEVICES, jax.devices()
    mesh = Mesh(np.array(jax.devices()), ("d",))
    for name in CASES:
        for replicated in (False, True):
            _run(name, mesh, replicated)


if __name__ == "__main__":
    main()
