"""Reusable einsum expressions: plan once, call many times, constants contracted ahead.

`einsum_expression` plans an equation for shapes (opt_einsum's
``contract_expression``) and compiles its program once. Operands named in
``constants=`` are given as arrays: the steps of the program that read only
constants (and what those steps made) run once per array family and device, the
first time the expression is called with arrays of that family on that device, and
their results are kept. A call then runs the remaining steps only.

The split is made on the compiled program (`tensorops._einsum.programs._execute`): a step
whose two slots hold constants or results of constant steps is a constant step. A
sliced plan (a memory limit it could not meet otherwise) runs every step per slice:
its constants are kept converted, not contracted ahead.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from tensorops._axes import product
from tensorops._backends import NUMPY_BACKEND, get_backend
from tensorops._config import Settings, config
from tensorops._convert import convert
from tensorops._einsum._api import framework_einsum, optimizer_path, path_shape
from tensorops._einsum.equations._arguments import (
    Extras,
    array_like,
    read_keywords,
    read_options,
    split_operands,
)
from tensorops._einsum.planning._cost import contraction_steps
from tensorops._einsum.planning._paths import plan_contraction
from tensorops._einsum.programs._execute import (
    Pair,
    Program,
    arrange_output,
    prepare_operand,
    promote,
    promote_slots,
    run_pairs,
)
from tensorops._einsum.programs._program import (
    BuiltProgram,
    ContractionPlan,
    EinsumPlan,
    einsum_program,
    plan_einsum_cached,
)
from tensorops._einsum.semirings._run_semiring import (
    SemiringProgram,
    run_semiring,
    semiring_program,
)
from tensorops._einsum.semirings._semiring_expression import (
    Prepared,
    prepare_constants,
    run_with_constants,
)
from tensorops._errors import ArgumentError, ShapeError, TensorOpsError, describe_inputs
from tensorops._staging import raise_error
from tensorops._types import Backend

__all__ = [
    "EinsumExpression",
    "call_flops",
    "einsum_expression",
    "reorder_constants",
    "split_program",
]

_NUMBERS = (int, float, complex)
# opt_einsum's backend names -> the array namespace's module
_MODULES = {"jax": "jax.numpy", "dask": "dask.array", "cupy": "cupy"}
# Options of einsum that belong to a call of the expression, not to its plan.
_CALL_OPTIONS = ("out", "dtype", "order", "casting", "backend")


class _Split(NamedTuple):
    """A program split into the steps run ahead on constants and the steps of a call."""

    ahead: tuple[Pair, ...]
    rest: tuple[Pair, ...]
    kept: tuple[int, ...]  # slots holding constants (or their products) that a call reads


def split_program(program: Program, constants: frozenset[int]) -> _Split:
    """Which steps of `program` read only `constants` (operand positions) or their products.

    Examples:
        >>> from tensorops._einsum.programs._program import einsum_program, plan_einsum
        >>> from tensorops._config import Settings, config
        >>> shapes = ((64, 3), (3, 64), (64, 3))
        >>> plan = plan_einsum("ij,jk,kl->il", shapes, (), None, config.current())
        >>> plan.path
        ((1, 2), (0, 1))
        >>> program = einsum_program(plan).program
        >>> split = split_program(program, frozenset({1, 2}))
        >>> len(split.ahead), len(split.rest), split.kept
        (1, 1, (3,))
    """
    known = set(constants)
    ahead: list[Pair] = []
    rest: list[Pair] = []
    for pair in program.pairs:
        if pair.left in known and pair.right in known:
            ahead.append(pair)
            known.add(pair.out)
        else:
            rest.append(pair)
    read = {slot for pair in rest for slot in (pair.left, pair.right)}
    read.add(program.final)
    return _Split(tuple(ahead), tuple(rest), tuple(sorted(known & read)))


class EinsumExpression:
    """An einsum planned for fixed shapes, called on arrays many times.

    Made by `einsum_expression`; calling it runs the compiled program on arrays of
    any family the shapes fit. Constants are contracted once per family and device.

    Attributes:
        equation: The equation as given.
        shapes: The shape of every operand, constants included.
        constants: The positions of the constant operands.
        plan: The `ContractionPlan` (path, FLOPs, table of steps).

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> expr = tops.einsum_expression("ij,jk->ik", (2, 3), (3, 4))
        >>> expr(np.ones((2, 3)), np.ones((3, 4))).sum()
        np.float64(24.0)
    """

    __slots__ = (
        "__weakref__",
        "_cache",
        "_compiled",
        "_constants",
        "_runners",
        "_semiring",
        "_singles",
        "_split",
        "_tiny",
        "_variable_shapes",
        "_variables",
        "constants",
        "equation",
        "plan",
    )

    def __init__(
        self,
        equation: str,
        plan: ContractionPlan,
        compiled: BuiltProgram,
        constants: dict[int, Any],
        tiny: Callable[[Backend], Any] | None = None,
        semiring: tuple[SemiringProgram, bool] | None = None,
    ) -> None:
        self.equation = equation
        self._tiny = tiny  # adapter -> the framework's einsum for a tiny pair, or None
        # another semiring's program, and whether calls return the maximizing indices too
        self._semiring = semiring
        # (array type, device) -> the one-product executor of a call with its constants
        self._singles: dict[tuple[Any, Any], Callable[[Sequence[Any], Any], Any]] = {}
        self._runners: dict[Backend, Callable[[Sequence[Any]], Any]] = {}
        self.plan = plan
        self.constants = tuple(sorted(constants))
        self._compiled = compiled
        self._constants = constants
        self._variables = tuple(i for i in range(len(plan.shapes)) if i not in constants)
        self._variable_shapes = tuple(plan.shapes[i] for i in self._variables)
        program = compiled.program
        self._split = None  # with argmax=True every step runs per call: its pointers
        if program is not None and (semiring is None or not semiring[1]):
            self._split = split_program(program, frozenset(constants))
        # (family, device) -> the kept slots' values (or, sliced, the converted constants)
        self._cache: dict[tuple[Any, Any], dict[int, Any] | Prepared] = {}

    @property
    def shapes(self) -> tuple[tuple[int, ...], ...]:
        """The shape of every operand, constants included."""
        return self.plan.shapes

    def __call__(self, *arrays: Any, out: Any = None, backend: Any = "auto") -> Any:
        """Contract `arrays` (the operands that are not constants, in order).

        Args:
            *arrays: One array per operand that is not a constant, of the planned shape.
            out: An array to write the result into (as NumPy's ``out=``).
            backend: The family to compute in (opt_einsum's ``backend=``: ``"torch"``,
                ``"jax"``, ...); the result comes back in the arrays' family.
                ``"auto"`` (or ``"object"``) computes in the arrays' own family.

        Returns:
            The result, an array of the arrays' family (`out` when given).

        Raises:
            TensorOpsError: The wrong number of arrays, or an array of the wrong shape.
        """
        try:
            if self._singles and len(arrays) == 1 and out is None and backend == "auto":
                x = arrays[0]  # an HMM's step: one product with a constant, called often
                run = self._singles.get((type(x), getattr(x, "device", None)))
                if run is not None and x.shape == self._variable_shapes[0]:
                    return run(arrays, None)
            if backend == "auto" and self._fits(arrays):  # the common call, checked briefly
                return self._run(arrays, out)
            operands = self._check(tuple(array_like(x) for x in arrays))
            like = _like(operands, self._constants.values())
            operands = tuple(_scalar(x, like) for x in operands)
            family = _family_name(_backend(like))
            if backend in ("auto", "object", None) or backend == family:
                return self._run(operands, out)
            target = _named_target(backend)
            result = self._run(tuple(convert(x, target) for x in operands), None)
            result = convert(result, _target(_backend(like)))
            return result if out is None else get_backend(out).write(out, result, "unsafe")
        except TensorOpsError as error:
            error.with_context(
                op="einsum_expression", pattern=self.equation, inputs=describe_inputs(arrays)
            )
            raise_error(error)

    def _fits(self, arrays: tuple[Any, ...]) -> bool:
        """Whether `arrays` are arrays (not numbers) of the planned shapes, as many as needed."""
        shapes = self._variable_shapes
        if len(arrays) != len(shapes) or not arrays:
            return False
        for x, shape in zip(arrays, shapes, strict=True):
            if getattr(x, "shape", None) != shape:
                return False
        return True

    def _check(self, operands: tuple[Any, ...]) -> tuple[Any, ...]:
        variables = self._variables
        if len(operands) != len(variables):
            raise ArgumentError(
                f"the expression takes exactly {len(variables)} array(s) (operands "
                f"{list(variables)}), got {len(operands)}",
                hint=f"constants {list(self.constants)} are part of the expression",
            )
        for position, x in zip(variables, operands, strict=True):
            shape = tuple(getattr(x, "shape", ()))
            if shape != self.shapes[position]:
                raise ShapeError(
                    f"operand {position} has shape {shape}; the expression was planned "
                    f"for {self.shapes[position]}"
                )
        return operands

    def _run(self, operands: tuple[Any, ...], out: Any) -> Any:
        like = operands[0] if operands else _like(operands, self._constants.values())
        backend = _backend(like)
        extras = self._extras(out)
        if not self._constants:
            if extras is not None:
                return self._contract(backend, operands, extras)
            run = self._runners.get(backend)
            if run is None:
                run = self._runners[backend] = self._runner(backend)
            return run(operands)
        kept = self._kept(backend, like)
        program, split = self._compiled.program, self._split
        if isinstance(kept, dict) and (program is None or split is None):
            full = dict(kept)
            full.update(zip(self._variables, operands, strict=True))
            return self._contract(backend, [full[i] for i in range(len(full))], extras)
        assert program is not None
        assert split is not None
        if isinstance(kept, Prepared):
            if kept.call is not None:  # one product with a constant: an HMM's step
                if len(operands) == 1:
                    where = (type(operands[0]), getattr(operands[0], "device", None))
                    self._singles[where] = kept.call
                return kept.call(operands, extras)
            assert self._semiring is not None
            variables = dict(zip(self._variables, operands, strict=True))
            return run_with_constants(self._semiring[0], backend, variables, kept, split, extras)
        slots: list[Any] = [None] * (len(self.shapes) + len(program.pairs))
        for position, x in zip(self._variables, operands, strict=True):
            step = program.prepare[position]
            slots[position] = x if step is None else prepare_operand(backend, x, step)
        for slot, value in kept.items():
            slots[slot] = value
        if backend.name != "numpy":
            promote_slots(backend, slots, (*self._variables, *kept))
        run_pairs(backend, slots, split.rest)
        result = arrange_output(backend, slots[program.final], program.perm, program.shape)
        return result if out is None else backend.write(out, result, "unsafe")

    def _extras(self, out: Any) -> Extras | None:
        """What a call asks of its result: ``out=``, the indices of ``argmax=True``."""
        argmax = self._semiring is not None and self._semiring[1]
        return None if out is None and not argmax else Extras(None, None, out, "K", argmax)

    def _contract(self, backend: Backend, operands: Sequence[Any], extras: Extras | None) -> Any:
        """The whole program on every operand (the constants among them)."""
        if self._semiring is None:
            return self._compiled.run(backend, operands, extras)
        return run_semiring(self._semiring[0], backend, operands, extras)

    def _runner(self, backend: Backend) -> Callable[[Sequence[Any]], Any]:
        """What runs a call without constants: the program, or a tiny pair's einsum.

        Under ``auto`` a tiny pair goes to the framework's own einsum, as in `einsum`.
        """
        framework = None if self._tiny is None else self._tiny(backend)
        if framework is not None:
            return lambda operands: framework(*operands)
        return functools.partial(self._contract, backend, extras=None)

    def _kept(self, backend: Backend, like: Any) -> dict[int, Any] | Prepared:
        """The constants' contribution for arrays like `like`, computed on first use."""
        device = getattr(like, "device", None)
        try:
            key: tuple[Any, Any] = (backend, device)
            hash(key)
        except TypeError:
            key = (backend, str(device))
        kept = self._cache.get(key)
        if kept is None:
            kept = self._cache[key] = self._evaluate(backend, like, device)
        return kept

    def _evaluate(self, backend: Backend, like: Any, device: Any) -> dict[int, Any] | Prepared:
        """The constants in `backend`'s family on `device`, contracted as far as they go."""
        target = _target(backend)
        slots: dict[int, Any] = {}
        for position, x in self._constants.items():
            same = get_backend(x) is backend and getattr(x, "device", None) == device
            slots[position] = x if same else convert(x, target, device=_device(backend, device))
        program, split = self._compiled.program, self._split
        if program is None or split is None:
            return slots
        if backend.name != "numpy" and len(slots) > 1:
            slots = dict(zip(slots, promote(backend, list(slots.values())), strict=True))
        if self._semiring is not None:
            return prepare_constants(self._semiring[0], backend, slots, split)
        for position, x in slots.items():
            step = program.prepare[position]
            slots[position] = x if step is None else prepare_operand(backend, x, step)
        if not split.ahead:
            return slots
        everything: list[Any] = [None] * (len(self.shapes) + len(program.pairs))
        for position, x in slots.items():
            everything[position] = x
        run_pairs(backend, everything, split.ahead)
        return {slot: everything[slot] for slot in split.kept}

    @property
    def evaluated_constants(self) -> dict[tuple[str, str], tuple[Any, ...]]:
        """What the constants were contracted to, per (family, device) called so far."""
        return {
            (_family_name(backend), str(device)): tuple(
                (kept.slots if isinstance(kept, Prepared) else kept).values()
            )
            for (backend, device), kept in self._cache.items()
        }

    @property
    def _evaluated_constants(self) -> dict[str, list[Any]]:
        """`evaluated_constants` per family, under the name opt_einsum's expressions use."""
        found: dict[str, list[Any]] = {}
        for (family, _), arrays in self.evaluated_constants.items():
            found.setdefault(family, []).extend(arrays)
        return found

    def __repr__(self) -> str:
        shapes = ", ".join(map(str, self.shapes))
        constants = f", constants={list(self.constants)}" if self.constants else ""
        return f"EinsumExpression({self.equation!r}, {shapes}{constants})"

    def __str__(self) -> str:
        lines = [f"<EinsumExpression({self.equation!r})>"]
        if self.constants:
            lines.append(f"  constants: {list(self.constants)}")
        return "\n".join([*lines, str(self.plan)])


def _like(operands: Iterable[Any], constants: Iterable[Any]) -> Any:
    """The array whose family and device a call computes in (NumPy's for numbers alone)."""
    for x in (*operands, *constants):
        if not isinstance(x, _NUMBERS):
            return x
    return None


def _backend(like: Any) -> Backend:
    return NUMPY_BACKEND if like is None else get_backend(like)


def _scalar(x: Any, like: Any) -> Any:
    """A Python number as a 0-d array of `like`'s family; an array as it is."""
    return _backend(like).scalar(x, like) if isinstance(x, _NUMBERS) else x


def _named_target(name: Any) -> Any:
    """opt_einsum's ``backend=`` name ("torch", "jax", "dask", a module name) for `convert`."""
    if not isinstance(name, str) or name in ("numpy", "torch"):
        return name
    module = _MODULES.get(name, name)
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ArgumentError(
            f"backend {name!r} is not an installed array library",
            hint="backend='numpy', 'torch', 'jax', 'dask' or an array namespace's module name",
        ) from None


def _family_name(backend: Backend) -> str:
    """The name opt_einsum's ``backend=`` gives a family: numpy, torch, jax, dask, ..."""
    namespace = getattr(backend, "namespace", None)
    return backend.name if namespace is None else namespace.split(".")[0]


def _target(backend: Backend) -> Any:
    """What `convert` takes for `backend`'s family."""
    xp = getattr(backend, "xp", None)
    return backend.name if xp is None else xp


def _device(backend: Backend, device: Any) -> Any:
    """The device to put the constants on (None: NumPy, which has one)."""
    return None if backend.name == "numpy" else device


def einsum_expression(
    *args: Any, constants: Iterable[int] = (), constants_first: bool = False, **keywords: Any
) -> EinsumExpression:
    """Plan an einsum once for shapes; call the result on arrays many times.

    tensorops' ``contract_expression`` (opt_einsum): the same arguments, the same
    calls. The path is found and the program of primitive calls compiled here, once;
    a call checks the arrays' shapes and runs the program, without looking up a
    cache. Operands listed in `constants` are given as arrays: every step that reads
    only constants runs once per array family and device, the first time the
    expression is called with arrays of that family on that device, and is reused.

    Args:
        *args: The equation and, per operand, its shape (a tuple) or, for a
            constant, the array itself, in any calling convention of `einsum`
            (``"ij,jk->ik"``, spaced names, the einops order, sublists).
        constants: The positions of the operands given as arrays (a list or set).
        constants_first: Contract the constants among themselves first when that
            makes a call cost fewer FLOPs. Off by default: the path is `einsum`'s,
            so a call computes in the order `einsum` does and gives the same
            floating-point result; another order rounds differently.
        **keywords: Axis lengths and the planning options of `einsum`
            (``strategy``, ``optimize``, ``memory_limit``, ``max_time``,
            ``minimize``; ``use_blas`` is accepted), and ``semiring=`` with
            ``argmax=``: over ``"logsumexp"`` the constants' shifted exps are made
            once too, so that a step on a constant matrix is one matrix product.
            ``out=`` and ``backend=`` are given to the calls.

    Returns:
        An `EinsumExpression`: ``expr(*arrays, out=None, backend="auto")`` takes
        the operands that are not constants, in order (with ``argmax=True`` it
        returns the values and the indices, as `einsum` does).

    Raises:
        TensorOpsError: The equation does not fit the shapes, a constant is not an
            array, or an option belongs to the calls.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> w1, w2 = np.ones((3, 64)), np.ones((64, 3))
        >>> expr = tops.einsum_expression("bi,ij,jk->bk", (64, 3), w1, w2, constants=[1, 2])
        >>> expr
        EinsumExpression('bi,ij,jk->bk', (64, 3), (3, 64), (64, 3), constants=[1, 2])
        >>> expr(np.ones((64, 3))).shape
        (64, 3)
        >>> expr.plan.path  # w1 @ w2 first: done once, then one matmul per call
        [(1, 2), (0, 1)]
        >>> step = tops.einsum_expression(
        ...     "i,ij->j", (2,), np.log([[0.9, 0.1], [0.2, 0.8]]), constants=[1],
        ...     semiring="logsumexp",
        ... )
        >>> np.exp(step(np.log([0.5, 0.5]))).round(2)  # an HMM's forward step
        array([0.55, 0.45])
    """
    equation: Any = None
    operands: tuple[Any, ...] = ()
    lengths: dict[str, Any] = {}
    try:
        equation, operands, spaced = split_operands("einsum_expression", args, arrays=False)
        lengths, options = read_keywords("einsum_expression", equation, spaced, keywords)
        _refuse_call_options(options)
        if type(constants_first) is not bool:
            raise ArgumentError(f"constants_first must be True or False, got {constants_first!r}")
        fixed = _constants(constants, operands)
        shapes = tuple(
            tuple(fixed[i].shape) if i in fixed else path_shape(x, True)
            for i, x in enumerate(operands)
        )
        settings, extras, _ = read_options(options, config.current, shapes, operands)
        settings = optimizer_path(settings, equation, shapes, lengths, spaced)
        plan = plan_einsum_cached(equation, shapes, tuple(lengths.items()), spaced, settings)
        if constants_first:
            plan = reorder_constants(plan, frozenset(fixed), settings)
    except TensorOpsError as error:
        pattern = equation if type(equation) is str else None
        raise_error(
            error.with_context(
                op="einsum_expression",
                pattern=pattern,
                inputs=_described(operands),
                lengths=lengths,
            )
        )
    shown = equation if type(equation) is str else plan.bound.normalized
    semiring, tiny = None, None
    if settings.semiring != "sum":
        run = semiring_program(plan, settings.memory_limit)
        compiled, semiring = run.built, (run, extras is not None and extras.argmax)
    else:
        compiled = einsum_program(plan)
        tiny = None if fixed else functools.partial(framework_einsum, plan, settings)
    return EinsumExpression(shown, ContractionPlan(plan, shapes), compiled, fixed, tiny, semiring)


def call_flops(
    inputs: Sequence[tuple[str, ...]],
    output: tuple[str, ...],
    sizes: dict[str, int],
    path: Sequence[Sequence[int]],
    constants: frozenset[int],
) -> tuple[int, int]:
    """The FLOPs of a call (steps on constants alone are free) and the largest step result."""
    steps = contraction_steps(inputs, output, sizes, path)
    fixed = [i in constants for i in range(len(inputs))]
    flops = 0
    for step in steps:
        ahead = all(fixed[p] for p in step.operands)
        flops += 0 if ahead else step.flops
        for p in sorted(step.operands, reverse=True):
            del fixed[p]
        fixed.append(ahead)
    return flops, max((step.size for step in steps), default=0)


def reorder_constants(
    plan: EinsumPlan, constants: frozenset[int], settings: Settings
) -> EinsumPlan:
    """`plan`, or one contracting the constants among themselves first if calls cost less.

    The constants are planned as a network of their own (its output: their axes that
    an operand or the output still needs), then the operands with its result. That
    plan is taken when its calls cost fewer FLOPs and its largest intermediate is no
    larger than `plan`'s or the largest operand. Plans under a memory limit or along a
    given path are kept as they are.
    """
    inputs, output, sizes = plan.inputs, plan.bound.output, plan.bound.sizes
    strategy = settings.strategy
    if not 2 <= len(constants) < len(inputs) or not isinstance(strategy, str) or plan.sliced_axes:
        return plan
    if settings.memory_limit is not None:
        return plan
    max_time = settings.max_time if strategy == "hyper" else None
    plan_part = functools.partial(
        plan_contraction,
        size_dict=sizes,
        strategy=strategy,
        max_time=max_time,
        minimize=settings.minimize,
    )
    fixed = sorted(constants)
    needed = set(output).union(*(axes for i, axes in enumerate(inputs) if i not in constants))
    folded = tuple(dict.fromkeys(a for i in fixed for a in inputs[i] if a in needed))
    ahead = plan_part([inputs[i] for i in fixed], folded).path
    current, members = list(range(len(inputs))), list(fixed)
    path = []
    for made, entry in enumerate(ahead, len(inputs)):  # as positions in the whole list
        chosen = [members[p] for p in entry]
        path.append(tuple(current.index(ident) for ident in chosen))
        current = [ident for ident in current if ident not in chosen] + [made]
        members = [ident for ident in members if ident not in chosen] + [made]
    rest = [inputs[ident] if ident < len(inputs) else folded for ident in current]
    path += plan_part(rest, output).path
    old = call_flops(inputs, output, sizes, plan.path, constants)
    new = call_flops(inputs, output, sizes, path, constants)
    largest_input = max(product(sizes[a] for a in axes) for axes in inputs)
    if new[0] < old[0] and new[1] <= max(old[1], largest_input):
        return plan._replace(path=tuple(path))
    return plan


def _refuse_call_options(options: dict[str, Any]) -> None:
    given = [name for name in _CALL_OPTIONS if name in options]
    if given:
        raise ArgumentError(
            f"{given[0]}= belongs to the calls of the expression, not to its making",
            hint="expr = tops.einsum_expression(eq, *shapes); expr(*arrays, out=..., backend=...)",
        )


def _constants(constants: Iterable[int], operands: Sequence[Any]) -> dict[int, Any]:
    """Position -> array of each constant operand."""
    if isinstance(constants, (str, bytes)) or not isinstance(constants, Iterable):
        raise ArgumentError(f"constants must be a list of operand positions, got {constants!r}")
    fixed: dict[int, Any] = {}
    for position in constants:
        if type(position) is not int or not 0 <= position < len(operands):
            raise ArgumentError(
                f"constant {position!r} is not an operand position (0 to {len(operands) - 1})"
            )
        x = operands[position]
        if type(x) is not tuple:
            x = array_like(x)
        if not hasattr(x, "shape"):
            raise ArgumentError(
                f"operand {position} is a constant, so it must be an array, got {x!r}",
                hint="shapes are given for the operands that are not constants",
            )
        get_backend(x)  # not an array tensorops knows: a BackendError naming its type
        fixed[position] = x
    return fixed


def _described(operands: Sequence[Any]) -> tuple[str, ...]:
    """One line per operand: an array described, a shape as it was given."""
    return tuple(
        f"shape {x}" if isinstance(x, (tuple, list)) else line
        for x, line in zip(operands, describe_inputs(operands), strict=False)
    )
