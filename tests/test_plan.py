"""Recipes are immutable values: equal when their steps are, hashable, picklable."""

from __future__ import annotations

import copy
import pickle

import pytest

from tensorops._plan import Recipe, bind_recipe


def test_recipe_is_an_immutable_value() -> None:
    recipe = bind_recipe("rearrange", "a (b c) -> c b a", (2, 6), (("b", 2),))
    assert recipe.init_shape == (2, 2, 3)
    assert recipe.perm == (2, 1, 0)
    same = Recipe((2, 2, 3), (), (2, 1, 0), None, None, None, (("a", 2), ("b", 2), ("c", 3)))
    assert recipe == same
    assert hash(recipe) == hash(same)
    assert recipe != bind_recipe("rearrange", "a b -> b a", (2, 6))
    assert recipe != tuple(same._fields())
    assert pickle.loads(pickle.dumps(recipe)) == recipe
    assert copy.deepcopy(recipe) == recipe
    with pytest.raises(AttributeError):
        recipe.perm = None  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del recipe.perm
    assert repr(recipe).startswith("Recipe(init_shape=(2, 2, 3), reduce_axes=(), perm=(2, 1, 0),")
