"""The hot path of einsum parsing (`plain_axes`) reads what the grammar reads.

`plain_axes` reads equations of plain axes without the shared grammar; for every
equation it accepts, the grammar (`parse_equation`) must find the same axis names per term, the
same output and the same spelling, and everything else (``...``, groups, digits,
errors) it must leave to the grammar. Binding an accepted equation to shapes that
do not fit raises the grammar's error, with its caret.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorops._einsum.equations._bind import Bound, bind_equation, bind_lettered
from tensorops._einsum.equations._notation import (
    Notation,
    Plain,
    parse_equation,
    plain_axes,
    plain_input_names,
)
from tensorops._einsum.programs._execute import letter_equation
from tensorops._errors import ShapeError, TensorOpsError

CASES = [
    ("ij,jk->ik", (2, 2), None),
    (" ij , jk -> ik ", (2, 2), None),
    ("ij,jk", (2, 2), None),
    ("ii->i", (2,), None),
    ("ij->", (2,), None),
    ("i -> ", (1,), None),
    (",i->i", (0, 1), None),
    ("a, ,b", (1, 0, 1), None),
    ("->", (0,), None),
    ("", (0,), None),
    ("b h i d, b h j d -> b h i j", (4, 4), None),
    ("batch d_model, d_model out -> batch out", (2, 2), None),
    ("index ->", (1,), True),
    ("b0_1 b0_16, b0_1 b1_2 -> b0_16 b1_2", (2, 2), None),  # '_' inside a name
    ("a_b,b_c", (1, 1), None),
    ("a _ b, b c", (3, 2), None),
    ("ab, bc", (2, 2), True),
    ("ab,bc->ac", (2, 2), False),
    ("ÀÁ,ÁÂ->ÀÂ", (2, 2), None),
    ("\u03b1\u03b2,\u03b2\u03b3", (2, 2), None),  # Greek letters
    # not plain: the grammar reads these (or raises)
    ("...ij,...jk->...ik", (3, 3), None),
    ("b (h d), d e -> b h e", (2, 2), None),
    ("i2,2j", (2, 2), None),
    ("_a b, b c", (2, 2), None),
    ("a b, b c_ -> a c_", (2, 2), None),
    ("ij,jk->ik->i", (2, 2), None),
    ("ij,jk->ik,k", (2, 2), None),
    ("ij,jk->il", (2, 2), None),
    ("ij,jk->ii", (2, 2), None),
    ("ij,jk->ik", (2, 3), None),
    ("ij,jk->ik", (2,), None),
    ("ij-jk", (2,), None),
    ("ij>jk", (2,), None),
    ("a b, b c", (2, 2), False),
    ("ij…,jk", (3, 2), None),
    ("i*j", (3,), None),
    ("[i]j", (2,), None),
    ("ij;jk", (2,), None),
]


def _general(equation: str, ndims: tuple[int, ...], spaced: bool | None) -> object:
    try:
        return parse_equation(equation, ndims, spaced)
    except TensorOpsError as error:
        return type(error), str(error)


def _names(notation: Notation) -> Plain:
    inputs = tuple(
        tuple(slot.name or "" for dim in term for slot in dim.slots) for term in notation.inputs
    )
    return Plain(notation.spaced, inputs, notation.output_axes)


def _check(equation: str, ndims: tuple[int, ...], spaced: bool | None) -> bool:
    """Whether the hot path takes `equation`; if it does, the grammar reads the same."""
    plain = plain_axes(equation, spaced)
    if plain is not None:
        assert plain_input_names(equation, spaced) == {a for term in plain.inputs for a in term}
        if tuple(len(term) for term in plain.inputs) != ndims:
            with pytest.raises(TensorOpsError):  # ranks are the binder's to check
                parse_equation(equation, ndims, spaced)
            return False
        general = _general(equation, ndims, spaced)
        assert isinstance(general, Notation), (equation, general)
        assert _names(general) == plain, (equation, plain, general)
        assert all(len(dim.slots) == 1 for term in general.inputs for dim in term)
        _check_lettered(equation, plain, spaced)
    else:
        assert plain_input_names(equation, spaced) is None
        assert bind_lettered(equation, tuple((2,) * n for n in ndims), spaced) is None
    return plain is not None


def _check_lettered(equation: str, plain: Plain, spaced: bool | None) -> None:
    """The one-pass binder of the cold path binds as the hot path reads, or leaves it."""
    shapes = tuple(tuple(2 + ord(name[0]) % 3 for name in term) for term in plain.inputs)
    lettered = bind_lettered(equation, shapes, spaced)
    if lettered is None:  # implicit outputs, compact equations with spaces, > 52 axes
        implicit = "->" not in equation
        spaces = not plain.spaced and " " in equation
        assert implicit or spaces or len({a for term in plain.inputs for a in term}) > 52
        return
    sizes = {name: 2 + ord(name[0]) % 3 for term in plain.inputs for name in term}
    unchanged = (None,) * len(plain.inputs)
    expected = Bound(
        equation, plain.spaced, plain.inputs, plain.output, None, sizes, plain.inputs, unchanged
    )
    assert lettered.bound == expected
    assert list(lettered.bound.sizes) == list(sizes)  # in order of appearance
    assert lettered.equation == letter_equation(plain.inputs, plain.output)
    elements = 1
    for size in sizes.values():
        elements *= size
    assert lettered.elements == elements


@pytest.mark.parametrize(("equation", "ndims", "spaced"), CASES)
def test_the_hot_path_agrees_with_the_grammar(
    equation: str, ndims: tuple[int, ...], spaced: bool | None
) -> None:
    _check(equation, ndims, spaced)


def test_the_hot_path_takes_plain_equations() -> None:
    taken = {equation for equation, ndims, spaced in CASES if _check(equation, ndims, spaced)}
    assert "ij,jk->ik" in taken
    assert "b h i d, b h j d -> b h i j" in taken
    assert "ÀÁ,ÁÂ->ÀÂ" in taken
    assert "b0_1 b0_16, b0_1 b1_2 -> b0_16 b1_2" in taken
    assert "batch d_model, d_model out -> batch out" in taken
    assert not taken & {"_a b, b c", "a b, b c_ -> a c_", "a_b,b_c", "a _ b, b c"}
    assert not taken & {"...ij,...jk->...ik", "b (h d), d e -> b h e", "i2,2j", "ij,jk->il"}


def test_a_lattice_of_256_terms_is_read_by_the_hot_path() -> None:
    """The networks of the plan-store benchmark: bond names such as ``b17_33``."""
    side = 16
    terms = []
    for i in range(side * side):
        near = [j for j in (i - side, i + side) if 0 <= j < side * side]
        near += [j for j in (i - 1, i + 1) if j // side == i // side and 0 <= j < side * side]
        terms.append(" ".join(f"b{min(i, j)}_{max(i, j)}" for j in near))
    equation = ", ".join(terms) + " ->"
    assert _check(equation, tuple(len(term.split()) for term in terms), None)


def test_parse_equation_errors_come_from_the_grammar() -> None:
    with pytest.raises(TensorOpsError, match="output axis 'l' does not appear in any input"):
        parse_equation("ij,jk->il", (2, 2))
    with pytest.raises(TensorOpsError, match="operand 1 has 3 dimension"):
        parse_equation("ij,jk->ik", (2, 3))


_PIECES = st.sampled_from(["i", "j", "k", "ab", "À", "x1", "d_m", "_", "...", "(", ")", "2", " "])
_TERM = st.lists(_PIECES, max_size=4).map("".join)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(_TERM, min_size=1, max_size=3),
    st.one_of(st.none(), _TERM),
    st.sampled_from(["", " "]),
    st.lists(st.integers(0, 4), min_size=1, max_size=3),
    st.sampled_from([None, True]),
)
def test_the_hot_path_agrees_on_random_equations(
    terms: list[str], output: str | None, pad: str, ndims: list[int], spaced: bool | None
) -> None:
    equation = f"{pad},{pad}".join(terms) + ("" if output is None else f"{pad}->{pad}{output}")
    _check(equation, tuple(ndims[: len(terms)]) + (0,) * (len(terms) - len(ndims)), spaced)


_LETTERS = st.text(alphabet="ijkab\u00c0\u03b1", max_size=4)  # also À and alpha


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_LETTERS, min_size=1, max_size=4),
    st.one_of(st.none(), _LETTERS),
    st.booleans(),
    st.sampled_from([None, True]),
)
def test_the_hot_path_agrees_on_random_plain_networks(
    terms: list[str], output: str | None, words: bool, spaced: bool | None
) -> None:
    """Ranks that fit, outputs right and wrong: compact letters, or each letter a word."""
    join = " ".join if words else "".join
    equation = ",".join(join(term) for term in terms)
    if output is not None:
        equation += "->" + join(output)
    taken = _check(equation, tuple(len(term) for term in terms), spaced)
    general = _general(equation, tuple(len(term) for term in terms), spaced)
    if isinstance(general, Notation) and spaced is None and not words:
        assert taken, equation


def test_plain_equations_that_do_not_fit_their_shapes_are_bound_by_the_grammar() -> None:
    """The one-pass binder leaves broadcasting and every error to the general one."""
    exact = bind_equation("ij,jk->ik", ((2, 3), (3, 4)), ())
    assert exact.sizes == {"i": 2, "j": 3, "k": 4}
    assert exact.axes == exact.terms == (("i", "j"), ("j", "k"))
    assert exact.shapes == (None, None)
    assert exact.output_dims is None
    broadcast = bind_equation("ij,jk->ik", ((2, 1), (3, 4)), ())
    assert broadcast.sizes == {"i": 2, "j": 3, "k": 4}
    assert broadcast.axes == (("i",), ("j", "k"))
    assert broadcast.shapes == ((2,), None)
    with pytest.raises(ShapeError, match="axis 'j' has length 3 in operand 0") as mismatch:
        bind_equation("ij,jk->ik", ((2, 3), (4, 5)), ())
    assert mismatch.value.span == (3, 4)
    with pytest.raises(ShapeError, match="a diagonal needs equal lengths"):
        bind_equation("ii->i", ((2, 3),), ())
    with pytest.raises(ShapeError, match="operand 1 has 3 dimension"):
        bind_equation("a b, b c -> a c", ((2, 3), (3, 4, 5)), ())
    with pytest.raises(ShapeError, match="2 input term"):
        bind_equation("ij,jk->ik", ((2, 3),), ())


def test_the_cold_path_binds_only_lengths_that_agree_exactly() -> None:
    """Broadcasting, mismatches and ranks that do not fit are left to the other paths."""
    lettered = bind_lettered("b i d, b j d -> b i j", ((2, 3, 4), (2, 5, 4)), True)
    assert lettered is not None
    assert lettered.equation == "abc,adc->abd"
    assert lettered.bound.sizes == {"b": 2, "i": 3, "d": 4, "j": 5}
    assert lettered.elements == 2 * 3 * 4 * 5
    assert bind_lettered("ij,jk->ik", ((2, 3), (3, 4)), None).equation == "ab,bc->ac"  # type: ignore[union-attr]
    assert bind_lettered("ij,jk->ik", ((2, 1), (3, 4)), None) is None
    assert bind_lettered("ij,jk->ik", ((2, 3), (4, 5)), None) is None
    assert bind_lettered("ij,jk->ik", ((2, 3), (3, 4, 5)), None) is None
    assert bind_lettered("ij,jk->ik", ((2, 3),), None) is None
    assert bind_lettered("a b, b c -> a c", ((2, 3), (3, 4)), False) is None
    assert bind_lettered("i j, j k -> i k", ((2, 3.0), (3.0, 4)), None) is None  # type: ignore[arg-type]
    names = [f"a{i}" for i in range(53)]
    many = " ".join(names)
    assert bind_lettered(f"{many} -> {many}", ((1,) * 53,), True) is None
    assert bind_equation(f"{many} -> {many}", ((1,) * 53,), (), True).output == tuple(names)
