"""Keras and Paddle models: the layer families imported as modules."""

import keras
from einops.layers.keras import Rearrange as KerasRearrange
from tensorops.layers import keras as tk
from tensorops.layers.paddle import EinMix as PaddleMix
from tensorops.layers.paddle import Reduce as PaddleReduce


def classifier(classes: int = 10, patch: int = 4) -> keras.Sequential:
    return keras.Sequential(
        [
            tk.Rearrange("b (h p) (w q) c -> b (h w) (p q c)", p=patch, q=patch),
            keras.layers.Dense(32),
            tk.Reduce("b n d -> b d", "mean"),
            keras.layers.Dense(classes),
        ]
    )


def tokens_first() -> KerasRearrange:
    return KerasRearrange("b h w c -> b (h w) c")


def paddle_head(dim: int = 16, classes: int = 4) -> list[object]:
    return [
        PaddleReduce("b n d -> b d", "max"),
        PaddleMix("b d -> b k", weight_shape="d k", bias_shape="k", d=dim, k=classes),
    ]
