"""Concatenation and splitting with ``+`` in rearrange patterns: a plan of plain rearranges.

``"b c1, b c2 -> b (c1 + c2)"`` concatenates, ``"b (c1 + c2) -> b c1, b c2"``
splits, ``"b (x + y) -> b (y + x)"`` does both. The left gives *pieces*: each input
term, or each part of an input's ``+`` group (the input split along that
dimension); the right has *places*: each output term, or each part of an output's
``+`` group (concatenated along that dimension). A piece goes to the place with the
same named axes (in order among equals), and is brought there by a plain
rearrange, planned by `tensorops._plan` from a copy of the pattern in which
everything but that piece's term and that place's term is blanked out. The copy
keeps every character's position, so its errors point at the user's pattern.

This module reads strings and shapes only; the plan it makes calls the adapter's
``split``, the plain rearranges' executors and the adapter's ``concat``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, NamedTuple

from tensorops._axes import DOTS_PREFIX, check_lengths, check_used, count_dots
from tensorops._errors import PatternError, ShapeError, Span
from tensorops._grammar import Anon, Axis, Dots, Group, Pattern, Term, check_names, parse_concat
from tensorops._plan import Recipe, plan_recipe
from tensorops._staging.sizes import is_run_time, require_equal
from tensorops._types import Backend, Executor

__all__ = ["concat_group", "dim_index", "is_many", "plan_concat"]


def is_many(shapes: Any) -> bool:
    """Whether the dispatch gave a tuple of shapes (a list of arrays) rather than one shape."""
    return bool(shapes) and isinstance(shapes[0], tuple)


def concat_group(text: str, term: Term) -> tuple[int, Group] | None:
    """The position and the node of `term`'s ``+`` group, or None; at most one a term.

    Raises:
        PatternError: a second ``+`` group in the term, ``...`` in a part, or a name
            in two parts.
    """
    found: tuple[int, Group] | None = None
    for i, element in enumerate(term.elements):
        if not (isinstance(element, Group) and element.parts):
            continue
        if found is not None:
            raise PatternError(
                "a term has at most one concatenation", pattern=text, span=element.span
            )
        seen: set[str] = set()
        for item in element.items:
            if isinstance(item, Axis) and item.name in seen:
                raise PatternError(
                    f"axis '{item.name}' appears in two parts of the concatenation",
                    pattern=text,
                    span=item.span,
                    hint="each part names its own axes: (a1 + a2)",
                )
            if isinstance(item, Axis):
                seen.add(item.name)
            if isinstance(item, Dots):
                raise PatternError(
                    "'...' cannot be a part of a concatenation",
                    pattern=text,
                    span=item.span,
                    hint="name the axes of the parts",
                )
        found = (i, element)
    return found


class _End(NamedTuple):
    """A piece (left) or a place (right): a term, or one part of the term's ``+`` group."""

    term: int  # the term's position on its side
    part: int | None  # the part of its group, None for a whole term
    names: frozenset[str]  # the named axes of the piece or place
    keep: tuple[Span, ...]  # the spans of the pattern text it keeps
    span: Span  # where it is, for errors


def _ends(text: str, terms: Sequence[Term]) -> list[_End]:
    """The pieces (or places) of one side, left to right."""
    ends: list[_End] = []
    for t, term in enumerate(terms):
        found = concat_group(text, term)
        names = {item.name for item in _items(term) if isinstance(item, Axis)}
        if found is None:
            ends.append(_End(t, None, frozenset(names), (term.span,), term.span))
            continue
        _, group = found
        others = names - {item.name for item in group.items if isinstance(item, Axis)}
        outside = ((term.span[0], group.span[0] + 1), (group.span[1] - 1, term.span[1]))
        for p, part in enumerate(group.parts):
            own = {item.name for item in part if isinstance(item, Axis)}
            span = (part[0].span[0], part[-1].span[1])
            ends.append(_End(t, p, frozenset(others | own), (*outside, span), span))
    return ends


def _items(term: Term) -> list[Any]:
    return [
        item
        for element in term.elements
        for item in (element.items if isinstance(element, Group) else (element,))
    ]


def _blanked(text: str, keep: Sequence[Span]) -> str:
    """`text` with every character outside `keep` a space: positions are unchanged."""
    chars = [" "] * len(text)
    for start, end in keep:
        chars[start:end] = text[start:end]
    return "".join(chars)


def _match(text: str, pieces: list[_End], places: list[_End]) -> list[int]:
    """For each place, the piece that goes there: the one with the same named axes.

    Raises:
        ShapeError: the counts differ, or a place or a piece has no partner.
    """
    free = list(range(len(pieces)))
    chosen: list[int] = []
    for place in places:
        piece = next((i for i in free if pieces[i].names == place.names), None)
        if piece is None:
            axes = " ".join(sorted(place.names)) or "no named axis"
            raise ShapeError(
                f"no input term or part has the axes of {text[place.span[0] : place.span[1]]!r}"
                f" ({axes})",
                pattern=text,
                span=place.span,
                hint="a part goes to the input term (or part) with the same named axes",
            )
        free.remove(piece)
        chosen.append(piece)
    if free:
        left = pieces[free[0]]
        raise ShapeError(
            f"{text[left.span[0] : left.span[1]]!r} has no place on the right",
            pattern=text,
            span=left.span,
            hint="each input term (or part) goes to the output term (or part) with its axes",
        )
    return chosen


def dim_index(term: Term, element: int, dots: int) -> int:
    """The dimension of an array that the `element`-th element of `term` describes."""
    before = term.elements[:element]
    return element + (dots - 1 if any(isinstance(e, Dots) for e in before) else 0)


def _split_sizes(text: str, group: Group, length: Any, given: dict[str, Any]) -> tuple[Any, ...]:
    """The lengths of the parts of `group`, a dimension of `length`: all but one known.

    Raises:
        ShapeError: two parts unknown, or lengths that do not add up.
    """
    sizes: list[Any] = []
    unknown: list[int] = []
    for p, part in enumerate(group.parts):
        size = _part_length(part, given)
        sizes.append(size)
        if size is None:
            unknown.append(p)
    group_text = text[group.span[0] : group.span[1]]
    known = sum(size for size in sizes if size is not None)
    if len(unknown) > 1:
        names = [item.name for p in unknown for item in group.parts[p] if isinstance(item, Axis)]
        missing = [name for name in names if name not in given]
        raise ShapeError(
            f"cannot split an axis of length {length} into {group_text}: "
            f"{len(unknown)} parts have no length",
            pattern=text,
            span=group.span,
            hint=f"pass the lengths of all parts but one, e.g. {missing[0]}=...",
        )
    if unknown:
        rest = length - known
        if is_run_time(rest):  # known when the graph runs: checked by the split then
            sizes[unknown[0]] = rest
            return tuple(sizes)
        if rest < 0:
            raise ShapeError(
                f"cannot split an axis of length {length} into {group_text}: "
                f"the parts of known length take {known}",
                pattern=text,
                span=group.span,
            )
        sizes[unknown[0]] = rest
    else:
        require_equal(
            known,
            length,
            lambda: ShapeError(
                f"cannot split an axis of length {length} into {group_text}: "
                f"the parts add up to {known}",
                pattern=text,
                span=group.span,
            ),
        )
    return tuple(sizes)


def _part_length(part: tuple[Axis | Anon | Dots, ...], given: dict[str, Any]) -> Any:
    """The length of a part from its integers and the lengths given, or None if one is missing."""
    length = 1
    for item in part:
        if isinstance(item, Anon):
            length *= item.length
        elif isinstance(item, Axis) and item.name in given:
            length *= given[item.name]
        else:
            return None
    return length


def _check_multiple_terms(text: str, pattern: Pattern) -> None:
    """Refuse a pattern of several terms a side with no ``+``: rearrange's usual message."""
    for terms, side in ((pattern.inputs, "left"), (pattern.outputs or (), "right")):
        if len(terms) > 1:
            raise PatternError(
                f"rearrange takes one term a side, got {len(terms)} on the {side}",
                pattern=text,
                span=(terms[0].span[1], terms[1].span[0]),
                hint="separate axes with spaces, not commas; "
                "concatenate with '+': 'b c1, b c2 -> b (c1 + c2)'",
            )


def plan_concat(text: str, shapes: Any, lengths: Any, backend: Backend) -> Executor:
    """The executor of a rearrange with ``+`` (or of a list of arrays, one per input term).

    Args:
        text: the pattern.
        shapes: the input's shape, or a tuple of shapes (one per input term).
        lengths: the axis lengths given, as ``(name, length)`` pairs.
        backend: the adapter of the arrays.

    Raises:
        PatternError: the pattern is malformed.
        ShapeError: it does not fit the shapes.
    """
    many = is_many(shapes)
    pattern = parse_concat(text)
    check_names(pattern)
    if pattern.outputs is None:
        end = len(text)
        raise PatternError(
            "the pattern has no '->'", pattern=text, span=(end, end + 1), hint="e.g. 'b c -> c b'"
        )
    groups = [concat_group(text, t) for t in (*pattern.inputs, *pattern.outputs)]
    if all(found is None for found in groups):
        if not many:
            return plan_recipe("rearrange", text, shapes, lengths).executor(backend)
        _check_multiple_terms(text, pattern)
    all_shapes: tuple[Any, ...] = tuple(shapes) if many else (shapes,)
    if len(all_shapes) != len(pattern.inputs):
        left = (pattern.inputs[0].span[0], pattern.inputs[-1].span[1])
        raise ShapeError(
            f"the pattern has {len(pattern.inputs)} input term(s) for {len(all_shapes)} array(s)",
            pattern=text,
            span=left,
            hint="pass a list with one array per input term",
        )
    given = check_lengths(lengths)
    pieces, places = _ends(text, pattern.inputs), _ends(text, pattern.outputs)
    chosen = _match(text, pieces, places)
    used = {
        item.name
        for t in (*pattern.inputs, *pattern.outputs)
        for item in _items(t)
        if isinstance(item, Axis)
    }
    check_used(text, given, used)
    splits, piece_shapes, piece_dots = _left(text, pattern, groups, all_shapes, given, many)
    subs = [
        (_blanked(text, (*pieces[p].keep, pattern.arrow or (0, 0), *place.keep)), p)
        for place, p in zip(places, chosen, strict=True)
    ]
    names = [pieces[p].names | place.names for place, p in zip(places, chosen, strict=True)]
    recipes = _recipes(subs, names, piece_shapes, lengths)
    resolved = [dict(recipe.lengths) for recipe in recipes]
    outputs = _right(text, pattern, groups, chosen, piece_dots, resolved, many)
    runs = tuple(None if _does_nothing(recipe) else recipe.executor(backend) for recipe in recipes)
    return _executor(backend, many, _Steps(tuple(splits), tuple(chosen), runs, tuple(outputs)))


def _does_nothing(recipe: Recipe) -> bool:
    """Whether a piece's rearrangement is the identity (no call to make)."""
    steps = (recipe.init_shape, recipe.perm, recipe.insert_shape, recipe.final_shape)
    return not recipe.reduce_axes and all(step is None for step in steps)


def _right(
    text: str,
    pattern: Pattern,
    groups: list[tuple[int, Group] | None],
    chosen: list[int],
    piece_dots: list[int],
    resolved: list[dict[str, Any]],
    many: bool,
) -> list[tuple[tuple[int, ...], int | None]]:
    """Each output term: its places, and the axis they are concatenated along (None: one)."""
    outputs: list[tuple[tuple[int, ...], int | None]] = []
    k = 0
    for j, term in enumerate(pattern.outputs or ()):
        found = groups[len(pattern.inputs) + j]
        count = 1 if found is None else len(found[1].parts)
        members = tuple(range(k, k + count))
        k += count
        if found is None:
            outputs.append((members, None))
            continue
        dots = piece_dots[chosen[members[0]]]
        ranks = {piece_dots[chosen[m]] for m in members}
        if len(ranks) > 1:
            raise ShapeError(
                f"'...' stands for {' and '.join(map(str, sorted(ranks)))} axes in the arrays "
                "concatenated: the axes outside the concatenation must agree",
                pattern=text,
                span=next((e.span for e in term.elements if isinstance(e, Dots)), term.span),
            )
        _check_agree(text, term, found[1], [resolved[m] for m in members], many)
        outputs.append((members, dim_index(term, found[0], dots)))
    return outputs


def _left(
    text: str,
    pattern: Pattern,
    groups: list[tuple[int, Group] | None],
    shapes: tuple[Any, ...],
    given: dict[str, Any],
    many: bool,
) -> tuple[list[tuple[tuple[Any, ...], int] | None], list[tuple[Any, ...]], list[int]]:
    """Each input split along its group (sizes, axis) or whole; the pieces' shapes and dots."""
    splits: list[tuple[tuple[Any, ...], int] | None] = []
    piece_shapes: list[tuple[Any, ...]] = []
    piece_dots: list[int] = []
    for i, (term, shape) in enumerate(zip(pattern.inputs, shapes, strict=True)):
        dots = count_dots(text, term, len(shape), i if many else None)
        found = groups[i]
        if found is None:
            splits.append(None)
            piece_shapes.append(tuple(shape))
            piece_dots.append(dots)
            continue
        axis = dim_index(term, found[0], dots)
        sizes = _split_sizes(text, found[1], shape[axis], given)
        splits.append((sizes, axis))
        for size in sizes:
            piece_shapes.append((*shape[:axis], size, *shape[axis + 1 :]))
            piece_dots.append(dots)
    return splits, piece_shapes, piece_dots


def _recipes(
    subs: list[tuple[str, int]],
    names: list[frozenset[str]],
    shapes: list[tuple[Any, ...]],
    lengths: Any,
) -> list[Recipe]:
    """The plain rearrange of each place's piece: `subs` are (blanked pattern, piece).

    A piece that cannot infer an axis (``(i j)``) is planned again with the lengths
    the other pieces found.
    """
    recipes: list[Recipe | None] = [None] * len(subs)
    for attempt in range(2):
        learned: dict[str, Any] = {}
        for recipe in recipes:
            learned.update(recipe.lengths if recipe is not None else ())
        for k, (sub, p) in enumerate(subs):
            if recipes[k] is not None:
                continue
            own = {name: value for name, value in lengths if name in names[k]}
            if attempt:
                own = {**{n: v for n, v in learned.items() if n in names[k]}, **own}
            try:
                recipes[k] = plan_recipe("rearrange", sub, shapes[p], tuple(own.items()))
            except ShapeError:
                if attempt or len(subs) == 1:
                    raise
    return [recipe for recipe in recipes if recipe is not None]


def _check_agree(
    text: str, term: Term, group: Group, lengths: list[dict[str, Any]], many: bool
) -> None:
    """The axes outside an output's group have one length in every piece concatenated there."""
    inside = {item.name for item in group.items if isinstance(item, Axis)}
    for name, length in lengths[0].items():
        if name in inside or not (name.isidentifier() or name.startswith(DOTS_PREFIX)):
            continue
        for other in lengths[1:]:
            if name in other:
                disagree = functools.partial(_disagree, text, term, name, length, other[name], many)
                require_equal(other[name], length, disagree)


def _disagree(text: str, term: Term, name: str, length: Any, other: Any, many: bool) -> ShapeError:
    dots = name.startswith(DOTS_PREFIX)
    span = next(
        (
            item.span
            for item in _items(term)
            if (isinstance(item, Dots) if dots else getattr(item, "name", None) == name)
        ),
        term.span,
    )
    shown = "..." if dots else name
    where = "inputs" if many else "parts"
    return ShapeError(
        f"axis {shown!r} has length {length} in one of the {where} concatenated "
        f"and {other} in another: the axes outside the concatenation must agree",
        pattern=text,
        span=span,
    )


class _Steps(NamedTuple):
    """What a planned concatenation does, in order."""

    #: per input: the sizes and the axis it is split into pieces along, or None (one piece)
    splits: tuple[tuple[tuple[Any, ...], int] | None, ...]
    #: per place on the right: the piece it takes
    chosen: tuple[int, ...]
    #: per place: the rearrangement of its piece, or None where there is none
    runs: tuple[Executor | None, ...]
    #: per output: its places, and the axis they are concatenated along (None: one place)
    outputs: tuple[tuple[tuple[int, ...], int | None], ...]


def _executor(backend: Backend, many: bool, steps: _Steps) -> Executor:
    fast = _fast_executor(backend, many, steps)
    if fast is not None:
        return fast
    splits, chosen, runs, outputs = steps
    split, concat = backend.split, backend.concat
    single = len(outputs) == 1

    def run(arrays: Any, arg: Any) -> Any:
        pieces: list[Any] = []
        for x, how in zip(arrays if many else (arrays,), splits, strict=True):
            if how is None:
                pieces.append(x)
            else:
                pieces.extend(split(x, how[0], how[1]))
        placed = [
            pieces[p] if runs[k] is None else runs[k](pieces[p], None)  # type: ignore[misc]
            for k, p in enumerate(chosen)
        ]
        results = tuple(
            placed[members[0]] if axis is None else concat([placed[m] for m in members], axis)
            for members, axis in outputs
        )
        return results[0] if single else results

    return run


def _fast_executor(backend: Backend, many: bool, steps: _Steps) -> Executor | None:
    """The common calls in one step, or None: a plain concatenation, a plain split.

    Plain: no piece is rearranged. A concatenation is then the framework's one call on
    the arrays in the order of the parts; a split is basic slicing with its indices
    made here (views in every library, as `split` makes them), not at every call.
    """
    splits, chosen, runs, outputs = steps
    if any(run is not None for run in runs):
        return None
    if many and len(outputs) == 1 and outputs[0][1] is not None and all(s is None for s in splits):
        concat, axis = backend.concat, outputs[0][1]
        order = tuple(chosen[m] for m in outputs[0][0])
        if order == tuple(range(len(order))):
            return lambda arrays, arg: concat(arrays, axis)
        return lambda arrays, arg: concat([arrays[p] for p in order], axis)
    if not many and splits[0] is not None and all(axis is None for _, axis in outputs):
        sizes, axis = splits[0]
        if any(type(size) is not int for size in sizes):
            return None  # symbolic sizes: the adapter's split
        bounds = [sum(sizes[:k]) for k in range(len(sizes) + 1)]
        lead = (slice(None),) * axis
        indices = [(*lead, slice(bounds[k], bounds[k + 1]), ...) for k in range(len(sizes))]
        picked = tuple(indices[chosen[members[0]]] for members, _ in outputs)
        if len(picked) == 2:
            first, second = picked
            return lambda x, arg: (x[first], x[second])
        return lambda x, arg: tuple(x[index] for index in picked)
    return None
