"""check: shapes against patterns on every family, against einx and einops, and every error."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorops as tops
from tests.messages import caret
from tests.strategies import Case, cases


def _zeros(backend: Any, *shapes: tuple[int, ...]) -> list[Any]:
    return [backend.asarray(np.zeros(shape)) for shape in shapes]


# --- what it returns -------------------------------------------------------------------------


def test_one_array_is_returned_itself(backend: Any) -> None:
    (x,) = _zeros(backend, (2, 5, 3))
    assert tops.check(x, "b t c", c=3) is x
    assert tops.check(x, "b t 3") is x
    assert tops.check(x, "b _ c") is x
    assert tops.check(x, "...") is x
    assert tops.check(x, "b ... c", b=2) is x


def test_several_arrays_give_every_length_in_first_seen_order(backend: Any) -> None:
    q, k, v = _zeros(backend, (8, 4, 10, 64), (8, 4, 12, 64), (8, 4, 12, 32))
    solved = tops.check([q, k, v], "b h i d, b h j d, b h j e", d=64)
    assert solved == {"b": 8, "h": 4, "i": 10, "d": 64, "j": 12, "e": 32}
    assert list(solved) == ["b", "h", "i", "d", "j", "e"]
    assert tops.check((q, k), "b h i d, b h j d") == {"b": 8, "h": 4, "i": 10, "d": 64, "j": 12}


def test_one_array_in_a_list_gives_its_lengths(backend: Any) -> None:
    (x,) = _zeros(backend, (2, 12, 3))
    assert tops.check([x], "b (h w) c", h=3) == {"b": 2, "h": 3, "w": 4, "c": 3}
    assert tops.check([x], "b (h 2) _") == {"b": 2, "h": 6}


@pytest.mark.parametrize(
    ("pattern", "shapes", "lengths", "expected"),
    [
        ("b (h w) c", [(2, 12, 3)], {"w": 4}, {"b": 2, "h": 3, "w": 4, "c": 3}),
        ("(h w) h", [(12, 3)], {}, {"h": 3, "w": 4}),  # h solved later, then (h w)
        ("n n", [(3, 3)], {}, {"n": 3}),
        ("b 1 c ()", [(2, 1, 3, 1)], {}, {"b": 2, "c": 3}),
        ("b ... c, b ... d", [(2, 3, 4, 5), (2, 3, 4, 6)], {}, {"b": 2, "c": 5, "d": 6}),
        ("a, (a b)", [(3,), (12,)], {}, {"a": 3, "b": 4}),
        ("(a b), a", [(12,), (3,)], {}, {"a": 3, "b": 4}),
        ("b x, b", [(0, 2), (0,)], {}, {"b": 0, "x": 2}),
    ],
)
def test_solved_lengths(backend: Any, pattern: str, shapes: list, lengths: dict, expected: dict):
    assert tops.check(_zeros(backend, *shapes), pattern, **lengths) == expected


# einx 0.4.3 names the lengths it solves; it takes the same patterns (without "_"; its
# solver fails on integer literals in groups).
EINX_CASES = [
    ("b t c", [(2, 5, 3)], {}),
    ("b (h w) c", [(2, 12, 3)], {"h": 3}),
    ("b (h w) c", [(2, 12, 3)], {"w": 2}),
    ("(h w) h", [(12, 3)], {}),
    ("n n", [(3, 3)], {}),
    ("b i d, b j d", [(2, 3, 4), (2, 5, 4)], {}),
    ("b h i d, b h j d, b h j e", [(2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6)], {"d": 8}),
    ("b (h p) (w q)", [(1, 4, 9)], {"p": 2, "q": 3}),
]


@pytest.mark.parametrize(("pattern", "shapes", "lengths"), EINX_CASES)
def test_matches_einx_solve(backend: Any, pattern: str, shapes: list, lengths: dict) -> None:
    einx = pytest.importorskip("einx")
    arrays = _zeros(backend, *shapes)
    expected = einx.solve(pattern, *[np.zeros(s) for s in shapes], **lengths)
    assert tops.check(arrays, pattern, **lengths) == expected


@pytest.mark.parametrize(
    ("pattern", "shapes", "lengths"),
    [
        ("b t c", [(2, 5, 3)], {"c": 4}),
        ("n n", [(3, 4)], {}),
        ("b i d, b j d", [(2, 3, 4), (2, 5, 5)], {}),
        ("b (h p)", [(2, 5)], {"p": 2}),
        ("b (h w)", [(2, 12)], {"h": 5}),
        ("a b", [(2, 3, 4)], {}),
    ],
)
def test_fails_where_einx_does_not_match(backend: Any, pattern, shapes, lengths) -> None:
    einx = pytest.importorskip("einx")
    assert not einx.matches(pattern, *[np.zeros(s) for s in shapes], **lengths)
    with pytest.raises(tops.ShapeError):
        tops.check(_zeros(backend, *shapes), pattern, **lengths)


@pytest.mark.parametrize(
    ("pattern", "shape"),
    [("b c _ _", (8, 3, 32, 32)), ("b ... w", (8, 3, 4, 32)), ("() 3 n", (1, 3, 5)), ("a", (7,))],
)
def test_matches_einops_parse_shape(backend: Any, pattern: str, shape: tuple[int, ...]) -> None:
    einops = pytest.importorskip("einops")
    expected = einops.parse_shape(np.zeros(shape), pattern)
    (x,) = _zeros(backend, shape)
    assert tops.check([x], pattern) == expected
    assert tops.check([x], pattern) == tops.parse_shape(x, pattern)


# --- property: the true shape passes, a perturbed one fails ----------------------------------


def _given_all_but_first(case: Case) -> dict[str, int]:
    """The lengths of every axis but the first of each group: each group solves one."""
    return {name: length for group in case.groups for name, length in group[1:]}


@settings(max_examples=60, deadline=None)
@given(case=cases(), where=st.integers(0, 10), data=st.data())
def test_true_shapes_pass_and_perturbed_ones_fail(case: Case, where: int, data: Any) -> None:
    pattern = case.left()
    x = np.zeros(case.shape)
    assert tops.check([x], pattern, **_given_all_but_first(case)) == dict(case.axes)
    every = dict(case.axes)
    assert tops.check(x, pattern, **every) is x
    # one dimension longer: with every length given, that dimension no longer fits
    k = where % len(case.groups)
    shape = list(case.shape)
    shape[k] += data.draw(st.integers(1, 3))
    with pytest.raises(tops.ShapeError) as error:
        tops.check(np.zeros(shape), pattern, **every)
    start = sum(len(part) + 1 for part in pattern.split(" ")[: _first_word(case, k)])
    term = pattern[start:].split(")")[0] + ")" if pattern[start] == "(" else None
    fragment = term if term is not None else pattern[start:].split(" ")[0]
    assert str(error.value).splitlines()[2] == " " * 12 + " " * start + "^" * len(fragment)
    # one dimension more or fewer: the rank does not fit
    with pytest.raises(tops.ShapeError, match="the pattern has"):
        tops.check(np.zeros((*case.shape, 2)), pattern)


def _first_word(case: Case, k: int) -> int:
    """The index of the first space-separated word of group `k` in ``case.left()``."""
    return sum(len(group) for group in case.groups[:k])


# --- errors ----------------------------------------------------------------------------------


def _error(call: Any) -> tops.TensorOpsError:
    with pytest.raises(tops.TensorOpsError) as info:
        call()
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, RuntimeError)
    return info.value


X = np.zeros((2, 5, 3))
Q, K, V = np.zeros((8, 4, 10, 64)), np.zeros((8, 4, 12, 64)), np.zeros((8, 4, 12, 32))


def test_wrong_length_points_at_the_axis() -> None:
    error = _error(lambda: tops.check(X, "b t c", c=4))
    assert isinstance(error, tops.ShapeError)
    assert str(error).splitlines() == [
        "check: dimension of length 3 does not match c = 4",
        '  pattern: "b t c"',
        caret("b t c", "c"),
        "  input:   shape=(2, 5, 3) dtype=float64 backend=numpy",
        "  lengths: c=4",
    ]


def test_wrong_rank() -> None:
    error = _error(lambda: tops.check(X, "b t"))
    assert isinstance(error, tops.ShapeError)
    assert error.reason == "the pattern has 2 axes but the input has 3 dimensions"
    assert str(error).splitlines()[2] == caret("b t", "b t")
    error = _error(lambda: tops.check([Q, X], "b h i d, b h j d"))
    assert error.reason == "operand 1 has 3 dimension(s) but its term 'b h j d' has 4"
    assert str(error).splitlines()[2] == caret("b h i d, b h j d", "b h j d")
    assert "input 1: shape=(2, 5, 3)" in str(error)


def test_literal_mismatch() -> None:
    error = _error(lambda: tops.check(X, "b t 4"))
    assert error.reason == "dimension of length 3 does not match 4 = 4"
    assert str(error).splitlines()[2] == caret("b t 4", "4")
    error = _error(lambda: tops.check(X, "b 1 c"))
    assert error.reason == "dimension of length 5 does not match a unit axis"
    assert str(error).splitlines()[2] == caret("b 1 c", "1")


def test_composition_that_does_not_divide() -> None:
    error = _error(lambda: tops.check(X, "b (t 2) c"))
    assert error.reason == "cannot split axis of length 5 into (t 2): 5 is not divisible by 2"
    assert str(error).splitlines()[2] == caret("b (t 2) c", "(t 2)")
    error = _error(lambda: tops.check(np.zeros((2, 12)), "b (h w)", h=5))
    assert error.reason == (
        "cannot split axis of length 12 into (h w) with h=5: 12 is not divisible by 5"
    )
    error = _error(lambda: tops.check(np.zeros((2, 12)), "b (h w)", h=3, w=5))
    assert error.reason == "dimension of length 12 does not match (h w) = 3*5 = 15"


def test_composition_with_two_unknowns() -> None:
    error = _error(lambda: tops.check(X, "b (t w) c"))
    assert error.reason == (
        "cannot infer the lengths of t and w in (t w) from a single dimension of length 5"
    )
    assert str(error).splitlines()[2] == caret("b (t w) c", "(t w)")
    assert error.hint == "pass t=..."


def test_a_name_with_two_lengths_in_one_array() -> None:
    error = _error(lambda: tops.check(np.zeros((3, 4)), "n n"))
    assert error.reason == "axis 'n' has lengths 3 and 4"
    assert str(error).splitlines()[2] == caret("n n", "n", 1)


def test_arrays_that_disagree_are_named_with_both_lengths() -> None:
    pattern = "b h i d, b h j d, b h j e"
    error = _error(lambda: tops.check([Q, V, V], pattern))
    assert isinstance(error, tops.ShapeError)
    assert str(error).splitlines() == [
        "check: axis 'd' has length 64 in input 0 and 32 in input 1",
        f'  pattern: "{pattern}"',
        caret(pattern, "d", 1),
        "  input 0: shape=(8, 4, 10, 64) dtype=float64 backend=numpy",
        "  input 1: shape=(8, 4, 12, 32) dtype=float64 backend=numpy",
        "  input 2: shape=(8, 4, 12, 32) dtype=float64 backend=numpy",
    ]
    error = _error(lambda: tops.check([Q, np.zeros((7, 4, 12, 64))], "b h i d, b h j d"))
    assert error.reason == "axis 'b' has length 8 in input 0 and 7 in input 1"
    assert str(error).splitlines()[2] == caret("b h i d, b h j d", "b", 1)


def test_a_given_length_that_another_array_contradicts() -> None:
    error = _error(lambda: tops.check([Q, K], "b h i d, b h j d", d=32))
    assert error.reason == "dimension of length 64 does not match d = 32"
    assert str(error).splitlines()[2] == caret("b h i d, b h j d", "d")


def test_ellipsis_must_stand_for_the_same_dimensions() -> None:
    pattern = "b ..., b ..."
    error = _error(lambda: tops.check([Q, np.zeros((8, 4, 10))], pattern))
    assert error.reason == "'...' stands for 3 dimension(s) in input 0 and 2 in input 1"
    assert str(error).splitlines()[2] == caret(pattern, "...", 1)
    error = _error(lambda: tops.check([Q, K], pattern))
    assert error.reason == "'...' stands for (4, 10, 64) in input 0 and (4, 12, 64) in input 1"
    assert str(error).splitlines()[2] == caret(pattern, "...", 1)


@pytest.mark.parametrize(
    ("arrays", "pattern", "reason", "fragment"),
    [
        ([Q, K], "b h i d, b h j d, e", "the pattern has 3 term(s) but 2 arrays were given", "e"),
        ([Q, K, V], "b h i d, b h j d", "the pattern has 2 term(s) but 3 arrays were given", None),
        (Q, "b h i d, b h j d", "the pattern has 2 term(s) but 1 array was given", "b h j d"),
    ],
)
def test_number_of_arrays_and_terms(arrays, pattern, reason, fragment) -> None:
    error = _error(lambda: tops.check(arrays, pattern))
    assert isinstance(error, tops.ArgumentError)
    assert isinstance(error, TypeError)
    assert error.reason == reason
    lines = str(error).splitlines()
    if fragment is None:
        assert lines[2].startswith("  input")
    else:
        assert lines[2] == caret(pattern, fragment)
    assert "check([q, k], 'b i d, b j d')" in error.hint  # type: ignore[operator]


ELEMENTS = "check patterns hold axis names, integers, '_', '...' and groups '( )' only"


@pytest.mark.parametrize(
    ("pattern", "reason", "fragment"),
    [
        ("b t -> b", "check patterns have no '->': they describe the inputs only", "->"),
        ("b [t] c", ELEMENTS, "[t]"),
        ("b * c", ELEMENTS, "*"),
        ("b (...)", "'...' cannot be composed in a check pattern", "(...)"),
        ("... t ...", "'...' appears twice", "..."),
        ("b (t", "unclosed parenthesis", "("),
        ("b t_ c", "axis name 't_' starts or ends with '_'", "t_"),
    ],
)
def test_malformed_patterns(pattern: str, reason: str, fragment: str) -> None:
    error = _error(lambda: tops.check(X, pattern))
    assert isinstance(error, tops.PatternError)
    assert error.reason == reason
    occurrence = 1 if pattern == "... t ..." else 0
    assert str(error).splitlines()[2] == caret(pattern, fragment, occurrence)
    assert str(error).startswith("check: ")


def test_a_pattern_that_is_not_a_str() -> None:
    for call in (lambda: tops.check(X, 3), lambda: tops.check([X], None)):  # type: ignore[call-overload]
        error = _error(call)
        assert isinstance(error, tops.ArgumentError)
        assert error.reason.startswith("the pattern must be a str, got ")
        assert error.hint == "the array comes first, then the pattern: check(x, 'b t c', c=3)"
    error = _error(lambda: tops.check("b t c", X))  # type: ignore[call-overload]
    assert error.reason == "the pattern must be a str, got ndarray"  # the arguments swapped


@pytest.mark.parametrize("value", ["abc", 3, None, [X, "abc"], [[1, 2]]])
def test_not_an_array(value: Any) -> None:
    many = isinstance(value, list)
    error = _error(lambda: tops.check(value, "a b, c" if many else "a"))
    assert isinstance(error, tops.BackendError)
    assert error.reason.startswith("unsupported input type")
    assert str(error).startswith("check: ")


def test_no_array_at_all() -> None:
    error = _error(lambda: tops.check([], "a"))
    assert isinstance(error, tops.ArgumentError)
    assert error.reason == "check takes an array or a non-empty list of arrays"


@pytest.mark.parametrize(
    ("lengths", "reason"),
    [
        ({"z": 3}, "axis length z=3 is given but 'z' is not in the pattern"),
        ({"c": -1}, "axis length c=-1 is negative"),
        ({"c": 2.5}, "axis length c=2.5 is not an integer"),
    ],
)
def test_bad_lengths(lengths: dict, reason: str) -> None:
    for x in (X, [X]):
        error = _error(lambda: tops.check(x, "b t c", **lengths))  # noqa: B023
        assert error.reason == reason
        assert error.lengths == lengths


def test_unknown_chunk_sizes_are_an_error() -> None:
    da = pytest.importorskip("dask.array")
    x = da.zeros((4, 3), chunks=2)
    lazy = x[x[:, 0] > 0]
    error = _error(lambda: tops.check(lazy, "n c", c=3))
    assert error.reason == "the shape (nan, 3) has a length that is not an integer"
    assert tops.check(x, "n c", c=3) is x


def test_numpy_integer_lengths_and_arguments_left_as_they_were() -> None:
    lengths = {"c": np.int64(3)}
    arrays = [X, X]
    assert tops.check(arrays, "b t c, b t c", **lengths) == {"b": 2, "t": 5, "c": 3}
    assert lengths == {"c": np.int64(3)}
    assert len(arrays) == 2
    assert arrays[0] is X


# --- the switch ------------------------------------------------------------------------------


def test_checks_can_be_turned_off_for_single_arrays() -> None:
    assert tops.config.checks is True
    with tops.config(checks=False):
        assert tops.config.checks is False
        bad = np.zeros((2, 4))
        assert tops.check(bad, "b c", c=3) is bad
        # the lengths of several arrays are solved, and checked, whatever the switch
        assert tops.check([X], "b t c") == {"b": 2, "t": 5, "c": 3}
        with pytest.raises(tops.ShapeError):
            tops.check([bad], "b c", c=3)
    assert tops.config.checks is True
    tops.config.checks = False
    try:
        assert tops.check(np.zeros(3), "a b") is not None
    finally:
        tops.config.checks = True
    with pytest.raises(tops.ShapeError):
        tops.check(np.zeros(3), "a b")


def test_the_switch_takes_booleans_only() -> None:
    with pytest.raises(tops.ArgumentError, match="checks must be True or False, got 0"):
        tops.config.checks = 0  # type: ignore[assignment]
    with pytest.raises(tops.ArgumentError, match="checks must be True or False"):
        tops.config(checks="no")


@pytest.mark.parametrize(("value", "on"), [("0", False), ("false", False), ("1", True), ("", True)])
def test_the_environment_variable_sets_the_default(value: str, on: bool) -> None:
    script = (
        "import numpy as np, tensorops as tops\n"
        f"assert tops.config.checks is {on}\n"
        "x = np.zeros((2, 4))\n"
        "try:\n"
        "    assert tops.check(x, 'b c', c=3) is x\n"
        "except tops.ShapeError:\n"
        f"    assert {on}\n"
        "else:\n"
        f"    assert not {on}\n"
    )
    env = {**os.environ, "TENSOROPS_CHECKS": value}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]


# --- the cache -------------------------------------------------------------------------------


def test_a_warm_call_does_not_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    import tensorops._check_patterns as module

    x = np.zeros((4, 6, 3))
    tops.check(x, "b (h w) c", h=2, c=3)
    tops.check([x, x], "b t c, b t c")

    def refuse(*args: Any) -> None:
        raise AssertionError("parsed again")

    monkeypatch.setattr(module, "parse_pattern", refuse)
    monkeypatch.setattr(module, "check_program", refuse)
    before = module.solved.cache_info().hits
    assert tops.check(x, "b (h w) c", h=2, c=3) is x
    assert tops.check([x, x], "b t c, b t c") == {"b": 4, "t": 6, "c": 3}
    assert module.solved.cache_info().hits >= before + 2


# --- frameworks ------------------------------------------------------------------------------


def test_torch_autograd_flows_through() -> None:
    torch = pytest.importorskip("torch")
    x = torch.randn(2, 3, requires_grad=True)
    (tops.check(x, "b c", c=3) * 2).sum().backward()
    assert x.grad is not None
    torch.testing.assert_close(x.grad, torch.full((2, 3), 2.0))


def test_jax_jit_checks_at_trace_time_and_vmap_sees_one_example() -> None:
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")

    def f(x: Any) -> Any:
        n = tops.check([tops.check(x, "b c", c=3)], "b c")
        return x * n["b"]

    x = jnp.ones((4, 3))
    np.testing.assert_allclose(np.asarray(jax.jit(f)(x)), np.full((4, 3), 4.0))
    with pytest.raises(tops.ShapeError, match="does not match c = 3"):
        jax.jit(f)(jnp.ones((4, 5)))
    per_example = jax.vmap(lambda row: tops.check(row, "c", c=3) * 2)(x)
    np.testing.assert_allclose(np.asarray(per_example), np.full((4, 3), 2.0))
    with pytest.raises(tops.ShapeError, match="the pattern has 2 axes but the input has 1"):
        jax.vmap(lambda row: tops.check(row, "b c"))(x)
    grads = jax.grad(lambda x: tops.check(x, "b c").sum())(x)
    np.testing.assert_allclose(np.asarray(grads), np.ones((4, 3)))


# --- torch.compile and torch.export ----------------------------------------------------------

BATCH_SIZES = (9, 10, 11)  # unlike every other length: no duck-sized equalities


def _single(x: Any) -> Any:
    return tops.check(x, "b (t 2) c", c=3) * 2


def _several(q: Any, k: Any) -> Any:
    n = tops.check([q, k], "b i d, b j d", d=4)
    return q.sum(-1) * n["j"] + n["b"]  # the lengths are sizes: symbolic where the batch is


def _torch_inputs(name: str, batch: int) -> tuple[Any, ...]:
    import torch

    if name == "single":
        return (torch.randn(batch, 6, 3),)
    return torch.randn(batch, 5, 4), torch.randn(batch, 7, 4)


COMPILED = {"single": _single, "several": _several}


@pytest.fixture
def fresh_dynamo() -> Any:
    torch = pytest.importorskip("torch")
    dynamo = pytest.importorskip("torch._dynamo")
    dynamo.reset()
    yield torch
    dynamo.reset()


@pytest.mark.parametrize("mode", ["static", "dynamic", "mark_dynamic"])
@pytest.mark.parametrize("name", sorted(COMPILED))
def test_compiles_in_one_graph_and_a_dynamic_batch_stays_dynamic(fresh_dynamo, name, mode):
    torch = fresh_dynamo
    from torch._dynamo.testing import CompileCounter

    fn = COMPILED[name]
    fn(*_torch_inputs(name, BATCH_SIZES[0]))
    counter = CompileCounter()
    compiled = torch.compile(
        fn, backend=counter, fullgraph=True, dynamic=True if mode == "dynamic" else None
    )
    for batch in BATCH_SIZES:
        inputs = _torch_inputs(name, batch)
        if mode == "mark_dynamic":
            for x in inputs:
                torch._dynamo.mark_dynamic(x, 0)
        torch.testing.assert_close(compiled(*inputs), fn(*inputs))
    # static: one compile for the first shape, one that turns the batch dynamic; then none
    assert counter.frame_count == (2 if mode == "static" else 1)


def test_a_check_adds_nothing_to_the_graph(fresh_dynamo) -> None:
    torch = fresh_dynamo
    graphs: list[Any] = []

    def backend(gm: Any, example_inputs: Any) -> Any:
        graphs.append(gm)
        return gm.forward

    def f(x: Any) -> Any:
        return tops.check(x, "b c", c=3)

    for dynamic in (False, True):
        torch._dynamo.reset()
        graphs.clear()
        x = torch.randn(4, 3)
        assert torch.compile(f, backend=backend, fullgraph=True, dynamic=dynamic)(x) is not None
        targets = [node.target for node in graphs[0].graph.nodes if node.op == "call_function"]
        assert targets == [], targets


BAD_CALLS = {
    "length": ("single", lambda torch: (torch.randn(9, 6, 4),)),
    "divides": ("single", lambda torch: (torch.randn(9, 5, 3),)),
    "rank": ("single", lambda torch: (torch.randn(9, 6),)),
    "disagree": ("several", lambda torch: (torch.randn(9, 5, 4), torch.randn(8, 7, 4))),
    "given": ("several", lambda torch: (torch.randn(9, 5, 5), torch.randn(9, 7, 5))),
}


@pytest.mark.parametrize("mode", ["static", "dynamic", "mark_dynamic"])
@pytest.mark.parametrize("bad", sorted(BAD_CALLS))
def test_errors_inside_torch_compile_are_the_eager_errors(fresh_dynamo, bad, mode) -> None:
    torch = fresh_dynamo
    name, make = BAD_CALLS[bad]
    fn = COMPILED[name]
    compiled = torch.compile(
        fn, backend="eager", fullgraph=True, dynamic=True if mode == "dynamic" else None
    )
    compiled(*_torch_inputs(name, BATCH_SIZES[0]))  # a good call first: sizes may be symbolic
    inputs = make(torch)
    if mode == "mark_dynamic":
        for x in inputs:
            torch._dynamo.mark_dynamic(x, 0)
    with pytest.raises(tops.TensorOpsError) as eager:
        fn(*inputs)
    with pytest.raises(tops.TensorOpsError) as traced:
        compiled(*inputs)
    assert str(traced.value) == str(eager.value)
    assert isinstance(traced.value, type(eager.value))


def test_a_malformed_pattern_inside_torch_compile(fresh_dynamo) -> None:
    torch = fresh_dynamo

    def f(x: Any) -> Any:
        return tops.check(x, "b -> c")

    for dynamic in (False, True):
        with pytest.raises(tops.PatternError) as traced:
            torch.compile(f, backend="eager", fullgraph=True, dynamic=dynamic)(torch.randn(3))
        assert "check patterns have no '->'" in str(traced.value)


def test_the_switch_inside_torch_compile(fresh_dynamo) -> None:
    torch = fresh_dynamo
    bad = torch.randn(2, 4)
    tops.config.checks = False  # compiled code reads the process-wide setting
    try:
        for dynamic in (False, True):
            torch._dynamo.reset()
            out = torch.compile(_single_bad, backend="eager", fullgraph=True, dynamic=dynamic)(bad)
            torch.testing.assert_close(out, bad)
    finally:
        tops.config.checks = True


def _single_bad(x: Any) -> Any:
    return tops.check(x, "b c", c=3) + 0


def test_torch_export_keeps_a_dynamic_batch(fresh_dynamo) -> None:
    torch = fresh_dynamo

    class Model(torch.nn.Module):
        def forward(self, x: Any, y: Any) -> Any:
            n = tops.check([x, y], "b c, b d", c=3)
            return tops.check(x, "b 3") * n["d"] + y.sum(-1, keepdim=True)

    model = Model()
    x, y = torch.randn(4, 3), torch.randn(4, 5)
    batch = torch.export.Dim("batch")
    for strict in (False, True):
        exported = torch.export.export(
            model, (x, y), dynamic_shapes={"x": {0: batch}, "y": {0: batch}}, strict=strict
        )
        code = exported.graph_module.code
        assert "check" not in code
        assert "in_graph" not in code
        x7, y7 = torch.randn(7, 3), torch.randn(7, 5)
        torch.testing.assert_close(exported.module()(x7, y7), model(x7, y7))


_FALLBACK_SCRIPT = """
import torch, torch._dynamo
from torch._dynamo.testing import CompileCounter
import tensorops as tops
from tensorops._compile import stand_ins
assert not stand_ins.installed()
def f(x, y):
    n = tops.check([tops.check(x, "b (t 2) c", c=3), y], "b t2 c, b d")
    return x.sum() * n["d"] + n["b"]
for dynamic in (None, True):
    torch._dynamo.reset()
    counter = CompileCounter()
    compiled = torch.compile(f, backend=counter, fullgraph=True, dynamic=dynamic)
    for b in (9, 10, 11):
        x, y = torch.randn(b, 6, 3), torch.randn(b, 5)
        torch.testing.assert_close(compiled(x, y), f(x, y))
    assert counter.frame_count == (2 if dynamic is None else 1), counter.frame_count
    bad_calls = [(torch.randn(9, 6, 4), torch.randn(9, 5))]
    bad_calls.append((torch.randn(9, 6, 3), torch.randn(8, 5)))
    for bad in bad_calls:
        try:
            f(*bad)
        except tops.TensorOpsError as error:
            eager = error
        try:
            compiled(*bad)
        except tops.TensorOpsError as error:
            assert str(error) == str(eager) and isinstance(error, type(eager)), (error, eager)
        else:
            raise AssertionError("no error")
"""


@pytest.mark.slow
def test_the_fallback_traces_check_without_graph_breaks() -> None:
    pytest.importorskip("torch")
    from tests._dynamo import NOT_TRACED, TRACES_TENSOROPS

    if not TRACES_TENSOROPS:
        pytest.skip(NOT_TRACED)
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", _FALLBACK_SCRIPT],
        capture_output=True,
        text=True,
        env={**os.environ, "TENSOROPS_COMPILE": "traced"},
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]


def _given_as_sizes(x: Any, w: Any) -> Any:
    n = tops.check((x, w), "b (h d), d e", d=w.shape[0])
    return tops.check(x, "b (h d)", d=w.shape[0]).sum() * n["h"]


@pytest.mark.parametrize("dynamic", [None, True])
def test_lengths_given_as_sizes_inside_torch_compile(fresh_dynamo, dynamic) -> None:
    torch = fresh_dynamo
    from torch._dynamo.testing import CompileCounter

    counter = CompileCounter()
    compiled = torch.compile(_given_as_sizes, backend=counter, fullgraph=True, dynamic=dynamic)
    for batch in BATCH_SIZES:
        x, w = torch.randn(batch, 12), torch.randn(4, 5)
        torch.testing.assert_close(compiled(x, w), _given_as_sizes(x, w))
    assert counter.frame_count == (2 if dynamic is None else 1)
    bad = torch.randn(9, 10), torch.randn(4, 5)
    with pytest.raises(tops.ShapeError) as eager:
        _given_as_sizes(*bad)
    with pytest.raises(tops.ShapeError) as traced:
        compiled(*bad)
    assert str(traced.value) == str(eager.value)
