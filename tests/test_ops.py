"""rearrange / reduce / repeat / pack / unpack / parse_shape on every installed family.

Oracles: einops (test-only) and plain NumPy.
"""

from __future__ import annotations

import threading
from typing import Any

import einops
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorops as tops
from tensorops import _pack_patterns

REARRANGE_CASES = [
    ("b c h w -> b h w c", (2, 3, 4, 5), {}),
    ("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", (2, 3, 8, 8), {"p1": 4, "p2": 4}),
    ("b (h w) c -> b h w c", (2, 12, 3), {"h": 3}),
    ("b h w c -> (b h) w c", (2, 3, 4, 5), {}),
    ("b h w c -> h (b w) c", (2, 3, 4, 5), {}),
    ("b ... c -> b c ...", (2, 3, 4, 5), {}),
    ("... c -> c ...", (5,), {}),
    ("b ... -> b (...)", (2, 3, 4, 5), {}),
    ("b c h w -> b 1 c h w 1", (2, 3, 4, 5), {}),
    ("b 1 c () -> b c", (2, 1, 3, 1), {}),
    ("a b c -> c b a", (0, 3, 2), {}),
    ("(a b) -> b a", (6,), {"a": 2}),
    ("->", (), {}),
    ("-> 1 1", (), {}),
    ("a -> a", (7,), {}),
    ("a b -> (b a)", (3, 4), {}),
]


@pytest.mark.parametrize(("pattern", "shape", "lengths"), REARRANGE_CASES)
def test_rearrange_matches_einops(
    backend: Any, pattern: str, shape: tuple[int, ...], lengths: dict[str, int]
) -> None:
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    expected = einops.rearrange(x, pattern, **lengths)
    result = tops.rearrange(backend.asarray(x), pattern, **lengths)
    assert backend.is_own(result, backend.asarray(x))
    np.testing.assert_array_equal(backend.to_numpy(result), expected)


REDUCE_CASES = [
    ("b c (h 2) (w 2) -> b c h w", (2, 3, 4, 6), {}),
    ("b c h w -> b c", (2, 3, 4, 5), {}),
    ("b c h w -> b c 1 1", (2, 3, 4, 5), {}),
    ("b c h w -> c b", (2, 3, 4, 5), {}),
    ("b ... -> b", (2, 3, 4), {}),
    ("... c -> c", (4, 3), {}),
    ("(b g) c -> g c", (6, 2), {"g": 3}),
    ("a b -> ", (3, 4), {}),
    ("a b -> b a", (3, 4), {}),
]


@pytest.mark.parametrize("reduction", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize(("pattern", "shape", "lengths"), REDUCE_CASES)
def test_reduce_matches_einops(
    backend: Any, pattern: str, shape: tuple[int, ...], lengths: dict[str, int], reduction: str
) -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 1.5, size=shape).astype(np.float64)
    expected = einops.reduce(x, pattern, reduction, **lengths)
    result = tops.reduce(backend.asarray(x), pattern, reduction, **lengths)
    np.testing.assert_allclose(backend.to_numpy(result), expected, rtol=1e-12)


@pytest.mark.parametrize("reduction", ["any", "all"])
def test_reduce_any_all(backend: Any, reduction: str) -> None:
    x = np.array([[True, False, True], [True, True, True]])
    expected = getattr(np, reduction)(x, axis=1)
    result = tops.reduce(backend.asarray(x), "a b -> a", reduction)
    np.testing.assert_array_equal(backend.to_numpy(result), expected)


def test_reduce_callable_hits_the_plan_cache() -> None:
    x = np.arange(24.0).reshape(2, 3, 4)
    tops.reduce(x, "a b c -> a", lambda t, axes: t.sum(axis=axes))
    from tensorops._dispatch import bound_plan

    before = bound_plan.cache_info()
    for _ in range(5):
        result = tops.reduce(x, "a b c -> a", lambda t, axes: t.sum(axis=axes))
    after = bound_plan.cache_info()
    assert after.misses == before.misses
    assert after.hits == before.hits + 5
    np.testing.assert_array_equal(result, x.sum(axis=(1, 2)))


def test_reduce_callable_receives_axes() -> None:
    seen = []

    def record(t: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        seen.append(axes)
        return t.max(axis=axes)

    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(tops.reduce(x, "a b c -> b", record), x.max(axis=(0, 2)))
    assert seen == [(0, 2)]


REPEAT_CASES = [
    ("h w -> h w c", (3, 4), {"c": 3}),
    ("h w -> (h 2) (w 3)", (3, 4), {}),
    ("h w -> c h w", (3, 4), {"c": 2}),
    ("b h w -> b (h h2) (w w2)", (2, 3, 4), {"h2": 2, "w2": 2}),
    ("... -> ... r", (2, 3), {"r": 2}),
    ("a -> a", (4,), {}),
    ("a b -> b a c", (2, 3), {"c": 0}),
]


@pytest.mark.parametrize(("pattern", "shape", "lengths"), REPEAT_CASES)
def test_repeat_matches_einops(
    backend: Any, pattern: str, shape: tuple[int, ...], lengths: dict[str, int]
) -> None:
    x = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    expected = einops.repeat(x, pattern, **lengths)
    result = tops.repeat(backend.asarray(x), pattern, **lengths)
    np.testing.assert_array_equal(backend.to_numpy(result), expected)


def test_list_input_is_stacked(backend: Any) -> None:
    xs = [np.full((2, 3), float(i)) for i in range(4)]
    result = tops.rearrange([backend.asarray(x) for x in xs], "n h w -> h (n w)")
    np.testing.assert_array_equal(
        backend.to_numpy(result), einops.rearrange(xs, "n h w -> h (n w)")
    )
    reduced = tops.reduce(tuple(backend.asarray(x) for x in xs), "n h w -> h w", "sum")
    np.testing.assert_array_equal(backend.to_numpy(reduced), np.sum(xs, axis=0))


def test_pack_unpack_round_trip(backend: Any) -> None:
    cls = np.arange(2 * 8.0).reshape(2, 8)
    patches = np.arange(2 * 4 * 4 * 8.0).reshape(2, 4, 4, 8)
    packed, ps = tops.pack([backend.asarray(cls), backend.asarray(patches)], "b * d")
    expected, expected_ps = einops.pack([cls, patches], "b * d")
    np.testing.assert_array_equal(backend.to_numpy(packed), expected)
    assert ps == [tuple(s) for s in expected_ps]
    a, b = tops.unpack(packed, ps, "b * d")
    np.testing.assert_array_equal(backend.to_numpy(a), cls)
    np.testing.assert_array_equal(backend.to_numpy(b), patches)
    _a2, b2 = tops.unpack(packed, [(), (-1, 4)], "b * d")
    np.testing.assert_array_equal(backend.to_numpy(b2), patches)


@pytest.mark.parametrize(
    ("pattern", "shapes"),
    [("* d", [(3, 4), (4,), (2, 2, 4)]), ("b *", [(2,), (2, 3)]), ("*", [(2, 3), ()])],
)
def test_pack_matches_einops(pattern: str, shapes: list[tuple[int, ...]]) -> None:
    xs = [np.arange(int(np.prod(s)), dtype=np.float64).reshape(s) for s in shapes]
    packed, ps = tops.pack(xs, pattern)
    expected, expected_ps = einops.pack(xs, pattern)
    np.testing.assert_array_equal(packed, expected)
    assert ps == [tuple(s) for s in expected_ps]
    for got, want in zip(tops.unpack(packed, ps, pattern), xs, strict=True):
        np.testing.assert_array_equal(got, want)


_PACK_WORDS = ("a", "b", "c", "*", "_", "_a", "a_", "1", "(a", "a)", "...", ",", "->", "\u00e9")


@settings(max_examples=1000)
@given(st.lists(st.sampled_from(_PACK_WORDS), max_size=5), st.sampled_from(["pack", "unpack"]))
def test_pack_patterns_of_plain_words_read_as_the_grammar_reads_them(
    words: list[str], op: str
) -> None:
    """Names and one '*' are read from the words; the same answer as the grammar's."""
    pattern = " ".join(words)
    plain = _pack_patterns.plain_pack_term(pattern)
    try:
        read: object = _pack_patterns.grammar_pack_term(op, pattern)
    except tops.TensorOpsError:
        read = None  # the grammar refuses it: the words must not take it
    assert plain is None or plain == read


def test_parse_shape(backend: Any) -> None:
    x = backend.asarray(np.zeros((8, 3, 32, 16)))
    assert tops.parse_shape(x, "b c _ _") == {"b": 8, "c": 3}
    assert tops.parse_shape(x, "b ... w") == {"b": 8, "w": 16}
    assert tops.parse_shape(x, "... h w") == einops.parse_shape(np.zeros((8, 3, 32, 16)), "... h w")
    assert tops.parse_shape(x, "_ _ _ _") == {}
    assert tops.parse_shape(x, "b c h w ...") == {"b": 8, "c": 3, "h": 32, "w": 16}


def test_rearrange_returns_a_view_on_numpy() -> None:
    x = np.zeros((2, 3, 4, 5))
    y = tops.rearrange(x, "b c h w -> b h w c")
    assert np.shares_memory(x, y)
    z = tops.rearrange(x, "b c h w -> (b c) h w")
    assert np.shares_memory(x, z)
    # Merging permuted axes cannot be a view: one copy.
    w = tops.rearrange(x, "b c h w -> b (h w c)")
    assert not np.shares_memory(x, w)


def test_rearrange_returns_a_view_on_torch() -> None:
    torch = pytest.importorskip("torch")
    x = torch.zeros(2, 3, 4, 5)
    y = tops.rearrange(x, "b c h w -> b h w c")
    assert y.data_ptr() == x.data_ptr()
    assert y._base is x


def test_repeat_broadcasts_without_copying() -> None:
    x = np.arange(12.0).reshape(3, 4)
    y = tops.repeat(x, "h w -> h w c", c=1000)
    assert np.shares_memory(x, y)
    assert not y.flags.writeable
    assert y.strides[-1] == 0


def test_repeat_broadcasts_without_copying_on_torch() -> None:
    torch = pytest.importorskip("torch")
    x = torch.arange(12.0).reshape(3, 4)
    y = tops.repeat(x, "h w -> c h w", c=1000)
    assert y.stride()[0] == 0
    assert y.data_ptr() == x.data_ptr()


def test_non_contiguous_and_negative_strides(backend: Any) -> None:
    base = np.arange(2 * 3 * 4 * 5.0).reshape(2, 3, 4, 5)
    for x in (base[:, :, ::-1], base.transpose(3, 1, 0, 2), base[..., ::2]):
        expected = einops.rearrange(x, "a b c d -> (d b) c a")
        got = tops.rearrange(backend.asarray(np.ascontiguousarray(x)), "a b c d -> (d b) c a")
        np.testing.assert_array_equal(backend.to_numpy(got), expected)
        np.testing.assert_array_equal(tops.rearrange(x, "a b c d -> (d b) c a"), expected)


def test_torch_non_contiguous_input() -> None:
    torch = pytest.importorskip("torch")
    x = torch.arange(120.0).reshape(2, 3, 4, 5).permute(3, 1, 0, 2)
    got = tops.rearrange(x, "a b c d -> (d b) c a")
    expected = einops.rearrange(x.numpy(), "a b c d -> (d b) c a")
    np.testing.assert_array_equal(got.numpy(), expected)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int32", "int64", "bool", "complex64"])
def test_dtypes_are_preserved_on_torch(dtype: str) -> None:
    torch = pytest.importorskip("torch")
    x = torch.ones(2, 4, dtype=getattr(torch, dtype))
    assert tops.rearrange(x, "a (b c) -> c a b", c=2).dtype == x.dtype
    assert tops.repeat(x, "a b -> a b r", r=2).dtype == x.dtype
    reduction = "sum" if dtype == "complex64" else "max"  # torch orders no complex numbers
    assert tops.reduce(x, "a b -> a", reduction).dtype == x.dtype


def test_framework_refusal_is_a_tensorops_error() -> None:
    torch = pytest.importorskip("torch")
    with pytest.raises(tops.TensorOpsError) as info:
        tops.reduce(torch.ones(2, 4, dtype=torch.complex64), "a b -> a", "max")
    assert "complex" in str(info.value).lower()


@pytest.mark.parametrize("dtype", ["float16", "float32", "int8", "uint16", "bool", "complex128"])
def test_dtypes_are_preserved_on_numpy(dtype: str) -> None:
    x = np.ones((2, 4), dtype=dtype)
    assert tops.rearrange(x, "a (b c) -> c a b", c=2).dtype == x.dtype
    assert tops.repeat(x, "a b -> a b r", r=2).dtype == x.dtype
    assert tops.reduce(x, "a b -> a", "max").dtype == x.dtype


def test_zero_d_inputs(backend: Any) -> None:
    x = backend.asarray(np.array(3.0))
    assert backend.to_numpy(tops.rearrange(x, "-> 1")).shape == (1,)
    assert backend.to_numpy(tops.repeat(x, "-> r", r=3)).tolist() == [3.0, 3.0, 3.0]
    assert float(backend.to_numpy(tops.reduce(x, "->", "sum"))) == 3.0


def test_zero_size_axes(backend: Any) -> None:
    x = backend.asarray(np.zeros((0, 3, 4)))
    assert backend.to_numpy(tops.rearrange(x, "a b c -> (b a) c")).shape == (0, 4)
    assert backend.to_numpy(tops.reduce(x, "a b c -> b c", "sum")).shape == (3, 4)
    assert backend.to_numpy(tops.repeat(x, "a b c -> a b c r", r=2)).shape == (0, 3, 4, 2)


def test_inputs_are_not_modified() -> None:
    x = np.arange(24.0).reshape(2, 3, 4)
    copy = x.copy()
    tops.reduce(x, "a b c -> a", "sum")
    tops.rearrange(x, "a b c -> c b a")
    tops.repeat(x, "a b c -> a b c r", r=2)
    np.testing.assert_array_equal(x, copy)
    assert x.flags.writeable


def test_numpy_integer_lengths_are_accepted() -> None:
    x = np.zeros((6, 4))
    assert tops.rearrange(x, "(a b) c -> a b c", a=np.int64(2)).shape == (2, 3, 4)


def test_concurrent_use_from_eight_threads() -> None:
    errors: list[BaseException] = []
    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal((2, 3 + i, 4, 6)) for i in range(8)]

    def work(i: int) -> None:
        try:
            x = inputs[i]
            for _ in range(200):
                got = tops.reduce(x, "b c h (w 2) -> b h w", "max")
                np.testing.assert_array_equal(got, einops.reduce(x, "b c h (w 2) -> b h w", "max"))
                got = tops.rearrange(x, "b c h w -> (w b) c h")
                np.testing.assert_array_equal(got, einops.rearrange(x, "b c h w -> (w b) c h"))
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[0]
