"""Every einsum error: its class, its first line, its caret and its hint."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import tensorops as tops


def _error(*args: Any, **kwargs: Any) -> tops.TensorOpsError:
    with pytest.raises(tops.TensorOpsError) as info:
        tops.einsum(*args, **kwargs)
    return info.value


def _caret(error: tops.TensorOpsError) -> str:
    """The pattern line and the caret line of the message."""
    lines = str(error).splitlines()
    return "\n".join(lines[1:3])


A, B = np.ones((2, 3)), np.ones((4, 5))


def test_operand_count_mismatch() -> None:
    error = _error("ij,jk->ik", A, B, A)
    assert isinstance(error, tops.ShapeError)
    assert error.reason == "the equation has 2 input term(s) but 3 array(s) were given"
    assert str(error).startswith("einsum: the equation has 2 input term(s)")
    assert "input 2: shape=(2, 3) dtype=float64 backend=numpy" in str(error)
    too_few = _error("ij,jk,kl->il", A, B)
    assert too_few.reason == "the equation has 3 input term(s) but 2 array(s) were given"
    assert _caret(too_few) == '  pattern: "ij,jk,kl->il"\n                  ^^'


def test_rank_mismatch_names_operand_shape_and_term() -> None:
    error = _error("ijk,jk->ik", A, B)
    assert error.reason == "operand 0 has 2 dimension(s) but its term 'ijk' has 3"
    assert _caret(error) == '  pattern: "ijk,jk->ik"\n            ^^^'
    assert "input 0: shape=(2, 3)" in str(error)
    assert error.hint == "use '...' for a variable number of dimensions"
    with_ellipsis = _error("...ijk", A)
    assert (
        with_ellipsis.reason == "operand 0 has 2 dimension(s) but its term '...ijk' has at least 3"
    )


def test_size_mismatch_names_both_operands_in_order() -> None:
    error = _error("ij,jk->ik", A, B)
    assert isinstance(error, tops.ShapeError)
    assert error.reason == (
        "axis 'j' has length 3 in operand 0 (shape (2, 3)) but length 4 in operand 1 (shape (4, 5))"
    )
    assert _caret(error) == '  pattern: "ij,jk->ik"\n               ^'
    swapped = _error("jk,ij->ik", B, A)
    assert swapped.reason == (
        "axis 'j' has length 4 in operand 0 (shape (4, 5)) but length 3 in operand 1 (shape (2, 3))"
    )
    ellipsis = _error("...i,...i", np.ones((2, 3)), np.ones((4, 3)))
    assert ellipsis.reason.startswith("axis '...' has length 2 in operand 0")


def test_diagonal_of_unequal_lengths() -> None:
    error = _error("ii", A)
    assert error.reason == (
        "axis 'i' is repeated in operand 0 with different lengths 2 and 3: a diagonal needs "
        "equal lengths"
    )


def test_output_axis_absent_and_repeated() -> None:
    absent = _error("ij,jk->iz", A, np.ones((3, 2)))
    assert isinstance(absent, tops.PatternError)
    assert absent.reason == "output axis 'z' does not appear in any input"
    assert _caret(absent) == '  pattern: "ij,jk->iz"\n                    ^'
    repeated = _error("ij->ii", A)
    assert repeated.reason == "output axis 'i' appears more than once"
    assert _caret(repeated) == '  pattern: "ij->ii"\n                 ^'
    spaced = _error("a b -> a c", A)
    assert spaced.reason == "output axis 'c' does not appear in any input"


def test_bad_characters_and_non_letters() -> None:
    bad = _error("i$j", A)
    assert bad.reason == "unexpected character '$' in pattern"
    assert _caret(bad) == '  pattern: "i$j"\n             ^'
    digit = _error("i1", A)
    assert digit.reason == ("'1' is not a letter: in compact notation every axis is one letter")
    assert _caret(digit) == '  pattern: "i1"\n             ^'
    assert digit.hint == "for longer axis names separate them with spaces: 'b h i d, ...'"
    assert _error("i 2", A).reason == (
        "'2' is not allowed in einsum: use named axes, '...' and ( ) compositions"
    )


def test_pattern_structure_errors() -> None:
    assert _error("ij->i->j", A).reason == "a pattern has at most one '->'"
    assert _error("ij->i,j", A).reason == "einsum has exactly one output term"
    assert _error("i...j...", A).reason == "'...' appears more than once in one term"
    missing = _error("...ij->ij", np.ones((2, 3, 4)))
    assert missing.reason == (
        "the inputs' '...' stands for 1 dimension(s) but the output has no '...'"
    )


def test_composition_lengths() -> None:
    x, w = np.ones((2, 8)), np.ones((4, 5))
    missing = _error("b (h d), d e -> b h e", x, w)
    assert missing.reason == (
        "cannot infer the lengths of h and d in (h d) from a single dimension of length 8"
    )
    assert _caret(missing) == '  pattern: "b (h d), d e -> b h e"\n              ^^^^^'
    unused = _error("b (h d), d e -> b h e", x, w, h=2, q=3)
    assert unused.reason == "axis length q=3 is given but 'q' is not an input axis"
    assert "lengths: h=2 q=3" in str(unused)
    indivisible = _error("b (h d), d e -> b h e", x, w, h=3)
    assert indivisible.reason == (
        "cannot split axis of length 8 into (h d) with h=3: 8 is not divisible by 3"
    )
    np.testing.assert_array_equal(tops.einsum("ij", A, i=2), A)  # a consistent length is fine
    wrong = _error("ij", A, i=5)
    assert wrong.reason == "dimension of length 2 does not match i = 5"


def test_equation_not_a_string() -> None:
    error = _error(A, A, A)
    assert (
        error.reason
        == "the equation must be a str, given first or last; got ndarray, ndarray, ndarray"
    )
    assert error.hint is not None
    assert "einops order" in error.hint
    assert _error(3, A).reason.endswith("got int, ndarray")
    assert _error().reason.endswith("got nothing")


def test_no_arrays_and_mixed_families() -> None:
    assert _error("ij").reason == "einsum needs at least one array"
    torch = pytest.importorskip("torch")
    mixed = _error("ij,jk->ik", A, torch.ones(3, 2))
    assert mixed.reason == (
        "operand 1 is a Tensor, operand 0 is a ndarray: all operands must be of one array family"
    )


@pytest.mark.parametrize("max_time", [0, -1.0, True, "1s"])
def test_max_time_must_be_a_positive_number(max_time: Any) -> None:
    error = _error("ij,jk", A, np.ones((3, 2)), strategy="hyper", max_time=max_time)
    assert error.reason == f"max_time must be a positive number of seconds, got {max_time!r}"


def test_unknown_objective() -> None:
    error = _error("ij,jk", A, np.ones((3, 2)), minimize="time")
    assert error.reason.startswith("unknown minimize 'time'")


def test_unsupported_type() -> None:
    error = _error("ij", {"not": "an array"})
    assert isinstance(error, tops.BackendError)
    assert isinstance(error, TypeError)


def test_strategy_and_path_errors() -> None:
    unknown = _error("ij", A, strategy="fast")
    assert unknown.reason == (
        "unknown einsum strategy 'fast'; valid: auto, optimal, dp, greedy, hyper, partition, "
        "or an explicit path"
    )
    invalid = _error("ij,jk", A, np.ones((3, 2)), strategy=[(0, 2)])
    assert invalid.reason.startswith(
        "invalid contraction path [(0, 2)]: path step 0 names operand 2"
    )
    short = _error("ij,jk,kl->", A, np.ones((3, 2)), np.ones((2, 2)), strategy=[(0, 1)])
    assert short.reason.startswith("invalid contraction path [(0, 1)]: the path leaves 2 operands")
    not_tuple = _error("ij,jk", A, np.ones((3, 2)), strategy=[0])
    assert not_tuple.reason.startswith("invalid contraction path: step 0 is 0")
    assert (
        _error("ij", A, strategy=3).reason == "strategy must be a str or an explicit path, got int"
    )
    # an explicit path whose intermediate is over the limit is sliced as given
    limited = tops.einsum_path(
        "ab,bc,cd->ad", (4, 5), (5, 6), (6, 7), strategy=[(0, 1), (0, 1)], memory_limit=5
    )
    assert limited.slices > 1
    assert limited.largest_intermediate <= 5


def test_memory_limit_validation_per_call() -> None:
    error = _error("ij", A, memory_limit=-2)
    assert error.op == "einsum"
    assert error.reason == (
        "memory_limit -2 is not a number of elements, a size such as '2GB', 'max_input' or None"
    )
    assert tops.einsum("ij", A, memory_limit=0) is not None  # numpy's 0: as small as it gets


def test_einsum_path_errors() -> None:
    with pytest.raises(tops.TensorOpsError) as info:
        tops.einsum_path("ij,jk->ik", (2, 3), (4, 5))
    assert str(info.value).startswith("einsum_path: axis 'j' has length 3 in operand 0")
    with pytest.raises(tops.TensorOpsError) as info:
        tops.einsum_path("ij")
    assert info.value.reason == "einsum_path needs at least one array or shape"


def test_errors_are_value_and_runtime_errors() -> None:
    error = _error("ij,jk->ik", A, B)
    assert isinstance(error, ValueError)
    assert isinstance(error, RuntimeError)
