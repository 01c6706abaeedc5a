"""The public ``einsum`` and ``einsum_path``.

A call with a cached plan does one ``type(x)`` lookup, one LRU lookup keyed on
(equation, shapes, strategy, memory_limit, lengths), then the framework calls.
Validation and error context happen only on the slow path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensorops._backends import _BY_TYPE, NUMPY_BACKEND, get_backend
from tensorops._backends._base import Backend
from tensorops._config import config
from tensorops._einsum._execute import promote, run_program
from tensorops._einsum._plan import (
    Compiled,
    ContractionPlan,
    compile_cached,
    compile_einsum,
    describe,
    normalize_path,
)
from tensorops._errors import TensorOpsError, add_context

__all__ = ["ContractionPlan", "einsum", "einsum_path"]

# What a framework raises for input it refuses (e.g. a dtype matmul does not support).
_FRAMEWORK_ERRORS = (ValueError, RuntimeError, TypeError, IndexError, ArithmeticError)


def _split_args(op: str, args: tuple[Any, ...]) -> tuple[str, tuple[Any, ...]]:
    """(equation, operands) from either argument order."""
    if args and isinstance(args[0], str):
        return args[0], args[1:]
    if args and isinstance(args[-1], str):
        return args[-1], args[:-1]
    given = ", ".join(type(arg).__name__ for arg in args[:4]) or "nothing"
    raise TensorOpsError(
        f"the equation must be a str, given first or last; got {given}",
        op=op,
        hint=f"{op}('ij,jk->ik', a, b) (numpy order) or {op}(a, b, 'i j, j k -> i k') "
        "(einops order)",
    )


def _strategy(strategy: Any) -> Any:
    if strategy is None or isinstance(strategy, str):
        return strategy
    if isinstance(strategy, Sequence):
        return normalize_path(strategy)
    raise TensorOpsError(
        f"strategy must be a str or an explicit path, got {type(strategy).__name__}",
        hint="e.g. strategy='optimal' or strategy=[(0, 1), (0, 1)]",
    )


def _plan(
    equation: str,
    shapes: tuple[Any, ...],
    strategy: Any,
    memory_limit: Any,
    lengths: dict[str, Any],
) -> Compiled:
    """Resolve the settings and compile, cached unless a shape is unhashable (SymInt)."""
    settings = config.current()
    strategy = settings.strategy if strategy is None else _strategy(strategy)
    memory_limit = settings.memory_limit if memory_limit is None else memory_limit
    key = (equation, shapes, strategy, memory_limit, tuple(lengths.items()))
    try:
        return compile_cached(*key)
    except TypeError:  # an unhashable (symbolic) shape: the same plan, without the cache
        return compile_einsum(*key)


# Python numbers numpy.einsum takes as 0-d operands.
_NUMBERS = (int, float, complex)


def _lift_numbers(operands: tuple[Any, ...]) -> tuple[Any, ...]:
    """Python numbers as 0-d arrays of the other operands' family (NumPy if there are none)."""
    if not any(isinstance(x, _NUMBERS) for x in operands):
        return operands
    like = next((x for x in operands if not isinstance(x, _NUMBERS)), None)
    backend = NUMPY_BACKEND if like is None else get_backend(like)
    return tuple(backend.scalar(x, like) if isinstance(x, _NUMBERS) else x for x in operands)


def _backend_of(operands: tuple[Any, ...]) -> Backend:
    if not operands:
        raise TensorOpsError("einsum needs at least one array", op="einsum")
    backend = get_backend(operands[0])
    for i, x in enumerate(operands[1:], 1):
        if type(x) is not type(operands[0]) and get_backend(x) is not backend:
            raise TensorOpsError(
                f"operand {i} is a {type(x).__name__}, operand 0 is a "
                f"{type(operands[0]).__name__}: all operands must be of one array family",
                hint="convert them first, e.g. with tops.convert(x, 'torch')",
            )
    return backend


def _run(backend: Backend, operands: Sequence[Any], compiled: Compiled) -> Any:
    if backend.name != "numpy" and len(operands) > 1:
        dtype = operands[0].dtype
        if any(x.dtype != dtype for x in operands):
            operands = promote(backend, operands)
    return run_program(backend, operands, compiled.program)


def _slow(args: tuple[Any, ...], strategy: Any, memory_limit: Any, lengths: dict[str, Any]) -> Any:
    equation: str | None = None
    operands: tuple[Any, ...] = ()
    try:
        equation, operands = _split_args("einsum", args)
        operands = _lift_numbers(operands)
        backend = _backend_of(operands)
        shapes = tuple(tuple(x.shape) for x in operands)
        compiled = _plan(equation, shapes, strategy, memory_limit, lengths)
        return _run(backend, operands, compiled)
    except TensorOpsError as error:
        raise add_context(error, "einsum", equation, operands, lengths) from None
    except _FRAMEWORK_ERRORS as error:
        reason = f"the array library refused a step: {type(error).__name__}: {error}"
        raise add_context(TensorOpsError(reason), "einsum", equation, operands, lengths) from None


def einsum(
    *args: Any, strategy: Any = None, memory_limit: int | None = None, **lengths: int
) -> Any:
    """Evaluate an Einstein summation, planned and run as matrix products.

    Both spellings work, in both argument orders: compact (``"ij,jk->ik"``, every
    letter one axis) and spaced (``"b h i d, b h j d -> b h i j"``, word axis names,
    compositions ``( )`` whose lengths are keywords). Semantics are those of
    ``numpy.einsum``: a repeated axis takes the diagonal, axes missing from the output
    are summed, without ``->`` the output is the axes appearing once in ASCII order,
    ``...`` and size-1 axes broadcast. Mixed dtypes are promoted by the framework's
    rules.

    Args:
        *args: The equation and the arrays, as ``(equation, *arrays)`` (NumPy order)
            or ``(*arrays, equation)`` (einops order). The arrays are of one family;
            a Python number is a 0-d operand of that family (``",i"`` scales).
        strategy: ``"auto"``, ``"optimal"``, ``"dp"``, ``"greedy"``, or an explicit
            path (``[(0, 1), (0, 1)]`` or NumPy's ``["einsum_path", ...]``); None
            uses ``tops.config.strategy``.
        memory_limit: The most elements an intermediate may have; None uses
            ``tops.config.memory_limit`` (no limit by default).
        **lengths: Lengths of composed axes, e.g. ``h=8`` for ``"b (h d)"``.

    Returns:
        An array of the operands' family.

    Raises:
        TensorOpsError: The equation is malformed or does not fit the arrays.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> a, b = np.ones((2, 3)), np.ones((3, 4))
        >>> tops.einsum("ij,jk->ik", a, b).shape
        (2, 4)
        >>> tops.einsum(a, b, "i j, j k -> i k").sum()
        np.float64(24.0)
        >>> x, w = np.ones((5, 8 * 4)), np.ones((4, 6))
        >>> tops.einsum("b (h d), d e -> b h e", x, w, h=8).shape
        (5, 8, 6)
        >>> tops.einsum("ii", np.eye(3))
        np.float64(3.0)
        >>> tops.einsum(",i->i", 2.0, np.arange(3.0))
        array([0., 2., 4.])
    """
    try:
        equation = args[0]
        if type(equation) is str:
            operands = args[1:]
        else:
            equation = args[-1]
            operands = args[:-1]
        backend = _BY_TYPE[type(operands[0])]
        shapes = []
        for x in operands:
            # by family, not type: nn.Parameter weights meet plain Tensor inputs
            if _BY_TYPE[type(x)] is not backend:
                raise TypeError
            shapes.append(x.shape)
        if strategy is None or memory_limit is None:
            settings = config.current()
            if strategy is None:
                strategy = settings.strategy
            if memory_limit is None:
                memory_limit = settings.memory_limit
        items = tuple(lengths.items()) if lengths else ()
        compiled = compile_cached(equation, tuple(shapes), strategy, memory_limit, items)
    except (KeyError, TypeError, IndexError, AttributeError, TensorOpsError):
        return _slow(args, strategy, memory_limit, lengths)
    try:
        return _run(backend, operands, compiled)
    except (TensorOpsError, *_FRAMEWORK_ERRORS):
        return _slow(args, strategy, memory_limit, lengths)


def _as_shape(operand: Any) -> tuple[int, ...] | None:
    if isinstance(operand, (tuple, list)) and all(
        isinstance(n, int) and not isinstance(n, bool) for n in operand
    ):
        return tuple(operand)
    return None


def einsum_path(
    *args: Any, strategy: Any = None, memory_limit: int | None = None, **lengths: int
) -> ContractionPlan:
    """Plan an einsum without running it: the path, its FLOPs and a readable table.

    Args:
        *args: The equation and, per operand, an array or a shape tuple, in either
            argument order (see :func:`einsum`).
        strategy: As for :func:`einsum`.
        memory_limit: As for :func:`einsum`.
        **lengths: Lengths of composed axes.

    Returns:
        A :class:`ContractionPlan`; ``str(plan)`` is a table of the steps.

    Raises:
        TensorOpsError: The equation is malformed or does not fit the shapes.

    Examples:
        >>> import tensorops as tops
        >>> plan = tops.einsum_path("ij,jk,kl->il", (2, 30), (30, 40), (40, 50))
        >>> plan.path, plan.flops, plan.naive_flops
        ([(0, 1), (0, 1)], 12800, 360000)
        >>> print(plan)
          Complete contraction:  ij,jk,kl->il
              Naive FLOP count:  360,000
          Optimized FLOP count:  12,800
           Theoretical speedup:  28.1
          Largest intermediate:  100 elements
                      Strategy:  auto
        step  contraction  FLOPs  result shape  elements
        ----  -----------  -----  ------------  --------
        0     ij,jk->ik    4,800  (2, 40)       80
        1     kl,ik->il    8,000  (2, 50)       100
    """
    equation: str | None = None
    operands: tuple[Any, ...] = ()
    try:
        equation, operands = _split_args("einsum_path", args)
        if not operands:
            raise TensorOpsError("einsum_path needs at least one array or shape")
        shapes = []
        for operand in operands:
            shape = () if isinstance(operand, _NUMBERS) else _as_shape(operand)
            if shape is None:
                get_backend(operand)  # not an array: a BackendError naming its type
                shape = tuple(operand.shape)
            shapes.append(shape)
        compiled = _plan(equation, tuple(shapes), strategy, memory_limit, lengths)
        return describe(compiled, tuple(shapes))
    except TensorOpsError as error:
        raise add_context(error, "einsum_path", equation, operands, lengths) from None
