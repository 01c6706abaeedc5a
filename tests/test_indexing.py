"""get_at, set_at and add_at: every family against hand-written NumPy / torch code and einx."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorops as tops
from tests.messages import caret

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 5, 3))  # b t c
INDEX = np.array([[0, 4, 4, 1], [2, 2, 3, 0]])  # b p, with repeats
VALUES = RNG.standard_normal((2, 4, 3))  # b p c
IMAGE = RNG.standard_normal((2, 4, 5, 3))  # b h w c
POINTS = np.stack([RNG.integers(0, 4, (2, 6)), RNG.integers(0, 5, (2, 6))], axis=-1)  # b p [2]
SCATTER_FAMILIES = ("numpy", "torch", "jax", "mlx", "paddle", "tensorflow", "tinygrad", "pytensor")


def _batch_rows(n: int) -> np.ndarray:
    return np.arange(n)[:, None]


# --- get_at -------------------------------------------------------------------------------------

GATHERS = [
    # (pattern, array, index, expected)
    (
        "b [t] c, b p -> b p c",
        X,
        INDEX,
        np.take_along_axis(X, INDEX[..., None], axis=1),
    ),
    ("b [t] c, b p -> c p b", X, INDEX, X[_batch_rows(2), INDEX].transpose(2, 1, 0)),
    ("b [t] c, p b -> b p c", X, INDEX.T, X[_batch_rows(2), INDEX]),
    ("b [t] c, b p -> (b p) c", X, INDEX, X[_batch_rows(2), INDEX].reshape(8, 3)),
    ("b [t] c, b p [1] -> b p c", X, INDEX[..., None], X[_batch_rows(2), INDEX]),
    ("b [t] c, b -> b c", X, INDEX[:, 0], X[np.arange(2), INDEX[:, 0]]),
    ("b [t] c, p -> b p c", X, INDEX[0], X[:, INDEX[0]]),
    ("b [t] c, q p -> b q p c", X, INDEX, X[:, INDEX]),
    ("[t] c, b n -> b n c", X[0], INDEX, X[0][INDEX]),
    ("[t], b n -> b n", X[0, :, 0], INDEX, X[0, :, 0][INDEX]),
    ("b [t], b p -> b p", X[..., 0], INDEX, np.take_along_axis(X[..., 0], INDEX, axis=1)),
    ("c [t] b, b p -> b p c", X.transpose(2, 1, 0), INDEX, X[_batch_rows(2), INDEX]),
    (
        "b [h w] c, b p [2] -> b p c",
        IMAGE,
        POINTS,
        IMAGE[_batch_rows(2), POINTS[..., 0], POINTS[..., 1]],
    ),
    (
        "b [h] [w] c, [2] b p -> b p c",
        IMAGE,
        POINTS.transpose(2, 0, 1),
        IMAGE[_batch_rows(2), POINTS[..., 0], POINTS[..., 1]],
    ),
    (
        "[h w] c, p [2] -> p c",
        IMAGE[0],
        POINTS[0],
        IMAGE[0][POINTS[0, :, 0], POINTS[0, :, 1]],
    ),
    (
        "b [...] c, b p [2] -> b p c",
        IMAGE,
        POINTS,
        IMAGE[_batch_rows(2), POINTS[..., 0], POINTS[..., 1]],
    ),
    ("... [t] c, ... p -> ... p c", X, INDEX, X[_batch_rows(2), INDEX]),
]


@pytest.mark.parametrize(
    ("pattern", "x", "index", "expected"), GATHERS, ids=[g[0] for g in GATHERS]
)
def test_get_at(backend: Any, pattern: str, x: Any, index: Any, expected: Any) -> None:
    got = tops.get_at(backend.asarray(x), backend.asarray(index), pattern)
    np.testing.assert_array_equal(backend.to_numpy(got), expected)


def test_a_composed_axis_is_one_indexed_axis() -> None:
    flat = IMAGE.reshape(2, 20, 3)
    positions = POINTS[..., 0] * 5 + POINTS[..., 1]
    expected = IMAGE[_batch_rows(2), POINTS[..., 0], POINTS[..., 1]]
    got = tops.get_at(flat, positions, "b [(h w)] c, b p -> b p c", w=5)
    np.testing.assert_array_equal(got, expected)
    # (h w) is one indexed axis: a last index axis of 2 is two positions, not coordinates
    got = tops.get_at(flat, POINTS, "b [(h w)] c, b p q -> b p q c", w=5)
    assert got.shape == (2, 6, 2, 3)


def test_get_at_matches_torch_gather() -> None:
    torch = pytest.importorskip("torch")
    x, index = torch.randn(3, 7, 4), torch.randint(0, 7, (3, 5))
    expected = torch.gather(x, 1, index[..., None].expand(-1, -1, 4))
    assert torch.equal(tops.get_at(x, index, "b [t] c, b p -> b p c"), expected)
    table, tokens = torch.randn(10, 4), torch.randint(0, 10, (2, 3))
    embedded = tops.get_at(table, tokens, "[v] d, b n -> b n d")
    assert torch.equal(embedded, torch.nn.functional.embedding(tokens, table))
    for dtype in (torch.int32, torch.int16, torch.uint8):  # uint8 is not taken as a mask
        assert torch.equal(tops.get_at(x, index.to(dtype), "b [t] c, b p -> b p c"), expected), (
            dtype
        )


def test_get_at_keeps_dtype_and_device_family(backend: Any) -> None:
    x = backend.asarray(X.astype(np.float32))
    got = tops.get_at(x, backend.asarray(INDEX.astype(np.int32)), "b [t] c, b p -> b p c")
    assert backend.to_numpy(got).dtype == np.float32
    assert backend.is_own(got, x)


def test_get_at_matches_einx() -> None:
    einx = pytest.importorskip("einx")
    for pattern, x, index, _ in GATHERS:
        if "..." in pattern or "[1]" in pattern or "[2] b" in pattern:
            continue  # einx spells these differently or not at all
        np.testing.assert_array_equal(
            tops.get_at(x, index, pattern), einx.get_at(pattern, x, index), err_msg=pattern
        )


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.tuples(st.integers(1, 3), st.integers(1, 6), st.integers(1, 3), st.integers(0, 5)),
    seed=st.integers(0, 2**16),
)
def test_get_at_is_take_along_axis(sizes: tuple[int, int, int, int], seed: int) -> None:
    batch, length, channels, positions = sizes
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, length, channels))
    index = rng.integers(0, length, (batch, positions))
    got = tops.get_at(x, index, "b [t] c, b p -> b p c")
    np.testing.assert_array_equal(got, np.take_along_axis(x, index[..., None], axis=1))


def test_dask_get_at_stays_lazy() -> None:
    da = pytest.importorskip("dask.array")
    from dask.callbacks import Callback

    x, index = da.from_array(IMAGE, chunks=(1, 2, 5, 3)), da.from_array(POINTS, chunks=(1, 3, 2))
    started: list[object] = []
    with Callback(start=started.append):
        out = tops.get_at(x, index, "b [h w] c, b p [2] -> b p c")
        embedded = tops.get_at(x[0, 0], index[..., 1], "[w] c, b p -> b p c")
    assert started == []
    np.testing.assert_array_equal(out.compute(), GATHERS[12][3])
    np.testing.assert_array_equal(embedded.compute(), IMAGE[0, 0][POINTS[..., 1]])


# --- set_at, add_at -----------------------------------------------------------------------------


def _scattered(add: bool, x: np.ndarray, rows: tuple[Any, ...], values: np.ndarray) -> np.ndarray:
    out = x.copy()
    if add:
        np.add.at(out, rows, values)
    else:
        out[rows] = values
    return out


def _scatter_family(backend: Any) -> None:
    if backend.name not in SCATTER_FAMILIES:
        pytest.skip("the array API standard has no scatter")


UNIQUE = np.array([[0, 4, 2, 1], [2, 1, 3, 0]])  # no repeats: set_at is then defined


@pytest.mark.parametrize("add", [False, True], ids=["set_at", "add_at"])
def test_scatter(backend: Any, add: bool) -> None:
    _scatter_family(backend)
    op = tops.add_at if add else tops.set_at
    index = INDEX if add else UNIQUE
    got = op(*map(backend.asarray, (X, index, VALUES)), "b [t] c, b p, b p c -> b [t] c")
    expected = _scattered(add, X, (_batch_rows(2), index), VALUES)
    np.testing.assert_allclose(backend.to_numpy(got), expected, rtol=1e-14)
    # no batch axis, broadcast values, a rearranged output
    got = op(
        backend.asarray(X[0]),
        backend.asarray(index[0]),
        backend.asarray(VALUES[0, 0]),
        "[t] c, p, c -> c [t]",
    )
    expected = _scattered(add, X[0], (index[0],), VALUES[0, 0]).T
    np.testing.assert_allclose(backend.to_numpy(got), expected, rtol=1e-14)
    # two coordinates
    points = POINTS[:, :2] if add else np.array([[[0, 0], [3, 4]], [[1, 2], [2, 2]]])
    values = VALUES[:, :2]
    got = op(
        backend.asarray(IMAGE),
        backend.asarray(points),
        backend.asarray(values),
        "b [h w] c, b p [2], b p c -> b [h w] c",
    )
    expected = _scattered(add, IMAGE, (_batch_rows(2), points[..., 0], points[..., 1]), values)
    np.testing.assert_allclose(backend.to_numpy(got), expected, rtol=1e-14)
    # a number as the values
    got = op(backend.asarray(X), backend.asarray(index), 2.0, "b [t] c, b p, -> b [t] c")
    expected = _scattered(add, X, (_batch_rows(2), index), np.float64(2.0))
    np.testing.assert_allclose(backend.to_numpy(got), expected, rtol=1e-14)


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(1, 4), st.integers(0, 6)),
    add=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_scatter_of_points_is_numpy_indexing(
    sizes: tuple[int, int, int, int], add: bool, seed: int
) -> None:
    """set_at / add_at with two coordinates against NumPy's fancy indexing and np.add.at."""
    batch, height, width, positions = sizes
    rng = np.random.default_rng(seed)
    image = rng.standard_normal((batch, height, width, 2))
    if add:  # repeats add up
        flat = rng.integers(0, height * width, (batch, positions))
    else:  # no repeats: which value set_at writes is then defined
        positions = min(positions, height * width)
        flat = np.stack([rng.permutation(height * width)[:positions] for _ in range(batch)])
    points = np.stack([flat // width, flat % width], axis=-1)
    values = rng.standard_normal((batch, positions, 2))
    op = tops.add_at if add else tops.set_at
    got = op(image, points, values, "b [h w] c, b p [2], b p c -> b [h w] c")
    rows = (np.arange(batch)[:, None], points[..., 0], points[..., 1])
    np.testing.assert_allclose(got, _scattered(add, image, rows, values), rtol=1e-14)


def test_add_at_counts_repeats() -> None:
    counts = tops.add_at(np.zeros(6, dtype=np.int64), INDEX.ravel(), 1, "[t], p, -> [t]")
    np.testing.assert_array_equal(counts, np.bincount(INDEX.ravel(), minlength=6))
    torch = pytest.importorskip("torch")
    counts = tops.add_at(torch.zeros(6), torch.from_numpy(INDEX), 1.0, "[t], b p, -> [t]")
    np.testing.assert_array_equal(counts.numpy(), np.bincount(INDEX.ravel(), minlength=6))


def test_scatter_leaves_the_array_unchanged() -> None:
    x = X.copy()
    tops.set_at(x, UNIQUE, VALUES, "b [t] c, b p, b p c -> b [t] c")
    tops.add_at(x, INDEX, VALUES, "b [t] c, b p, b p c -> b [t] c")
    np.testing.assert_array_equal(x, X)
    torch = pytest.importorskip("torch")
    tx = torch.from_numpy(X.copy())
    tops.add_at(
        tx, torch.from_numpy(INDEX), torch.from_numpy(VALUES), "b [t] c, b p, b p c -> b [t] c"
    )
    tops.set_at(tx[0], torch.from_numpy(UNIQUE[0]), 0.0, "[t] c, p, -> [t] c")
    np.testing.assert_array_equal(tx.numpy(), X)


def test_values_are_cast_to_the_array_dtype() -> None:
    got = tops.set_at(np.zeros(4, np.float32), np.array([1]), np.array([2]), "[t], p, p -> [t]")
    assert got.dtype == np.float32
    torch = pytest.importorskip("torch")
    got = tops.add_at(
        torch.zeros(4), torch.tensor([1, 1]), torch.ones(2, dtype=torch.float64), "[t], p, p -> [t]"
    )
    assert got.dtype == torch.float32
    assert got.tolist() == [0.0, 2.0, 0.0, 0.0]


def test_scatter_matches_einx() -> None:
    einx = pytest.importorskip("einx")
    pattern = "b [t] c, b p, b p c -> b [t] c"
    np.testing.assert_allclose(
        tops.add_at(X, INDEX, VALUES, pattern), einx.add_at(pattern, X.copy(), INDEX, VALUES)
    )
    np.testing.assert_allclose(
        tops.set_at(X, UNIQUE, VALUES, pattern), einx.set_at(pattern, X.copy(), UNIQUE, VALUES)
    )
    pattern = "b [h w] c, b p [2], b p c -> b [h w] c"
    np.testing.assert_allclose(
        tops.add_at(IMAGE, POINTS, VALUES[:, 0], "b [h w] c, b p [2], b c -> b [h w] c"),
        einx.add_at("b [h w] c, b p [2], b c -> b [h w] c", IMAGE.copy(), POINTS, VALUES[:, 0]),
    )


def test_add_at_then_get_at_round_trip() -> None:
    """add_at is the adjoint of get_at: <get_at(x), v> == <x, add_at(0, v)>."""
    gathered = tops.get_at(X, INDEX, "b [t] c, b p -> b p c")
    spread = tops.add_at(np.zeros_like(X), INDEX, VALUES, "b [t] c, b p, b p c -> b [t] c")
    np.testing.assert_allclose((gathered * VALUES).sum(), (X * spread).sum())


def test_families_without_a_scatter_say_so(backend: Any) -> None:
    if backend.name in SCATTER_FAMILIES:
        pytest.skip("this family has a scatter")
    with pytest.raises(tops.BackendError) as info:
        tops.add_at(
            backend.asarray(X),
            backend.asarray(INDEX),
            backend.asarray(VALUES),
            "b [t] c, b p, b p c -> b [t] c",
        )
    assert "the array API standard defines no scatter" in info.value.reason
    assert "set_at and add_at run on numpy, torch, jax and mlx arrays" in info.value.reason


# --- errors -------------------------------------------------------------------------------------


def _error(call: Any) -> tops.TensorOpsError:
    with pytest.raises(tops.TensorOpsError) as info:
        call()
    return info.value


def test_out_of_range_message_on_numpy() -> None:
    error = _error(lambda: tops.get_at(X, INDEX + 1, "b [t] c, b p -> b p c"))
    assert str(error) == (
        "get_at: index 5 is out of range for axis t of length 5\n"
        '  pattern: "b [t] c, b p -> b p c"\n'
        "               ^\n"
        "  input 0: shape=(2, 5, 3) dtype=float64 backend=numpy\n"
        "  input 1: shape=(2, 4) dtype=int64 backend=numpy\n"
        "  hint:    an index lies in 0 <= i < length; a negative one does not count from the end"
    )
    assert isinstance(error, tops.ShapeError)


@pytest.mark.parametrize(
    ("call", "reason", "fragment", "occurrence"),
    [
        (
            lambda: tops.get_at(X, -INDEX - 1, "b [t] c, b p -> b p c"),
            "index -1 is out of range for axis t of length 5",
            "t",
            0,
        ),
        (
            lambda: tops.get_at(IMAGE, POINTS + np.array([0, 1]), "b [h w] c, b p [2] -> b p c"),
            "index 5 is out of range for axis w of length 5",
            "w",
            0,
        ),
        (
            lambda: tops.set_at(X, INDEX - 5, VALUES, "b [t] c, b p, b p c -> b [t] c"),
            "index -5 is out of range for axis t of length 5",
            "t",
            0,
        ),
        (
            lambda: tops.add_at(X, INDEX + 9, VALUES, "b [t] c, b p, b p c -> b [t] c"),
            "index 9 is out of range for axis t of length 5",
            "t",
            0,
        ),
        (
            lambda: tops.set_at(np.zeros(4), np.array([0, 4]), 1.0, "[t], p, -> [t]"),
            "index 4 is out of range for axis t of length 4",
            "t",
            0,
        ),
        (
            lambda: tops.add_at(
                IMAGE, POINTS - np.array([0, 6]), 1.0, "b [h w] c, b p [2], -> b [h w] c"
            ),
            "index -6 is out of range for axis w of length 5",
            "w",
            0,
        ),
    ],
)
def test_out_of_range(call: Any, reason: str, fragment: str, occurrence: int) -> None:
    error = _error(call)
    assert error.reason == reason
    assert str(error).splitlines()[2] == caret(error.pattern or "", fragment, occurrence)


GET = "b [t] c, b p -> b p c"


@pytest.mark.parametrize(
    ("pattern", "index", "reason", "fragment", "occurrence"),
    [
        ("b t c, b p -> b p c", INDEX, "the indexed axes must be in brackets", "b t c", 0),
        ("b [t] c, b p", INDEX, "the output is missing: '->' and its axes", "", 0),
        (
            "b [t] c -> b c",
            INDEX,
            "get_at takes two terms (the array, the index) on the left, got 1",
            "b [t] c",
            0,
        ),
        (
            "b [t] c, b p, b p c -> b p c",
            INDEX,
            "get_at takes two terms (the array, the index) on the left, got 3",
            "b p, b p c",
            0,
        ),
        (
            "b [t] c, b [p] -> b p c",
            INDEX,
            "axis 'p' on the right is the index's coordinate axis",
            "p",
            1,
        ),
        (
            "b [t] c, b [4] -> b c",
            INDEX,
            "the coordinate axis has length 4 but 1 axis is indexed",
            "4",
            0,
        ),
        (
            "b [t] c, b p -> b [p] c",
            INDEX,
            "brackets are not allowed in the output of get_at",
            "[p]",
            0,
        ),
        ("b [t] c, b p -> b p", INDEX, "axis 'c' is missing on the right", "c", 0),
        (
            "b [t] c, b p -> b p c t",
            INDEX,
            "axis 't' on the right is indexed: get_at's output has the index's axes in its place",
            "t",
            1,
        ),
        ("b [t] c, b p -> b p c z", INDEX, "axis 'z' on the right is in no input", "z", 0),
        (
            "b [t] c, b t -> b t c",
            INDEX,
            "axis 't' is indexed in the array: it cannot be an axis of the index",
            "t",
            1,
        ),
        (
            "b [t] c, b p q -> b p q c",
            INDEX,
            "operand 1 has 2 dimension(s) but its term 'b p q' has 3",
            "b p q",
            0,
        ),
        (
            "b [t] 3, b p -> b p",
            INDEX,
            "an anonymous axis of length 3 is only allowed in brackets",
            "3",
            0,
        ),
        (
            "b [t] c, b p -> ... b p c",
            INDEX,
            "'...' on the right stands for no input's axes",
            "...",
            0,
        ),
        (
            "b [t] c, b p [1] [1] -> b p c",
            INDEX[..., None, None],
            "the index has one coordinate axis at most, in brackets",
            "[1]",
            1,
        ),
        (
            "b [t] c, b p [(k l)] -> b p c",
            INDEX[..., None],
            "the coordinate axis of the index is one axis: a name or its length",
            "[(k l)]",
            0,
        ),
        ("b [t] c, b p -> b p c", INDEX[:1], "dimension of length 1 does not match b = 2", "b", 1),
    ],
)
def test_get_at_errors(
    pattern: str, index: Any, reason: str, fragment: str, occurrence: int
) -> None:
    error = _error(lambda: tops.get_at(X, index, pattern))
    assert str(error).splitlines()[0] == f"get_at: {reason}"
    assert str(error).splitlines()[2] == caret(pattern, fragment, occurrence)


@pytest.mark.parametrize(
    ("pattern", "points", "reason", "fragment"),
    [
        (
            "b [h w] c, b p -> b p c",
            POINTS[..., 0],
            "2 axes are indexed, so the index needs a coordinate axis of length 2 in brackets",
            "b p",
        ),
        (
            "b [h w] c, b p [3] -> b p c",
            POINTS,
            "the coordinate axis has length 3 but 2 axes are indexed",
            "3",
        ),
        (
            "b [h w] c, b p [k] -> b p c",
            np.concatenate([POINTS, POINTS[..., :1]], -1),
            "the coordinate axis has length 3 but 2 axes are indexed",
            "k",
        ),
    ],
)
def test_coordinate_axis_errors(pattern: str, points: Any, reason: str, fragment: str) -> None:
    error = _error(lambda: tops.get_at(IMAGE, points, pattern))
    assert error.reason == reason
    assert str(error).splitlines()[2] == caret(pattern, fragment)


def test_a_float_index_is_an_argument_error(backend: Any) -> None:
    error = _error(lambda: tops.get_at(backend.asarray(X), backend.asarray(INDEX * 1.0), GET))
    assert isinstance(error, tops.ArgumentError)
    assert error.reason.startswith("the index must hold integers, got dtype ")
    assert error.reason.endswith("float64")
    assert str(error).splitlines()[2] == caret(GET, "b p", 0)


def test_a_bool_index_is_an_argument_error() -> None:
    error = _error(lambda: tops.get_at(X, INDEX > 1, GET))
    assert error.reason == "the index must hold integers, got dtype bool"


@pytest.mark.parametrize(
    ("pattern", "reason", "fragment", "occurrence"),
    [
        (
            "b [t] c, b p, b p c -> b t c",
            "axis 't' is in brackets on one side only: mark it on the right too",
            "t",
            0,
        ),
        ("b [t] c, b p, b p [c] -> b [t] c", "brackets are not allowed in the values", "[c]", 0),
        (
            "b [t] c, b p, b p t -> b [t] c",
            "axis 't' is indexed in the array: it cannot be an axis of the values",
            "t",
            1,
        ),
        (
            "b [t] c, b p, b p z -> b [t] c",
            "axis 'z' of the values is in neither the array nor the index",
            "z",
            0,
        ),
        ("b [t] c, b p, b p c -> b [t]", "axis 'c' is missing on the right", "c", 0),
        ("b [t] c, b p, b p c -> b p [t] c", "axis 'p' on the right is not in the array", "p", 2),
        (
            "b [t] c, b p -> b [t] c",
            "add_at takes three terms (the array, the index, the values) on the left, got 2",
            "b p",
            0,
        ),
    ],
)
def test_scatter_errors(pattern: str, reason: str, fragment: str, occurrence: int) -> None:
    error = _error(lambda: tops.add_at(X, INDEX, VALUES, pattern))
    assert str(error).splitlines()[0] == f"add_at: {reason}"
    assert str(error).splitlines()[2] == caret(pattern, fragment, occurrence)


def test_values_that_do_not_fit() -> None:
    error = _error(lambda: tops.set_at(X, INDEX, VALUES[:, :2], "b [t] c, b p, b p c -> b [t] c"))
    assert error.reason == "dimension of length 2 does not match p = 4"
    assert "input 2: shape=(2, 2, 3)" in str(error)


def test_torch_out_of_range_is_torch_own_check() -> None:
    torch = pytest.importorskip("torch")
    error = _error(
        lambda: tops.get_at(torch.zeros(2, 5), torch.tensor([[7], [0]]), "b [t], b p -> b p")
    )
    assert isinstance(error, tops.BackendError)
    assert error.reason.startswith("torch refused a step: RuntimeError: index 7 is out of bounds")


def test_pattern_must_be_a_str() -> None:
    error = _error(lambda: tops.get_at(X, INDEX, 3))  # type: ignore[arg-type]
    assert error.reason == "the pattern must be a str, got int"
    assert (
        error.hint
        == "the array comes first, then the pattern: get_at(x, index, 'b [t] c, b p -> b p c')"
    )


def test_arrays_of_two_families() -> None:
    torch = pytest.importorskip("torch")
    error = _error(lambda: tops.get_at(X, torch.from_numpy(INDEX), GET))
    assert "operand 1 is a Tensor, operand 0 is a ndarray" in error.reason


@pytest.mark.parametrize(
    ("call", "op"),
    [
        (lambda: tops.rearrange(X, "b [t] c -> b t c"), "rearrange"),
        (lambda: tops.reduce(X, "b [t] c -> b c", "sum"), "reduce"),
        (lambda: tops.repeat(X, "b [t] c -> b t c r", r=2), "repeat"),
        (lambda: tops.einsum("b [t] c, b t c -> b", X, X), "einsum"),
    ],
)
def test_ops_without_brackets_reject_them(call: Any, op: str) -> None:
    error = _error(call)
    assert error.reason.startswith(f"'[t]' is not allowed in {op}")
    assert str(error).splitlines()[2] == caret(error.pattern or "", "[t]")
