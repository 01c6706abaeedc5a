"""The executors of the element-wise ops, and their `Op`s on the dispatch.

Each named op is an `Op` on `call_many`: a cached call is one dict lookup per
operand, one LRU lookup, then per operand at most a reshape (and a permute), the
framework's own function (`Backend.elementwiser`: ``np.add``, ``torch.add``,
``xp.add``, ...) and at most one rearrangement of the result. Python numbers among
the operands are not arrays to the dispatch: their positions are the plan's
variant and their values the executor's argument.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from tensorops._dispatch import Lengths, Op, call_many
from tensorops._elementwise._planning import Plan, plan_operands
from tensorops._errors import ShapeError
from tensorops._types import Backend, Executor

__all__ = [
    "ADD",
    "ALIGN",
    "WHOLE",
    "Failed",
    "Unfit",
    "DIVIDE",
    "LOGADDEXP",
    "MAXIMUM",
    "MINIMUM",
    "MULTIPLY",
    "NUMBERS",
    "RESULT",
    "SUBTRACT",
    "WHERE",
    "run_op",
]

#: Python numbers an operand may be (its term is then empty); NumPy scalars are arrays.
NUMBERS = (int, float, complex, bool)
_ALIGN, _RESULT = "elementwise", "elementwise (the result of f)"


def _full_shapes(shapes: tuple[Any, ...], numbers: tuple[int, ...]) -> tuple[Any, ...]:
    """The arrays' shapes with ``()`` put back for the Python numbers among the operands."""
    if not numbers:
        return shapes
    full = list(shapes)
    for k in numbers:
        full.insert(k, ())
    return tuple(full)


def _runner(call: Callable[..., Any], preps: tuple[Executor | None, ...], numbers: Any) -> Executor:
    """``run(arrays, values)``: each array prepared, the numbers put back, then `call`."""
    if len(preps) == 2 and not numbers:  # the common calls: no list built
        return _binary(call, *preps)
    if len(preps) == 1 and len(numbers) == 1:
        p = preps[0] or _as_is
        if numbers[0] == 0:
            return lambda arrays, values: call(values[0], p(arrays[0], None))
        return lambda arrays, values: call(p(arrays[0], None), values[0])
    if len(preps) == 3 and not numbers:
        p, q, r = (prep or _as_is for prep in preps)
        return lambda arrays, arg: call(p(arrays[0], None), q(arrays[1], None), r(arrays[2], None))

    def run(arrays: Sequence[Any], values: Any) -> Any:
        operands = [x if p is None else p(x, None) for x, p in zip(arrays, preps, strict=True)]
        for k, value in zip(numbers, values or (), strict=False):
            operands.insert(k, value)
        return call(*operands)

    return run


def _as_is(x: Any, arg: Any) -> Any:
    return x


def _binary(call: Callable[..., Any], p: Executor | None, q: Executor | None) -> Executor:
    if p is None and q is None:
        return lambda arrays, arg: call(arrays[0], arrays[1])
    if p is None:
        return lambda arrays, arg: call(arrays[0], q(arrays[1], None))  # type: ignore[misc]
    if q is None:
        return lambda arrays, arg: call(p(arrays[0], None), arrays[1])
    return lambda arrays, arg: call(p(arrays[0], None), q(arrays[1], None))


def _prepared(planned: Plan, adapter: Backend) -> tuple[Executor | None, ...]:
    return tuple(None if r is None else r.executor(adapter) for r in planned.prepare)


def _op_planner(name: str) -> Callable[[str, Any, Lengths, Any, Backend], Executor]:
    def plan(
        pattern: str, shapes: Any, lengths: Lengths, numbers: Any, adapter: Backend
    ) -> Executor:
        planned = plan_operands(name, pattern, _full_shapes(shapes, numbers), lengths, numbers)
        run = _runner(adapter.elementwiser(name, numbers), _prepared(planned, adapter), numbers)
        if planned.output is None:
            return run
        then = planned.output.executor(adapter)
        return lambda arrays, arg: then(run(arrays, arg), None)

    return plan


#: The variant's tag of `elementwise` in one executor: align, call f, check, rearrange.
WHOLE = "elementwise: whole"


class Unfit(NamedTuple):
    """What the whole executor returns when f's result is not of the broadcast shape."""

    result: Any


class Failed(NamedTuple):
    """What the whole executor returns when f raised: the caller raises it as it is."""

    error: Exception


def _plan_align(
    pattern: str, shapes: Any, lengths: Lengths, variant: Any, adapter: Backend
) -> Executor:
    whole = type(variant) is tuple and variant[:1] == (WHOLE,)
    numbers = variant[1] if whole else variant
    planned = plan_operands(_ALIGN, pattern, _full_shapes(shapes, numbers), lengths, numbers)
    preps = _prepared(planned, adapter)
    if not whole:
        return lambda arrays, arg: [
            x if p is None else p(x, None) for x, p in zip(arrays, preps, strict=True)
        ]
    return _whole(preps, numbers, planned, adapter)


def _whole(
    preps: tuple[Executor | None, ...], numbers: Any, planned: Plan, adapter: Backend
) -> Executor:
    """``run(arrays, (f, numbers' values))``: `elementwise` in one call of the dispatch.

    f's errors and a result of another shape are returned (`Failed`, `Unfit`), not
    raised: the dispatch would take them for the framework's, and `elementwise`
    raises them as they are, or with the op's context.
    """
    shape = planned.shape
    then = None if planned.output is None else planned.output.executor(adapter)

    def finish(result: Any) -> Any:
        found = getattr(result, "shape", None)
        if found is None or type(result) in NUMBERS or tuple(found) != shape:
            return Unfit(result)
        return result if then is None else then(result, None)

    if len(preps) == 2 and not numbers:  # the common call, spelled out
        p, q = (prep or _as_is for prep in preps)

        def run_two(arrays: Sequence[Any], arg: Any) -> Any:
            try:
                result = arg[0](p(arrays[0], None), q(arrays[1], None))
            except Exception as error:  # f's own: raised by the caller as it is
                return Failed(error)
            return finish(result)

        return run_two

    def run(arrays: Sequence[Any], arg: Any) -> Any:
        f, values = arg
        operands = [x if p is None else p(x, None) for x, p in zip(arrays, preps, strict=True)]
        for k, value in zip(numbers, values, strict=True):
            operands.insert(k, value)
        try:
            result = f(*operands)
        except Exception as error:  # f's own: raised by the caller as it is
            return Failed(error)
        return finish(result)

    return run


def _plan_result(
    pattern: str, shapes: Any, lengths: Lengths, numbers: Any, adapter: Backend
) -> Executor:
    """Check the shape of f's result and rearrange it to the output."""
    full = _full_shapes(shapes[1:], numbers)
    planned = plan_operands(_ALIGN, pattern, full, lengths, numbers)
    if tuple(shapes[0]) != planned.shape:
        raise ShapeError(
            f"f returned an array of shape {tuple(shapes[0])} but the operands broadcast to "
            f"{planned.shape}",
            pattern=pattern,
            hint="f must act element by element: it gets the operands aligned, unit dims "
            "inserted, and its result must have their broadcast shape",
        )
    if planned.output is None:
        return lambda arrays, arg: arrays[0]
    then = planned.output.executor(adapter)
    return lambda arrays, arg: then(arrays[0], None)


def run_op(op: Op, operands: tuple[Any, ...], pattern: Any, lengths: dict[str, Any]) -> Any:
    """Run `op`; Python numbers among the operands go to the executor, not to the dispatch."""
    if len(operands) == 2:  # spelled out: the common calls
        x, y = operands
        if type(y) in NUMBERS and type(x) not in NUMBERS:
            return call_many(op, (x,), pattern, lengths, (1,), (y,))
        if type(x) in NUMBERS and type(y) not in NUMBERS:
            return call_many(op, (y,), pattern, lengths, (0,), (x,))
    numbers: tuple[int, ...] = ()
    for k, x in enumerate(operands):
        if type(x) in NUMBERS:
            numbers += (k,)
    if not numbers:
        return call_many(op, operands, pattern, lengths, (), None)
    arrays = tuple(x for x in operands if type(x) not in NUMBERS)
    return call_many(op, arrays, pattern, lengths, numbers, tuple(operands[k] for k in numbers))


ADD = Op("add", _op_planner("add"), "add(x, y, 'b t c, c -> b t c')")
SUBTRACT = Op("subtract", _op_planner("subtract"), "subtract(x, y, 'b t c, c -> b t c')")
MULTIPLY = Op("multiply", _op_planner("multiply"), "multiply(x, w, 'b t c, c -> b t c')")
DIVIDE = Op("divide", _op_planner("divide"), "divide(x, y, 'b t c, b t -> b t c')")
MAXIMUM = Op("maximum", _op_planner("maximum"), "maximum(x, y, 'b t c, c -> b t c')")
MINIMUM = Op("minimum", _op_planner("minimum"), "minimum(x, y, 'b t c, c -> b t c')")
LOGADDEXP = Op("logaddexp", _op_planner("logaddexp"), "logaddexp(x, y, 'b i, b j -> b i j')")
WHERE = Op("where", _op_planner("where"), "where(mask, x, y, 'b t, b t c, c -> b t c')")
ALIGN = Op(_ALIGN, _plan_align, "elementwise(f, x, y, 'b t c, c -> b t c')")
RESULT = Op(_RESULT, _plan_result, "elementwise(f, x, y, 'b t c, c -> b t c')")
