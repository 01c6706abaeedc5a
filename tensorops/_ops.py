"""The public pattern ops: rearrange, reduce, repeat.

Each call is: one ``type(x)`` lookup for the backend, one LRU lookup for the
bound recipe, then at most five framework calls. Everything else (lists,
validation, error context) happens only on the slow path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

from tensorops._backends import _BY_TYPE, get_backend
from tensorops._backends._base import REDUCTIONS, Backend
from tensorops._errors import TensorOpsError, add_context
from tensorops._plan import PERMUTE, REDUCE, RESHAPE, Recipe, _bind_cached, bind_recipe

__all__ = ["Reduction", "apply_recipe", "rearrange", "reduce", "repeat"]

ArrayT = TypeVar("ArrayT")

#: A reduction: a name from ``sum mean max min prod any all`` or ``f(x, axes) -> array``.
Reduction = str | Callable[[Any, tuple[int, ...]], Any]


def apply_recipe(backend: Backend, x: Any, recipe: Recipe, reduction: Reduction | None) -> Any:
    """Run the framework calls of `recipe` on `x`."""
    if recipe.init_shape is not None:
        x = backend.reshape(x, recipe.init_shape)
    if recipe.reduce_axes:
        if isinstance(reduction, str):
            x = backend.reduce(x, reduction, recipe.reduce_axes)
        else:
            assert reduction is not None
            x = reduction(x, recipe.reduce_axes)
    if recipe.perm is not None:
        x = backend.permute(x, recipe.perm)
    if recipe.insert_shape is not None:
        x = backend.reshape(x, recipe.insert_shape)
        assert recipe.expand_shape is not None
        x = backend.expand(x, recipe.expand_shape)
    if recipe.final_shape is not None:
        x = backend.reshape(x, recipe.final_shape)
    return x


def _prepare(op: str, x: Any, pattern: Any) -> tuple[Any, Backend]:
    """Slow path: check the pattern type, stack a list, find the backend."""
    if not isinstance(pattern, str):
        raise TensorOpsError(
            f"the pattern must be a str, got {type(pattern).__name__}",
            op=op,
            hint="the array comes first, then the pattern: rearrange(x, 'a b -> b a')",
        )
    if isinstance(x, (list, tuple)):
        if not x:
            raise TensorOpsError(f"cannot {op} an empty {type(x).__name__}", op=op, pattern=pattern)
        backend = get_backend(x[0])
        shapes = [tuple(getattr(item, "shape", ())) for item in x]
        for i, item in enumerate(x):
            if type(item) is not type(x[0]):
                raise TensorOpsError(
                    f"list element {i} is a {type(item).__name__}, element 0 is a "
                    f"{type(x[0]).__name__}: all elements must be of one array type",
                    op=op,
                    pattern=pattern,
                )
            if shapes[i] != shapes[0]:
                raise TensorOpsError(
                    f"list elements have different shapes: element 0 is {shapes[0]}, "
                    f"element {i} is {shapes[i]}",
                    op=op,
                    pattern=pattern,
                    hint="only arrays of one shape can be stacked",
                )
        return backend.stack(list(x)), backend
    return x, get_backend(x)


def _run(
    op: str, x: Any, pattern: str, lengths: dict[str, Any], reduction: Reduction | None
) -> Any:
    """The whole op; the public functions inline its fast path."""
    original = x
    try:
        x, backend = _prepare(op, x, pattern)
        recipe = bind_recipe(op, pattern, x.shape, tuple(lengths.items()))
        return _execute(op, backend, x, recipe, reduction, pattern, lengths)
    except TensorOpsError as error:
        if not isinstance(pattern, str):
            # Arguments swapped or a non-string pattern: quoting it would print array values.
            raise add_context(error, op) from None
        inputs = original[:3] if isinstance(original, (list, tuple)) else [original]
        raise add_context(error, op, pattern, inputs, lengths) from None


def _execute(
    op: str,
    backend: Backend,
    x: Any,
    recipe: Recipe,
    reduction: Reduction | None,
    pattern: str,
    lengths: dict[str, Any],
) -> Any:
    """Run `recipe`; a framework's own complaint becomes a TensorOpsError with the context."""
    try:
        return apply_recipe(backend, x, recipe, reduction)
    except _FRAMEWORK_ERRORS as error:
        raise _in_context(error, op, backend, x, pattern, lengths) from None


def _in_context(
    error: Exception, op: str, backend: Backend, x: Any, pattern: str, lengths: dict[str, Any]
) -> TensorOpsError:
    if not isinstance(error, TensorOpsError):
        error = TensorOpsError(f"{backend.name} could not run the recipe: {error}")
    return add_context(error, op, pattern, [x], lengths)


# What a framework raises for input it refuses (dtype without an order, a failing callable).
_FRAMEWORK_ERRORS = (
    TensorOpsError,
    ValueError,
    RuntimeError,
    TypeError,
    IndexError,
    ArithmeticError,
)


@overload
def rearrange(x: Sequence[ArrayT], pattern: str, **lengths: int) -> ArrayT: ...
@overload
def rearrange(x: ArrayT, pattern: str, **lengths: int) -> ArrayT: ...
def rearrange(x: ArrayT | Sequence[ArrayT], pattern: str, **lengths: int) -> ArrayT:
    """Reorder, split and merge axes by a pattern; returns a view whenever the framework can.

    Args:
        x: an array of any supported family, or a list / tuple of arrays of one
            shape, which are stacked along a new leading axis first.
        pattern: ``"left -> right"``, e.g. ``"b c (h w) -> b h w c"``. Both sides
            name the same axes; ``1`` and ``()`` are unit axes that may appear or
            disappear; ``...`` stands for any number of axes.
        **lengths: lengths of axes that cannot be inferred from the shape.

    Returns:
        An array of the input's family, device and dtype.

    Raises:
        TensorOpsError: the pattern is malformed or does not fit the shape.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> x = np.zeros((8, 3, 32, 32))
        >>> tops.rearrange(x, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=4, p2=4).shape
        (8, 64, 48)
        >>> tops.rearrange([x[0], x[1]], "n c h w -> n h w c").shape
        (2, 32, 32, 3)
    """
    try:
        backend = _BY_TYPE[type(x)]
        items = tuple(lengths.items()) if lengths else ()  # tuple({}.items()) costs 0.1 µs
        recipe = _bind_cached("rearrange", pattern, x.shape, items)  # type: ignore[union-attr]
    except (KeyError, TypeError, TensorOpsError):
        return _run("rearrange", x, pattern, lengths, None)  # type: ignore[no-any-return]
    try:
        # one framework call, made directly: most rearranges are a permute or a reshape
        single = recipe.single
        if single == PERMUTE:
            return backend.permute(x, recipe.perm)  # type: ignore[arg-type,no-any-return]
        if single == RESHAPE:
            return backend.reshape(x, recipe.final_shape)  # type: ignore[arg-type,no-any-return]
        return apply_recipe(backend, x, recipe, None)  # type: ignore[no-any-return]
    except _FRAMEWORK_ERRORS as error:
        raise _in_context(error, "rearrange", backend, x, pattern, lengths) from None


@overload
def reduce(x: Sequence[ArrayT], pattern: str, reduction: Reduction, **lengths: int) -> ArrayT: ...
@overload
def reduce(x: ArrayT, pattern: str, reduction: Reduction, **lengths: int) -> ArrayT: ...
def reduce(
    x: ArrayT | Sequence[ArrayT], pattern: str, reduction: Reduction, **lengths: int
) -> ArrayT:
    """Rearrange and reduce the axes missing on the right.

    Args:
        x: an array, or a list of arrays of one shape (stacked first).
        pattern: e.g. ``"b c (h 2) (w 2) -> b c h w"``; an integer on the left is
            an anonymous axis that is reduced; ``1`` on the right keeps a reduced
            dimension as length 1.
        reduction: ``"sum"``, ``"mean"``, ``"max"``, ``"min"``, ``"prod"``,
            ``"any"``, ``"all"``, or a callable ``f(x, axes)`` that reduces the
            tuple of axes ``axes`` of ``x`` and drops them.
        **lengths: lengths of axes that cannot be inferred.

    Returns:
        An array of the input's family; its dtype follows the framework's own
        rules for the reduction (NumPy's mean of ints is float64, for example).

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> x = np.arange(16.0).reshape(1, 1, 4, 4)
        >>> tops.reduce(x, "b c (h 2) (w 2) -> b c h w", "max")[0, 0]
        array([[ 5.,  7.],
               [13., 15.]])
        >>> tops.reduce(x, "b c h w -> b c", lambda t, axes: t.sum(axis=axes))
        array([[120.]])
    """
    if type(reduction) is not str or reduction not in REDUCTIONS:
        _check_reduction(reduction, pattern)
    try:
        backend = _BY_TYPE[type(x)]
        items = tuple(lengths.items()) if lengths else ()  # tuple({}.items()) costs 0.1 µs
        recipe = _bind_cached("reduce", pattern, x.shape, items)  # type: ignore[union-attr]
    except (KeyError, TypeError, TensorOpsError):
        return _run("reduce", x, pattern, lengths, reduction)  # type: ignore[no-any-return]
    try:
        if recipe.single == REDUCE and type(reduction) is str:
            return backend.reduce(x, reduction, recipe.reduce_axes)  # type: ignore[no-any-return]
        return apply_recipe(backend, x, recipe, reduction)  # type: ignore[no-any-return]
    except _FRAMEWORK_ERRORS as error:
        raise _in_context(error, "reduce", backend, x, pattern, lengths) from None


def _check_reduction(reduction: Any, pattern: Any) -> None:
    if callable(reduction) and not isinstance(reduction, str):
        return
    raise TensorOpsError(
        f"unknown reduction {reduction!r}; valid: {', '.join(REDUCTIONS)}, or a callable "
        "f(x, axes)",
        op="reduce",
        pattern=pattern if isinstance(pattern, str) else None,
    )


@overload
def repeat(x: Sequence[ArrayT], pattern: str, **lengths: int) -> ArrayT: ...
@overload
def repeat(x: ArrayT, pattern: str, **lengths: int) -> ArrayT: ...
def repeat(x: ArrayT | Sequence[ArrayT], pattern: str, **lengths: int) -> ArrayT:
    """Rearrange and add (tile) axes that are new on the right.

    New axes are broadcast without copying where the framework can: on NumPy the
    result is then a read-only view (``np.broadcast_to``), on PyTorch a stride-0
    view (``Tensor.expand``); copy it before writing into it. When a new axis is
    merged with an existing one, as in ``"h w -> (h 2) w"``, the final reshape
    copies.

    Args:
        x: an array, or a list of arrays of one shape (stacked first).
        pattern: e.g. ``"h w -> h w c"``; every axis new on the right needs a
            length, as a keyword or an integer literal.
        **lengths: lengths of new axes and of axes that cannot be inferred.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> tops.repeat(np.zeros((30, 40)), "h w -> h w c", c=3).shape
        (30, 40, 3)
        >>> tops.repeat(np.array([1, 2]), "w -> (w 2)")
        array([1, 1, 2, 2])
    """
    try:
        backend = _BY_TYPE[type(x)]
        items = tuple(lengths.items()) if lengths else ()  # tuple({}.items()) costs 0.1 µs
        recipe = _bind_cached("repeat", pattern, x.shape, items)  # type: ignore[union-attr]
    except (KeyError, TypeError, TensorOpsError):
        return _run("repeat", x, pattern, lengths, None)  # type: ignore[no-any-return]
    try:
        return apply_recipe(backend, x, recipe, None)  # type: ignore[no-any-return]
    except _FRAMEWORK_ERRORS as error:
        raise _in_context(error, "repeat", backend, x, pattern, lengths) from None
