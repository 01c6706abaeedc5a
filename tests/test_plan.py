"""Recipes are immutable values: equal when their steps are, hashable, picklable."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import tensorops as tops
from tensorops._backends import NUMPY_BACKEND
from tensorops._plan import Recipe, plan_recipe

# the one call a recipe is, or None for several steps (or none)
PERMUTE, RESHAPE, REDUCE, SEVERAL = "permute", "reshape", "reduce", None


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
        ("repeat", "h w -> h w c", (2, 3), (("c", 3),), SEVERAL),
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
