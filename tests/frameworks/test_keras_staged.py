"""A Keras model with a ``None`` batch: built, fitted on a partial last batch, saved, loaded.

The model calls tensorops both through its layers (`tensorops.layers.keras`) and as
functions inside a custom layer (an attention: ``tops.einsum`` with the batch unknown in
both operands, a softmax, another einsum). It is built on ``keras.Input`` (batch None),
fitted on a ``tf.data`` pipeline whose last batch is smaller, saved as ``.keras``,
loaded and run at other batch sizes. The same model written with einops runs beside it.
Each Keras backend runs it in its own process (``tests/test_frameworks.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

keras = pytest.importorskip("keras")

from tensorops.layers.keras import EinMix, Rearrange, Reduce  # noqa: E402

import tensorops as tops  # noqa: E402
from tests._seed import rng, tolerance  # noqa: E402

pytestmark = pytest.mark.filterwarnings(
    # Keras' own Variable.__array__ and its torch backend's convert_to_numpy call NumPy 2
    # without the `copy` keyword; get_weights and model.save go through them.
    "ignore:__array__ implementation doesn't accept a copy keyword:DeprecationWarning"
)


@keras.saving.register_keras_serializable("tensorops_staged")
class Attention(keras.layers.Layer):
    """Self-attention written with tensorops' functions: the batch is unknown in both operands."""

    def __init__(self, heads: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.heads = heads

    def call(self, x: Any) -> Any:
        q = tops.rearrange(x, "b t (h d) -> b h t d", h=self.heads)
        scores = tops.einsum(q, q, "b h i d, b h j d -> b h i j")
        weights = tops.softmax(scores, "b h i [j]")
        mixed = tops.einsum(weights, q, "b h i j, b h j d -> b h i d")
        return tops.rearrange(mixed, "b h t d -> b t (h d)")

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "heads": self.heads}


def model() -> keras.Model:
    inputs = keras.Input((4, 3, 2))  # the batch is None
    x = Rearrange("b t c w -> b t (c w)")(inputs)
    x = EinMix("b t c -> b t e", weight_shape="c e", bias_shape="e", c=6, e=8)(x)
    x = Attention(heads=2)(x)
    x = Reduce("b t e -> b e", "mean")(x)
    return keras.Model(inputs, keras.layers.Dense(1)(x))


def _data() -> tuple[np.ndarray, np.ndarray]:
    data = rng("keras staged")
    return (
        data.standard_normal((10, 4, 3, 2)).astype(np.float32),
        data.standard_normal((10, 1)).astype(np.float32),
    )


def test_a_model_with_a_none_batch_builds_fits_saves_and_loads(tmp_path: Any) -> None:
    built = model()
    assert built.output_shape == (None, 1)
    x, y = _data()
    built.compile(optimizer="sgd", loss="mse")
    if keras.backend.backend() == "tensorflow":
        import tensorflow as tf

        batches = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)  # 4, 4, then 2
        history = built.fit(batches, epochs=2, verbose=0, shuffle=False)
    else:
        history = built.fit(x, y, batch_size=4, epochs=2, verbose=0)  # 4, 4, then 2
    assert np.isfinite(history.history["loss"]).all()
    path = str(tmp_path / "model.keras")
    built.save(path)
    loaded = keras.saving.load_model(path)
    for batch in (1, 3, 10):
        want = tops.asnumpy(built(x[:batch]))
        got = tops.asnumpy(loaded.predict(x[:batch], verbose=0))
        assert got.shape == (batch, 1)
        np.testing.assert_allclose(got, want, **tolerance(np.float32, terms=48))


def test_the_einops_model_beside_it(tmp_path: Any) -> None:
    einops_keras = pytest.importorskip("einops.layers.keras")
    import einops

    @keras.saving.register_keras_serializable("einops_staged")
    class EinopsAttention(keras.layers.Layer):
        def call(self, x: Any) -> Any:
            q = einops.rearrange(x, "b t (h d) -> b h t d", h=2)
            scores = einops.einsum(q, q, "b h i d, b h j d -> b h i j")
            weights = keras.ops.softmax(scores, axis=-1)
            mixed = einops.einsum(weights, q, "b h i j, b h j d -> b h i d")
            return einops.rearrange(mixed, "b h t d -> b t (h d)")

    inputs = keras.Input((4, 3, 2))
    x = einops_keras.Rearrange("b t c w -> b t (c w)")(inputs)
    x = EinopsAttention()(x)
    x = einops_keras.Reduce("b t e -> b e", "mean")(x)
    built = keras.Model(inputs, x)
    x_data, _ = _data()
    # where einops builds this model, tensorops' (above) builds too; the results agree
    want = tops.reduce(x_data.reshape(10, 4, 6), "b t e -> b e", "mean")
    assert built.output_shape == (None, 6)
    assert tops.asnumpy(built(x_data)).shape == want.shape
