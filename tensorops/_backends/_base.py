"""What every adapter derives from its primitives, written once.

An adapter gives the primitives of the `tensorops._types.Backend` protocol (its
framework's reshape, permute, reductions, element-wise functions, ...) and subclasses
`AdapterBase`, which builds the rest from them:

* shapes: `AdapterBase.sizes` reads the lengths a graph knows only when it runs as
  `tensorops._staging.sizes.RunTimeSize`, from two primitives a staging framework
  overrides (`static_shape`, `run_time_shape`); `traced`, `inward_lengths` and
  `outward_size` follow;
* the composites: `reduce`, the one-call executors (`permuter`, `reshaper`),
  `split`, `flipper`, `constant`, `is_integer`, the five element-wise methods through
  `elementwiser`, the softmax, the stable logsumexp, 16-bit floats in float32
  (`widened`, from two attributes), argmax / argmin over several axes
  (`arg_reduction`), the index positions of get_at / set_at / add_at with their range
  check (`positions`), `write` and `ordered`, and `einsummer` (none).

An adapter overrides a composite only where its framework's own call is faster, or
where the framework differs from what the composite assumes; the override says which,
in one line.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from tensorops._errors import BackendError, ShapeError
from tensorops._staging.sizes import leaf, value_of
from tensorops._types import Executor, IndexSpec

__all__ = ["AdapterBase", "reduced_last", "split_by_slicing"]


def reduced_last(shape: Sequence[Any], axes: tuple[int, ...]) -> tuple[tuple[int, ...] | None, int]:
    """How to bring `axes` of an array of `shape` last, in order: (permutation or None, start).

    Their flattened positions are what argmax / argmin over several axes return.

    Examples:
        >>> reduced_last((2, 3, 4), (0, 2)), reduced_last((2, 3, 4), (1, 2))
        (((1, 0, 2), 1), (None, 1))
    """
    ndim = len(shape)
    start = ndim - len(axes)
    if axes == tuple(range(start, ndim)):
        return None, start
    return (*(i for i in range(ndim) if i not in axes), *axes), start


def split_by_slicing(x: Any, sizes: Sequence[Any], axis: int) -> list[Any]:
    """Consecutive pieces of ``x`` along ``axis`` by basic slicing (views in every library).

    The index ends with ``...``: the array API standard requires every axis to be covered.
    A length known only when the graph runs is sliced with the framework's value of it.
    """
    if axis < 0:
        axis += x.ndim
    lead = (slice(None),) * axis
    pieces = []
    start: Any = 0
    for size in sizes:
        stop = start + size
        pieces.append(x[(*lead, slice(value_of(start), value_of(stop)), ...)])
        start = stop
    return pieces


class _Once:
    """A framework's shape of one array, asked for once (``tf.shape(x)``), when first needed."""

    __slots__ = ("make", "value")

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make: Callable[[], Any] | None = make
        self.value: Any = None

    def item(self, i: int) -> Any:
        if self.make is not None:
            self.value, self.make = self.make(), None
        return self.value[i]


@functools.lru_cache(maxsize=512)
def _elementwise(adapter: Any, name: str) -> Callable[..., Any]:
    """`adapter.elementwiser(name, ())`, made once per adapter and name."""
    made: Callable[..., Any] = adapter.elementwiser(name, ())
    return made


class AdapterBase:
    """The composites of the `Backend` protocol, derived from its primitives.

    Subclasses set ``name`` and give the primitives; see the module's docstring.
    """

    __slots__ = ()
    #: The family's name in messages and for `tops.convert`.
    name: str = "array"
    #: Each pairwise step of a planned einsum as one call of the adapter's `einsummer`.
    einsum_pairs: bool = False
    #: The class ``out=`` must be (`write`), or None where the family cannot write into
    #: an array; and how the message names it.
    written_class: type | tuple[type, ...] | None = None
    written_name: str = ""
    #: Whether the family lays arrays out in C order (`ordered` accepts ``order="C"``).
    c_ordered: bool = False
    #: Where the family's lengths are known only when a graph runs, for messages.
    staged_as: str = "a graph being built"
    #: The family's 16-bit floating dtypes (float16, bfloat16) and its float32: `widened`.
    narrow_floats: tuple[Any, ...] = ()
    float32: Any = None

    # -- shapes ------------------------------------------------------------------------

    def static_shape(self, x: Any) -> tuple[Any, ...]:
        """``x``'s shape as far as it is known while a graph is built: None where it is not."""
        return tuple(x.shape)

    def run_time_shape(self, x: Any) -> Any:
        """``x``'s shape as the framework's values, indexable (``tf.shape(x)``)."""
        return x.shape

    def sizes(self, x: Any) -> tuple[Any, ...]:
        """``x``'s shape as plans read it: ints, and a `RunTimeSize` where unknown."""
        shape = self.static_shape(x)
        if not any(n is None for n in shape):
            return shape
        found = _Once(functools.partial(self.run_time_shape, x))
        return tuple(
            leaf(functools.partial(found.item, i), mode=self.staged_as) if n is None else n
            for i, n in enumerate(shape)
        )

    def traced(self, shapes: Any) -> bool:
        """Whether `shapes` (one shape, or a tuple of them) holds anything but plain ints.

        The fast path hands over ``x.shape`` as the array has it; a shape of a graph
        being built is planned from `sizes` instead, and never cached.
        """
        if not isinstance(shapes, tuple):
            return True
        for n in shapes:  # loops, not any(): this runs on every first call of a plan
            if type(n) is int:
                continue
            if not isinstance(n, tuple):
                return True
            for m in n:
                if type(m) is not int and (not isinstance(m, tuple) or self.traced(m)):
                    return True
        return False

    def is_length(self, value: Any) -> bool:
        """Whether `value` is a length as the framework's own scalar (what `outward_size` gives)."""
        return False

    def inward_lengths(self, given: dict[str, Any]) -> dict[str, Any]:
        """Axis lengths given as the framework's scalars (`is_length`) as run-time sizes."""
        if not any(self.is_length(value) for value in given.values()):
            return given
        return {
            name: leaf(functools.partial(_same, value), mode=self.staged_as)
            if self.is_length(value)
            else value
            for name, value in given.items()
        }

    def outward_size(self, size: Any) -> Any:
        """A size as ``parse_shape`` answers it: an int, or the framework's own scalar."""
        return value_of(size)

    def known(self, x: Any) -> Any:
        """None: the values of an array are not read while it is planned (see `Backend.known`).

        An adapter whose arrays hold their values now (NumPy, torch eager) reads them.
        """
        return None

    def assert_equal(self, first: Any, second: Any, error: Callable[[], Exception]) -> Any:
        """Place a check that two lengths are equal in the graph being built, if it can.

        Nothing by default (None): the framework checks the lengths when it runs the steps
        that use them (a reshape, a product). An adapter whose framework has assertions
        (`tf.debugging.assert_equal`) returns one, raising the message of ``error()``.
        """
        return None

    def after(self, checks: Sequence[Any], run: Executor) -> Executor:
        """`run` made to run after the assertions `checks` (`assert_equal`'s), where they exist."""
        return run

    # -- composites --------------------------------------------------------------------

    def reduce(self, x: Any, reduction: str, axes: tuple[int, ...]) -> Any:
        """Reduce `axes` with one of `REDUCTIONS` (the adapter's `reducer`, run once)."""
        return self.reducer(reduction, axes)(x, None)

    def reducer(self, reduction: str, axes: tuple[int, ...]) -> Executor:
        raise NotImplementedError  # a primitive: every adapter gives it

    def permute(self, x: Any, axes: tuple[int, ...]) -> Any:
        raise NotImplementedError  # a primitive: every adapter gives it

    def reshape(self, x: Any, shape: tuple[int, ...]) -> Any:
        raise NotImplementedError  # a primitive: every adapter gives it

    def permuter(self, axes: tuple[int, ...]) -> Executor:
        """An executor that permutes its array by `axes`."""
        permute = self.permute
        return lambda x, arg: permute(x, axes)

    def reshaper(self, shape: tuple[int, ...]) -> Executor:
        """An executor that reshapes its array to `shape`."""
        reshape = self.reshape
        return lambda x, arg: reshape(x, shape)

    def split(self, x: Any, sizes: Sequence[Any], axis: int) -> list[Any]:
        """Consecutive pieces along `axis` by basic slicing (views)."""
        return split_by_slicing(x, sizes, axis)

    def flipper(self, axes: tuple[int, ...]) -> Executor:
        """An executor that reverses `axes` by basic slicing (a view where the family has them)."""
        index = tuple(slice(None, None, -1 if i in axes else None) for i in range(max(axes) + 1))
        return lambda x, arg: x[index]

    def elementwiser(self, name: str, numbers: tuple[int, ...]) -> Callable[..., Any]:
        raise NotImplementedError  # a primitive: every adapter gives it

    def multiply(self, a: Any, b: Any) -> Any:
        """The element-wise product (`elementwiser`'s ``multiply``)."""
        return _elementwise(self, "multiply")(a, b)

    def maximum(self, a: Any, b: Any) -> Any:
        """The element-wise maximum (`elementwiser`'s ``maximum``)."""
        return _elementwise(self, "maximum")(a, b)

    def minimum(self, a: Any, b: Any) -> Any:
        """The element-wise minimum (`elementwiser`'s ``minimum``)."""
        return _elementwise(self, "minimum")(a, b)

    def logaddexp(self, a: Any, b: Any) -> Any:
        """``log(exp(a) + exp(b))``, stable (`elementwiser`'s ``logaddexp``)."""
        return _elementwise(self, "logaddexp")(a, b)

    def where(self, condition: Any, a: Any, b: Any) -> Any:
        """``a`` where `condition` holds, else ``b`` (`elementwiser`'s ``where``)."""
        return _elementwise(self, "where")(condition, a, b)

    def dtype_kind(self, dtype: Any) -> str:
        raise NotImplementedError  # a primitive: every adapter gives it

    def is_integer(self, dtype: Any) -> bool:
        """Whether `dtype` is an integer dtype (bool is not)."""
        return self.dtype_kind(dtype) == "i"

    def full(self, shape: tuple[int, ...], value: complex, like: Any) -> Any:
        raise NotImplementedError  # a primitive: every adapter gives it

    def constant(self, value: complex, like: Any) -> Any:
        """A 0-d array of `value`, of `like`'s dtype and device (`full` of no axes)."""
        return self.full((), value, like)

    def einsummer(self, equation: str) -> Callable[..., Any] | None:
        """None: the planned program runs (an adapter whose own einsum is faster says so)."""
        return None

    def softmaxer(self, axes: tuple[int, ...], log: bool) -> Executor:
        """The softmax over `axes` jointly: shifted by the maximum, exponentiated, normalised."""
        reshape, total = self.reshape, self.reducer("sum", axes)
        divide, subtract = _elementwise(self, "divide"), _elementwise(self, "subtract")

        def softmax(x: Any, arg: Any) -> Any:
            exp, top = self.shifted_exp(self.floating(x), axes)
            kept = _kept(self.sizes(exp), axes)
            sums = reshape(total(exp, None), kept)
            if log:
                return subtract(subtract(self.floating(x), top), self.log(sums))
            return divide(exp, sums)

        return softmax

    def shifted_exp(self, x: Any, axis: Any) -> tuple[Any, Any]:
        raise NotImplementedError  # a primitive: every adapter gives it

    def shifted_exp_unguarded(self, x: Any, axis: Any) -> tuple[Any, Any]:
        """`shifted_exp`: an adapter whose guard costs a framework call may skip it."""
        return self.shifted_exp(x, axis)

    def floating(self, x: Any) -> Any:
        raise NotImplementedError  # a primitive: every adapter gives it

    def log(self, x: Any) -> Any:
        raise NotImplementedError  # a primitive: every adapter gives it

    def widened(self, x: Any) -> Any:
        """``x``, or ``x`` in the family's float32 where it is one of its `narrow_floats`."""
        return self.astype(x, self.float32) if x.dtype in self.narrow_floats else x

    def astype(self, x: Any, dtype: Any, casting: str = "unsafe") -> Any:
        raise NotImplementedError  # a primitive: every adapter gives it

    def logsumexp(self, x: Any, axes: tuple[int, ...]) -> Any:
        """log(sum(exp(x))) over `axes`, shifted by the maximum so that nothing overflows."""
        exp, top = self.shifted_exp(self.floating(x), axes)
        total = self.log(self.reducer("sum", axes)(exp, None))
        return _elementwise(self, "add")(total, self.reshape(top, self.sizes(total)))

    def arg_reduction(self, single: Callable[[Any, int], Any]) -> Callable[..., Any]:
        """Argmax / argmin over several axes from the one-axis `single`: flattened in order.

        The axes are brought last (in their order) and merged, as if written ``(h w)``.
        """

        def arg(x: Any, axes: tuple[int, ...]) -> Any:
            if len(axes) == 1:
                return single(x, axes[0])
            shape = self.sizes(x)
            perm, start = reduced_last(shape, axes)
            if perm is not None:
                x = self.permute(x, perm)
                shape = tuple(shape[i] for i in perm)
            merged = 1
            for n in shape[start:]:
                merged = merged * n
            return single(self.reshape(x, (*shape[:start], merged)), -1)

        return arg

    def positions(self, spec: IndexSpec) -> Callable[[Any], Any]:
        """The positions an index reads in the merged indexed axes, checked where values are known.

        Several coordinates merge as ``((i0 * n1) + i1) * n2 + i2`` (`wide_index` first).
        """
        lengths, count = spec.lengths, len(spec.lengths)

        def positions(index: Any) -> Any:
            index = self.wide_index(index, spec)
            coordinates = [index] if count == 1 else [index[..., j] for j in range(count)]
            self.check_range(coordinates, spec)
            flat = coordinates[0]
            for values, length in zip(coordinates[1:], lengths[1:], strict=True):
                flat = flat * length + values
            return flat

        return positions

    def wide_index(self, index: Any, spec: IndexSpec) -> Any:
        """The index in a dtype the family's gather and scatter take (as it is by default)."""
        return index

    def values_known(self, x: Any) -> bool:
        """Whether `x`'s values can be read now (no graph being built, no device to wait on)."""
        return False

    def check_range(self, coordinates: Sequence[Any], spec: IndexSpec) -> None:
        """Raise `spec`'s error for the first coordinate out of its axis, where values are known."""
        if not self.values_known(coordinates[0]):
            return
        for j, (values, length) in enumerate(zip(coordinates, spec.lengths, strict=True)):
            read = self.to_numpy(values)
            bad = (read < 0) | (read >= length)
            if bad.any():
                raise spec.out_of_range(j, read[bad].flat[0].item())

    def to_numpy(self, x: Any) -> Any:
        raise NotImplementedError  # a primitive: every adapter gives it

    def write(self, out: Any, x: Any, casting: str) -> Any:
        """Write `x` into the array `out` (NumPy's ``out=``) and return it (`assign`)."""
        if self.written_class is None:
            raise BackendError(
                f"out=: {self.name} cannot write into an array",
                hint="use the returned array; NumPy arrays and torch tensors take out=",
            )
        if not isinstance(out, self.written_class):
            raise BackendError(
                f"out must be a {self.written_name} here, got {type(out).__name__}",
                hint="leave out= out and use the returned array",
            )
        target: Any = out  # an array of the family, of any class
        if tuple(target.shape) != tuple(x.shape):
            raise ShapeError(
                f"out has shape {tuple(target.shape)} but the result has shape {tuple(x.shape)}"
            )
        return self.assign(target, x, casting)

    def assign(self, out: Any, x: Any, casting: str) -> Any:
        """Write `x` into `out`, whose class and shape `write` checked."""
        raise NotImplementedError  # given where `written_class` is

    def ordered(self, x: Any, order: str) -> Any:
        """``x`` laid out in memory order ``"C"`` where the family lays arrays out so."""
        if order == "C" and self.c_ordered:
            return self.contiguous(x)
        laid = (
            f"{self.name} arrays are laid out in C order"
            if self.c_ordered
            else (f"{self.name} arrays have no memory order")
        )
        raise BackendError(
            f"order={order!r}: {laid}",
            hint="leave order out; only NumPy arrays take order='C' and 'F'",
        )

    def contiguous(self, x: Any) -> Any:
        """``x`` in C order (a copy where it is not); as it is by default."""
        return x


def _kept(shape: Sequence[Any], axes: tuple[int, ...]) -> tuple[Any, ...]:
    """`shape` with `axes` made 1: a reduction's result put back in place for broadcasting."""
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _same(value: Any) -> Any:
    return value
