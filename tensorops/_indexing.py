"""get_at, set_at and add_at: gather and scatter along the bracketed axes, on the dispatch.

Each op is its `Op` and a public function that hands the
call to `call_many`. The plan
(`tensorops._index_plan.plan_index`) brings the arrays to the layout of an
`IndexSpec`, the adapter's gatherer or scatterer makes the
framework call (``gather`` / ``scatter_add`` / ``index_put`` on torch,
``ravel_multi_index`` + ``take`` / ``add.at`` on NumPy), and a last rearrangement
gives the output its axes. The plan depends on the dtypes too (an index must hold
integers; values of another dtype are cast to the array's): they are its variant.
"""

from __future__ import annotations

from typing import Any, TypeVar

from tensorops._backends import get_backend
from tensorops._dispatch import Lengths, Op, Planner, call_many
from tensorops._errors import ArgumentError, ShapeError, dtype_name
from tensorops._index_plan import IndexPlan, plan_index
from tensorops._plan import Recipe
from tensorops._staging.sizes import shape_values
from tensorops._types import Backend, Executor, IndexSpec

__all__ = ["ADD_AT", "GET_AT", "SET_AT", "add_at", "get_at", "set_at"]

ArrayT = TypeVar("ArrayT")

_NUMBERS = (int, float, complex)


def _step(recipe: Recipe | None, backend: Backend) -> Executor | None:
    return None if recipe is None else recipe.executor(backend)


def _spec(pattern: str, layout: IndexPlan, index_dtype: Any, backend: Backend) -> IndexSpec:
    """The core call's spec, once the index's dtype is checked."""
    if not backend.is_integer(index_dtype):
        dtype = dtype_name(index_dtype)
        raise ArgumentError(
            f"the index must hold integers, got dtype {dtype}",
            pattern=pattern,
            span=layout.index_span,
            hint="convert it, e.g. index.long() (torch) or index.astype(int) (numpy)",
        )

    def out_of_range(coordinate: int, value: Any) -> Exception:
        dim = layout.dims[coordinate]
        axis = pattern[dim.span[0] : dim.span[1]]
        length = layout.lengths[coordinate]
        return ShapeError(
            f"index {value} is out of range for axis {axis} of length {length}",
            pattern=pattern,
            span=dim.span,
            hint="an index lies in 0 <= i < length; a negative one does not count from the end",
        )

    # lengths known only when a graph runs as the framework's values: adapters take numbers
    lengths, batch, channels = shape_values((layout.lengths, layout.batch, layout.channels))
    return IndexSpec(shape_values(lengths), batch, channels, index_dtype, out_of_range)


def _plan_get(pattern: str, shapes: Any, lengths: Lengths, variant: Any, backend: Backend) -> Any:
    layout = plan_index("get_at", pattern, shapes, lengths)
    gather = backend.gatherer(_spec(pattern, layout, variant, backend))
    array, index, output = (_step(r, backend) for r in (layout.array, layout.where, layout.output))
    if array is None and index is None and output is None:
        return lambda arrays, arg: gather(*arrays)  # the arrays are laid out as the call needs

    def get(arrays: Any, arg: Any) -> Any:
        x, where = arrays
        if array is not None:
            x = array(x, None)
        if index is not None:
            where = index(where, None)
        out = gather(x, where)
        return out if output is None else output(out, None)

    return get


def _scatter_planner(name: str, accumulate: bool) -> Planner:
    def plan(pattern: str, shapes: Any, lengths: Lengths, variant: Any, backend: Backend) -> Any:
        layout = plan_index(name, pattern, shapes, lengths)
        index_dtype, array_dtype, values_dtype = variant
        scatter = backend.scatterer(_spec(pattern, layout, index_dtype, backend), accumulate)
        recipes = (layout.array, layout.where, layout.values, layout.output)
        array, index, values, output = (_step(r, backend) for r in recipes)
        # `is None` first: a number has no dtype, and MLX's dtypes refuse `!= None`
        cast = values_dtype is None or values_dtype != array_dtype
        if not cast and array is None and index is None and values is None and output is None:
            return lambda arrays, arg: scatter(*arrays)  # laid out as the call needs

        def put(arrays: Any, arg: Any) -> Any:
            x, where, new = arrays
            if cast:
                new = backend.astype(new, x.dtype)
            if array is not None:
                x = array(x, None)
            if index is not None:
                where = index(where, None)
            if values is not None:
                new = values(new, None)
            out = scatter(x, where, new)
            return out if output is None else output(out, None)

        return put

    return plan


def _numbers_as_arrays(op: Op, arrays: tuple[Any, ...]) -> tuple[Any, ...]:
    """The `Op.prepare` of set_at / add_at: a Python number as values is a 0-d array.

    Its dtype is `x`'s at once (the values are cast to it anyway), which keeps
    torch.compile from tracing a dtype-valued call.
    """
    x, index, values = arrays
    if isinstance(values, _NUMBERS) and not isinstance(values, bool):
        values = get_backend(x).constant(values, x)
    return x, index, values


_EXAMPLE = "'b [t] c, b p, b p c -> b [t] c'"
GET_AT = Op("get_at", _plan_get, "get_at(x, index, 'b [t] c, b p -> b p c')")
SET_AT = Op("set_at", _scatter_planner("set_at", False), f"set_at(x, index, values, {_EXAMPLE})")
ADD_AT = Op("add_at", _scatter_planner("add_at", True), f"add_at(x, index, values, {_EXAMPLE})")
ADD_AT.prepare = SET_AT.prepare = _numbers_as_arrays


def get_at(x: ArrayT, index: Any, pattern: str, /, **lengths: int) -> ArrayT:
    """Gather: the entries of `x` at the positions `index` holds along the bracketed axes.

    ``get_at(x, idx, "b [t] c, b p -> b p c")`` is ``out[b, p, c] = x[b, idx[b, p], c]``.
    Axes in `x` and the index are batch axes (each index row reads its own row of
    `x`); axes only in the index are the positions read; axes only in `x` are
    carried along. With k > 1 bracketed axes, the index has a last axis of k
    coordinates, bracketed: ``"b [h w] c, b p [2] -> b p c"``.

    An index lies in ``0 <= i < length``: NumPy checks it and raises a
    TensorOpsError; torch checks the position each call reads, as its own kernels
    do (an error on the CPU, a device-side assert on CUDA: no host sync), so with
    several coordinates only the merged position is checked there. Other families
    apply their own ``take``'s rule.

    Args:
        x: the array to read.
        index: an integer array of `x`'s family.
        pattern: ``"array, index -> output"``; the output holds every axis but the
            bracketed ones, in any order.
        **lengths: lengths of axes that cannot be inferred from the shapes.

    Returns:
        An array of `x`'s family and dtype.

    Raises:
        TensorOpsError: the pattern is malformed or does not fit the arrays, the
            index is not an integer array, or (NumPy) an index is out of range.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> x = np.arange(12).reshape(2, 3, 2)  # b t c
        >>> tops.get_at(x, np.array([[2, 0], [1, 1]]), "b [t] c, b p -> b p c")
        array([[[4, 5],
                [0, 1]],
        <BLANKLINE>
               [[8, 9],
                [8, 9]]])
        >>> table = np.eye(4)  # an embedding table: v d
        >>> tops.get_at(table, np.array([[3, 1]]), "[v] d, b n -> b n d").shape
        (1, 2, 4)
        >>> image = np.arange(12).reshape(3, 4)
        >>> tops.get_at(image, np.array([[0, 1], [2, 3]]), "[h w], p [2] -> p")
        array([ 1, 11])
    """
    return call_many(  # type: ignore[no-any-return]
        GET_AT, (x, index), pattern, lengths, getattr(index, "dtype", None), None
    )


def _dtypes(x: Any, index: Any, values: Any) -> tuple[Any, Any, Any]:
    return (
        getattr(index, "dtype", None),
        getattr(x, "dtype", None),
        getattr(values, "dtype", None),
    )


def set_at(x: ArrayT, index: Any, values: Any, pattern: str, /, **lengths: int) -> ArrayT:
    """Scatter: a new array, `x` with `values` written at the positions `index` holds.

    ``set_at(x, idx, v, "b [t] c, b p, b p c -> b [t] c")`` is a copy of `x` with
    ``out[b, idx[b, p], c] = v[b, p, c]``; `x` itself is not changed. The values
    may lack axes (they are broadcast; a Python number is a 0-d array, with the
    term left empty) and are cast to `x`'s dtype. When an index repeats, one of its
    values is written, which one is unspecified (as in NumPy and torch). Index
    ranges are checked as for `get_at`.

    Runs on NumPy, torch and JAX: the array API standard defines no scatter, so
    other families raise a TensorOpsError.

    Args:
        x: the array to copy.
        index: an integer array of `x`'s family.
        values: the values, an array of `x`'s family or a Python number.
        pattern: ``"array, index, values -> output"``; the output has the array's
            axes, the same ones bracketed, in any order.
        **lengths: lengths of axes that cannot be inferred from the shapes.

    Returns:
        A new array of `x`'s family, shape (rearranged if the pattern says so) and dtype.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> x = np.zeros((2, 4))
        >>> index, values = np.array([[1], [3]]), np.array([[5.0], [7.0]])
        >>> tops.set_at(x, index, values, "b [t], b p, b p -> b [t]")
        array([[0., 5., 0., 0.],
               [0., 0., 0., 7.]])
        >>> tops.set_at(np.zeros(3), np.array([0, 2]), 1.0, "[t], p, -> [t]")
        array([1., 0., 1.])
    """
    arrays = (x, index, values)
    return call_many(SET_AT, arrays, pattern, lengths, _dtypes(x, index, values), None)  # type: ignore[no-any-return]


def add_at(x: ArrayT, index: Any, values: Any, pattern: str, /, **lengths: int) -> ArrayT:
    """Scatter-add: a new array, `x` with `values` added at the positions `index` holds.

    As `set_at`, but values at a repeated index all add up (``numpy.add.at``
    semantics), which makes it the gradient of `get_at`.

    Args:
        x: the array to add to (not changed).
        index: an integer array of `x`'s family.
        values: the values, an array of `x`'s family or a Python number.
        pattern: ``"array, index, values -> output"``, e.g. ``"b [t] c, b p, b p c -> b [t] c"``.
        **lengths: lengths of axes that cannot be inferred from the shapes.

    Returns:
        A new array of `x`'s family, shape (rearranged if the pattern says so) and dtype.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> counts = tops.add_at(np.zeros(4, dtype=int), np.array([1, 3, 1]), 1, "[t], p, -> [t]")
        >>> counts
        array([0, 2, 0, 1])
    """
    arrays = (x, index, values)
    return call_many(ADD_AT, arrays, pattern, lengths, _dtypes(x, index, values), None)  # type: ignore[no-any-return]
