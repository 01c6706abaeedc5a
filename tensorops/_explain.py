"""`explain`: the framework calls an op makes for a pattern and a shape, as a table.

For rearrange / reduce / repeat the table is the op's `Recipe`, row by row; for an
einsum equation it is the `ContractionPlan` of ``einsum_path``; for check, the
lengths it solves. The plans that are executors (concatenation and splitting, the
element-wise ops, softmax and the ops along bracketed axes) are made for an adapter
whose arrays are shapes (`tensorops._backends._shapes`) and run: each row is a call
the executor made. Errors are the op's own, raised with the op being explained as
their context.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tensorops._axes import DOTS_PREFIX, Dim, count_dots, term_dims
from tensorops._backends._shapes import ShapeBackend, Shaped
from tensorops._check import check
from tensorops._config import config
from tensorops._dispatch import Op
from tensorops._einsum.programs._program import ContractionPlan, plan_einsum_cached
from tensorops._errors import (
    ArgumentError,
    TensorOpsError,
    not_a_pattern,
    unknown_option,
)
from tensorops._grammar import Anon, Axis, Term, is_spaced, items_of, parse_pattern
from tensorops._plan import PATTERN_OPS, Recipe, check_pattern, plan_recipe
from tensorops._staging import raise_error
from tensorops._types import REDUCTIONS

__all__ = ["EXPLAINED_OPS", "explain"]

#: The ops whose plans are executors: explained by running them on shapes (`ShapeBackend`).
_RUN_OPS = (
    "softmax",
    "log_softmax",
    "flip",
    "roll",
    "sort",
    "argsort",
    "cumsum",
    "add",
    "subtract",
    "multiply",
    "divide",
    "maximum",
    "minimum",
    "logaddexp",
    "where",
)
#: The one option of an op along axes, taken from the keywords (as the op takes it).
_OPTIONS = {"roll": "shift", "sort": "descending", "argsort": "descending", "cumsum": "reverse"}
#: The ops of several arrays, with ``shape`` a sequence of shapes.
_MANY = ("add", "subtract", "multiply", "divide", "maximum", "minimum", "logaddexp", "where")
_OPS = (*PATTERN_OPS, "einsum", "check", *_RUN_OPS)
#: The ops `explain` shows, for the command line's choices.
EXPLAINED_OPS = list(_OPS)

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
    equation the result is the table of `tensorops.einsum_path`.

    Args:
        pattern: a rearrange / reduce / repeat pattern, or an einsum equation.
        shape: the input's shape; for einsum, check, concatenation and the
            element-wise ops, a sequence of shapes, one per array.
        op: ``"rearrange"``, ``"reduce"``, ``"repeat"``, ``"einsum"``, ``"check"``,
            an element-wise op (``"add"``, ``"multiply"``, ``"where"``, ...) or an op
            along bracketed axes (``"softmax"``, ``"flip"``, ``"roll"``, ``"sort"``,
            ``"argsort"``, ``"cumsum"``, ...; their options ``shift=``,
            ``descending=``, ``reverse=`` are keywords, as the ops take them). When not
            given: ``"rearrange"`` if the pattern has a ``+`` (concatenation,
            splitting); ``"einsum"`` if the pattern has a ``,``, no ``->``, or is in
            compact notation (``"ij->ji"``); ``"reduce"`` if `reduction` is
            given or axes are only dropped on the right (``"b c h w -> b c"``);
            ``"repeat"`` if axes are only added on the right (``"h w -> h w c"``);
            ``"rearrange"`` otherwise.
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
    chosen = "explain"
    try:
        if not isinstance(pattern, str):
            raise not_a_pattern(pattern, "explain('a b -> b a', (2, 3))")
        chosen = _choose_op(pattern, op, reduction)
        reduction_name = _reduction_name(chosen, reduction)
        if chosen == "einsum":
            return _explain_einsum(pattern, shape, lengths)
        if chosen == "check":
            return _explain_check(pattern, shape, lengths)
        if chosen in _RUN_OPS or (chosen == "rearrange" and "+" in pattern):
            return _explain_run(chosen, pattern, shape, lengths)
        single = _as_shape(shape)
        recipe = plan_recipe(chosen, pattern, single, tuple(lengths.items()))
        return _render(chosen, pattern, single, recipe, reduction_name, lengths)
    except TensorOpsError as error:
        raise_error(_in_context(error, chosen, pattern, shape, lengths))


def _in_context(
    error: TensorOpsError, op: str, pattern: Any, shape: Any, lengths: Any
) -> TensorOpsError:
    """`error` as the op being explained would raise it, with shapes for inputs."""
    if not error.inputs:
        shapes = _shapes_or_none(shape)
        error.inputs = tuple(f"shape={s}" for s in shapes) if shapes else ()
    hint = error.hint
    if error.reason.startswith("axis '") and error.reason.endswith("missing on the right"):
        hint = "to reduce it, pass op='reduce' (tensorops explain --op reduce)"
    elif error.reason.startswith("axis '") and error.reason.endswith("missing on the left"):
        hint = "to add it, pass op='repeat' (tensorops explain --op repeat)"
    error.hint = hint if op == "rearrange" else error.hint
    pattern_text = pattern if isinstance(pattern, str) else None
    return error.with_context(op=op, pattern=pattern_text, lengths=lengths)


def _choose_op(pattern: str, op: str | None, reduction: object) -> str:
    """The op to explain: `op` if given, else read from the pattern (see `explain`)."""
    if op is not None:
        if op not in _OPS:
            raise unknown_option("op", op, _OPS)
        return op
    if "+" in pattern:
        return "rearrange"  # concatenation or splitting
    parsed = parse_pattern(pattern)
    several = len(parsed.inputs) > 1 or parsed.outputs is None or len(parsed.outputs) > 1
    if several or _is_compact(parsed.inputs[0], parsed.outputs, pattern):
        return "einsum"
    if reduction is not None:
        return "reduce"
    assert parsed.outputs is not None
    left, right = _names(parsed.inputs[0]), _names(parsed.outputs[0])
    if left - right and not right - left:
        return "reduce"
    if right - left and not left - right:
        return "repeat"
    return "rearrange"


def _names(term: Term) -> set[str | int]:
    """The named axes of a term, and the lengths of its anonymous axes other than 1."""
    found: set[str | int] = set()
    for _, item in items_of(term):
        if isinstance(item, Axis):
            found.add(item.name)
        elif isinstance(item, Anon) and item.length != 1:
            found.add(item.length)
    return found


def _is_compact(term: Term, outputs: Any, pattern: str) -> bool:
    """An equation in numpy's letters (``"ij->ji"``): not spaced, and a word of two letters."""
    if is_spaced(parse_pattern(pattern)):
        return False
    terms = (term, *(outputs or ()))
    return any(
        len(pattern[element.span[0] : element.span[1]]) > 1
        for t in terms
        for element in t.elements
        if pattern[element.span[0] : element.span[1]] != "..."
    )


def _reduction_name(op: str, reduction: object) -> str:
    """The name the table gives the reduction; checks it fits the op."""
    if op != "reduce":
        if reduction is not None:
            shown = repr(reduction) if isinstance(reduction, str) else _name_of(reduction)
            raise ArgumentError(
                f"reduction={shown} is given but {op} does not reduce",
                hint="pass op='reduce', or leave the reduction out",
            )
        return ""
    if reduction is None:
        return "sum"
    if isinstance(reduction, str) and reduction in REDUCTIONS:
        return reduction
    if callable(reduction) and not isinstance(reduction, str):
        return _name_of(reduction)
    raise unknown_option("reduction", reduction, REDUCTIONS, "or a callable f(x, axes)")


def _name_of(value: object) -> str:
    return str(getattr(value, "__name__", "callable"))


def _is_size(value: object) -> bool:
    return not isinstance(value, bool) and hasattr(value, "__index__") and value.__index__() >= 0


def _shapes_or_none(shape: Any) -> list[Shape] | None:
    """`shape` as a list of shapes (one or several), or None if it is neither."""
    try:
        items = list(shape)
    except TypeError:
        return None
    if all(_is_size(item) for item in items):
        return [tuple(int(item) for item in items)]
    shapes = []
    for item in items:
        try:
            dims = list(item)
        except TypeError:
            return None
        if not all(_is_size(d) for d in dims):
            return None
        shapes.append(tuple(int(d) for d in dims))
    return shapes


def _as_shape(shape: Any) -> Shape:
    shapes = _shapes_or_none(shape)
    if shapes is None or len(shapes) != 1 or isinstance(shape, str):
        raise ArgumentError(
            f"the shape must be a tuple of non-negative integers, got {shape!r}",
            hint="e.g. explain('a b -> b a', (2, 3))",
        )
    return shapes[0]


def _label(name: str, literal: int | None) -> str:
    """How a table shows an elementary axis: its name, its length if anonymous."""
    if literal is not None:
        return str(literal)
    if name.startswith(DOTS_PREFIX):
        return f"...[{name[len(DOTS_PREFIX) :]}]"
    return name


def _axis_labels(dims: Sequence[Dim]) -> list[str]:
    return [_label(slot.name or "_", slot.length) for dim in dims for slot in dim.slots]


def _dim_labels(pattern: str, dims: Sequence[Dim]) -> str:
    """One label per dimension: its source text, ``...`` spelled out per axis."""
    labels = []
    for dim in dims:
        text = pattern[dim.span[0] : dim.span[1]]
        if "..." in text:
            inner = " ".join(_axis_labels([dim]))
            text = f"({inner})" if text.startswith("(") else inner
        labels.append(text)
    return " ".join(labels)


def _render(
    op: str, pattern: str, shape: Shape, recipe: Recipe, reduction: str, lengths: dict[str, int]
) -> str:
    parsed = check_pattern(op, pattern)
    assert parsed.outputs is not None
    left, right = parsed.inputs[0], parsed.outputs[0]
    dots = count_dots(pattern, left, len(shape))
    in_dims, out_dims = term_dims(left, dots), term_dims(right, dots)
    in_axes, out_axes = _axis_labels(in_dims), _axis_labels(out_dims)
    rows: list[tuple[str, Shape, str]] = [("input", shape, _dim_labels(pattern, in_dims))]
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
    out_labels = _dim_labels(pattern, out_dims)
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


def _explain_einsum(equation: str, shape: Any, lengths: dict[str, int]) -> str:
    shapes = _shapes_or_none(shape)
    if not shapes or isinstance(shape, str) or not list(shape):
        raise ArgumentError(
            f"einsum needs one shape per operand, got {shape!r}",
            hint="e.g. explain('ij,jk->ik', [(2, 3), (3, 4)])",
        )
    items = tuple(lengths.items())
    plan = plan_einsum_cached(equation, tuple(shapes), items, None, config.current())
    title = f'einsum "{equation}" on ' + ", ".join(str(s) for s in shapes)
    return title + "\n" + str(ContractionPlan(plan, tuple(shapes))).rstrip("\n")


def _terms(pattern: str) -> tuple[list[str], list[str]]:
    """The text of each term left and right of the arrow, for the table's labels."""
    left, _, right = pattern.partition("->")
    return [term.strip() for term in left.split(",")], [t.strip() for t in right.split(",")]


def _explain_run(op: str, pattern: str, shape: Any, lengths: dict[str, Any]) -> str:
    """The calls `op`'s executor makes, run on shapes by `ShapeBackend`."""
    left, right = _terms(pattern)
    many = op in _MANY or (op == "rearrange" and len(left) > 1)
    shapes = [_as_shape(shape)] if not many else _as_shapes(op, shape)
    given = dict(lengths)
    variant = given.pop(_OPTIONS[op], False) if op in _OPTIONS else None
    if op == "roll" and "shift" not in lengths:
        raise ArgumentError(
            "roll needs its shift", hint="e.g. explain('b [t] c', (2, 5, 4), op='roll', shift=1)"
        )
    if op in _MANY:
        variant = ()  # no Python numbers among the operands
    backend = ShapeBackend()
    arrays = [Shaped(s) for s in shapes]
    items = tuple(given.items())
    plan = Op.by_name[op].plan
    shapes_arg: Any = tuple(shapes) if many else shapes[0]
    run = plan(pattern, shapes_arg, items, variant, backend)
    result = run(arrays if many else arrays[0], None)
    outputs = [result] if isinstance(result, Shaped) else list(result)
    rows: list[tuple[str, Shape, str]] = []
    for k, (array, term) in enumerate(zip(arrays, left, strict=False)):
        rows.append(("input" if len(arrays) == 1 else f"input {k}", array.shape, term))
    for call, results in backend.calls:
        for k, after in enumerate(results):
            rows.append((call if k == 0 else "", after, ""))
    labels = right if "->" in pattern else [left[0] if len(left) == 1 else ""]
    for k, output in enumerate(outputs):
        name = "output" if len(outputs) == 1 else f"output {k}"
        rows.append((name, output.shape, labels[k] if k < len(labels) else ""))
    return _title(op, pattern, shapes, lengths) + "\n" + _table(rows)


def _explain_check(pattern: str, shape: Any, lengths: dict[str, Any]) -> str:
    """The arrays' shapes under their terms, and the lengths `check` solves from them."""
    shapes = _as_shapes("check", shape)
    solved = check([Shaped(s) for s in shapes], pattern, **lengths)
    left, _ = _terms(pattern)
    rows: list[tuple[str, Shape, str]] = [
        ("input" if len(shapes) == 1 else f"input {k}", s, term)
        for k, (s, term) in enumerate(zip(shapes, left, strict=False))
    ]
    text = _title("check", pattern, shapes, lengths) + "\n" + _table(rows)
    found = ", ".join(f"{name}={value}" for name, value in solved.items())
    return text + "\n  solved: " + (found or "no named axis")


def _as_shapes(op: str, shape: Any) -> list[Shape]:
    """One shape per array: a sequence of shapes, or one shape for a single array."""
    shapes = _shapes_or_none(shape)
    if not shapes or isinstance(shape, str) or not list(shape):
        raise ArgumentError(
            f"{op} needs one shape per array, got {shape!r}",
            hint=f"e.g. explain('b c, c -> b c', [(2, 3), (3,)], op='{op}')",
        )
    return shapes


def _title(op: str, pattern: str, shapes: Sequence[Shape], lengths: dict[str, Any]) -> str:
    title = f'{op} "{pattern}" on ' + ", ".join(str(s) for s in shapes)
    if lengths:
        title += " with " + ", ".join(f"{name}={value}" for name, value in lengths.items())
    return title
