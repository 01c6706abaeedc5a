"""Resolve a parsed pattern against a concrete shape into an immutable recipe.

A :class:`Recipe` is at most five framework calls::

    reshape(init_shape) -> reduce(reduce_axes) -> permute(perm)
        -> reshape(insert_shape) + expand(expand_shape) -> reshape(final_shape)

Each step is ``None`` (or empty) when it would do nothing, so a cache hit runs
only the calls that change something. Recipes are cached in a bounded LRU keyed
by everything the result depends on: (op, pattern, shape, axis lengths); the
reduction is *not* part of the key, since it does not change the recipe.

This module imports no framework: shapes are tuples of ints (or of symbolic
ints under a tracing compiler, which are then planned without the cache).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

from tensorops._errors import PatternError, ShapeError, Span
from tensorops._grammar import Anon, Axis, Element, Ellipsis, Group, Pattern, Term, parse_pattern

__all__ = ["RECIPE_CACHE_SIZE", "Recipe", "bind_recipe", "clear_cache", "ellipsis_name"]

#: Bound recipes kept in the LRU cache (one per distinct op / pattern / shape / lengths).
RECIPE_CACHE_SIZE = 4096

LengthItems = tuple[tuple[str, int], ...]

#: What :attr:`Recipe.single` says: several calls (or none), or the one call it is.
SEVERAL, PERMUTE, RESHAPE, REDUCE = 0, 1, 2, 3
# the kind of each step, in the order Recipe makes them; RESHAPE is the final reshape
# (an initial one alone stays SEVERAL), and an insert always comes with an expand
_STEP_KINDS = (SEVERAL, REDUCE, PERMUTE, SEVERAL, RESHAPE)


class Recipe:
    """The framework calls one rearrange / reduce / repeat makes, with their arguments.

    Immutable, hashable and compared by value, as a frozen dataclass would be. It is
    written out by hand because defining a dataclass costs about half a millisecond
    at import, and it is not a named tuple because every call reads its fields, and
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
        "single",
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
    #: Derived, not a field: which one framework call the recipe is, if it is one
    #: (:data:`PERMUTE`, :data:`RESHAPE`, :data:`REDUCE`), else :data:`SEVERAL`. The
    #: ops make that call directly, skipping the checks of every other step.
    single: int

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
        steps = (init_shape, reduce_axes or None, perm, insert_shape, final_shape)
        kinds = [kind for kind, step in zip(_STEP_KINDS, steps, strict=True) if step is not None]
        set_field(self, "single", kinds[0] if len(kinds) == 1 else SEVERAL)

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


def ellipsis_name(i: int) -> str:
    """The internal name of the ``i``-th axis covered by ``...`` (never a valid identifier)."""
    return f"...{i}"


def _unit(item: Element) -> bool:
    return isinstance(item, Anon) and item.length == 1


def _elementary(
    term: Term, n_ellipsis: int, anon_prefix: str
) -> list[tuple[list[tuple[str, Span, int | None]], Span]]:
    """Each dimension of `term` as its list of (name, span, literal length) elementary axes."""
    dims: list[tuple[list[tuple[str, Span, int | None]], Span]] = []
    for k, element in enumerate(term.elements):
        items = element.items if isinstance(element, Group) else (element,)
        axes: list[tuple[str, Span, int | None]] = []
        for j, item in enumerate(items):
            if isinstance(item, Axis):
                axes.append((item.name, item.span, None))
            elif isinstance(item, Anon):
                if item.length != 1:
                    axes.append((f"{anon_prefix}{k}.{j}", item.span, item.length))
            elif isinstance(item, Ellipsis):
                axes.extend((ellipsis_name(i), item.span, None) for i in range(n_ellipsis))
        if isinstance(element, Ellipsis):
            dims.extend(([axis], element.span) for axis in axes)
        else:
            dims.append((axes, element.span))
    return dims


def _check_term(pattern: Pattern, term: Term, side: str) -> None:
    seen: dict[str, Span] = {}
    ellipsis: Span | None = None
    for element in term.elements:
        items = element.items if isinstance(element, Group) else (element,)
        for item in items:
            if isinstance(item, Ellipsis):
                if ellipsis is not None:
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
                ellipsis = item.span
            elif isinstance(item, Axis):
                if item.name in seen:
                    raise PatternError(
                        f"axis '{item.name}' appears twice on the {side}",
                        pattern=pattern.text,
                        span=item.span,
                        hint="use einsum to take a diagonal",
                    )
                seen[item.name] = item.span
            elif not isinstance(item, Anon):
                raise PatternError(
                    f"'{pattern.text[item.span[0] : item.span[1]]}' is not allowed in this op",
                    pattern=pattern.text,
                    span=item.span,
                )


def _names(term: Term) -> dict[str, Span]:
    found: dict[str, Span] = {}
    for element in term.elements:
        for item in element.items if isinstance(element, Group) else (element,):
            if isinstance(item, Axis):
                found[item.name] = item.span
    return found


def _has_ellipsis(term: Term) -> bool:
    return any(
        isinstance(item, Ellipsis)
        for element in term.elements
        for item in (element.items if isinstance(element, Group) else (element,))
    )


@functools.lru_cache(maxsize=1024)
def check_pattern(op: str, text: str) -> Pattern:
    """Parse `text` and check that `op` accepts it; cached on (op, text)."""
    pattern = parse_pattern(text)
    if pattern.outputs is None:
        end = len(text)
        raise PatternError(
            "the pattern has no '->'", pattern=text, span=(end, end + 1), hint="e.g. 'b c -> c b'"
        )
    for terms, side in ((pattern.inputs, "left"), (pattern.outputs, "right")):
        if len(terms) != 1:
            span = (terms[0].span[1], terms[1].span[0])
            raise PatternError(
                f"{op} takes one term a side, got {len(terms)} on the {side}",
                pattern=text,
                span=span,
                hint="separate axes with spaces, not commas",
            )
        _check_term(pattern, terms[0], side)
    left, right = pattern.inputs[0], pattern.outputs[0]
    # reduce may reduce the axes '...' stands for: then it is on the left only.
    left_only_ok = op == "reduce" and _has_ellipsis(left)
    if _has_ellipsis(left) != _has_ellipsis(right) and not left_only_ok:
        term = left if _has_ellipsis(left) else right
        span = next(
            item.span
            for element in term.elements
            for item in (element.items if isinstance(element, Group) else (element,))
            if isinstance(item, Ellipsis)
        )
        raise PatternError("'...' must appear on both sides or neither", pattern=text, span=span)
    _check_names(op, text, left, right)
    return pattern


def _check_names(op: str, text: str, left: Term, right: Term) -> None:
    left_names, right_names = _names(left), _names(right)
    if op == "reduce":
        only_right = {n: s for n, s in right_names.items() if n not in left_names}
        only_left: dict[str, Span] = {}
    elif op == "repeat":
        only_left = {n: s for n, s in left_names.items() if n not in right_names}
        only_right = {}
    else:
        only_left = {n: s for n, s in left_names.items() if n not in right_names}
        only_right = {n: s for n, s in right_names.items() if n not in left_names}
    for missing, side in ((only_left, "right"), (only_right, "left")):
        if missing:
            name, span = next(iter(missing.items()))
            hint = None
            if op == "rearrange":
                hint = "use reduce to remove an axis, repeat to add one"
            raise PatternError(
                f"axis '{name}' is missing on the {side}", pattern=text, span=span, hint=hint
            )
    for term, side in ((left, "left"), (right, "right")):
        for element in term.elements:
            for item in element.items if isinstance(element, Group) else (element,):
                if isinstance(item, Anon) and not _unit(item):
                    allowed = (op == "reduce" and side == "left") or (
                        op == "repeat" and side == "right"
                    )
                    if not allowed:
                        raise PatternError(
                            f"an anonymous axis of length {item.length} is not allowed on the "
                            f"{side} of {op}",
                            pattern=text,
                            span=item.span,
                            hint="name the axis and pass its length as a keyword",
                        )


def bind_recipe(op: str, text: str, shape: Sequence[int], lengths: LengthItems = ()) -> Recipe:
    """The cached recipe of `op` with `text` on an input of `shape`.

    Shapes that cannot be hashed (symbolic sizes under a tracing compiler) are
    planned without the cache; the recipe is the same.
    """
    try:
        return _bind_cached(op, text, tuple(shape), lengths)
    except TypeError:
        return _bind(op, text, tuple(shape), lengths)


def clear_cache() -> None:
    """Empty the recipe and pattern caches."""
    _bind_cached.cache_clear()
    check_pattern.cache_clear()
    parse_pattern.cache_clear()


def _bind(op: str, text: str, shape: tuple[int, ...], lengths: LengthItems) -> Recipe:
    pattern = check_pattern(op, text)
    assert pattern.outputs is not None
    left, right = pattern.inputs[0], pattern.outputs[0]
    n_fixed = sum(not isinstance(e, Ellipsis) for e in left.elements)
    n_ellipsis = len(shape) - n_fixed
    if n_ellipsis < 0 or (n_ellipsis > 0 and not _has_ellipsis(left)):
        n_axes = len(left.elements)
        at_least = "at least " if _has_ellipsis(left) else ""
        raise ShapeError(
            f"the pattern has {at_least}{n_fixed if at_least else n_axes} axes but the input "
            f"has {len(shape)} dimensions",
            span=left.span if left.elements else None,
        )
    given = check_lengths(lengths)
    in_dims = _elementary(left, n_ellipsis, "<in>")
    known = _resolve_input(text, in_dims, shape, given)
    out_dims = _elementary(right, n_ellipsis, "<out>")
    used = set(known)
    for axes, _span in out_dims:
        for name, span, literal in axes:
            used.add(name)
            if name in known:
                continue
            if literal is not None:
                known[name] = literal
            elif name in given:
                known[name] = given[name]
            else:
                raise ShapeError(
                    f"the length of new axis '{name}' is not given",
                    span=span,
                    hint=f"pass {name}=... or write an integer literal",
                )
    unused = [name for name in given if name not in used]
    if unused:
        raise ShapeError(
            f"axis length {unused[0]}={given[unused[0]]} is given but '{unused[0]}' is not in "
            "the pattern"
        )
    return _make_recipe(shape, in_dims, out_dims, known)


def check_lengths(lengths: LengthItems) -> dict[str, int]:
    """The axis lengths as a dict, each checked to be a non-negative integer."""
    given: dict[str, int] = {}
    for name, value in lengths:
        symbolic = type(value).__name__ == "SymInt"  # a tracing compiler's size: keep it symbolic
        # torch.compile: Dynamo reports a symbolic size's type as int and cannot trace
        # hasattr() on it, so plain ints skip the generic integer check.
        if type(value) is int:
            if value < 0:
                raise ShapeError(f"axis length {name}={value} is negative")
        elif not symbolic:
            if isinstance(value, bool) or not hasattr(value, "__index__"):
                raise ShapeError(
                    f"axis length {name}={value!r} is not an integer",
                    hint="axis lengths are positive integers, e.g. h=4",
                )
            value = value.__index__()
            if value < 0:
                raise ShapeError(f"axis length {name}={value} is negative")
        given[name] = value
    return given


def _resolve_input(
    text: str,
    dims: list[tuple[list[tuple[str, Span, int | None]], Span]],
    shape: tuple[int, ...],
    given: dict[str, int],
) -> dict[str, int]:
    known: dict[str, int] = {}
    for (axes, span), length in zip(dims, shape, strict=True):
        unknown = []
        product = 1
        for name, _axis_span, literal in axes:
            value = literal if literal is not None else given.get(name)
            if value is None:
                unknown.append(name)
            else:
                known[name] = value
                product *= value
        group = text[span[0] : span[1]]
        if len(unknown) > 1:
            raise ShapeError(
                f"cannot infer the lengths of {' and '.join(unknown)} in {group} from a single "
                f"dimension of length {length}",
                span=span,
                hint=f"pass {unknown[0]}=...",
            )
        if unknown:
            if product == 0 or length % product != 0:
                raise ShapeError(
                    f"cannot split axis of length {length} into {group} with "
                    + ", ".join(f"{n}={known[n]}" for n, _s, _l in axes if n in known)
                    + f": {length} is not divisible by {product}",
                    span=span,
                )
            known[unknown[0]] = length // product
        elif product != length:
            detail = "*".join(str(known[n]) for n, _s, _l in axes) or "1"
            what = "a unit axis" if not axes else f"{group} = {detail} = {product}"
            raise ShapeError(f"dimension of length {length} does not match {what}", span=span)
    return known


def _make_recipe(
    shape: tuple[int, ...],
    in_dims: list[tuple[list[tuple[str, Span, int | None]], Span]],
    out_dims: list[tuple[list[tuple[str, Span, int | None]], Span]],
    known: dict[str, int],
) -> Recipe:
    in_axes = [name for axes, _ in in_dims for name, _s, _l in axes]
    out_axes = [name for axes, _ in out_dims for name, _s, _l in axes]
    out_set = set(out_axes)
    init_shape = tuple(known[n] for n in in_axes)
    reduce_axes = tuple(i for i, n in enumerate(in_axes) if n not in out_set)
    kept = [n for n in in_axes if n in out_set]
    kept_set = set(kept)
    ordered = [n for n in out_axes if n in kept_set]
    perm = tuple(kept.index(n) for n in ordered)
    insert_shape = tuple(known[n] if n in kept_set else 1 for n in out_axes)
    expand_shape = tuple(known[n] for n in out_axes)
    final_shape = tuple(_product(known[n] for n, _s, _l in axes) for axes, _ in out_dims)
    new_axes = len(ordered) != len(out_axes)
    current = expand_shape if new_axes else tuple(known[n] for n in ordered)
    return Recipe(
        init_shape=init_shape if init_shape != shape else None,
        reduce_axes=reduce_axes,
        perm=perm if perm != tuple(range(len(perm))) else None,
        insert_shape=insert_shape if new_axes else None,
        expand_shape=expand_shape if new_axes else None,
        final_shape=final_shape if final_shape != current else None,
        lengths=tuple((n, known[n]) for n in in_axes + [n for n in out_axes if n not in in_axes]),
    )


def _product(values: Iterable[int]) -> int:
    result = 1
    for value in values:
        result *= value
    return result


_bind_cached = functools.lru_cache(maxsize=RECIPE_CACHE_SIZE)(_bind)
