"""Memory guarantees: bounded caches, no leaks, no reference cycles, inputs untouched."""

from __future__ import annotations

import contextlib
import gc
import tracemalloc
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import tensorops as tops
import tensorops._lint

#: The documented bound of every cache (docs/guarantees.md); a new cache must be added here.
CACHE_SIZES = {
    "tensorops._backends._base._elementwise": 512,
    "tensorops._check_patterns.solved": 1024,
    "tensorops._check_patterns._terms": 1024,
    "tensorops._check_patterns.check_program": 1024,
    "tensorops._compile.checks.checked": 1024,
    "tensorops._dispatch.bound_plan": 4096,
    "tensorops._elementwise._planning.read_pattern": 1024,
    "tensorops._einsum.equations._keywords.input_axes": 256,
    "tensorops._einsum.equations._concat._rewrite": 256,
    "tensorops._einsum.equations._concat._splitter": 256,
    "tensorops._einsum.programs._program.plan_einsum_cached": 1024,
    "tensorops._einsum.equations._notation.parse_equation": 1024,
    "tensorops._grammar.parse_concat": 1024,
    "tensorops._grammar.parse_pattern": 1024,
    "tensorops._marked.read_pattern": 1024,
    "tensorops._pack_patterns.pack_term": 256,
    "tensorops._pack._packer": 1024,
    "tensorops._pack._unpacker": 1024,
    "tensorops._lint.calls._binding_text": 1024,
    "tensorops._lint.calls._rests": 4096,
    "tensorops._plan._checked": 1024,
}

#: The caches of adapters, loaded with their framework (docs/guarantees.md too).
FRAMEWORK_CACHE_SIZES = {
    "tensorops._backends._tensorflow._eager_ints": 4096,
}


@pytest.fixture
def no_gc() -> Iterator[None]:
    """Disable the cycle collector: what is freed must be freed by reference counting."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_every_cache_is_bounded_with_its_documented_size() -> None:
    info = tops.cache_info()
    assert info, "no cache found"
    for name, (_, _, maxsize, _) in info.items():
        assert maxsize is not None, f"{name} is unbounded"
    found = {name: maxsize for name, (_, _, maxsize, _) in info.items()}
    # an adapter's caches exist once its framework is imported (by another test here)
    for name, size in FRAMEWORK_CACHE_SIZES.items():
        assert found.pop(name, size) == size
    assert found == CACHE_SIZES


def test_clear_caches_empties_every_cache() -> None:
    x = np.zeros((2, 3))
    tops.rearrange(x, "a b -> b a")
    tops.einsum("ij,jk->ik", x, x.T)
    tops.pack([x], "a *")
    assert any(currsize for *_, currsize in tops.cache_info().values())
    tops.clear_caches()
    assert all(currsize == 0 for *_, currsize in tops.cache_info().values())


def _shapes_round(offset: int, count: int) -> None:
    for i in range(count):
        n = offset + i
        x = np.empty((1, n % 97 + 1, n // 97 + 1), dtype=np.uint8)
        tops.rearrange(x, "a b c -> c (a b)")


def test_many_distinct_shapes_keep_the_cache_at_its_bound() -> None:
    tops.clear_caches()
    name = "tensorops._dispatch.bound_plan"
    tracemalloc.start()
    try:
        _shapes_round(40_000, 20_000)  # lengths > 256 in both rounds: no small-int cache
        assert tops.cache_info()[name][3] == CACHE_SIZES[name]
        first = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        _shapes_round(60_000, 20_000)
        second, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert tops.cache_info()[name][3] == CACHE_SIZES[name]
    # A full cache evicts as it inserts: another 20,000 shapes add (almost) nothing.
    assert second - first < 256 * 1024, f"grew by {second - first} bytes"
    assert peak - first < 1024 * 1024, f"peak grew by {peak - first} bytes"


def _calls() -> list[tuple[str, Callable[[Any], Any]]]:
    return [
        ("rearrange", lambda x: tops.rearrange(x, "a b -> b a")),
        ("reduce", lambda x: tops.reduce(x, "a b -> a", "sum")),
        ("repeat", lambda x: tops.repeat(x, "a b -> a b r", r=2)),
        ("einsum", lambda x: tops.einsum("ij,kj->ik", x, x)),
        ("pack", lambda x: tops.pack([x, x], "a *")),
        ("unpack", lambda x: tops.unpack(x, [[1], [2]], "a *")),
        ("parse_shape", lambda x: tops.parse_shape(x, "a b")),
        ("rearrange-error", lambda x: tops.rearrange(x, "a b -> a c")),
        ("reduce-error", lambda x: tops.reduce(x, "a b -> a", "nope")),
        ("repeat-error", lambda x: tops.repeat(x, "a b -> a b r")),
        ("einsum-error", lambda x: tops.einsum("ij,jk->ik", x, x)),
        ("pack-error", lambda x: tops.pack([x, x[0]], "a *")),
        ("unpack-error", lambda x: tops.unpack(x, [[5]], "a *")),
        ("parse_shape-error", lambda x: tops.parse_shape(x, "a")),
    ]


def _make(family: str) -> Any:
    if family == "numpy":
        return np.arange(6.0).reshape(2, 3)
    torch = pytest.importorskip("torch")
    return torch.arange(6.0).reshape(2, 3)


def _call_and_drop(call: Callable[[Any], Any], x: Any) -> None:
    """Run ``call``; an error must be a TensorOpsError with no chained exception."""
    try:
        result = call(x)
    except tops.TensorOpsError as error:
        chained = error.__cause__ is not None or (
            error.__context__ is not None and not error.__suppress_context__
        )
        assert not chained, "raised with a chained exception (not `from None`)"
        return
    del result


@pytest.mark.parametrize("family", ["numpy", "torch"])
@pytest.mark.parametrize("name", [name for name, _ in _calls()])
def test_no_reference_keeps_the_input_alive(family: str, name: str, no_gc: None) -> None:
    call = dict(_calls())[name]
    x = _make(family)
    alive = weakref.ref(x)
    _call_and_drop(call, x)
    del x
    assert alive() is None, f"{name} keeps its input alive (a reference cycle or a cache)"


@pytest.mark.parametrize("name", [name for name, _ in _calls()])
def test_inputs_are_never_modified(name: str) -> None:
    call = dict(_calls())[name]
    x = np.arange(6.0).reshape(2, 3)
    x.flags.writeable = False
    view = np.arange(12.0).reshape(2, 6)[:, ::2]
    for arr in (x, view):
        before = (arr.copy(), arr.flags.writeable, arr.strides, arr.shape, arr.dtype)
        with contextlib.suppress(tops.TensorOpsError):
            call(arr)
        np.testing.assert_array_equal(arr, before[0])
        assert (arr.flags.writeable, arr.strides, arr.shape, arr.dtype) == before[1:]


def test_torch_inputs_are_never_modified() -> None:
    torch = pytest.importorskip("torch")
    for name, call in _calls():
        x = torch.arange(12.0).reshape(2, 6)[:, ::2]
        before = (x.clone(), x.stride(), x.shape, x.dtype, x._version)
        with contextlib.suppress(tops.TensorOpsError):
            call(x)
        assert torch.equal(x, before[0]), name
        assert (x.stride(), x.shape, x.dtype, x._version) == before[1:], name
