"""Recipes are immutable values: equal when their steps are, hashable, picklable."""

from __future__ import annotations

import copy
import pickle
from typing import Any
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorops as tops
from tensorops import _plan
from tensorops._backends import NUMPY_BACKEND
from tensorops._errors import TensorOpsError
from tensorops._grammar import Axis, Dots, Group, parse_pattern
from tensorops._plan import Recipe, plan_recipe

# the one step a recipe is (a call, or a reshape and its broadcast), or None for several
PERMUTE, RESHAPE, REDUCE, INSERT, SEVERAL = "permute", "reshape", "reduce", "insert", None


def test_recipe_is_an_immutable_value() -> None:
    recipe = plan_recipe("rearrange", "a (b c) -> c b a", (2, 6), (("b", 2),))
    assert recipe.init_shape == (2, 2, 3)
    assert recipe.perm == (2, 1, 0)
    same = Recipe((2, 2, 3), (), (2, 1, 0), None, None, None, (("a", 2), ("b", 2), ("c", 3)))
    assert recipe == same
    assert hash(recipe) == hash(same)
    assert recipe != plan_recipe("rearrange", "a b -> b a", (2, 6))
    assert recipe != tuple(same._fields())
    assert pickle.loads(pickle.dumps(recipe)) == recipe
    assert copy.deepcopy(recipe) == recipe
    with pytest.raises(AttributeError):
        recipe.perm = None  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del recipe.perm
    assert repr(recipe).startswith("Recipe(init_shape=(2, 2, 3), reduce_axes=(), perm=(2, 1, 0),")


@pytest.mark.parametrize(
    ("op", "pattern", "shape", "lengths", "single"),
    [
        ("rearrange", "b c h w -> b h w c", (2, 3, 4, 5), (), PERMUTE),
        ("rearrange", "b c h w -> b c (h w)", (2, 3, 4, 5), (), RESHAPE),
        ("rearrange", "b (h w) -> b h w", (2, 6), (("h", 2),), SEVERAL),  # the initial reshape
        ("rearrange", "a b -> a b", (2, 3), (), SEVERAL),  # no call at all
        ("rearrange", "a (b c) -> c b a", (2, 6), (("b", 2),), SEVERAL),
        ("reduce", "b c h w -> b c", (2, 3, 4, 5), (), REDUCE),
        ("reduce", "b c (h 2) (w 2) -> b c h w", (2, 3, 4, 4), (), SEVERAL),
        ("reduce", "b c -> c b", (2, 3), (), PERMUTE),
        ("repeat", "h w -> h w c", (2, 3), (("c", 3),), INSERT),  # a reshape and a broadcast
        ("repeat", "h w -> (h c) w", (2, 3), (("c", 3),), SEVERAL),
    ],
)
def test_single_names_the_one_call(
    op: str,
    pattern: str,
    shape: tuple[int, ...],
    lengths: tuple[tuple[str, int], ...],
    single: str | None,
) -> None:
    """The ops make a lone call directly; `single` must say exactly when there is one."""
    recipe = plan_recipe(op, pattern, shape, lengths)
    assert recipe.single() == single
    executor = recipe.executor(NUMPY_BACKEND, "sum" if op == "reduce" else None)
    assert (getattr(executor, "__name__", "") == single) == (single is not None)
    # the direct call gives what the whole recipe gives
    x = np.arange(float(np.prod(shape))).reshape(shape)
    kwargs = dict(lengths)
    args = (x, pattern, "sum") if op == "reduce" else (x, pattern)
    expected = recipe.run_steps(NUMPY_BACKEND, x, "sum" if op == "reduce" else None)
    np.testing.assert_array_equal(getattr(tops, op)(*args, **kwargs), expected)
    np.testing.assert_array_equal(executor(x, "sum" if op == "reduce" else None), expected)


# -- the plan from the axes read with the check, against the resolver's ------------------------

_NAMES = ("a", "b", "c", "d")


@st.composite
def _side(draw: st.DrawFn, names: list[str], dots: bool) -> str:
    """A term of `names` in random groups, with unit axes, integers and '...' where asked."""
    order = draw(st.permutations(names))
    parts, i = [], 0
    while i < len(order):
        size = draw(st.integers(1, min(3, len(order) - i)))
        group = [*order[i : i + size], *draw(st.lists(st.sampled_from(["1", "2"]), max_size=1))]
        parts.append(group[0] if len(group) == 1 else f"({' '.join(group)})")
        i += size
    parts += draw(st.lists(st.sampled_from(["1", "()", "3"]), max_size=1))
    if dots:
        parts.insert(draw(st.integers(0, len(parts))), "...")
    return " ".join(parts)


def _shape(data: st.DataObject, left: str, sizes: dict[str, int]) -> tuple[int, ...]:
    """A shape that `left` describes with these axis sizes, one length off now and then."""
    shape: list[int] = []
    for element in parse_pattern(left).inputs[0].elements:
        if isinstance(element, Dots):
            shape += data.draw(st.lists(st.integers(1, 3), max_size=2))
            continue
        size = 1
        for item in element.items if isinstance(element, Group) else (element,):
            size *= sizes[item.name] if isinstance(item, Axis) else item.length  # type: ignore[union-attr]
        shape.append(size)
    if shape and data.draw(st.integers(0, 4)) == 0:
        shape[data.draw(st.integers(0, len(shape) - 1))] += 1
    return tuple(shape)


def _recipe_or_error(op: str, pattern: str, shape: tuple[int, ...], lengths: Any) -> object:
    try:
        recipe = plan_recipe(op, pattern, shape, lengths)
    except TensorOpsError as error:
        return str(error)
    named = tuple((name, n) for name, n in recipe.lengths if not name.startswith("<"))
    return (*recipe._fields()[:-1], named)  # anonymous axes are named apart on each path


@settings(max_examples=800)
@given(st.data())
def test_plans_from_the_read_axes_agree_with_the_resolver(data: st.DataObject) -> None:
    """The plan made from each element's axis names is the one `term_dims` and the resolver make."""
    op = data.draw(st.sampled_from(["rearrange", "reduce", "repeat"]))
    names = data.draw(st.lists(st.sampled_from(_NAMES), unique=True, max_size=4))
    dots = data.draw(st.booleans())
    right = [n for n in names if op != "reduce" or data.draw(st.booleans())]
    right += ["e"] if op == "repeat" and data.draw(st.booleans()) else []
    left = data.draw(_side(names, dots))
    pattern = f"{left} -> {data.draw(_side(right, dots))}"
    sizes = {name: data.draw(st.integers(1, 3)) for name in (*_NAMES, "e")}
    shape = _shape(data, left, sizes)
    given = data.draw(st.lists(st.sampled_from([*_NAMES, "e", "z"]), unique=True, max_size=3))
    lengths = tuple((name, sizes.get(name, 2)) for name in given)
    ours = _recipe_or_error(op, pattern, shape, lengths)
    with mock.patch.object(_plan, "_dots_count", return_value=None):
        assert _recipe_or_error(op, pattern, shape, lengths) == ours
