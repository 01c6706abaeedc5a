"""rearrange, reduce and repeat: a pattern against a shape -> a `Recipe` of framework calls.

A recipe is at most five framework calls::

    reshape(init_shape) -> reduce(reduce_axes) -> permute(perm)
        -> reshape(insert_shape) + expand(expand_shape) -> reshape(final_shape)

Each step is ``None`` (or empty) when it would do nothing. The recipe also names
the method that runs it (`Recipe.executor`): most recipes are one call — a
permute, a reshape or a reduction — and that call is made directly.

This module imports no framework: shapes are tuples of ints (or of symbolic ints
under a tracing compiler). The axes are resolved by `tensorops._axes`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NoReturn

from tensorops._axes import (
    Dim,
    check_lengths,
    check_used,
    count_dots,
    product,
    resolve_dims,
    same_shape,
    term_dims,
)
from tensorops._errors import PatternError, ShapeError, Span
from tensorops._grammar import (
    Anon,
    Axis,
    Bracket,
    Dots,
    Group,
    Pattern,
    Term,
    check_names,
    items_of,
    parse_pattern,
)
from tensorops._types import Backend, Executor

__all__ = ["PATTERN_OPS", "Recipe", "check_pattern", "check_term", "make_recipe", "plan_recipe"]

#: The ops a recipe serves.
PATTERN_OPS = ("rearrange", "reduce", "repeat")

LengthItems = tuple[tuple[str, Any], ...]


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
        """The one call the recipe is, if it is one: "permute", "reshape" or "reduce"."""
        # an insert always comes with an expand, and the initial reshape alone is
        # the general case
        steps = (self.init_shape, self.reduce_axes or None, self.perm, self.insert_shape)
        made = tuple(step is not None for step in (*steps, self.final_shape))
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
}


def _not_allowed(pattern: Pattern, span: Span, op: str) -> PatternError:
    element = pattern.text[span[0] : span[1]]
    hint = None
    if element.startswith("["):
        hint = "brackets mark the axes softmax and get_at work along; compose axes with ( )"
    return PatternError(
        f"'{element}' is not allowed in {op}", pattern=pattern.text, span=span, hint=hint
    )


def check_term(pattern: Pattern, term: Term, side: str, op: str, brackets: bool = False) -> None:
    """Check one term: each name once, ``...`` once and not grouped on the left, no ``_`` or ``*``.

    Args:
        pattern: the parsed pattern, for the error.
        term: the term.
        side: ``"left"`` or ``"right"``, for the message.
        op: the op, for the message.
        brackets: whether the op gives ``[ ]`` a meaning (softmax, get_at, ...).

    Raises:
        PatternError: at the first element `op` does not accept there.
    """
    seen: set[str] = set()
    dots: Span | None = None
    for element, item in items_of(term):
        if isinstance(element, Bracket) and not brackets:
            raise _not_allowed(pattern, element.span, op)
        if isinstance(item, Dots):
            if dots is not None:
                raise PatternError(
                    f"'...' appears twice on the {side}", pattern=pattern.text, span=item.span
                )
            if side == "left" and isinstance(element, Group):
                raise PatternError(
                    "'...' inside parentheses is not allowed on the left",
                    pattern=pattern.text,
                    span=element.span,
                    hint="the axes '...' stands for are only known after matching the input",
                )
            dots = item.span
        elif isinstance(item, Axis):
            if item.name in seen:
                raise PatternError(
                    f"axis '{item.name}' appears twice on the {side}",
                    pattern=pattern.text,
                    span=item.span,
                    hint="use einsum to take a diagonal",
                )
            seen.add(item.name)
        elif not isinstance(item, Anon):
            raise _not_allowed(pattern, item.span, op)


def _names(term: Term) -> dict[str, Span]:
    return {item.name: item.span for _, item in items_of(term) if isinstance(item, Axis)}


def _dots_span(term: Term) -> Span | None:
    return next((item.span for _, item in items_of(term) if isinstance(item, Dots)), None)


@functools.lru_cache(maxsize=1024)
def check_pattern(op: str, text: str) -> Pattern:
    """Parse `text` and check that `op` accepts it; cached on (op, text).

    Raises:
        PatternError: at the first element `op` does not accept.
    """
    pattern = parse_pattern(text)
    if pattern.outputs is None:
        end = len(text)
        raise PatternError(
            "the pattern has no '->'", pattern=text, span=(end, end + 1), hint="e.g. 'b c -> c b'"
        )
    check_names(pattern)
    for terms, side in ((pattern.inputs, "left"), (pattern.outputs, "right")):
        if len(terms) != 1:
            span = (terms[0].span[1], terms[1].span[0])
            raise PatternError(
                f"{op} takes one term a side, got {len(terms)} on the {side}",
                pattern=text,
                span=span,
                hint="separate axes with spaces, not commas",
            )
        check_term(pattern, terms[0], side, op)
    left, right = pattern.inputs[0], pattern.outputs[0]
    left_dots, right_dots = _dots_span(left), _dots_span(right)
    # reduce may reduce the axes '...' stands for: then it is on the left only.
    if (left_dots is None) != (right_dots is None) and not (op == "reduce" and left_dots):
        where = left_dots if left_dots is not None else right_dots
        raise PatternError("'...' must appear on both sides or neither", pattern=text, span=where)
    _check_names(op, text, left, right)
    return pattern


def _check_names(op: str, text: str, left: Term, right: Term) -> None:
    left_names, right_names = _names(left), _names(right)
    only_left = (
        {} if op == "repeat" else {n: s for n, s in right_names.items() if n not in left_names}
    )
    only_right = (
        {} if op == "reduce" else {n: s for n, s in left_names.items() if n not in right_names}
    )
    for missing, side in ((only_right, "right"), (only_left, "left")):
        if missing:
            name, span = next(iter(missing.items()))
            hint = "use reduce to remove an axis, repeat to add one" if op == "rearrange" else None
            raise PatternError(
                f"axis '{name}' is missing on the {side}", pattern=text, span=span, hint=hint
            )
    for term, side in ((left, "left"), (right, "right")):
        for _, item in items_of(term):
            if isinstance(item, Anon) and item.length != 1:
                allowed = (op, side) in (("reduce", "left"), ("repeat", "right"))
                if not allowed:
                    raise PatternError(
                        f"an anonymous axis of length {item.length} is not allowed on the "
                        f"{side} of {op}",
                        pattern=text,
                        span=item.span,
                        hint="name the axis and pass its length as a keyword",
                    )


def plan_recipe(op: str, text: str, shape: Sequence[int], lengths: LengthItems = ()) -> Recipe:
    """The recipe of `op` with the pattern `text` on an input of `shape` (not cached).

    Raises:
        PatternError: the pattern is malformed or `op` does not accept it.
        ShapeError: it does not fit the shape or the lengths.
    """
    pattern = check_pattern(op, text)
    assert pattern.outputs is not None
    left, right = pattern.inputs[0], pattern.outputs[0]
    dots = count_dots(text, left, len(shape))
    given = check_lengths(lengths)
    in_dims = term_dims(left, dots, anon_prefix="<in>")
    known = {
        slot.name: length
        for dim in resolve_dims(text, in_dims, shape, given)
        for slot, length in dim
        if slot.name is not None
    }
    out_dims = term_dims(right, dots, anon_prefix="<out>")
    used = set(known)
    for dim in out_dims:
        for slot in dim.slots:
            name = slot.name or ""
            used.add(name)
            if name in known:
                continue
            length = slot.length if slot.length is not None else given.get(name)
            if length is None:
                raise ShapeError(
                    f"the length of new axis '{name}' is not given",
                    pattern=text,
                    span=slot.span,
                    hint=f"pass {name}=... or write an integer literal",
                )
            known[name] = length
    check_used(text, given, used)
    return make_recipe(tuple(shape), in_dims, out_dims, known)


def _slot_names(dims: Sequence[Dim]) -> list[str]:
    return [slot.name or "" for dim in dims for slot in dim.slots]


def make_recipe(
    shape: tuple[int, ...], in_dims: Sequence[Dim], out_dims: Sequence[Dim], known: dict[str, int]
) -> Recipe:
    """The recipe from an array of `shape` read as `in_dims` to `out_dims`.

    Axes of `out_dims` missing from `in_dims` are broadcast (as repeat does); axes of
    `in_dims` missing from `out_dims` are reduced. `known` holds every axis's length.
    """
    in_axes, out_axes = _slot_names(in_dims), _slot_names(out_dims)
    out_set = set(out_axes)
    init_shape = tuple(known[n] for n in in_axes)
    reduce_axes = tuple(i for i, n in enumerate(in_axes) if n not in out_set)
    kept = [n for n in in_axes if n in out_set]
    kept_set = set(kept)
    ordered = [n for n in out_axes if n in kept_set]
    perm = tuple(kept.index(n) for n in ordered)
    insert_shape = tuple(known[n] if n in kept_set else 1 for n in out_axes)
    expand_shape = tuple(known[n] for n in out_axes)
    final_shape = tuple(product(known[slot.name or ""] for slot in dim.slots) for dim in out_dims)
    new_axes = len(ordered) != len(out_axes)
    current = expand_shape if new_axes else tuple(known[n] for n in ordered)
    return Recipe(
        init_shape=None if same_shape(init_shape, shape) else init_shape,
        reduce_axes=reduce_axes,
        perm=perm if perm != tuple(range(len(perm))) else None,
        insert_shape=insert_shape if new_axes else None,
        expand_shape=expand_shape if new_axes else None,
        final_shape=None if same_shape(final_shape, current) else final_shape,
        lengths=tuple((n, known[n]) for n in in_axes + [n for n in out_axes if n not in in_axes]),
    )
