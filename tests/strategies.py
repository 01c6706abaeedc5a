"""Hypothesis strategies for patterns and shapes, shared by the property tests."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

NAMES = ("a", "b", "c", "d", "e", "f")


@dataclass(frozen=True)
class Case:
    """One random axis layout: per input dimension, the group of (name, length) axes."""

    groups: tuple[tuple[tuple[str, int], ...], ...]

    @property
    def shape(self) -> tuple[int, ...]:
        result = []
        for group in self.groups:
            size = 1
            for _name, length in group:
                size *= length
            result.append(size)
        return tuple(result)

    @property
    def axes(self) -> list[tuple[str, int]]:
        return [axis for group in self.groups for axis in group]

    def left(self) -> str:
        return " ".join(_term(group) for group in self.groups)


def _term(group: tuple[tuple[str, int], ...]) -> str:
    names = " ".join(name for name, _ in group)
    return names if len(group) == 1 else f"({names})"


@st.composite
def cases(draw: st.DrawFn, max_axes: int = 5) -> Case:
    """A random set of named axes with lengths 1..4, split into composed groups."""
    n = draw(st.integers(1, max_axes))
    names = draw(st.permutations(NAMES))[:n]
    lengths = draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    axes = list(zip(names, lengths, strict=True))
    groups: list[tuple[tuple[str, int], ...]] = []
    i = 0
    while i < n:
        size = draw(st.integers(1, min(3, n - i)))
        groups.append(tuple(axes[i : i + size]))
        i += size
    return Case(tuple(groups))


@st.composite
def regroupings(draw: st.DrawFn, axes: list[tuple[str, int]]) -> str:
    """A random permutation of `axes`, composed into random groups, as a pattern side."""
    order = draw(st.permutations(axes))
    parts = []
    i = 0
    while i < len(order):
        size = draw(st.integers(1, min(3, len(order) - i)))
        parts.append(_term(tuple(order[i : i + size])))
        i += size
    return " ".join(parts)


# -- einsum equations ---------------------------------------------------------------------

#: The axis letters of `equations`.
LETTERS = "abcdeA"


@st.composite
def equations(draw: st.DrawFn) -> tuple[str, list[tuple[int, ...]]]:
    """A random compact einsum equation and its operands' shapes.

    Up to six operands over the letters of `LETTERS` (lengths 1..3), with diagonals,
    size-1 axes that broadcast, ``...`` (also broadcasting) and implicit outputs.
    """
    sizes = {letter: draw(st.integers(1, 3)) for letter in LETTERS}
    count = draw(st.integers(1, 6))
    use_ellipsis = draw(st.booleans())
    broadcast = draw(st.lists(st.integers(1, 3), max_size=2))
    terms, shapes = [], []
    for _ in range(count):
        term = draw(st.lists(st.sampled_from(LETTERS), max_size=3 if count > 3 else 4))
        shape = [sizes[letter] for letter in term]
        if term and draw(st.integers(0, 4)) == 0:  # a size-1 axis broadcasting
            shape[draw(st.integers(0, len(term) - 1))] = 1
        text = "".join(term)
        if use_ellipsis:
            tail = broadcast[len(broadcast) - draw(st.integers(0, len(broadcast))) :]
            tail = [1 if draw(st.integers(0, 3)) == 0 else n for n in tail]
            text, shape = "..." + text, [*tail, *shape]
        terms.append(text)
        shapes.append(tuple(shape))
    equation = ",".join(terms)
    if draw(st.booleans()):
        present = sorted({letter for term in terms for letter in term if letter.isalpha()})
        output = draw(st.permutations(present).map(lambda p: p[: draw(st.integers(0, len(p)))]))
        equation += "->" + ("..." if use_ellipsis else "") + "".join(output)
    return equation, shapes
