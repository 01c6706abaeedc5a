"""Readable plans: the framework calls an op would make, with the shape after each one.

:func:`explain` binds the same cached recipe the ops run (``tensorops._plan``)
and prints it as a table, one row per framework call::

    rearrange "b c (h w) -> b h w c" on (2, 3, 64) with h=8
      input              (2, 3, 64)     b c (h w)
      reshape            (2, 3, 8, 8)   b c h w
      permute (0,2,3,1)  (2, 8, 8, 3)   b h w c
      output             (2, 8, 8, 3)   b h w c

For an einsum equation it prints the contraction plan of
:func:`tensorops.einsum_path` instead. No array is created: only shapes are used.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tensorops._backends._base import REDUCTIONS
from tensorops._errors import TensorOpsError, add_context
from tensorops._grammar import Anon, Axis, Element, Group, Term
from tensorops._grammar import Ellipsis as EllipsisElement
from tensorops._plan import Recipe, bind_recipe, check_pattern

__all__ = ["explain"]

_PATTERN_OPS = ("rearrange", "reduce", "repeat")
_OPS = (*_PATTERN_OPS, "einsum")

Shape = tuple[int, ...]


def explain(
    pattern: str,
    shape: Sequence[int] | Sequence[Sequence[int]],
    *,
    op: str | None = None,
    reduction: str | Callable[..., Any] | None = None,
    **lengths: int,
) -> str:
    """Describe, step by step, what an op does with `pattern` on an input of `shape`.

    Each row is one framework call of the plan (reshape, reduce, permute,
    expand) with the shape after it and the axes it holds; calls that would do
    nothing are left out, exactly as the op leaves them out. For an einsum
    equation the result is the table of :func:`tensorops.einsum_path`.

    Args:
        pattern: a rearrange / reduce / repeat pattern, or an einsum equation.
        shape: the input's shape; for einsum, a sequence of shapes, one per operand.
        op: ``"rearrange"``, ``"reduce"``, ``"repeat"`` or ``"einsum"``. When not
            given: ``"einsum"`` if the pattern has a ``,``, no ``->``, or is in
            compact notation (``"ij->ji"``); ``"reduce"`` if `reduction` is
            given; ``"rearrange"`` otherwise.
        reduction: for reduce, the reduction's name (or a callable); default ``"sum"``.
        **lengths: axis lengths, as the op takes them.

    Returns:
        The multi-line description (no trailing newline).

    Raises:
        TensorOpsError: the pattern is malformed, does not fit the shape, or an
            argument is invalid; the message is the one the op itself would raise.

    Examples:
        >>> import tensorops as tops
        >>> print(tops.explain("b c (h w) -> b h w c", (2, 3, 64), h=8))
        rearrange "b c (h w) -> b h w c" on (2, 3, 64) with h=8
          input              (2, 3, 64)     b c (h w)
          reshape            (2, 3, 8, 8)   b c h w
          permute (0,2,3,1)  (2, 8, 8, 3)   b h w c
          output             (2, 8, 8, 3)   b h w c
        >>> print(tops.explain("b c (h 2) (w 2) -> b c h w", (8, 3, 4, 4), reduction="max"))
        reduce "b c (h 2) (w 2) -> b c h w" on (8, 3, 4, 4) with max
          input                (8, 3, 4, 4)         b c (h 2) (w 2)
          reshape              (8, 3, 2, 2, 2, 2)   b c h 2 w 2
          max over axes (3,5)  (8, 3, 2, 2)         b c h w
          output               (8, 3, 2, 2)         b c h w
    """
    if not isinstance(pattern, str):
        raise TensorOpsError(
            f"the pattern must be a str, got {type(pattern).__name__}", op="explain"
        )
    chosen = _choose_op(pattern, op, reduction)
    if chosen == "reduce":
        reduction_name = _reduction_name(reduction, pattern)
    elif reduction is not None:
        raise TensorOpsError(
            f"reduction={_describe(reduction)} is given but {chosen} does not reduce",
            op=chosen,
            pattern=pattern,
            hint="pass op='reduce', or leave the reduction out",
        )
    else:
        reduction_name = ""
    if chosen == "einsum":
        return _explain_einsum(pattern, shape, lengths)
    single = _as_shape(shape, chosen, pattern)
    try:
        recipe = bind_recipe(chosen, pattern, single, tuple(lengths.items()))
    except TensorOpsError as error:
        if not error.inputs:
            error.inputs = (f"shape={single}",)
        raise add_context(error, chosen, pattern, (), lengths) from None
    return _render(chosen, pattern, single, recipe, reduction_name, lengths)


def _choose_op(pattern: str, op: str | None, reduction: object) -> str:
    if op is not None:
        if op not in _OPS:
            raise TensorOpsError(
                f"unknown op {op!r}; valid: {', '.join(_OPS)}", op="explain", pattern=pattern
            )
        return op
    if "," in pattern or "->" not in pattern or _is_compact(pattern):
        return "einsum"
    return "reduce" if reduction is not None else "rearrange"


def _is_compact(pattern: str) -> bool:
    """True for numpy-style equations such as ``"ij->ji"`` or ``"...ij->...ji"``."""
    sides = [side.strip() for side in pattern.split("->")]
    if any(" " in side or "(" in side or ")" in side for side in sides):
        return False
    return any(len(side.replace("...", "")) > 1 for side in sides)


def _as_shape(shape: Any, op: str, pattern: str) -> Shape:
    items: tuple[Any, ...] | None
    try:
        items = tuple(shape)
    except TypeError:
        items = None
    if items is None or not all(_is_size(item) for item in items):
        raise TensorOpsError(
            f"the shape must be a tuple of non-negative integers, got {shape!r}",
            op=op,
            pattern=pattern,
            hint="e.g. explain('a b -> b a', (2, 3))",
        )
    return tuple(int(item) for item in items)


def _is_size(value: object) -> bool:
    return not isinstance(value, bool) and hasattr(value, "__index__") and value.__index__() >= 0


def _reduction_name(reduction: object, pattern: str) -> str:
    if reduction is None:
        return "sum"
    if isinstance(reduction, str) and reduction in REDUCTIONS:
        return reduction
    if callable(reduction) and not isinstance(reduction, str):
        return getattr(reduction, "__name__", "callable")
    raise TensorOpsError(
        f"unknown reduction {reduction!r}; valid: {', '.join(REDUCTIONS)}, or a callable "
        "f(x, axes)",
        op="reduce",
        pattern=pattern,
    )


def _describe(value: object) -> str:
    return repr(value) if isinstance(value, str) else getattr(value, "__name__", repr(value))


def _render(
    op: str,
    pattern: str,
    shape: Shape,
    recipe: Recipe,
    reduction: str,
    lengths: dict[str, int],
) -> str:
    parsed = check_pattern(op, pattern)
    assert parsed.outputs is not None
    left, right = parsed.inputs[0], parsed.outputs[0]
    n_ellipsis = len(shape) - sum(not isinstance(e, EllipsisElement) for e in left.elements)
    in_axes = _axis_labels(left, n_ellipsis)
    out_axes = _axis_labels(right, n_ellipsis)
    rows: list[tuple[str, Shape, str]] = [("input", shape, _dim_labels(pattern, left, n_ellipsis))]
    current = tuple(recipe.init_shape) if recipe.init_shape is not None else shape
    if recipe.init_shape is not None:
        rows.append(("reshape", current, " ".join(in_axes)))
    axes = list(in_axes)
    if recipe.reduce_axes:
        kept = [i for i in range(len(axes)) if i not in recipe.reduce_axes]
        current = tuple(current[i] for i in kept)
        axes = [axes[i] for i in kept]
        where = ",".join(str(i) for i in recipe.reduce_axes)
        rows.append((f"{reduction} over axes ({where})", current, " ".join(axes)))
    if recipe.perm is not None:
        current = tuple(current[i] for i in recipe.perm)
        axes = [axes[i] for i in recipe.perm]
        order = ",".join(str(i) for i in recipe.perm)
        rows.append((f"permute ({order})", current, " ".join(axes)))
    if recipe.insert_shape is not None and recipe.expand_shape is not None:
        kept_names = set(axes)
        inserted = [name if name in kept_names else "1" for name in out_axes]
        rows.append(("reshape", tuple(recipe.insert_shape), " ".join(inserted)))
        current = tuple(recipe.expand_shape)
        rows.append(("expand (no copy)", current, " ".join(out_axes)))
        axes = list(out_axes)
    out_labels = _dim_labels(pattern, right, n_ellipsis)
    if recipe.final_shape is not None:
        current = tuple(recipe.final_shape)
        rows.append(("reshape", current, out_labels))
    rows.append(("output", current, out_labels))
    title = f'{op} "{pattern}" on {shape}'
    extras = [reduction] if op == "reduce" else []
    extras += [f"{name}={value}" for name, value in lengths.items()]
    if extras:
        title += " with " + ", ".join(extras)
    return title + "\n" + _table(rows)


def _table(rows: list[tuple[str, Shape, str]]) -> str:
    shapes = [str(shape) for _, shape, _ in rows]
    step_width = max(len(step) for step, _, _ in rows) + 2
    shape_width = max(len(text) for text in shapes) + 3
    lines = [
        f"  {step:<{step_width}}{text:<{shape_width}}{labels}".rstrip()
        for (step, _, labels), text in zip(rows, shapes, strict=True)
    ]
    return "\n".join(lines)


def _items(element: Element) -> tuple[Element, ...]:
    return element.items if isinstance(element, Group) else (element,)


def _axis_labels(term: Term, n_ellipsis: int) -> list[str]:
    """The elementary axes of `term` in order, as the recipe sees them (unit axes dropped)."""
    labels: list[str] = []
    for element in term.elements:
        for item in _items(element):
            if isinstance(item, Axis):
                labels.append(item.name)
            elif isinstance(item, Anon) and item.length != 1:
                labels.append(str(item.length))
            elif isinstance(item, EllipsisElement):
                labels.extend(f"...[{i}]" for i in range(n_ellipsis))
    return labels


def _dim_labels(pattern: str, term: Term, n_ellipsis: int) -> str:
    """One label per dimension of `term`: its source text, ``...`` spelled out per axis."""
    labels: list[str] = []
    for element in term.elements:
        if isinstance(element, EllipsisElement):
            labels.extend(f"...[{i}]" for i in range(n_ellipsis))
        elif isinstance(element, Group) and any(
            isinstance(i, EllipsisElement) for i in element.items
        ):
            inner = " ".join(_axis_labels(Term((element,), element.span), n_ellipsis))
            labels.append(f"({inner})")
        else:
            labels.append(pattern[element.span[0] : element.span[1]])
    return " ".join(labels)


def _explain_einsum(equation: str, shapes: object, lengths: dict[str, int]) -> str:
    operands = _as_shapes(shapes, equation)
    import tensorops  # lazily: the einsum planner is only needed here

    einsum_path: Any = getattr(tensorops, "einsum_path", None)
    if einsum_path is None:  # pragma: no cover - only in a partial installation
        raise TensorOpsError("einsum_path is not available", op="einsum", pattern=equation)
    try:
        plan = einsum_path(equation, *operands, **lengths)
    except TensorOpsError as error:
        error.inputs = tuple(f"shape={shape}" for shape in operands)  # shapes, not arrays
        raise
    title = f'einsum "{equation}" on ' + ", ".join(str(s) for s in operands)
    return title + "\n" + str(plan).rstrip("\n")


def _as_shapes(shapes: Any, equation: str) -> list[Shape]:
    items: list[Any] | None
    try:
        items = list(shapes)
    except TypeError:
        items = None
    if items is not None and items and all(_is_size(item) for item in items):
        return [tuple(int(item) for item in items)]  # one operand given as a bare shape
    if items is None or not items:
        raise TensorOpsError(
            f"einsum needs one shape per operand, got {shapes!r}",
            op="einsum",
            pattern=equation,
            hint="e.g. explain('ij,jk->ik', [(2, 3), (3, 4)])",
        )
    return [_as_shape(item, "einsum", equation) for item in items]
