"""A `Recipe`: the framework calls of one rearrange / reduce / repeat, and how to run them.

A recipe is at most five framework calls::

    reshape(init_shape) -> reduce(reduce_axes) -> permute(perm)
        -> reshape(insert_shape) + expand(expand_shape) -> reshape(final_shape)

Each step is ``None`` (or empty) when it would do nothing. The recipe also names
the method that runs it (`Recipe.executor`): most recipes are one call — a
permute, a reshape or a reduction — and that call is made directly. `make_recipe`
makes one from the dimensions an array is read as and those it becomes;
`tensorops._plan` makes them from patterns. Imports no framework.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NoReturn

from tensorops._axes import Dim, same_shape
from tensorops._types import Backend, Executor

__all__ = ["Recipe", "axis_names", "make_recipe", "recipe_of_axes"]


class Recipe:
    """The framework calls one rearrange / reduce / repeat makes, with their arguments.

    Immutable, hashable and compared by value, as a frozen dataclass would be. It is
    written out by hand because defining a dataclass is slow at import (see
    ``python -X importtime``), and it is not a named tuple because every call reads its fields, and
    ``__slots__`` fields are the fastest to read.
    """

    __slots__ = (
        "expand_shape",
        "final_shape",
        "init_shape",
        "insert_shape",
        "lengths",
        "perm",
        "reduce_axes",
    )
    #: The fields in the order of the constructor's arguments (and of the repr).
    _FIELDS = (
        "init_shape",
        "reduce_axes",
        "perm",
        "insert_shape",
        "expand_shape",
        "final_shape",
        "lengths",
    )

    init_shape: tuple[int, ...] | None
    reduce_axes: tuple[int, ...]
    perm: tuple[int, ...] | None
    insert_shape: tuple[int, ...] | None
    expand_shape: tuple[int, ...] | None
    final_shape: tuple[int, ...] | None
    lengths: tuple[tuple[str, int], ...]  # every elementary axis with its resolved length

    def __init__(
        self,
        init_shape: tuple[int, ...] | None,
        reduce_axes: tuple[int, ...],
        perm: tuple[int, ...] | None,
        insert_shape: tuple[int, ...] | None,
        expand_shape: tuple[int, ...] | None,
        final_shape: tuple[int, ...] | None,
        lengths: tuple[tuple[str, int], ...],
    ) -> None:
        set_field = object.__setattr__  # our own __setattr__ refuses
        set_field(self, "init_shape", init_shape)
        set_field(self, "reduce_axes", reduce_axes)
        set_field(self, "perm", perm)
        set_field(self, "insert_shape", insert_shape)
        set_field(self, "expand_shape", expand_shape)
        set_field(self, "final_shape", final_shape)
        set_field(self, "lengths", lengths)

    def single(self) -> str | None:
        """The one step the recipe is, if it is one: "permute", "reshape", "reduce" or "insert"."""
        # an insert always comes with an expand, and the initial reshape alone is
        # the general case
        made = (
            self.init_shape is not None,
            bool(self.reduce_axes),
            self.perm is not None,
            self.insert_shape is not None,
            self.final_shape is not None,
        )
        return _SINGLE.get(made)

    def executor(self, backend: Backend, reduction: str | None = None) -> Executor:
        """What runs the recipe on `backend`'s arrays: ``run(x, reduction)``.

        A recipe of one call gets the adapter's executor for that call, which calls
        the framework directly; any other runs `run_steps`.

        Args:
            backend: the adapter of the arrays it will run on.
            reduction: the reduction's name, or None for a function passed at run time.
        """
        single = self.single()
        if single == "permute":
            return backend.permuter(self.perm)  # type: ignore[arg-type]
        if single == "reshape":
            return backend.reshaper(self.final_shape)  # type: ignore[arg-type]
        if single == "reduce" and reduction is not None:
            return backend.reducer(reduction, self.reduce_axes)
        if single == "insert":  # repeat's new axes: a reshape and a broadcast
            return _inserter(backend, self.insert_shape, self.expand_shape)  # type: ignore[arg-type]
        if self.reduce_axes and reduction is not None:  # the reducer made once, here
            reducer = backend.reducer(reduction, self.reduce_axes)
            return functools.partial(self.run_steps, backend, reducer=reducer)
        return functools.partial(self.run_steps, backend)

    def run_steps(
        self, backend: Backend, x: Any, reduction: Any, reducer: Executor | None = None
    ) -> Any:
        """Every step of the recipe that does something, in order.

        The reduction is `reducer` when given (the adapter's, made at bind time),
        else `reduction`: a name, or a function ``f(x, axes)``.
        """
        if self.init_shape is not None:
            x = backend.reshape(x, self.init_shape)
        if self.reduce_axes:
            if reducer is not None:
                x = reducer(x, None)
            elif type(reduction) is str:
                x = backend.reduce(x, reduction, self.reduce_axes)
            else:
                x = reduction(x, self.reduce_axes)
        if self.perm is not None:
            x = backend.permute(x, self.perm)
        if self.insert_shape is not None:
            x = backend.reshape(x, self.insert_shape)
            x = backend.expand(x, self.expand_shape)  # type: ignore[arg-type]
        if self.final_shape is not None:
            x = backend.reshape(x, self.final_shape)
        return x

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._FIELDS)

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"cannot assign to field {name!r}: a Recipe is immutable")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"cannot delete field {name!r}: a Recipe is immutable")

    def __eq__(self, other: object) -> bool:
        if type(other) is not Recipe:
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._FIELDS)
        return f"Recipe({fields})"

    def __reduce__(self) -> tuple[type[Recipe], tuple[Any, ...]]:
        return (Recipe, self._fields())


#: Which steps a recipe makes -> the one call it is.
_SINGLE: dict[tuple[bool, ...], str] = {
    (False, False, True, False, False): "permute",
    (False, False, False, False, True): "reshape",
    (False, True, False, False, False): "reduce",
    (False, False, False, True, False): "insert",
}


def _inserter(backend: Backend, shape: tuple[int, ...], expand: tuple[int, ...]) -> Executor:
    """Repeat's executor of a reshape to `shape` (unit axes inserted) and its broadcast."""
    reshape, broadcast = backend.reshaper(shape), backend.expand

    def insert(x: Any, arg: Any) -> Any:
        return broadcast(reshape(x, arg), expand)

    return insert


def axis_names(dims: Sequence[Dim]) -> list[tuple[str, ...]]:
    """Each dimension's axis names (an empty name for a skipped axis)."""
    return [tuple([slot.name or "" for slot in dim.slots]) for dim in dims]


def make_recipe(
    shape: tuple[int, ...], in_dims: Sequence[Dim], out_dims: Sequence[Dim], known: dict[str, int]
) -> Recipe:
    """The recipe from an array of `shape` read as `in_dims` to `out_dims`.

    Axes of `out_dims` missing from `in_dims` are broadcast (as repeat does); axes of
    `in_dims` missing from `out_dims` are reduced. `known` holds every axis's length.
    """
    return recipe_of_axes(shape, axis_names(in_dims), axis_names(out_dims), known)


def recipe_of_axes(
    shape: tuple[int, ...],
    in_dims: Sequence[tuple[str, ...]],
    out_dims: Sequence[tuple[str, ...]],
    known: dict[str, int],
) -> Recipe:
    """`make_recipe` from each dimension's axis names (`axis_names`)."""
    in_axes = [name for names in in_dims for name in names]
    out_axes = [name for names in out_dims for name in names]
    out_set = set(out_axes)
    reduce_axes: list[int] = []
    kept: dict[str, int] = {}  # each kept axis with its first position among the kept ones
    for i, name in enumerate(in_axes):
        if name not in out_set:
            reduce_axes.append(i)
        elif name not in kept:
            kept[name] = i - len(reduce_axes)
    perm = tuple([kept[n] for n in out_axes if n in kept])
    new_axes = len(perm) != len(out_axes)
    init_shape = tuple([known[n] for n in in_axes])
    expand_shape = tuple([known[n] for n in out_axes])
    final_shape = []
    for names in out_dims:  # the product of each dimension's lengths (`product`), inline
        size = 1
        for name in names:
            size *= known[name]
        final_shape.append(size)
    lengths = [(n, known[n]) for n in in_axes]
    if new_axes:
        lengths += [(n, known[n]) for n in out_axes if n not in kept]
    return Recipe(
        init_shape=None if same_shape(init_shape, shape) else init_shape,
        reduce_axes=tuple(reduce_axes),
        perm=perm if perm != tuple(range(len(perm))) else None,
        insert_shape=tuple([known[n] if n in kept else 1 for n in out_axes]) if new_axes else None,
        expand_shape=expand_shape if new_axes else None,
        # without new axes the permuted array's shape is expand_shape too
        final_shape=None if same_shape(final_shape, expand_shape) else tuple(final_shape),
        lengths=tuple(lengths),
    )
