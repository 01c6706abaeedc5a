"""The public ``einsum`` and ``einsum_path``.

``einsum`` is an op of the dispatch (:mod:`tensorops._dispatch`): a call with a
cached plan does one ``type(x)`` lookup per operand, one LRU lookup keyed on
(equation, shapes, lengths, strategy, memory limit, notation), then runs the
compiled program. ``einsum_path`` plans without running, and never compiles a
program.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from tensorops._backends import NUMPY_BACKEND, get_backend
from tensorops._config import config
from tensorops._dispatch import Op, call_many
from tensorops._einsum._compile import (
    ContractionPlan,
    compile_einsum,
    normalize_path,
    plan_einsum,
    plan_einsum_cached,
)
from tensorops._errors import ArgumentError, TensorOpsError, describe_inputs
from tensorops._tracing import raise_error
from tensorops._types import Backend, Executor

__all__ = ["EINSUM", "ContractionPlan", "einsum", "einsum_path", "einsum_settings"]

# Python numbers numpy.einsum takes as 0-d operands.
_NUMBERS = (int, float, complex)


def _lift_numbers(op: Op, operands: tuple[Any, ...]) -> tuple[Any, ...]:
    """Python numbers as 0-d arrays of the other operands' family (NumPy if there are none)."""
    if not any(isinstance(x, _NUMBERS) for x in operands):
        return operands
    like = next((x for x in operands if not isinstance(x, _NUMBERS)), None)
    backend = NUMPY_BACKEND if like is None else get_backend(like)
    return tuple(backend.scalar(x, like) if isinstance(x, _NUMBERS) else x for x in operands)


def _plan(equation: str, shapes: Any, lengths: Any, variant: Any, backend: Backend) -> Executor:
    strategy, memory_limit, spaced = variant
    try:
        plan = plan_einsum_cached(equation, shapes, lengths, spaced, strategy, memory_limit)
    except TypeError:  # symbolic sizes under a tracing compiler: the same plan, uncached
        plan = plan_einsum(equation, shapes, lengths, spaced, strategy, memory_limit)
    return functools.partial(compile_einsum(plan).run, backend)


EINSUM = Op("einsum", _plan, "einsum('ij,jk->ik', a, b)", prepare=_lift_numbers)


def _split_args(op: str, args: tuple[Any, ...]) -> tuple[str, tuple[Any, ...], bool | None]:
    """(equation, operands, spaced) from either argument order."""
    if args and isinstance(args[0], str):
        return args[0], args[1:], None
    if args and isinstance(args[-1], str):
        return args[-1], args[:-1], True
    given = ", ".join(type(arg).__name__ for arg in args[:4]) or "nothing"
    raise ArgumentError(
        f"the equation must be a str, given first or last; got {given}",
        hint=f"{op}('ij,jk->ik', a, b) (numpy order) or {op}(a, b, 'i j, j k -> i k') "
        "(einops order)",
    )


def einsum_settings(strategy: Any, memory_limit: Any) -> tuple[Any, Any]:
    """The strategy and memory limit in effect: the call's, else ``tops.config``'s."""
    if strategy is None or memory_limit is None:
        settings = config.current()
        if strategy is None:
            strategy = settings.strategy
        if memory_limit is None:
            memory_limit = settings.memory_limit
    if not isinstance(strategy, str):
        if not isinstance(strategy, Sequence):
            raise ArgumentError(
                f"strategy must be a str or an explicit path, got {type(strategy).__name__}",
                hint="e.g. strategy='optimal' or strategy=[(0, 1), (0, 1)]",
            )
        strategy = normalize_path(strategy)
    return strategy, memory_limit


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
            or ``(*arrays, equation)`` (einops order, always spaced names). The arrays
            are of one family; a Python number is a 0-d operand of that family
            (``",i"`` scales).
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
        # the common calls, without a function call: equation first or last, settings
        # from tops.config; anything else is sorted out by _split_args / einsum_settings
        equation = args[0]
        if type(equation) is str:
            operands, spaced = args[1:], None
        else:
            equation, operands, spaced = args[-1], args[:-1], True
            if type(equation) is not str:
                raise TypeError
        if strategy is None and memory_limit is None:
            settings = config.current()
            variant = (settings.strategy, settings.memory_limit, spaced)
        else:
            variant = (*einsum_settings(strategy, memory_limit), spaced)
    except (IndexError, TypeError, TensorOpsError):
        equation, operands, variant = _arguments(args, strategy, memory_limit, lengths)
    return call_many(EINSUM, operands, equation, lengths, variant, None)


def _arguments(
    args: tuple[Any, ...], strategy: Any, memory_limit: Any, lengths: dict[str, Any]
) -> tuple[str, tuple[Any, ...], tuple[Any, ...]]:
    """(equation, operands, plan variant) of any einsum call, or its error with context."""
    try:
        equation, operands, spaced = _split_args("einsum", args)
        return equation, operands, (*einsum_settings(strategy, memory_limit), spaced)
    except TensorOpsError as error:
        raise_error(error.with_context(op="einsum", lengths=lengths))


def _as_shape(operand: Any) -> tuple[int, ...] | None:
    if isinstance(operand, _NUMBERS):
        return ()
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
        equation, operands, spaced = _split_args("einsum_path", args)
        if not operands:
            raise ArgumentError("einsum_path needs at least one array or shape")
        shapes = []
        for operand in operands:
            shape = _as_shape(operand)
            if shape is None:
                get_backend(operand)  # not an array: a BackendError naming its type
                shape = tuple(operand.shape)
            shapes.append(shape)
        settings = einsum_settings(strategy, memory_limit)
        items = tuple(lengths.items())
        plan = plan_einsum_cached(equation, tuple(shapes), items, spaced, *settings)
        return ContractionPlan(plan, tuple(shapes))
    except TensorOpsError as error:
        error.with_context(
            op="einsum_path", pattern=equation, inputs=describe_inputs(operands), lengths=lengths
        )
        raise_error(error)
