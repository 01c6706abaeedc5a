"""The JAX layer families under ``jax.export`` with a symbolic batch: exported, loaded, run.

A linen model, an nnx model and an Equinox model, each of every pattern layer and EinMix,
are exported with the batch symbolic, serialized, deserialized and run at batch sizes
other than the one they were built with; the results equal the model's eager ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax")
pytest.importorskip("flax")
export = pytest.importorskip("jax.export")

from flax import linen, nnx  # noqa: E402

from tests._seed import rng, tolerance  # noqa: E402

SIZES = (1, 3, 5)


def _exported_runs(function: Any) -> None:
    spec = jax.ShapeDtypeStruct(export.symbolic_shape("b, 4, 6"), np.float32)
    loaded = export.deserialize(export.export(jax.jit(function))(spec).serialize())
    for n in SIZES:
        x = rng("jax layers", n).standard_normal((n, 4, 6)).astype(np.float32)
        np.testing.assert_allclose(
            np.asarray(loaded.call(x)), np.asarray(function(x)), **tolerance(np.float32, 24)
        )


def test_linen_layers() -> None:
    from tensorops.layers.flax import EinMix, Rearrange, Reduce, Repeat, Softmax

    model = linen.Sequential(
        [
            Rearrange("b t (h d) -> b h t d", h=2),
            Softmax("b h t [d]"),
            Repeat("b h t d -> b h t d r", r=2),
            Reduce("b h t d r -> b t (h d)", "mean"),
            EinMix("b t c -> b t e", weight_shape="c e", bias_shape="e", c=6, e=5),
        ]
    )
    params = model.init(jax.random.key(0), np.zeros((2, 4, 6), np.float32))
    _exported_runs(lambda x: model.apply(params, x))


def test_nnx_layers() -> None:
    from tensorops.layers.nnx import EinMix, Rearrange, Reduce

    mix = EinMix("b t c -> b t e", weight_shape="c e", c=6, e=5, rngs=nnx.Rngs(0))
    layers = [Rearrange("b t c -> b c t"), Reduce("b c t -> b t c", "max")]
    _exported_runs(lambda x: mix(layers[1](layers[0](x))))


def test_equinox_layers() -> None:
    pytest.importorskip("equinox")
    from tensorops.layers.equinox import EinMix, Rearrange

    mix = EinMix("b t c -> b t e", weight_shape="c e", c=6, e=5, key=jax.random.key(0))
    swap = Rearrange("b t c -> b c t")
    _exported_runs(lambda x: swap(mix(x)))
