"""The calls every staged mode runs: the same call in each graph mode, with einops beside.

A graph mode (``tf.function`` with ``None`` dims, Keras, a SavedModel, ``paddle.jit.to_static``
with ``-1`` dims, ``jax.export`` with symbolic dims, PyTensor, ``torch.jit.trace``, the ONNX
exporters) builds a graph before the lengths are known. Each `Case` here is one call, written
once for both libraries (``ops`` is ``tensorops`` or `EINOPS`, einops' functions with the
same signatures): a mode's test builds the call's graph with unknown lengths at one size, runs
it at others, and compares with the eager result of tensorops on NumPy arrays.

An input's shape holds ``None`` for the lengths the graph does not know (the batch, a
sequence length); `arrays` fills them in.

Example::

    for case in CASES:
        f = tf.function(lambda *xs: case.run(tops, *xs), input_signature=...)
        for n in SIZES:
            check(f(*case.arrays(n)), case.expected(n))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import tensorops as tops
from tests._seed import rng, tolerance

#: The sizes an unknown length takes when a built graph is called (the build uses the first).
SIZES = (2, 3, 5)


class _Einops:
    """einops' functions under tensorops' names, imported when first used."""

    def __getattr__(self, name: str) -> Any:
        import einops

        return getattr(einops, name)


#: einops, as a case calls it.
EINOPS: Any = _Einops()


@dataclass(frozen=True)
class Input:
    """One input of a case: its shape (None: unknown in the graph) and dtype.

    ``below`` makes an integer input of values in ``[0, below)`` (an index).
    """

    shape: tuple[int | None, ...]
    dtype: str = "float32"
    below: int | None = None

    def array(self, n: int, seed: Any) -> np.ndarray:
        shape = tuple(n if length is None else length for length in self.shape)
        generator = rng("staged", seed, shape, self.dtype)
        if self.below is not None:
            return generator.integers(0, self.below, size=shape).astype(self.dtype)
        return generator.normal(size=shape).astype(self.dtype)


@dataclass(frozen=True)
class Case:
    """One call: a name, its inputs, the call itself, and whether einops has it."""

    name: str
    inputs: tuple[Input, ...]
    run: Callable[..., Any]
    einops: bool = False
    tags: frozenset[str] = field(default_factory=frozenset)

    def arrays(self, n: int) -> list[np.ndarray]:
        """The inputs at size `n` (each unknown length `n`), the same for every mode."""
        return [x.array(n, (self.name, i)) for i, x in enumerate(self.inputs)]

    def expected(self, n: int) -> list[np.ndarray]:
        """tensorops' eager result on NumPy arrays, as a list of arrays."""
        return flatten(self.run(tops, *self.arrays(n)))


def flatten(result: Any) -> list[Any]:
    """A result (an array, a list or tuple of them) as a flat list of arrays."""
    if isinstance(result, (list, tuple)):
        return [leaf for item in result for leaf in flatten(item)]
    if isinstance(result, dict):
        return [leaf for key in sorted(result) for leaf in flatten(result[key])]
    return [result]


def _x(*shape: int | None, dtype: str = "float32", below: int | None = None) -> Input:
    return Input(tuple(shape), dtype, below)


B = None  # an unknown length

CASES: tuple[Case, ...] = (
    # rearrange
    Case("merge", (_x(B, 3, 4),), lambda ops, x: ops.rearrange(x, "b c w -> b (c w)"), True),
    Case(
        "split", (_x(B, 6, 2),), lambda ops, x: ops.rearrange(x, "b (h w) c -> b h w c", h=2), True
    ),
    Case(
        "unknown split", (_x(2, B),), lambda ops, x: ops.rearrange(x, "c (h w) -> h c w", w=1), True
    ),
    Case(
        "merge unknowns", (_x(B, B, 3),), lambda ops, x: ops.rearrange(x, "a b c -> (a b) c"), True
    ),
    Case("dots", (_x(B, 2, 3, 4),), lambda ops, x: ops.rearrange(x, "b ... c -> b c ..."), True),
    Case("list", (_x(B, 3),), lambda ops, x: ops.rearrange([x, x], "n b c -> b n c"), True),
    # reduce
    Case("sum", (_x(B, 3, 4),), lambda ops, x: ops.reduce(x, "b c w -> b c", "sum"), True),
    Case("mean over b", (_x(B, 3),), lambda ops, x: ops.reduce(x, "b c -> c", "mean"), True),
    Case(
        "max pool",
        (_x(B, 2, 4, 6),),
        lambda ops, x: ops.reduce(x, "b c (h 2) (w 2) -> b c h w", "max"),
        True,
    ),
    Case("min", (_x(B, 3),), lambda ops, x: ops.reduce(x, "b c -> b", "min"), True),
    Case("prod", (_x(B, 3),), lambda ops, x: ops.reduce(x, "b c -> b 1", "prod"), True),
    Case("logsumexp", (_x(B, 3, 4),), lambda ops, x: ops.reduce(x, "b c w -> b", "logsumexp")),
    Case("var", (_x(B, 5),), lambda ops, x: ops.reduce(x, "b c -> c", "var")),
    Case("argmax", (_x(B, 3, 4),), lambda ops, x: ops.reduce(x, "b c w -> b", "argmax")),
    # repeat
    Case("repeat", (_x(B, 3),), lambda ops, x: ops.repeat(x, "b c -> b c r", r=2), True),
    Case("repeat compose", (_x(B, 3),), lambda ops, x: ops.repeat(x, "b c -> (b 2) c"), True),
    # einsum
    Case(
        "attention",
        (_x(B, 2, B, 4), _x(B, 2, B, 4)),
        lambda ops, q, k: ops.einsum(q, k, "b h i d, b h j d -> b h i j"),
        True,
    ),
    Case(
        "batched matmul",
        (_x(B, 3, 4), _x(B, 4, 5)),
        lambda ops, a, b: ops.einsum("bij,bjk->bik", a, b),
    ),
    Case(
        "contract unknown",
        (_x(B, 3), _x(B, 4)),
        lambda ops, a, b: ops.einsum(a, b, "b i, b j -> i j"),
        True,
    ),
    Case(
        "composed",
        (_x(B, 6), _x(3, 5)),
        lambda ops, x, w: ops.einsum("b (h d), d e -> b h e", x, w, h=2),
    ),
    Case(
        "chain",
        (_x(B, 3), _x(3, 4), _x(4, B)),
        lambda ops, a, b, c: ops.einsum(a, b, c, "i j, j k, k l -> i l"),
        True,
    ),
    # pack / unpack, parse_shape, check
    Case(
        "pack unpack",
        (_x(B, 3), _x(B, 2, 3)),
        lambda ops, x, y: ops.unpack(*ops.pack([x, y], "b * c"), "b * c"),
        True,
    ),
    Case(
        "pack unknowns",
        (_x(2, B, 3), _x(2, 4)),
        lambda ops, x, y: ops.unpack(*ops.pack([x, y], "a *"), "a *"),
        True,
    ),
    Case(
        "parse_shape",
        (_x(B, 3), _x(4)),
        lambda ops, x, y: ops.repeat(y, "c -> b c", **ops.parse_shape(x, "b _")),
        True,
    ),
    Case(
        "check",
        (_x(B, 3), _x(B, 4)),
        lambda ops, x, y: ops.repeat(ops.check(y, "b c", c=4), "b c -> b c n", **{"n": 2}),
    ),
    Case(
        "check lengths",
        (_x(B, 3), _x(B, 4)),
        lambda ops, x, y: ops.repeat(x, "b c -> b c d", d=ops.check([x, y], "b c, b d")["d"]),
    ),
    # softmax, concatenation, element-wise, indexing, along
    Case("softmax", (_x(B, 3, 4),), lambda ops, x: ops.softmax(x, "b [c w]")),
    Case("log_softmax", (_x(B, 3),), lambda ops, x: ops.log_softmax(x, "[b] c")),
    Case(
        "concat",
        (_x(B, 3), _x(B, 2)),
        lambda ops, x, y: ops.rearrange([x, y], "b c1, b c2 -> b (c1 + c2)"),
    ),
    Case(
        "concat unknowns",
        (_x(B, 3), _x(B, 3)),
        lambda ops, x, y: ops.rearrange([x, y], "b1 c, b2 c -> (b1 + b2) c"),
    ),
    Case(
        "split parts",
        (_x(B, 5),),
        lambda ops, x: ops.rearrange(x, "b (c1 + c2) -> b c1, b c2", c1=2),
    ),
    Case("multiply", (_x(B, 3), _x(3)), lambda ops, x, w: ops.multiply(x, w, "b c, c -> b c")),
    Case("add unknowns", (_x(B, 3), _x(B)), lambda ops, x, y: ops.add(x, y, "b c, b -> b c")),
    Case(
        "where",
        (_x(B, 3), _x(B, 3)),
        lambda ops, x, y: ops.where(x > 0, x, y, "b c, b c, b c -> b c"),
    ),
    Case(
        "get_at",
        (_x(B, 5, 3), _x(B, 4, dtype="int64", below=5)),
        lambda ops, x, i: ops.get_at(x, i, "b [t] c, b p -> b p c"),
    ),
    Case(
        "add_at",
        (_x(B, 5, 3), _x(B, 4, dtype="int64", below=5), _x(B, 4, 3)),
        lambda ops, x, i, v: ops.add_at(x, i, v, "b [t] c, b p, b p c -> b [t] c"),
        tags=frozenset({"scatter"}),
    ),
    Case("flip", (_x(B, 4, 3),), lambda ops, x: ops.flip(x, "b [t] c")),
    Case("roll", (_x(B, 4, 3),), lambda ops, x: ops.roll(x, "b [t] c", shift=1)),
    Case("sort", (_x(B, 4),), lambda ops, x: ops.sort(x, "b [t]")),
    Case("cumsum", (_x(B, 4),), lambda ops, x: ops.cumsum(x, "[b] t")),
)


def einops_beside(case: Case, run: Callable[[], None]) -> bool:
    """Run einops' version of `case` in a mode (`run` builds and checks it): whether it works.

    einops may fail to build a call's graph, or build one that gives wrong results at
    other sizes; either is einops' own, and tensorops' version is checked whatever it
    does.
    """
    if not case.einops:
        return False
    try:
        run()
    except Exception:  # einops cannot build or run this call here
        return False
    return True


def case_ids(cases: Sequence[Case]) -> list[str]:
    """The test ids of `cases`."""
    return [case.name.replace(" ", "-") for case in cases]


def assert_same(
    got: Any, want: Sequence[np.ndarray], to_numpy: Callable[[Any], np.ndarray]
) -> None:
    """`got` (a mode's result) equals `want` (the eager result), to float32 rounding."""
    found = flatten(got)
    assert len(found) == len(want), f"{len(found)} results, expected {len(want)}"
    for value, expected in zip(found, want, strict=True):
        value = np.asarray(to_numpy(value))
        assert value.shape == expected.shape, f"shape {value.shape}, expected {expected.shape}"
        if expected.dtype.kind == "f":
            np.testing.assert_allclose(value, expected, **tolerance(expected.dtype, terms=16))
        else:
            np.testing.assert_array_equal(value, expected)
