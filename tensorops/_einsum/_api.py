"""The public ``einsum`` and ``einsum_path``.

``einsum`` is an op of the dispatch (`tensorops._dispatch`): a call with a
cached plan does one ``type(x)`` lookup per operand, one LRU lookup keyed on
(equation, shapes, lengths, settings, notation), then runs the compiled program.
Calls in the other formats its peers take (sublists, a list of operands, numpy's
and opt_einsum's keywords) are read by `tensorops._einsum.equations._arguments` first.
``einsum_path`` plans without running, and never compiles a program.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any

from tensorops._backends import NUMPY_BACKEND, get_backend
from tensorops._config import Settings, check_progress, config
from tensorops._convert import convert
from tensorops._dispatch import Op, call_many
from tensorops._einsum.equations._arguments import (
    OPTIONS,
    array_like,
    operand_list,
    read_keywords,
    read_options,
    split_operands,
    sublist_subscripts,
)
from tensorops._einsum.equations._bind import bind_equation, bind_lettered, bind_unlettered
from tensorops._einsum.equations._concat import einsum_concat, has_concat
from tensorops._einsum.equations._semiring import SEMIRINGS
from tensorops._einsum.planning._optimizer import PathOptimizer
from tensorops._einsum.planning._progress import with_progress
from tensorops._einsum.programs._execute import letter_equation
from tensorops._einsum.programs._program import (
    ContractionPlan,
    EinsumPlan,
    einsum_program,
    plan_einsum,
    plan_einsum_cached,
)
from tensorops._einsum.semirings._run_semiring import semiring_executor
from tensorops._errors import ArgumentError, TensorOpsError, describe_inputs
from tensorops._staging import raise_error
from tensorops._types import Backend, Executor

__all__ = [
    "EINSUM",
    "ContractionPlan",
    "einsum",
    "einsum_path",
    "framework_einsum",
    "optimizer_path",
    "path_shape",
]

# Python numbers numpy.einsum takes as 0-d operands.
_NUMBERS = (int, float, complex)


def _prepare(op: Op, operands: tuple[Any, ...]) -> tuple[Any, ...]:
    """The operands as arrays, Python numbers as 0-d arrays of the others' family.

    Lists are read by `operand_list`; numbers become NumPy arrays when no operand
    is an array.
    """
    operands = operand_list(operands)
    if not any(isinstance(x, _NUMBERS) for x in operands):
        return operands
    like = next((x for x in operands if not isinstance(x, _NUMBERS)), None)
    backend = NUMPY_BACKEND if like is None else get_backend(like)
    return tuple(backend.scalar(x, like) if isinstance(x, _NUMBERS) else x for x in operands)


def _plan(equation: str, shapes: Any, lengths: Any, variant: Any, backend: Backend) -> Executor:
    settings, spaced = variant
    framework = None
    if len(shapes) == 2 and settings.strategy == "auto" and settings.semiring == "sum":
        # A pair is one step, never sliced, whatever the limit (`_paths.plan_contraction`):
        # nothing to search for and nothing to cache but the executor.
        lettered = None if lengths else bind_lettered(equation, shapes, spaced)
        if lettered is None:
            bound = bind_unlettered(equation, shapes, lengths, spaced)
        else:  # the commonest call: read, bound and lettered in one pass
            bound = lettered.bound
            first, second = lettered.inputs
            if _is_tiny(lettered.elements, first, second, lettered.output):
                framework = backend.einsummer(lettered.equation)
        plan = EinsumPlan(bound, ((0, 1),), "auto", ())
        if lettered is None:
            framework = framework_einsum(plan, settings, backend)
    else:
        try:
            plan = plan_einsum_cached(equation, shapes, lengths, spaced, settings)
        except TypeError:  # symbolic sizes under a tracing compiler: the same plan, uncached
            plan = plan_einsum(equation, shapes, lengths, spaced, settings)
        if settings.semiring != "sum":
            return semiring_executor(plan, backend, settings.memory_limit)
        framework = framework_einsum(plan, settings, backend)
    if framework is None:
        return _program_executor(plan, backend)
    programs: list[Executor] = []  # the program, built for the first call that needs it

    def run_tiny(operands: Any, extras: Any) -> Any:
        if extras is None:
            return framework(*operands)
        if not programs:
            programs.append(_program_executor(plan, backend))
        return programs[0](operands, extras)

    return run_tiny


def _program_executor(plan: Any, backend: Backend) -> Executor:
    """The executor of `plan`'s program of primitive calls on `backend`."""
    built = einsum_program(plan)
    run: Executor = functools.partial(built.run, backend)
    if getattr(backend, "einsum_pairs", False):  # each pair one call of the framework's einsum
        run = built.by_einsums(backend, plan.bound.output) or run
    return run


# The largest products of axis sizes that `auto` hands to the framework's own einsum
# (where the adapter offers one) rather than to matrix products: any two operands up to
# the first, and up to the second when the pair is no matrix product (no axis kept from
# each side), where a C loop beats reshape + matmul (benchmarks/einsum.py, "tiny" rows).
_TINY_ANY, _TINY_NO_GEMM = 1024, 4096


def framework_einsum(plan: Any, settings: Settings, backend: Backend) -> Any:
    """The framework's einsum for a tiny pair under ``auto``; None for the planned program."""
    bound = plan.bound
    if (
        settings.strategy != "auto"
        or len(bound.axes) != 2
        or plan.sliced_axes
        or bound.shapes != (None, None)
        or bound.output_dims is not None
    ):
        return None
    elements = 1
    for size in bound.sizes.values():
        # symbolic sizes (torch.compile, torch.export): comparing them adds guards. Not
        # type(size): Dynamo gives int as the type of a symbolic size, SymInt as its class.
        if size.__class__ is not int:
            return None
        elements *= size
    first, second = bound.axes
    if not _is_tiny(elements, first, second, bound.output):
        return None
    equation = letter_equation(bound.axes, bound.output)
    return None if equation is None else backend.einsummer(equation)


def _is_tiny(
    elements: int, first: Iterable[str], second: Iterable[str], output: Iterable[str]
) -> bool:
    """Whether a pair of these axes and `elements` goes to the framework's own einsum."""
    if elements > _TINY_NO_GEMM:
        return False
    if elements <= _TINY_ANY:
        return True
    left, right = set(first), set(second)
    # a matrix product keeps an axis from each side
    return (left - right).isdisjoint(output) or (right - left).isdisjoint(output)


EINSUM = Op("einsum", _plan, "einsum('ij,jk->ik', a, b)", prepare=_prepare)


def einsum(*args: Any, **keywords: Any) -> Any:
    """Evaluate an Einstein summation, planned and run as matrix products.

    Both spellings work, in both argument orders: compact (``"ij,jk->ik"``, every
    letter one axis) and spaced (``"b h i d, b h j d -> b h i j"``, word axis names,
    compositions ``( )`` whose lengths are keywords). Semantics are those of
    ``numpy.einsum``: a repeated axis takes the diagonal, axes missing from the output
    are summed, without ``->`` the output is the axes appearing once in ASCII order,
    ``...`` and size-1 axes broadcast. Mixed dtypes are promoted by the framework's
    rules.

    In spaced notation a group ``(c1 + c2)`` is one axis, its parts joined end to
    end: an operand given as a list of arrays there is their concatenation along
    it, and several output terms split the result along such an axis (see the
    concatenation page of the docs).

    Every calling convention of the peers works: the arrays one by one or as one
    list (``torch.einsum(eq, [a, b])``), nested lists of numbers (NumPy arrays), and
    the sublist format ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` with any hashable
    subscripts (opt_einsum's).

    Args:
        *args: The equation and the arrays, as ``(equation, *arrays)`` (NumPy order)
            or ``(*arrays, equation)`` (einops order, always spaced names), or the
            arrays alone with the equation as the keyword ``pattern=`` (einops'
            name; when an equation is given positionally, ``pattern=`` is the
            length of an axis of that name). The arrays
            are of one family; a Python number is a 0-d operand of that family
            (``",i"`` scales).
        **keywords: A keyword naming an input axis of the equation is that axis's
            length (``h=8`` for ``"b (h d)"``), whatever its name. Otherwise:

            * ``strategy``: ``"auto"``, ``"optimal"``, ``"dp"``, ``"greedy"``,
              ``"hyper"``, or an explicit path (``[(0, 1), (0, 1)]`` or NumPy's
              ``["einsum_path", ...]``); default ``tops.config.strategy``.
            * ``memory_limit``: the most elements an intermediate may have; a size
              in bytes (``"2GB"``, ``"512MiB"``); ``"max_input"``; ``-1`` or None
              for no limit. A contraction that cannot fit otherwise is sliced.
            * ``max_time``: seconds ``"hyper"`` may search; ``minimize``:
              ``"flops"`` or ``"combo"`` (FLOPs plus memory writes).
            * ``progress``: True shows a bar (with ``tqdm`` installed) while a
              long ``hyper`` / ``auto`` search plans and while slices run;
              default ``tops.config.progress`` (False).
            * ``semiring``: what is added and multiplied. ``"sum"`` (the default)
              sums products; ``"logsumexp"`` takes log-values and gives
              ``log sum exp`` of their sums (HMMs, CRFs), computed stably through
              matrix products; ``"max"`` and ``"min"`` give the maximum (Viterbi,
              max-plus) or minimum (shortest paths) of the sums.
            * ``argmax``: with ``semiring="max"`` or ``"min"``, True also returns
              where the optimum is: ``(values, indices)``, ``indices`` a dict from
              each contracted axis to an integer array shaped like the output (the
              first index among ties at each step).
            * NumPy's and opt_einsum's ``optimize`` (False, True, a strategy name,
              a path, ``(strategy, memory_limit)``, a path optimizer object),
              ``out``, ``dtype``, ``casting``, ``order`` (NumPy arrays),
              ``use_blas`` (accepted; tensorops decides per step) and ``backend``
              (the family to compute in; the result comes back in the input's).

    Returns:
        An array of the operands' family (``out`` when given); with ``argmax=True``,
        the pair ``(values, indices)``.

    Raises:
        TensorOpsError: The equation is malformed or does not fit the arrays.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> a, b = np.ones((2, 3)), np.ones((3, 4))
        >>> tops.einsum("ij,jk->ik", a, b).shape
        (2, 4)
        >>> tops.einsum(a, b, "i j, j k -> i k").sum()
        np.float64(24.0)
        >>> tops.einsum(a, b, pattern="i j, j k -> i k").shape
        (2, 4)
        >>> x, w = np.ones((5, 8 * 4)), np.ones((4, 6))
        >>> tops.einsum("b (h d), d e -> b h e", x, w, h=8).shape
        (5, 8, 6)
        >>> tops.einsum("ii", np.eye(3))
        np.float64(3.0)
        >>> tops.einsum(",i->i", 2.0, np.arange(3.0))
        array([0., 2., 4.])
        >>> tops.einsum(a, [0, 1], b, [1, 2], [0, 2]).shape
        (2, 4)
        >>> w1, w2 = np.ones((3, 6)), np.ones((2, 6))  # concatenated: (3 + 2, 6)
        >>> tops.einsum(np.ones((5, 5)), [w1, w2], "b (c1 + c2), (c1 + c2) e -> b e").shape
        (5, 6)

        Other semirings: log-space sums and max-plus, with the maximizing indices.

        >>> logs = np.log(np.array([[0.5, 0.5], [0.1, 0.9]]))
        >>> np.exp(tops.einsum("ij,jk->ik", logs, logs, semiring="logsumexp")).round(2)
        array([[0.3 , 0.7 ],
               [0.14, 0.86]])
        >>> scores = np.array([[1.0, 5.0], [2.0, 0.0]])
        >>> best, where = tops.einsum("ij->i", scores, semiring="max", argmax=True)
        >>> best, where["j"]
        (array([5., 2.]), array([1, 0]))
    """
    try:
        # the common calls, without a function call: equation first or last, no option
        equation = args[0]
        if type(equation) is str:
            operands, spaced = args[1:], None
        else:
            equation, operands, spaced = args[-1], args[:-1], True
            if type(equation) is not str:
                raise TypeError
        if "+" in equation:  # concatenation: `tensorops._einsum.equations._concat`
            raise TypeError
        if keywords:
            lengths, options = read_keywords("einsum", equation, spaced, keywords)
            settings = _semiring_settings(options) if options else config.current()
        else:
            lengths, settings = keywords, config.current()
        variant = (settings, spaced)
    except (IndexError, TypeError, TensorOpsError):
        return _einsum_with_options(args, keywords)
    return call_many(EINSUM, operands, equation, lengths, variant, None)


def _semiring_settings(options: dict[str, Any]) -> Settings:
    """The settings of a call whose one option is ``semiring=``, a valid name.

    Raises:
        TypeError: any other option: the call takes `_einsum_with_options`.
    """
    semiring = options.get("semiring")
    if len(options) != 1 or type(semiring) is not str or semiring not in SEMIRINGS:
        raise TypeError
    current = config.current()
    last = _LAST_SETTINGS.get(semiring)
    if last is None or last[0] is not current:  # made once per semiring and settings
        last = _LAST_SETTINGS[semiring] = (current, Settings(*current[:4], semiring))
    return last[1]


#: Per semiring, the settings in effect when last asked for and the call's settings.
_LAST_SETTINGS: dict[str, tuple[Settings, Settings]] = {}


def _shape(operand: Any) -> tuple[int, ...]:
    return tuple(getattr(operand, "shape", ()))


def _einsum_with_options(args: tuple[Any, ...], keywords: dict[str, Any]) -> Any:
    """Einsum in any calling convention, with any option (see `._arguments`)."""
    if has_concat(args, keywords):
        return einsum_concat(args, keywords, einsum)
    equation: Any = None
    operands: tuple[Any, ...] = ()
    if type(keywords.get("pattern")) is str and not any(type(arg) is str for arg in args):
        # the equation as the keyword pattern=, einops' name for it: the einops order
        keywords = dict(keywords)
        args = (*args, keywords.pop("pattern"))
    lengths = {name: value for name, value in keywords.items() if name not in OPTIONS}
    progress: bool | None = None
    try:
        equation, operands, spaced = split_operands("einsum", args)
        lengths, options = read_keywords("einsum", equation, spaced, keywords)
        if "progress" in options:
            progress = check_progress(options.pop("progress"))
        shapes = [_shape(x) for x in operands]
        settings, extras, family = read_options(options, config.current, shapes, operands)
        settings = optimizer_path(settings, equation, shapes, lengths, spaced)
        source = _family(operands)
        if family not in ("auto", source):
            operands = tuple(convert(x, family) for x in operands)
    except TensorOpsError as error:
        pattern = equation if type(equation) is str else None
        inputs = describe_inputs(operands) if pattern else ()
        raise_error(
            error.with_context(op="einsum", pattern=pattern, inputs=inputs, lengths=lengths)
        )
    variant = (settings, spaced)
    result = with_progress(
        progress, call_many, EINSUM, operands, equation, lengths, variant, extras
    )
    if extras is not None and extras.argmax:
        return _with_indices(result, args, family, source)
    return result if family in ("auto", source) else convert(result, source)


def _with_indices(
    result: tuple[Any, dict[str, Any]], args: tuple[Any, ...], family: str, source: str
) -> tuple[Any, dict[Any, Any]]:
    """``argmax=True``'s (values, indices): named by the caller's subscripts, in its family."""
    values, found = result
    names = sublist_subscripts(args)
    indices: dict[Any, Any] = found
    if names is not None:
        indices = {names[axis]: index for axis, index in found.items()}
    if family in ("auto", source):
        return values, indices
    return convert(values, source), {axis: convert(x, source) for axis, x in indices.items()}


def _family(operands: Sequence[Any]) -> str:
    """The name opt_einsum's ``backend=`` gives the operands' family ("numpy", "torch")."""
    for x in operands:
        if hasattr(x, "shape"):
            name = get_backend(x).name
            return type(x).__module__.split(".")[0] if name == "array_api" else name
    return "numpy"


def optimizer_path(
    settings: Settings,
    equation: str,
    shapes: Sequence[tuple[int, ...]],
    lengths: Any,
    spaced: Any,
) -> Settings:
    """Settings whose strategy is the path an opt_einsum ``PathOptimizer`` object chose."""
    optimizer = settings.strategy
    if isinstance(optimizer, (str, tuple)) or not callable(optimizer):
        return settings
    bound = bind_equation(equation, tuple(shapes), tuple(lengths.items()), spaced)
    if isinstance(optimizer, PathOptimizer):  # its path may slice, within the smaller limit
        limit = settings.memory_limit
        path, limit = optimizer.for_einsum(bound.axes, bound.output, bound.sizes, limit)
        return settings._replace(strategy=tuple(path), memory_limit=limit)
    inputs = [frozenset(axes) for axes in bound.axes]
    output = frozenset(bound.output)
    try:
        path = optimizer(inputs, output, dict(bound.sizes), settings.memory_limit)
    except Exception as error:  # a foreign object: report, don't leak
        raise ArgumentError(f"the path optimizer failed: {type(error).__name__}: {error}") from None
    return settings._replace(strategy=tuple(tuple(step) for step in path))


_INT = frozenset((int,))


def path_shape(operand: Any, shapes: Any) -> tuple[int, ...]:
    """The shape an operand of ``einsum_path`` stands for: a shape tuple, or an array's."""
    if shapes or type(operand) is tuple:
        items = tuple(operand) if isinstance(operand, (tuple, list)) else None
        if items is not None and _INT.issuperset(map(type, items)) and min(items, default=0) >= 0:
            return items
        raise ArgumentError(f"{operand!r} is not a shape (a tuple of lengths >= 0)")
    if isinstance(operand, _NUMBERS):
        return ()
    operand = array_like(operand)
    get_backend(operand)  # not an array: a BackendError naming its type
    return tuple(operand.shape)


def _path_shapes(operands: tuple[Any, ...], shapes: Any) -> tuple[tuple[int, ...], ...]:
    """`path_shape` of every operand; shape tuples alone are checked in one pass."""
    for operand in operands:
        if type(operand) is not tuple:
            break
    else:
        lengths = list(chain.from_iterable(operands))
        # min's default= would cost more than the whole check
        if _INT.issuperset(map(type, lengths)) and (not lengths or min(lengths) >= 0):
            return operands
    return tuple([path_shape(x, shapes) for x in operands])  # says which is not a shape


def einsum_path(*args: Any, **keywords: Any) -> ContractionPlan:
    """Plan an einsum without running it: the path, its FLOPs and a readable table.

    Args:
        *args: The equation and, per operand, an array or a shape tuple, in any of
            the calling conventions of `einsum` (a list is an array, as in
            NumPy).
        **keywords: Axis lengths and the planning options of `einsum`
            (``strategy``, ``optimize``, ``memory_limit``, ``max_time``,
            ``minimize``, ``progress``, ``semiring``: the plan of a log-space or
            max-plus contraction, whose cost model knows its kernels);
            ``shapes=True`` reads every operand as a shape (opt_einsum's
            ``contract_path``).

    Returns:
        A `ContractionPlan`; ``str(plan)`` is a table of the steps.

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
    shown: dict[str, Any] = {}
    try:
        equation, operands, spaced = split_operands("einsum_path", args, arrays=False)
        if not operands:
            raise ArgumentError("einsum_path needs at least one array or shape")
        lengths, options = read_keywords("einsum_path", equation, spaced, keywords)
        shown = lengths
        as_shapes = options.pop("shapes", False)
        progress = options.pop("progress", None)
        progress = None if progress is None else check_progress(progress)
        shapes = _path_shapes(operands, as_shapes)
        settings, _, _ = read_options(options, config.current, shapes, operands)
        settings = optimizer_path(settings, equation, shapes, lengths, spaced)
        items = tuple(lengths.items())
        plan = with_progress(
            progress, plan_einsum_cached, equation, shapes, items, spaced, settings
        )
        return ContractionPlan(plan, shapes)
    except TensorOpsError as error:
        error.with_context(
            op="einsum_path", pattern=equation, inputs=describe_inputs(operands), lengths=shown
        )
        raise_error(error)
