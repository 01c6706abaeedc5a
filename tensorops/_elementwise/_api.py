"""add, subtract, multiply, divide, maximum, minimum, logaddexp, where and elementwise(f, ...).

The public functions: each hands its operands to `run_op` (`tensorops._elementwise._run`).
`elementwise` is one call of the dispatch whose executor aligns the operands, calls
the user's function, checks its result and rearranges it. Under torch.compile it is
two ops around the function instead: `align_operands` (the operands aligned) and
`finish_result` (the result checked and rearranged), each one graph node, and Dynamo
traces the function between them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from tensorops._dispatch import call_many
from tensorops._elementwise._run import (
    ADD,
    ALIGN,
    DIVIDE,
    LOGADDEXP,
    MAXIMUM,
    MINIMUM,
    MULTIPLY,
    NUMBERS,
    RESULT,
    SUBTRACT,
    WHERE,
    WHOLE,
    Failed,
    Unfit,
    run_op,
)
from tensorops._errors import ArgumentError
from tensorops._staging import is_compiling

__all__ = [
    "ELEMENTWISE_OPS",
    "add",
    "align_operands",
    "divide",
    "elementwise",
    "finish_result",
    "logaddexp",
    "maximum",
    "minimum",
    "multiply",
    "subtract",
    "two_operand_docstring",
    "where",
]

ArrayT = TypeVar("ArrayT")
_F = TypeVar("_F", bound=Callable[..., Any])
#: The variant of `elementwise` on two arrays (no Python number): the common call.
_TWO_ARRAYS = (WHOLE, ())

#: The arguments, result and errors of every two-operand function (`two_operand_docstring`).
_TWO_OPERANDS = """Args:
    x: an array of any supported family, or a Python number (its term empty).
    y: an array of the same family, or a Python number.
    pattern: one term per operand, then optionally ``-> output``:
        ``"b t c, c -> b t c"``. Every dimension of every array is named; an axis
        an operand lacks is broadcast over. Without ``->`` the output is every axis
        once, in the order they first appear.
    **lengths: lengths of axes that cannot be inferred from the shapes.

Returns:
    An array of the operands' family, shaped as the output term says.

Raises:
    TensorOpsError: the pattern is malformed, gives an axis two lengths, drops an
        input axis or adds one; arrays of two families.

"""


def two_operand_docstring(name: str, own: str) -> str:
    """The docstring of the two-operand function `name`: its own, `own`, with the shared sections.

    `own` is a summary, perhaps notes, then an ``Examples:`` section; the arguments,
    the result and the errors go before the examples. The API docs make the same text
    with this function (``scripts/docstrings.py``).

    Raises:
        ValueError: `own` has no ``Examples:`` section.
    """
    head, found, examples = inspect.cleandoc(own).partition("\nExamples:\n")
    if not found:
        raise ValueError(f"the docstring of {name} has no 'Examples:' section")
    return f"{head.rstrip()}\n\n{_TWO_OPERANDS}Examples:\n{examples}\n"


def _two_operands(function: _F) -> _F:
    """`function` with its docstring completed by `two_operand_docstring`."""
    if function.__doc__ is not None:  # None under ``python -OO``
        function.__doc__ = two_operand_docstring(function.__name__, function.__doc__)
    return function


@_two_operands
def add(x: ArrayT | complex, y: ArrayT | complex, pattern: str, /, **lengths: int) -> ArrayT:
    """``x + y`` with named broadcasting: ``x[b, t, c] + y[c]`` is ``"b t c, c -> b t c"``.

    The framework's own function makes the sum (``np.add``, ``torch.add``, ``xp.add``),
    with its dtype promotion. A dimension of length 1 broadcasts only where its term
    writes ``1``; an axis of one name has one length in every operand.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> x, bias = np.zeros((2, 3, 4)), np.arange(4.0)
        >>> tops.add(x, bias, "b t c, c -> b t c")[1, 2]
        array([0., 1., 2., 3.])
        >>> tops.add(np.arange(3), np.arange(2) * 10, "i, j -> j i")
        array([[ 0,  1,  2],
               [10, 11, 12]])
        >>> tops.add(np.ones(2), 1, "c, -> c")
        array([2., 2.])
    """
    return run_op(ADD, (x, y), pattern, lengths)  # type: ignore[no-any-return]


@_two_operands
def subtract(x: ArrayT | complex, y: ArrayT | complex, pattern: str, /, **lengths: int) -> ArrayT:
    """``x - y`` with named broadcasting (see `add` for the pattern).

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> x = np.array([[1.0, 2.0], [3.0, 5.0]])
        >>> tops.subtract(x, x.mean(axis=1), "b c, b")
        array([[-0.5,  0.5],
               [-1. ,  1. ]])
    """
    return run_op(SUBTRACT, (x, y), pattern, lengths)  # type: ignore[no-any-return]


@_two_operands
def multiply(x: ArrayT | complex, y: ArrayT | complex, pattern: str, /, **lengths: int) -> ArrayT:
    """``x * y`` with named broadcasting: the readable ``x * w[None, None, :]``.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> x, w = np.ones((2, 3, 4)), np.arange(4.0)
        >>> tops.multiply(x, w, "b t c, c -> b t c").shape
        (2, 3, 4)
        >>> tops.multiply(x, w, "b t c, c -> c (b t)").shape
        (4, 6)
        >>> tops.multiply(np.arange(6.0), np.array([1.0, -1.0]), "(h w), w -> h w")
        array([[ 0., -1.],
               [ 2., -3.],
               [ 4., -5.]])
    """
    return run_op(MULTIPLY, (x, y), pattern, lengths)  # type: ignore[no-any-return]


@_two_operands
def divide(x: ArrayT | complex, y: ArrayT | complex, pattern: str, /, **lengths: int) -> ArrayT:
    """``x / y`` (true division) with named broadcasting (see `add` for the pattern).

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> x = np.array([[1.0, 3.0], [2.0, 2.0]])
        >>> tops.divide(x, x.sum(axis=1), "b c, b -> b c")
        array([[0.25, 0.75],
               [0.5 , 0.5 ]])
    """
    return run_op(DIVIDE, (x, y), pattern, lengths)  # type: ignore[no-any-return]


@_two_operands
def maximum(x: ArrayT | complex, y: ArrayT | complex, pattern: str, /, **lengths: int) -> ArrayT:
    """The element-wise maximum with named broadcasting (NaN wins, as in NumPy and torch).

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> tops.maximum(np.array([[-1.0, 2.0]]), 0.0, "b c, -> b c")
        array([[0., 2.]])
    """
    return run_op(MAXIMUM, (x, y), pattern, lengths)  # type: ignore[no-any-return]


@_two_operands
def minimum(x: ArrayT | complex, y: ArrayT | complex, pattern: str, /, **lengths: int) -> ArrayT:
    """The element-wise minimum with named broadcasting (NaN wins, as in NumPy and torch).

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> tops.minimum(np.array([[1.0, 5.0], [7.0, 2.0]]), np.array([3.0, 4.0]), "b c, c")
        array([[1., 4.],
               [3., 2.]])
    """
    return run_op(MINIMUM, (x, y), pattern, lengths)  # type: ignore[no-any-return]


@_two_operands
def logaddexp(x: ArrayT | complex, y: ArrayT | complex, pattern: str, /, **lengths: int) -> ArrayT:
    """``log(exp(x) + exp(y))``, computed stably, with named broadcasting.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> tops.logaddexp(np.array([1000.0, 0.0]), np.array([1000.0]), "i, j -> i j")
        array([[1000.69314718],
               [1000.        ]])
    """
    return run_op(LOGADDEXP, (x, y), pattern, lengths)  # type: ignore[no-any-return]


def where(
    condition: Any, x: ArrayT | complex, y: ArrayT | complex, pattern: str, /, **lengths: int
) -> ArrayT:
    """``x`` where `condition` holds, else ``y``, with named broadcasting.

    The framework's own ``where`` chooses (``np.where``, ``torch.where``, ``xp.where``);
    torch and the array API standard want a boolean condition.

    Args:
        condition: a boolean array of any supported family (not a Python number).
        x: an array of the same family, or a Python number (its term empty).
        y: an array of the same family, or a Python number (its term empty).
        pattern: one term per operand, then optionally ``-> output``:
            ``"b t, b t c, -> b t c"`` (see `add`).
        **lengths: lengths of axes that cannot be inferred from the shapes.

    Returns:
        An array of the family of the arrays, shaped as the output term says.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> mask = np.array([[True, False, True]])
        >>> tops.where(mask, np.ones((1, 3, 2)), 0.0, "b t, b t c, -> b t c")[0, :, 0]
        array([1., 0., 1.])
    """
    return run_op(WHERE, (condition, x, y), pattern, lengths)  # type: ignore[no-any-return]


def _split(op: str, args: tuple[Any, ...]) -> tuple[tuple[Any, ...], Any]:
    """The operands and the pattern (the last positional argument) of `elementwise`."""
    if not args:
        raise ArgumentError(
            "elementwise needs operands and a pattern after the function",
            op=op,
            hint="e.g. elementwise(f, x, y, 'b t c, c -> b t c')",
        )
    return args[:-1], args[-1]


def elementwise(f: Callable[..., ArrayT], /, *args: Any, **lengths: int) -> ArrayT:
    """Any element-wise function `f` with named broadcasting: ``f(x, y, ...)`` aligned by names.

    `f` gets the operands brought to one common order of every axis of the
    pattern, each with a dimension of length 1 where it lacks an axis (Python
    numbers as they are), and broadcasts them as the framework does; it must
    return an array of the operands' broadcast shape (checked), which is then
    rearranged to the output. The common order is the plan's choice: `f` must act
    element by element.

    Args:
        f: the function, e.g. ``lambda x, y: x * torch.sigmoid(y)``.
        *args: the operands (arrays of one family or Python numbers), then the pattern:
            one term per operand and optionally ``-> output`` (see `add`).
        **lengths: lengths of axes that cannot be inferred from the shapes.

    Returns:
        `f`'s result, shaped as the output term says.

    Raises:
        TensorOpsError: as `add`; or `f` returned an array of another shape.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> x, gate = np.ones((2, 3)), np.array([0.0, 1.0, 2.0])
        >>> tops.elementwise(lambda a, g: a * g + 1, x, gate, "b c, c -> c b")
        array([[1., 1.],
               [2., 2.],
               [3., 3.]])
        >>> tops.elementwise(np.clip, np.arange(4.0), 1.0, 2.0, "i, , ")
        array([1., 1., 2., 2.])
    """
    if not is_compiling():  # one call of the dispatch; compiled: two nodes, f traced between
        if len(args) == 3 and type(args[0]) not in NUMBERS and type(args[1]) not in NUMBERS:
            out = call_many(ALIGN, args[:2], args[2], lengths, _TWO_ARRAYS, (f, ()))
        else:
            found, pattern = _split(ALIGN.name, args)
            numbers = tuple(k for k, x in enumerate(found) if type(x) in NUMBERS)
            arrays = tuple(x for x in found if type(x) not in NUMBERS)
            values = tuple(found[k] for k in numbers)
            out = call_many(ALIGN, arrays, pattern, lengths, (WHOLE, numbers), (f, values))
        if type(out) is Failed:
            raise out.error
        if type(out) is Unfit:
            return finish_result(out.result, *args, **lengths)  # type: ignore[no-any-return]
        return out  # type: ignore[no-any-return]
    operands = list(_split(ALIGN.name, args)[0])
    aligned = align_operands(*args, **lengths)
    j = 0
    for k, x in enumerate(operands):
        if type(x) not in NUMBERS:
            operands[k] = aligned[j]
            j += 1
    return finish_result(f(*operands), *args, **lengths)  # type: ignore[no-any-return]


def align_operands(*args: Any, **lengths: int) -> list[Any]:
    """The arrays among `args` (operands, then the pattern) aligned as `elementwise` gives them."""
    operands, pattern = _split(ALIGN.name, args)
    return run_op(ALIGN, operands, pattern, lengths)  # type: ignore[no-any-return]


def finish_result(result: Any, *args: Any, **lengths: int) -> Any:
    """`result` of `elementwise`'s function checked and rearranged to the output."""
    operands, pattern = _split(RESULT.name, args)
    if type(result) in NUMBERS:
        raise ArgumentError(
            f"f returned a Python {type(result).__name__}, not an array", op=ALIGN.name
        )
    numbers = tuple(k for k, x in enumerate(operands) if type(x) in NUMBERS)
    arrays = (result, *(x for x in operands if type(x) not in NUMBERS))
    return call_many(RESULT, arrays, pattern, lengths, numbers, None)


#: The public element-wise functions by name (each call on torch tensors is one graph node).
ELEMENTWISE_OPS: dict[str, Callable[..., Any]] = {
    "add": add,
    "subtract": subtract,
    "multiply": multiply,
    "divide": divide,
    "maximum": maximum,
    "minimum": minimum,
    "logaddexp": logaddexp,
    "where": where,
}
