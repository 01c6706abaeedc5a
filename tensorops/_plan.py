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
from typing import Any, NamedTuple, NoReturn

from tensorops._axes import (
    Dim,
    Slot,
    check_lengths,
    check_used,
    count_dots,
    dots_name,
    resolve_dims,
    same_sizes,
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
    parse_pattern,
)
from tensorops._types import Backend, Executor

__all__ = ["PATTERN_OPS", "Recipe", "check_pattern", "check_term", "make_recipe", "plan_recipe"]

#: A named tuple made without its Python-level ``__new__`` (half the cost): the dims of
#: every pattern's first call (benchmarks/cold.py).
_new = tuple.__new__

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


def _inserter(backend: Backend, insert: tuple[int, ...], expand: tuple[int, ...]) -> Executor:
    """Repeat's executor of a reshape that inserts unit axes and the broadcast of them."""
    reshape, broadcast = backend.reshaper(insert), backend.expand

    def insert(x: Any, arg: Any) -> Any:
        return broadcast(reshape(x, arg), expand)

    return insert


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
    _read_term(pattern, term, side, op, brackets)


class _TermRead(NamedTuple):
    """One term of a pattern as `_read_term` finds it, checked."""

    term: Term
    names: dict[str, Span]  # each axis name with its span, left to right
    dots: Span | None  # where '...' is
    anons: list[Anon]  # the anonymous axes of a length other than 1
    # With a prefix, and without brackets or '...' in parentheses: each element's axes
    # (None for '...'), the anonymous ones named as `_element_dim` names them; and
    # those names with their lengths.
    axes: tuple[tuple[str, ...] | None, ...] | None
    written: dict[str, int]


def _read_term(
    pattern: Pattern, term: Term, side: str, op: str, brackets: bool, prefix: str | None = None
) -> _TermRead:
    """`check_term`, reading the term once for the checks of the whole pattern too.

    With `prefix`, each element's axes are named on the way (see `_TermRead`).
    """
    names: dict[str, Span] = {}
    dots: Span | None = None
    anons: list[Anon] = []
    axes: list[tuple[str, ...] | None] | None = [] if prefix is not None else None
    written: dict[str, int] = {}
    grouped = False  # whether '...' is inside parentheses or brackets
    for element in term.elements:
        if element.__class__ is Axis:  # the common element, read at once
            name, span = element
            if name in names:
                raise _twice(pattern, element, side)
            names[name] = span
            if axes is not None:
                axes.append((name,))
            continue
        kind = element.__class__
        inners = element.elements if element.__class__ is Bracket else (element,)
        refused = kind is Bracket and not brackets
        dim: list[str] = []
        for inner in inners:
            for item in inner.items if inner.__class__ is Group else (inner,):
                if refused:
                    raise _not_allowed(pattern, element.span, op)
                if item.__class__ is Axis:
                    name, span = item
                    if name in names:
                        raise _twice(pattern, item, side)
                    names[name] = span
                    dim.append(name)
                elif item.__class__ is Dots:
                    if dots is not None:
                        raise PatternError(
                            f"'...' appears twice on the {side}",
                            pattern=pattern.text,
                            span=item.span,
                        )
                    if side == "left" and kind is Group:
                        raise _dots_grouped(pattern, element.span)
                    dots = item.span
                    grouped = kind is not Dots
                elif item.__class__ is not Anon:
                    raise _not_allowed(pattern, item.span, op)
                elif item.length != 1:
                    anons.append(item)
                    if axes is not None:
                        name = _anon_name(prefix, len(axes), len(dim))  # type: ignore[arg-type]
                        written[name] = item.length
                        dim.append(name)
        if axes is not None:
            if kind is Dots:
                axes.append(None)
            elif kind is Bracket or grouped:
                axes = None  # dims made by `term_dims` for the shape
            else:
                axes.append(tuple(dim))
    return _new(
        _TermRead, (term, names, dots, anons, None if axes is None else tuple(axes), written)
    )


def _anon_name(prefix: str, element: int, slot: int) -> str:
    """The name `_element_dim` gives the `slot`-th anonymous axis of the `element`-th element."""
    return f"{prefix}{element}.0.{slot}"


def _element_dim(read: _TermRead, i: int, prefix: str) -> Dim:
    """The dimension the `i`-th element of a term is, as `term_dims` makes it."""
    element = read.term.elements[i]
    return term_dims(Term((element,), element.span), 0, anon_prefix=f"{prefix}{i}.")[0]


def _dots_grouped(pattern: Pattern, span: Span) -> PatternError:
    return PatternError(
        "'...' inside parentheses is not allowed on the left",
        pattern=pattern.text,
        span=span,
        hint="the axes '...' stands for are only known after matching the input",
    )


def _twice(pattern: Pattern, axis: Axis, side: str) -> PatternError:
    return PatternError(
        f"axis '{axis.name}' appears twice on the {side}",
        pattern=pattern.text,
        span=axis.span,
        hint="use einsum to take a diagonal",
    )


def check_pattern(op: str, text: str) -> Pattern:
    """Parse `text` and check that `op` accepts it; cached on (op, text).

    Raises:
        PatternError: at the first element `op` does not accept.
    """
    return _checked(op, text).pattern


class _Checked(NamedTuple):
    """A rearrange / reduce / repeat pattern, read and checked once for every shape."""

    pattern: Pattern
    left: _TermRead
    right: _TermRead


@functools.lru_cache(maxsize=1024)
def _checked(op: str, text: str) -> _Checked:
    """`check_pattern`, with what the plans need of each side; cached on (op, text)."""
    pattern = parse_pattern(text)
    if pattern.outputs is None:
        end = len(text)
        raise PatternError(
            "the pattern has no '->'", pattern=text, span=(end, end + 1), hint="e.g. 'b c -> c b'"
        )
    check_names(pattern)
    read = []
    for terms, side, prefix in (
        (pattern.inputs, "left", "<in>"),
        (pattern.outputs, "right", "<out>"),
    ):
        if len(terms) != 1:
            span = (terms[0].span[1], terms[1].span[0])
            raise PatternError(
                f"{op} takes one term a side, got {len(terms)} on the {side}",
                pattern=text,
                span=span,
                hint="separate axes with spaces, not commas",
            )
        read.append(_read_term(pattern, terms[0], side, op, False, prefix))
    left, right = read
    # reduce may reduce the axes '...' stands for: then it is on the left only.
    if (left.dots is None) != (right.dots is None) and not (op == "reduce" and left.dots):
        where = left.dots if left.dots is not None else right.dots
        raise PatternError("'...' must appear on both sides or neither", pattern=text, span=where)
    _check_sides(op, text, left, right)
    return _new(_Checked, (pattern, left, right))


def _check_sides(op: str, text: str, left: _TermRead, right: _TermRead) -> None:
    """Each side names the axes the other does, as `op` needs; integers where it takes them."""
    left_names, right_names = left.names, right.names
    if op != "reduce" and not right_names.keys() >= left_names.keys():
        missing = next(name for name in left_names if name not in right_names)
        _missing(op, text, missing, left_names[missing], "right")
    if op != "repeat" and not left_names.keys() >= right_names.keys():
        missing = next(name for name in right_names if name not in left_names)
        _missing(op, text, missing, right_names[missing], "left")
    for anons, side, allowed in ((left.anons, "left", "reduce"), (right.anons, "right", "repeat")):
        if anons and op != allowed:
            raise PatternError(
                f"an anonymous axis of length {anons[0].length} is not allowed on the {side} "
                f"of {op}",
                pattern=text,
                span=anons[0].span,
                hint="name the axis and pass its length as a keyword",
            )


def _missing(op: str, text: str, name: str, span: Span, side: str) -> NoReturn:
    hint = "use reduce to remove an axis, repeat to add one" if op == "rearrange" else None
    reason = f"axis '{name}' is missing on the {side}"
    raise PatternError(reason, pattern=text, span=span, hint=hint)


def plan_recipe(op: str, text: str, shape: Sequence[int], lengths: LengthItems = ()) -> Recipe:
    """The recipe of `op` with the pattern `text` on an input of `shape` (not cached).

    Raises:
        PatternError: the pattern is malformed or `op` does not accept it.
        ShapeError: it does not fit the shape or the lengths.
    """
    left, right = _checked(op, text)[1:]
    in_axes: Sequence[tuple[str, ...]]
    out_axes: Sequence[tuple[str, ...]]
    count = _dots_count(left, len(shape))
    if count is None or right.axes is None:  # the dims made for the shape, or the error
        count = count_dots(text, left.term, len(shape))
        given = check_lengths(lengths) if lengths else {}
        in_dims = term_dims(left.term, count, anon_prefix="<in>")
        out_dims = term_dims(right.term, count, anon_prefix="<out>")
        known = _resolve(text, in_dims, shape, given)
        in_axes, out_axes = _axis_names(in_dims), _axis_names(out_dims)
        written = {s.name or "": s.length for d in out_dims for s in d.slots if s.length}
    else:
        in_axes, out_axes = _expand(left.axes, count), _expand(right.axes, count)  # type: ignore[arg-type]
        given = check_lengths(lengths) if lengths else {}
        known = _resolve_axes(text, left, in_axes, shape, given, count)
        written = right.written
    if op == "repeat":  # the only op with axes new on the right (`_check_sides`)
        for axes in out_axes:
            for name in axes:
                if name not in known:
                    length = written[name] if name in written else given.get(name)
                    if length is None:
                        raise ShapeError(
                            f"the length of new axis '{name}' is not given",
                            pattern=text,
                            span=right.names[name],
                            hint=f"pass {name}=... or write an integer literal",
                        )
                    known[name] = length
    if given:
        check_used(text, given, known)
    return _recipe(tuple(shape), in_axes, out_axes, known)


def _dots_count(read: _TermRead, ndim: int) -> int | None:
    """How many dims '...' stands for in a term read with its axes; None: not read so, or no fit."""
    axes = read.axes
    if axes is None:
        return None
    if read.dots is None:
        return 0 if len(axes) == ndim else None
    count = ndim - len(axes) + 1
    return count if count >= 0 else None


#: The axes of '...' standing for a few dimensions, each dimension one axis (`dots_name`).
_DOTS_AXES = tuple((dots_name(i),) for i in range(32))


def _expand(axes: tuple[tuple[str, ...] | None, ...], count: int) -> Sequence[tuple[str, ...]]:
    """Each dimension's axes, with '...' (None) standing for `count` dimensions."""
    if None not in axes:
        return axes  # type: ignore[return-value]
    k = axes.index(None)
    dots = (
        _DOTS_AXES[:count] if count <= len(_DOTS_AXES) else [(dots_name(i),) for i in range(count)]
    )
    return [*axes[:k], *dots, *axes[k + 1 :]]


def _resolve_axes(
    text: str,
    read: _TermRead,
    axes: Sequence[tuple[str, ...]],
    shape: Sequence[int],
    given: dict[str, int],
    count: int,
) -> dict[str, int]:
    """Every axis of the dims `axes` of a term with its length, as `resolve_dims` finds them.

    Where every length is an int and the dimension splits, it is worked out here: one
    axis neither given nor written is the whole length, or what the others leave. The
    other dimensions, and every error, are `resolve_dims`' (sizes of a compiler, graphs).
    """
    known: dict[str, int] = {}
    written = read.written
    for k, (dim, length) in enumerate(zip(axes, shape)):  # noqa: B905 (one length each)
        if length.__class__ is int:
            if len(dim) == 1 and dim[0] not in given and dim[0] not in written:  # most dims
                known[dim[0]] = length
                continue
            values = [written[n] if n in written else given.get(n) for n in dim]
            split = _split(values, length)
            if split is not None:
                known.update(zip(dim, split, strict=True))
                continue
        for slot, value in resolve_dims(text, (_dim_at(read, k, count),), (length,), given)[0]:
            known[slot.name] = value  # type: ignore[index]
    return known


def _dim_at(read: _TermRead, k: int, count: int) -> Dim:
    """The `k`-th dimension of a term with '...' standing for `count`, as `term_dims` makes it."""
    axes = read.axes
    assert axes is not None
    at = axes.index(None) if read.dots is not None else len(axes)
    if k < at:
        return _element_dim(read, k, "<in>")
    if k >= at + count:
        return _element_dim(read, k - count + 1, "<in>")
    span = read.dots
    return Dim((Slot(dots_name(k - at), None, span),), span, False)  # type: ignore[arg-type]


def _split(values: list[int | None], length: int) -> list[int] | None:
    """`values` with the one None the rest of `length`, if all are ints and they fit; else None."""
    product, missing = 1, -1
    for k, value in enumerate(values):
        if value is None:
            if missing >= 0:
                return None
            missing = k
        elif value.__class__ is int:
            product *= value
        else:
            return None
    if missing < 0:
        return values if product == length else None  # type: ignore[return-value]
    if product == 0 or length % product:
        return None
    values[missing] = length // product
    return values  # type: ignore[return-value]


def _resolve(
    text: str, dims: Sequence[Dim], shape: Sequence[int], given: dict[str, int]
) -> dict[str, int]:
    """Every named axis of `dims` with its length: `resolve_dims`, as a dict."""
    return {
        slot.name: length
        for dim in resolve_dims(text, dims, shape, given)
        for slot, length in dim
        if slot.name is not None
    }


def _axis_names(dims: Sequence[Dim]) -> list[tuple[str, ...]]:
    return [tuple([slot.name or "" for slot in dim.slots]) for dim in dims]


def make_recipe(
    shape: tuple[int, ...], in_dims: Sequence[Dim], out_dims: Sequence[Dim], known: dict[str, int]
) -> Recipe:
    """The recipe from an array of `shape` read as `in_dims` to `out_dims`.

    Axes of `out_dims` missing from `in_dims` are broadcast (as repeat does); axes of
    `in_dims` missing from `out_dims` are reduced. `known` holds every axis's length.
    """
    return _recipe(shape, _axis_names(in_dims), _axis_names(out_dims), known)


def _recipe(
    shape: tuple[int, ...],
    in_dims: Sequence[tuple[str, ...]],
    out_dims: Sequence[tuple[str, ...]],
    known: dict[str, int],
) -> Recipe:
    """`make_recipe`, of each dimension's axis names."""
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
        init_shape=None if same_sizes(init_shape, shape) else init_shape,
        reduce_axes=tuple(reduce_axes),
        perm=perm if perm != tuple(range(len(perm))) else None,
        insert_shape=tuple([known[n] if n in kept else 1 for n in out_axes]) if new_axes else None,
        expand_shape=expand_shape if new_axes else None,
        # without new axes the permuted array's shape is expand_shape too
        final_shape=None if same_sizes(final_shape, expand_shape) else tuple(final_shape),
        lengths=tuple(lengths),
    )
