"""The one call path of every op: adapter, cached plan, executor; one slow path for the rest.

Every public op that takes arrays and a pattern is a few lines that describe the
call to `call` (one array) or `call_many` (several: einsum, get_at):

```
fast path   adapter = ADAPTERS[type(x)]                                one dict lookup
            (shape class in UNKEYED_SHAPES: paddle's lists, keyed by adapter.sizes(x))
            run = bound_plan(op, pattern, shapes, lengths, variant, adapter)   one LRU lookup
            return run(x, arg)                                         the framework calls
slow path   anything the fast path cannot do: a list of arrays to stack, a type not
            seen yet, a shape that cannot be hashed (symbolic sizes while
            torch.compile traces), and every error
```

A plan is made by the op's `Op.plan` from strings and shapes only, and
chooses its executor then, for the adapter: the cache holds the function that
makes the calls (for a plan of one call, a function of the adapter that calls the
framework directly), so a hit does no parsing, no validation and no branching on
the plan's kind.
``variant`` is what else the plan depends on (a reduction's name, "callable" for
a reduction function, einsum's strategy): never the function object itself, so
a fresh lambda per call still hits the cache; ``arg`` is passed to the executor
as it is (the reduction itself).

The slow path builds the error context once: the op, the pattern, a line per
input and the lengths, added with `TensorOpsError.with_context` and
raised through `tensorops._compile.raise_error`, so that it reaches the
user unchanged from inside torch.compile too. A framework's own complaint while
the calls run becomes a `BackendError` with the same context; nothing is
run twice.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, NoReturn

from tensorops._axes import may_equal
from tensorops._backends import ADAPTERS, UNKEYED_SHAPES, get_backend
from tensorops._errors import (
    FAST_PATH_MISSES,
    FRAMEWORK_ERRORS,
    MISSING,
    ArgumentError,
    BackendError,
    TensorOpsError,
    describe_inputs,
    not_a_pattern,
)
from tensorops._staging import Replay, is_compiling, raise_error, replayable
from tensorops._staging.sizes import deferred_checks
from tensorops._types import Backend, Executor

__all__ = [
    "PLAN_CACHE_SIZE",
    "Op",
    "bound_plan",
    "call",
    "call_many",
    "family_of",
    "in_context",
    "keyword_arguments",
    "stack_lists",
]

#: Bound plans kept in the LRU cache (one per op / pattern / shapes / lengths / variant).
PLAN_CACHE_SIZE = 4096

Lengths = tuple[tuple[str, Any], ...]
#: ``plan(pattern, shapes, lengths, variant, adapter) -> executor``.
Planner = Callable[[str, Any, Lengths, Any, Backend], Executor]


class Op:
    """An op the dispatch runs.

    Args:
        name: the public name, for messages.
        plan: makes the executor from ``(pattern, shapes, lengths, variant, adapter)``;
            for an op on one array ``shapes`` is that array's shape, else a tuple of
            shapes.
        example: a correct call, shown when the pattern is not a str.
        prepare: what the slow path does to the arguments before it looks at them
            (`stack_lists`; einsum makes Python numbers arrays), or None.
    """

    __slots__ = ("example", "name", "plan", "prepare")

    #: Every op by name, for replaying a failed call (see `tensorops._compile.raise_error`).
    by_name: ClassVar[dict[str, Op]] = {}

    def __init__(
        self,
        name: str,
        plan: Planner,
        example: str,
        prepare: Callable[[Op, tuple[Any, ...]], tuple[Any, ...]] | None = None,
    ) -> None:
        self.name = name
        self.plan = plan
        self.example = example
        self.prepare = prepare
        Op.by_name[name] = self

    def __repr__(self) -> str:
        return f"Op({self.name!r})"


@functools.lru_cache(maxsize=PLAN_CACHE_SIZE)
def bound_plan(
    op: Op, pattern: str, shapes: Any, lengths: Lengths, variant: Any, adapter: Backend
) -> Executor:
    """The executor of `op` for these arguments; cached (a hit is one dictionary lookup).

    Sizes that cannot be hashed (symbolic sizes while torch.compile runs a call on fake
    tensors) miss the cache with a ``TypeError``: the slow path plans them afresh.
    """
    if adapter.traced(shapes):
        raise KeyError("recorded sizes: planned by the slow path from plain ones")
    return op.plan(pattern, shapes, lengths, variant, adapter)


def call(op: Op, x: Any, pattern: Any, lengths: dict[str, Any], variant: Any, arg: Any) -> Any:
    """Run an op on one array: the fast path, or `_call_slowly`."""
    try:
        adapter = ADAPTERS[type(x)]
        shape = x.shape
        if shape.__class__ in UNKEYED_SHAPES:  # paddle's Size, a list
            shape = adapter.sizes(x)
        items = tuple(lengths.items()) if lengths else ()
        run = bound_plan(op, pattern, shape, items, variant, adapter)
    except TensorOpsError as error:  # before FAST_PATH_MISSES: some are TypeErrors too
        if _framework_lengths(lengths):  # the adapter reads them (`_call_slowly`)
            return _call_slowly(op, (x,), pattern, lengths, variant, arg)
        raise_error(
            in_context(error, op, (x,), pattern, lengths),
            _replay(op, (x,), pattern, lengths, variant, arg, False),
        )
    except FAST_PATH_MISSES:
        return _call_slowly(op, (x,), pattern, lengths, variant, arg)
    try:
        return run(x, arg)
    except FRAMEWORK_ERRORS as error:
        raise_error(
            in_context(error, op, (x,), pattern, lengths, adapter),
            _replay(op, (x,), pattern, lengths, variant, arg, False),
        )


def call_many(
    op: Op, arrays: Sequence[Any], pattern: Any, lengths: dict[str, Any], variant: Any, arg: Any
) -> Any:
    """Run an op on several arrays of one family: the fast path, or `_call_slowly`."""
    try:
        first = arrays[0]
        adapter = ADAPTERS[type(first)]
        # by family, not type: nn.Parameter weights meet plain Tensor inputs
        count = len(arrays)
        if count == 2:  # get_at and most einsums: no list to build
            second = arrays[1]
            if type(second) is not type(first) and ADAPTERS[type(second)] is not adapter:
                raise KeyError
            shapes: tuple[Any, ...] = (first.shape, second.shape)
        elif count == 3:  # set_at and add_at
            second, third = arrays[1], arrays[2]
            if type(second) is not type(first) and ADAPTERS[type(second)] is not adapter:
                raise KeyError
            if type(third) is not type(first) and ADAPTERS[type(third)] is not adapter:
                raise KeyError
            shapes = (first.shape, second.shape, third.shape)
        else:
            for x in arrays:
                if ADAPTERS[type(x)] is not adapter:
                    raise KeyError
            shapes = tuple([x.shape for x in arrays])
        if shapes[0].__class__ in UNKEYED_SHAPES:  # paddle's Size, a list
            shapes = tuple([adapter.sizes(x) for x in arrays])
        items = tuple(lengths.items()) if lengths else ()
        run = bound_plan(op, pattern, shapes, items, variant, adapter)
    except TensorOpsError as error:  # before FAST_PATH_MISSES: some are TypeErrors too
        if _framework_lengths(lengths):  # the adapter reads them (`_call_slowly`)
            return _call_slowly(op, tuple(arrays), pattern, lengths, variant, arg, many=True)
        raise_error(
            in_context(error, op, arrays, pattern, lengths),
            _replay(op, arrays, pattern, lengths, variant, arg, True),
        )
    except (*FAST_PATH_MISSES, IndexError):
        return _call_slowly(op, tuple(arrays), pattern, lengths, variant, arg, many=True)
    try:
        return run(arrays, arg)
    except FRAMEWORK_ERRORS as error:
        raise_error(
            in_context(error, op, arrays, pattern, lengths, adapter),
            _replay(op, arrays, pattern, lengths, variant, arg, True),
        )


def _framework_lengths(lengths: dict[str, Any]) -> bool:
    """Whether some axis length is not a Python int (parse_shape's answer inside a graph)."""
    return any(type(value) is not int for value in lengths.values()) if lengths else False


def _call_slowly(
    op: Op,
    arrays: tuple[Any, ...],
    pattern: Any,
    lengths: dict[str, Any],
    variant: Any,
    arg: Any,
    many: bool = False,
) -> Any:
    """Everything the fast path does not: lists, new types, symbolic shapes, errors."""
    adapter: Backend | None = None
    try:
        if type(pattern) is not str:
            raise not_a_pattern(pattern, op.example)
        if op.prepare is not None:
            arrays = op.prepare(op, arrays)
        if not arrays:
            raise ArgumentError(f"{op.name} needs at least one array")
        adapter = family_of(arrays)
        shapes: Any = tuple(adapter.sizes(x) for x in arrays)
        if not many:
            shapes = shapes[0]
        inward = getattr(adapter, "inward_lengths", None)  # PyTensor: its scalar graphs
        items = tuple((inward(lengths) if inward is not None else lengths).items())
        try:
            run = bound_plan(op, pattern, shapes, items, variant, adapter)
        except (TypeError, KeyError):  # symbolic sizes: the same plan, uncached
            run = plan_staged(op, arrays, pattern, lengths, shapes, items, variant, adapter)
        return run(arrays if many else arrays[0], arg)
    except (TensorOpsError, *FRAMEWORK_ERRORS) as error:
        raise_error(
            in_context(error, op, arrays, pattern, lengths, adapter),
            _replay(op, arrays, pattern, lengths, variant, arg, many),
        )


def plan_staged(
    op: Op,
    arrays: tuple[Any, ...],
    pattern: str,
    lengths: dict[str, Any],
    shapes: Any,
    items: Lengths,
    variant: Any,
    adapter: Backend,
) -> Executor:
    """The plan of a call whose sizes a compiler or a graph holds: made afresh, never cached.

    A length known only when the graph runs cannot be checked now: what the planner
    leaves to the graph (`tensorops._staging.sizes.require_equal`) the adapter places
    there as an assertion, with the message the eager call would raise.
    """
    if is_compiling():  # torch.compile's symbolic sizes compare: no check is left over
        return op.plan(pattern, shapes, items, variant, adapter)
    with deferred_checks() as pending:
        run = op.plan(pattern, shapes, items, variant, adapter)
    checks = [
        adapter.assert_equal(
            first,
            second,
            functools.partial(_error_in_context, error, op, arrays, pattern, lengths),
        )
        for first, second, error in pending
    ]
    checks = [check for check in checks if check is not None]
    return adapter.after(checks, run) if checks else run


def _error_in_context(
    error: Callable[[], TensorOpsError],
    op: Op,
    arrays: tuple[Any, ...],
    pattern: str,
    lengths: dict[str, Any],
) -> TensorOpsError:
    return in_context(error(), op, arrays, pattern, lengths)


def stack_lists(op: Op, arrays: tuple[Any, ...]) -> tuple[Any, ...]:
    """The `Op.prepare` of ops that take a list of arrays: stacked along a new first axis.

    Raises:
        TensorOpsError: an empty list, arrays of several types or shapes.
    """
    items = arrays[0]
    if not isinstance(items, (list, tuple)):
        return arrays
    if not items:
        raise ArgumentError(f"cannot {op.name} an empty {type(items).__name__}")
    for i, item in enumerate(items):
        if type(item) is not type(items[0]):
            raise BackendError(
                f"list element {i} is a {type(item).__name__}, element 0 is a "
                f"{type(items[0]).__name__}: all elements must be of one array type"
            )
    adapter = get_backend(items[0])
    shapes = [adapter.sizes(item) for item in items]  # PyTensor's x.shape is a graph
    for i, shape in enumerate(shapes):
        if not may_equal(shape, shapes[0]):  # a length known only when it runs: stack checks
            raise TensorOpsError(
                f"list elements have different shapes: element 0 is {shapes[0]}, "
                f"element {i} is {shape}",
                hint="only arrays of one shape can be stacked",
            )
    return (adapter.stack(list(items)),)


def family_of(arrays: Sequence[Any]) -> Backend:
    """The one adapter of `arrays`.

    Raises:
        ArgumentError: there is no array.
        BackendError: an array of no supported family, or arrays of two families.
    """
    if not arrays:
        raise ArgumentError("no array was given")
    adapter = get_backend(arrays[0])
    for i, x in enumerate(arrays[1:], 1):
        if type(x) is not type(arrays[0]) and get_backend(x) is not adapter:
            raise BackendError(
                f"operand {i} is a {type(x).__name__}, operand 0 is a "
                f"{type(arrays[0]).__name__}: all operands must be of one array family",
                hint="convert them first, e.g. with tops.convert(x, 'torch')",
            )
    return adapter


def _replay(
    op: Op,
    arrays: Sequence[Any],
    pattern: Any,
    lengths: dict[str, Any],
    variant: Any,
    arg: Any,
    many: bool,
) -> Replay:
    """How `tensorops._compile.raise_error` makes a failed call again under torch.compile."""
    return "dispatch", (op.name, tuple(arrays), pattern, lengths, variant, arg, many)


@replayable("dispatch")
def _call_again(
    name: str,
    arrays: tuple[Any, ...],
    pattern: Any,
    lengths: dict[str, Any],
    variant: Any,
    arg: Any,
    many: bool,
) -> Any:
    op = Op.by_name[name]
    if many:
        return call_many(op, arrays, pattern, lengths, variant, arg)
    return call(op, arrays[0], pattern, lengths, variant, arg)


def in_context(
    error: Exception,
    op: Op,
    arrays: Sequence[Any],
    pattern: Any,
    lengths: dict[str, Any],
    adapter: Backend | None = None,
) -> TensorOpsError:
    """`error` (a framework's own complaint made a `BackendError`) with the call's context.

    The pattern is quoted only if it is a str: a swapped argument would print an array.
    Inside a torch.compile trace the error is made again outside it, context and all
    (`tensorops._compile.raise_error`): nothing is described here.
    """
    if is_compiling():
        return error if isinstance(error, TensorOpsError) else TensorOpsError(str(type(error)))
    if not isinstance(error, TensorOpsError):
        family = adapter.name if adapter is not None else "the array library"
        error = BackendError(f"{family} refused a step: {type(error).__name__}: {error}")
    if len(arrays) == 1 and isinstance(arrays[0], (list, tuple)):
        arrays = arrays[0]  # a list to stack: its arrays are the inputs
    error.with_context(
        op=op.name,
        pattern=pattern if type(pattern) is str else None,
        inputs=describe_inputs(arrays) if type(pattern) is str else (),
        lengths=lengths,
    )
    return error


def keyword_arguments(
    op: str, given: tuple[Any, ...], names: tuple[str, ...], keywords: dict[str, Any]
) -> tuple[Any, ...]:
    """`given` with each argument not given positionally taken from `keywords` by einops' name.

    A keyword is an argument only where that argument was not given positionally
    (it is then popped from `keywords`); where it was, the keyword stays in
    `keywords`, the length of an axis of that name.

    Examples:
        >>> from tensorops._errors import MISSING
        >>> keywords = {"pattern": "a -> a", "h": 2}
        >>> keyword_arguments("rearrange", ("x", MISSING), ("tensor", "pattern"), keywords)
        ('x', 'a -> a')
        >>> keywords
        {'h': 2}
    """
    values = list(given)
    for i, name in enumerate(names):
        if values[i] is MISSING:
            if name not in keywords:
                try:
                    _missing_argument(op, name)
                except ArgumentError as error:
                    raise_error(error, ("missing argument", (op, name)))
            values[i] = keywords.pop(name)
    return tuple(values)


@replayable("missing argument")
def _missing_argument(op: str, name: str) -> NoReturn:
    """Raise the error for an argument given neither positionally nor as a keyword."""
    raise ArgumentError(
        f"missing the argument {name!r}",
        op=op,
        hint=f"pass it positionally or as the keyword {name}=",
    )
