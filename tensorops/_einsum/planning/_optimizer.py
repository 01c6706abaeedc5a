"""tensorops' contraction planner for the tensor-network tools: `PathOptimizer`.

opt_einsum, cotengra and quimb each take an ``optimize=`` object with one small
protocol: ``optimizer(inputs, output, size_dict, memory_limit=None)`` returns a
path in the NumPy / opt_einsum convention, and cotengra (which quimb calls) uses
``optimizer.search(inputs, output, size_dict)`` for a ``ContractionTree`` when the
object has one. `PathOptimizer` answers both with the planners of einsum, on any
hashable index labels; `register_presets` adds named presets to the tools'
registries.

tensorops never imports these tools: an optimizer made while opt_einsum is
imported is also an instance of opt_einsum's ``PathOptimizer`` base class (which
opt_einsum's ``contract`` checks for), ``search`` builds the tree with the
cotengra that called it, and `register_presets` registers with each tool now if it
is imported, else right after it is (`tensorops._imports.when_imported`).

Labels are renamed by first appearance (the labels of a set in sorted order, so
that a path never depends on Python's string hashing), so one optimizer plans
networks of the same structure once: paths are kept per optimizer, and in the
plan store when one is active (`tensorops._einsum.planning._store`).
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

from tensorops._config import MINIMIZE
from tensorops._einsum.planning._paths import PlannedPath, plan_contraction
from tensorops._einsum.planning._store import active_store
from tensorops._errors import ArgumentError, ShapeError, unknown_option
from tensorops._imports import when_imported
from tensorops._types import PLANNERS

__all__ = ["PathOptimizer", "register_presets"]

Path = list[tuple[int, ...]]

# Canonical networks: the operands' and output's axis numbers, and the axis sizes.
_Network = tuple[tuple[tuple[str, ...], ...], tuple[str, ...], tuple[int, ...]]

_KEPT = 256  # paths kept per optimizer, least recently used dropped first


class PathOptimizer:
    """tensorops' contraction planner as an ``optimize=`` object for opt_einsum, cotengra and quimb.

    Call it as opt_einsum does, ``optimizer(inputs, output, size_dict,
    memory_limit=None)``, with any hashable index labels, for a path in the NumPy
    / opt_einsum convention; ``search(inputs, output, size_dict)`` gives a cotengra
    ``ContractionTree`` (sliced when ``memory_limit`` asks for it), which cotengra
    and quimb use when they have the object. `tensorops.einsum` takes it as
    ``optimize=`` too. Paths are kept per optimizer (networks of the same
    structure, whatever their labels, are planned once) and in the plan store
    when one is active (``tops.config.plan_store``).

    Args:
        strategy: ``"auto"``, ``"optimal"``, ``"dp"``, ``"greedy"``, ``"hyper"``
            or ``"partition"``, as for `tensorops.einsum`.
        max_time: Seconds ``"hyper"`` may search (None: a fixed amount of work,
            so the path does not depend on the machine's speed).
        minimize: ``"flops"``, or ``"combo"`` for FLOPs plus memory writes.
        memory_limit: The most elements an intermediate may have (None: no
            limit). Called with a limit of its own (opt_einsum's
            ``memory_limit=``), the smaller applies. ``search`` slices axes to
            fit; a call, whose path cannot slice, returns a path within the
            limit where one exists, else one that contracts what cannot be
            paired in a last step, as opt_einsum's optimizers do.
        seed: Seed of the randomness of ``"hyper"`` and ``"partition"`` (None:
            derived from the network).

    Raises:
        TensorOpsError: An unknown strategy or objective, ``max_time`` with
            another strategy than ``"hyper"``, ``seed`` with another than
            ``"hyper"`` or ``"partition"``, or a limit that is no positive integer.

    Examples:
        >>> import tensorops as tops
        >>> opt = tops.PathOptimizer("optimal")
        >>> opt([{"i", "j"}, {"j", "k"}, {"k", "l"}], {"i", "l"},
        ...     {"i": 30, "j": 40, "k": 20, "l": 2})
        [(1, 2), (0, 1)]
        >>> opt
        PathOptimizer('optimal')
    """

    strategy: str
    max_time: float | None
    minimize: str
    memory_limit: int | None
    seed: int | None

    def __new__(cls, *args: Any, **keywords: Any) -> PathOptimizer:
        return object.__new__(_with_tool_base(cls))

    def __init__(
        self,
        strategy: str = "auto",
        *,
        max_time: float | None = None,
        minimize: str = "flops",
        memory_limit: int | None = None,
        seed: int | None = None,
    ) -> None:
        if strategy not in PLANNERS:
            raise unknown_option("path optimizer strategy", strategy, PLANNERS)
        if minimize not in MINIMIZE:
            raise unknown_option("objective", minimize, MINIMIZE)
        if strategy != "hyper" and max_time is not None:
            raise ArgumentError(f"max_time applies to strategy 'hyper' only, not {strategy!r}")
        if strategy not in ("hyper", "partition") and seed is not None:
            raise ArgumentError(
                f"seed applies to strategies 'hyper' and 'partition' only, not {strategy!r}"
            )
        if max_time is not None and (type(max_time) not in (int, float) or not max_time > 0):
            raise ArgumentError(f"max_time={max_time!r} is not a positive number of seconds")
        if seed is not None and type(seed) is not int:
            raise ArgumentError(f"seed={seed!r} is not an integer")
        self.strategy, self.max_time, self.minimize, self.seed = strategy, max_time, minimize, seed
        self.memory_limit = _limit(memory_limit)
        self._kept: OrderedDict[tuple[Any, ...], PlannedPath] = OrderedDict()

    def __call__(
        self,
        inputs: Iterable[Iterable[Hashable]],
        output: Iterable[Hashable],
        size_dict: Mapping[Any, int],
        memory_limit: int | None = None,
        **_: Any,
    ) -> Path:
        """The contraction path, as opt_einsum's ``PathOptimizer`` protocol asks.

        Args:
            inputs: The index labels of each operand (sets, tuples, strings).
            output: The labels of the result.
            size_dict: The size of every label.
            memory_limit: The most elements an intermediate may have, besides the
                optimizer's own limit (the smaller applies); None or -1: none.
            **_: Further keywords a tool passes are accepted and ignored.

        Returns:
            A list of tuples of positions in the current operand list.
        """
        network = _canonical(inputs, output, size_dict)
        limit = _smaller(self.memory_limit, _limit(memory_limit, allow_negative=True))
        return list(self._planned(network, limit, sliced=False).path)

    def search(
        self,
        inputs: Iterable[Iterable[Hashable]],
        output: Iterable[Hashable],
        size_dict: Mapping[Any, int],
        **_: Any,
    ) -> Any:
        """A cotengra ``ContractionTree`` of the planned path, sliced to fit the limit.

        cotengra (and quimb, through it) calls this when handed the optimizer;
        it needs cotengra imported, which is then the case.

        Raises:
            TensorOpsError: cotengra is not imported.
        """
        cotengra = sys.modules.get("cotengra")
        if cotengra is None:
            raise ArgumentError(
                "PathOptimizer.search builds a cotengra ContractionTree: import cotengra first",
                hint="the path itself is what calling the optimizer returns",
            )
        terms = [_term(term) for term in inputs]
        out = _term(output)
        network = _canonical(terms, out, size_dict)
        planned = self._planned(network, self.memory_limit, sliced=True)
        tree = cotengra.ContractionTree.from_path(
            terms, out, dict(size_dict), path=[tuple(step) for step in planned.path]
        )
        labels = _labels(terms, out)
        for axis in planned.sliced_axes:
            tree.remove_ind_(labels[int(axis)])
        return tree

    def for_einsum(
        self,
        inputs: Iterable[Iterable[Hashable]],
        output: Iterable[Hashable],
        sizes: Mapping[Any, int],
        memory_limit: int | None,
    ) -> tuple[Path, int | None]:
        """The path and the memory limit a `tensorops.einsum` given this optimizer runs with.

        Unlike a foreign optimizer's, the path may slice: it is pairwise, and the
        einsum slices it to fit the smaller of the two limits.
        """
        limit = _smaller(self.memory_limit, memory_limit)
        network = _canonical(inputs, output, sizes)
        return list(self._planned(network, limit, sliced=True).path), limit

    def _planned(self, network: _Network, limit: int | None, *, sliced: bool) -> PlannedPath:
        key = (network, limit, sliced)
        kept = self._kept.get(key)
        if kept is not None:
            self._kept.move_to_end(key)
            return kept
        planned = self._plan(network, limit, sliced)
        self._kept[key] = planned
        if len(self._kept) > _KEPT:
            self._kept.popitem(last=False)
        return planned

    def _plan(self, network: _Network, limit: int | None, sliced: bool) -> PlannedPath:
        terms, output, sizes = network
        size_dict = {str(i): size for i, size in enumerate(sizes)}
        settings: tuple[Any, ...] = (self.strategy, limit, self.max_time, self.minimize)
        if self.seed is not None:
            settings += (self.seed,)
        if not sliced:
            settings += ("unsliced",)
        store = active_store() if len(terms) > 2 else None
        stored = None if store is None else store.load(terms, output, size_dict, settings)
        if stored is not None:
            return PlannedPath(tuple(stored[0]), stored[1])
        planned = plan_contraction(
            terms, output, size_dict, self.strategy, limit,
            max_time=self.max_time, minimize=self.minimize, seed=self.seed, slicing=sliced,
        )  # fmt: skip
        if store is not None:
            store.save(terms, output, size_dict, settings, (planned.path, planned.sliced_axes))
        return planned

    def __repr__(self) -> str:
        shown = [repr(self.strategy)]
        for name in ("max_time", "minimize", "memory_limit", "seed"):
            value = getattr(self, name)
            if value != _DEFAULTS[name]:
                shown.append(f"{name}={value!r}")
        return f"PathOptimizer({', '.join(shown)})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PathOptimizer) and self._settings() == other._settings()

    def __hash__(self) -> int:
        return hash(self._settings())

    def _settings(self) -> tuple[Any, ...]:
        return (self.strategy, self.max_time, self.minimize, self.memory_limit, self.seed)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, self._settings())


_DEFAULTS: dict[str, Any] = {"max_time": None, "minimize": "flops", "memory_limit": None}
_DEFAULTS["seed"] = None


def _rebuild(
    strategy: str, max_time: float | None, minimize: str, limit: int | None, seed: int | None
) -> PathOptimizer:
    """A `PathOptimizer` from its settings (unpickling)."""
    return PathOptimizer(
        strategy, max_time=max_time, minimize=minimize, memory_limit=limit, seed=seed
    )


_ADOPTED: dict[tuple[type, type], type] = {}


def _with_tool_base(cls: type) -> type:
    """`cls`, deriving from opt_einsum's ``PathOptimizer`` too when opt_einsum is imported.

    opt_einsum's ``contract`` takes an object for an optimizer only if it is an
    instance of that class, and takes any other object for an explicit path.
    """
    paths = sys.modules.get("opt_einsum.paths")
    base = getattr(paths, "PathOptimizer", None)
    if not isinstance(base, type) or issubclass(cls, base):
        return cls
    made = _ADOPTED.get((cls, base))
    if made is None:
        made = type(cls.__name__, (cls, base), {"__module__": cls.__module__})
        made.__qualname__ = cls.__qualname__
        _ADOPTED[cls, base] = made
    return made


def _limit(value: Any, *, allow_negative: bool = False) -> int | None:
    """A memory limit in elements: a positive int, or None (``-1`` too where allowed)."""
    if value is None:
        return None
    if type(value) is int and value > 0:
        return value
    if allow_negative and type(value) is int and value < 0:
        return None  # opt_einsum's memory_limit=-1: no limit
    raise ArgumentError(
        f"memory_limit={value!r} is not a positive number of elements",
        hint="None means no limit",
    )


def _smaller(first: int | None, second: int | None) -> int | None:
    if first is None or second is None:
        return first if second is None else second
    return min(first, second)


def _term(labels: Iterable[Hashable]) -> tuple[Hashable, ...]:
    """The labels of one operand in a fixed order (a set's sorted; a string's letters)."""
    if isinstance(labels, (set, frozenset)):
        try:
            return tuple(sorted(labels))
        except TypeError:  # labels of several types
            return tuple(sorted(labels, key=lambda label: (type(label).__name__, repr(label))))
    return tuple(labels)


def _labels(terms: list[tuple[Hashable, ...]], output: tuple[Hashable, ...]) -> list[Hashable]:
    """Every label once, by first appearance in the operands then the output."""
    return list(dict.fromkeys(label for term in (*terms, output) for label in term))


def _canonical(
    inputs: Iterable[Iterable[Hashable]],
    output: Iterable[Hashable],
    size_dict: Mapping[Any, int],
) -> _Network:
    """The network with its labels renamed ``"0"``, ``"1"``... by first appearance."""
    try:
        terms = [_term(term) for term in inputs]
        out = _term(output)
        number = {label: str(i) for i, label in enumerate(_labels(terms, out))}
    except TypeError as error:
        raise ArgumentError(f"the indices are not iterables of hashable labels: {error}") from None
    if not terms:
        raise ArgumentError("a contraction needs at least one operand")
    seen = {label for term in terms for label in term}
    for label in out:
        if label not in seen:
            raise ArgumentError(f"the output label {label!r} is in no input")
    sizes = []
    for label in number:
        size = size_dict.get(label) if isinstance(size_dict, Mapping) else None
        if size is None:
            raise ShapeError(f"size_dict has no size for the label {label!r}")
        if not hasattr(size, "__index__") or int(size) < 0:
            raise ShapeError(f"the size of {label!r}, {size!r}, is not an integer >= 0")
        sizes.append(int(size))
    renamed = tuple(tuple(number[label] for label in term) for term in terms)
    return renamed, tuple(number[label] for label in out), tuple(sizes)


#: The presets `register_presets` adds: name -> strategy.
PRESETS: dict[str, str] = {
    "tensorops": "auto",
    "tensorops-optimal": "optimal",
    "tensorops-dp": "dp",
    "tensorops-greedy": "greedy",
    "tensorops-hyper": "hyper",
    "tensorops-partition": "partition",
}


def register_presets() -> tuple[str, ...]:
    """Add tensorops' planners to opt_einsum's and cotengra's preset names.

    After it, ``optimize="tensorops"`` (``"auto"``), ``"tensorops-optimal"``,
    ``"tensorops-dp"``, ``"tensorops-greedy"``, ``"tensorops-hyper"`` and
    ``"tensorops-partition"`` work in
    ``opt_einsum.contract``, in cotengra (``array_contract``, ``einsum``, trees from
    ``"tensorops-hyper"`` sliced where the tool asks) and in quimb, which hands
    ``optimize=`` to cotengra. A tool imported already is registered with now, one
    imported later as soon as it is; tensorops imports neither. Calling it again
    changes nothing.

    Returns:
        The preset names.

    Examples:
        >>> import tensorops as tops
        >>> names = tops.register_presets()
        >>> names[0], names[-1]
        ('tensorops', 'tensorops-partition')
    """
    optimizers = {name: PathOptimizer(strategy) for name, strategy in PRESETS.items()}
    when_imported("opt_einsum", _register_with_opt_einsum(optimizers))
    when_imported("cotengra", _register_with_cotengra(optimizers))
    return tuple(PRESETS)


def _register_with_opt_einsum(optimizers: dict[str, PathOptimizer]) -> Callable[[Any], None]:
    def register(opt_einsum: Any) -> None:
        paths = opt_einsum.paths
        for name, optimizer in optimizers.items():
            try:
                paths.get_path_fn(name)  # registered already (by an earlier call, or not ours)
            except KeyError:
                paths.register_path_fn(name, optimizer)

    return register


def _register_with_cotengra(optimizers: dict[str, PathOptimizer]) -> Callable[[Any], None]:
    def register(cotengra: Any) -> None:
        for name, optimizer in optimizers.items():
            try:
                cotengra.register_preset(
                    name, optimizer, optimizer_tree=optimizer.search, register_opt_einsum=False
                )
            except TypeError:  # cotengra < 0.7 takes no tree function: it asks for paths
                cotengra.register_preset(name, optimizer, register_opt_einsum=False)

    return register
