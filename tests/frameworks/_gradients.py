"""The gradient cases that MLX's and tinygrad's tests compare with torch's autograd.

Each case is ``name -> (f, arrays)``: ``f`` is a tensorops call on arrays of one family,
``arrays`` the NumPy values it is called with; the floating ones are differentiated.
A framework's test file adds the cases only it runs.

Example::

    GRADIENT_CASES = {**CASES, "split": (lambda x: ..., (X,))}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import tensorops as tops
from tests._seed import rng

RNG = rng("tests/frameworks/_gradients.py")

X = RNG.standard_normal((2, 3, 4))
W = RNG.standard_normal((4, 5))
INDEX = np.array([[0, 2, 2, 1], [1, 0, 2, 2]])  # b p, with repeats
VALUES = RNG.standard_normal((2, 4, 4))

Case = tuple[Callable[..., Any], tuple[np.ndarray, ...]]

CASES: dict[str, Case] = {
    "rearrange": (lambda x: tops.rearrange(x, "a b c -> c (a b)"), (X,)),
    "repeat": (lambda x: tops.repeat(x, "a b c -> a r b c", r=3), (X,)),
    "sum": (lambda x: tops.reduce(x, "a b c -> b", "sum"), (X,)),
    "mean": (lambda x: tops.reduce(x, "a b c -> a c", "mean"), (X,)),
    "max": (lambda x: tops.reduce(x, "a b c -> c", "max"), (X,)),
    "min": (lambda x: tops.reduce(x, "a b c -> a", "min"), (X,)),
    "prod": (lambda x: tops.reduce(x, "a b c -> a c", "prod"), (X,)),
    "logsumexp": (lambda x: tops.reduce(x, "a b c -> b", "logsumexp"), (X,)),
    "var": (lambda x: tops.reduce(x, "a b c -> a", "var"), (X,)),
    "std": (lambda x: tops.reduce(x, "a b c -> c", "std"), (X,)),
    "einsum": (lambda x, w: tops.einsum(x, w, "a b c, c d -> a d b"), (X, W)),
    "einsum_three": (lambda x, w, v: tops.einsum("abc,cd,ab->d", x, w, v), (X, W, X[..., 0])),
    "softmax": (lambda x: tops.softmax(x, "a [b] c"), (X,)),
    "log_softmax": (lambda x: tops.log_softmax(x, "[a] b [c]"), (X,)),
    "get_at": (lambda x, i: tops.get_at(x, i, "b [t] c, b p -> b p c"), (X, INDEX)),
    "set_at": (
        lambda x, i, v: tops.set_at(x, i, v, "b [t] c, b p, b p c -> b [t] c"),
        (X, np.array([[0, 2, 1], [1, 0, 2]]), VALUES[:, :3]),
    ),
    "add_at": (
        lambda x, i, v: tops.add_at(x, i, v, "b [t] c, b p, b p c -> b [t] c"),
        (X, INDEX, VALUES),
    ),
    "concat": (lambda x, y: tops.rearrange([x, y], "a b c, a b d -> a b (c + d)"), (X, X[..., :2])),
    "multiply": (lambda x, y: tops.multiply(x, y, "a b c, c -> c a b"), (X, X[0, 0])),
    "logaddexp": (lambda x, y: tops.logaddexp(x, y, "a b c, a b c -> a b c"), (X, X[::-1])),
    "flip": (lambda x: tops.flip(x, "[a] b [c]"), (X,)),
    "roll": (lambda x: tops.roll(x, "a [b] c", shift=1), (X,)),
    "cumsum": (lambda x: tops.cumsum(x, "a b [c]"), (X,)),
    "sort": (lambda x: tops.sort(x, "a b [c]"), (X,)),
    "semiring": (lambda x, w: tops.einsum("abc,cd->ad", x, w, semiring="logsumexp"), (X, W)),
}
