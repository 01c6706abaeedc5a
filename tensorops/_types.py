"""Leaf module: the interface every array-family adapter implements, and the reductions.

An adapter is a small object with the handful of primitives the ops need. The
plans (``tensorops/_plan.py``, ``tensorops/_einsum/``) call these primitives and the
ops run them; only the adapters (``tensorops/_backends/``) import a framework.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol

__all__ = [
    "PLANNERS",
    "REDUCTIONS",
    "Backend",
    "Executor",
    "IndexSpec",
    "Primitives",
    "Reduction",
]

#: What a plan gives the dispatch to run: ``run(x_or_arrays, arg) -> result``, made for
#: one adapter; ``arg`` is what the op passes on (a reduction function, for one).
Executor = Callable[[Any, Any], Any]

#: The einsum strategies: every name the planner takes (``tensorops._einsum.planning._paths``)
#: and ``tops.config`` / ``einsum`` validate.
PLANNERS: tuple[str, ...] = ("auto", "optimal", "dp", "greedy", "hyper", "partition")

#: The reductions every adapter implements by name; anything else is a callable.
#: ``argmax`` / ``argmin`` over several axes give the position in those axes flattened in
#: their order; ``var`` / ``std`` are the population statistics (no degrees-of-freedom
#: correction); ``logsumexp`` is stable for large magnitudes.
REDUCTIONS: tuple[str, ...] = (
    "sum",
    "mean",
    "max",
    "min",
    "prod",
    "any",
    "all",
    "argmax",
    "argmin",
    "logsumexp",
    "var",
    "std",
)

#: A reduction: a name from `REDUCTIONS` or ``f(x, axes) -> array``.
Reduction = str | Callable[[Any, tuple[int, ...]], Any]


class IndexSpec(NamedTuple):
    """One gather or scatter, in the layout the plan brings its arrays to.

    With a batch axis, the array is ``(batch, positions, channels)``, the index
    ``(batch, p)`` and the values and the gathered result ``(batch, p, channels)``;
    without, the array is ``(positions, *rest)``, the index ``(*p)`` and the
    values and the result ``(*p, *rest)``. ``positions`` is the indexed axes merged
    in their order; with several, the index has a last axis of one coordinate per
    indexed axis. ``channels`` is absent when it is None.

    Attributes:
        lengths: the lengths of the indexed axes (one per coordinate).
        batch: the length of the batch axis, or None when there is none.
        channels: the length of the channel axis (with a batch axis), or None.
        index_dtype: the index's dtype (an integer dtype of the family).
        out_of_range: makes the error for an index outside its axis, from the
            coordinate's position and its value, where the family checks.
    """

    lengths: tuple[int, ...]
    batch: int | None
    channels: int | None
    index_dtype: Any
    out_of_range: Callable[[int, Any], Exception]


class Primitives(Protocol):
    """What an adapter must give: its framework's own calls (25 methods, `__hash__` and a name).

    Arrays are typed ``Any``: each family has its own class. Everything else the ops
    call (`Backend`) is derived from these by `tensorops._backends._base.AdapterBase`,
    which every adapter subclasses; an adapter overrides a derived method only where its
    framework's own call is faster or differs, and says so.
    """

    #: short family name used in messages and by ``convert``: "numpy", "torch", "array_api".
    name: str

    def __hash__(self) -> int:
        """Adapters are hashed by identity: plans are cached per adapter."""

    def reshape(self, x: Any, shape: tuple[Any, ...]) -> Any:
        """Reshape; returns a view whenever the framework can.

        A length in `shape` may be a `tensorops._staging.sizes.RunTimeSize`: the adapter
        hands the framework its value (`tensorops._staging.sizes.shape_values`).
        """

    def permute(self, x: Any, axes: tuple[int, ...]) -> Any:
        """Permute the dimensions (a view where the framework supports it)."""

    def expand(self, x: Any, shape: tuple[Any, ...]) -> Any:
        """Broadcast to ``shape`` without copying where possible (read-only view on NumPy)."""

    def stack(self, xs: Sequence[Any]) -> Any:
        """Stack arrays of one shape along a new leading axis."""

    def concat(self, xs: Sequence[Any], axis: int) -> Any:
        """Concatenate along an existing axis."""

    def matmul(self, a: Any, b: Any) -> Any:
        """Batched matrix product (``a @ b``)."""

    def diagonal(self, x: Any, axis1: int, axis2: int) -> Any:
        """Diagonal over two axes of equal length, moved to the last position (NumPy's rule)."""

    def astype(self, x: Any, dtype: Any, casting: str = "unsafe") -> Any:
        """``x`` converted to ``dtype`` (no copy when it already has it, where possible).

        ``casting`` is NumPy's rule for which conversions are allowed; families without
        such a rule convert as they do.
        """

    def result_type(self, xs: Sequence[Any]) -> Any:
        """The dtype the framework promotes the arrays ``xs`` to."""

    def full(self, shape: tuple[Any, ...], value: complex, like: Any) -> Any:
        """A new array of `shape` filled with `value`, of `like`'s dtype and device."""

    def scalar(self, value: complex, like: Any) -> Any:
        """A 0-d array holding the Python number ``value``, on ``like``'s device.

        Its dtype is the framework's for a Python number combined with ``like``
        (NumPy, whose ``einsum`` takes numbers as they are: the number's own dtype).
        """

    def to_numpy(self, x: Any) -> Any:
        """A ``numpy.ndarray`` with the same values (zero-copy where safe)."""

    def reducer(self, reduction: str, axes: tuple[int, ...]) -> Executor:
        """An executor that reduces `axes` (never empty) with one of `REDUCTIONS`.

        argmax / argmin over several axes come from the one-axis call through
        `AdapterBase.arg_reduction`, logsumexp from `AdapterBase.logsumexp`, unless the
        framework's own is faster.
        """

    def elementwiser(self, name: str, numbers: tuple[int, ...]) -> Callable[..., Any]:
        """The framework's element-wise function `name`, called as ``f(*operands)``.

        `name` is one of ``add subtract multiply divide maximum minimum logaddexp where``
        (``where`` takes the condition first); the operands broadcast as the framework
        broadcasts. Those at the positions `numbers` are Python numbers, which it takes
        as the framework's own operators take them (their dtype follows the array's).
        """

    def dtype_kind(self, dtype: Any) -> str:
        """The kind of `dtype`: ``"b"``, ``"i"``, ``"f"``, ``"c"`` or ``"O"``.

        Bool, any integer, real floating, complex, anything else (NumPy's letters,
        unsigned integers counted as ``"i"``).
        """

    def floating(self, x: Any) -> Any:
        """``x`` if it is floating, else converted to the dtype the family's ``exp`` gives it."""

    def shifted_exp(self, x: Any, axis: int | tuple[int, ...]) -> tuple[Any, Any]:
        """``(exp(x - m), m)`` with ``m`` the maximum of ``x`` over `axis`, kept as size 1.

        A maximum that is not finite (a slice all ``-inf``) shifts by 0 instead, so
        that no ``inf - inf`` is taken. Where the family differentiates, ``m`` is a
        constant: the result does not depend on it. No warning on infinities: ``-inf``
        is the log of 0.
        """

    def log(self, x: Any) -> Any:
        """The natural logarithm of positive numbers (the kernels never pass a 0)."""

    def take(self, x: Any, index: Any) -> Any:
        """The elements of ``x`` at the flat (row-major) positions `index`, shaped as it."""

    def arange(self, n: Any, like: Any) -> Any:
        """The integers ``0 .. n - 1`` (the family's index dtype) on `like`'s device."""

    def gatherer(self, spec: IndexSpec) -> Callable[[Any, Any], Any]:
        """``gather(x, index)``: the entries of `x` at the index, in `spec`'s layout.

        The index's positions come from `AdapterBase.positions` unless the family merges
        and checks them in one call of its own.
        """

    def scatterer(self, spec: IndexSpec, accumulate: bool) -> Callable[[Any, Any, Any], Any]:
        """``scatter(x, index, values)``: a new array, `x` with the values written or added.

        Raises:
            BackendError: the family has no scatter (the array API standard defines none).
        """

    def sorter(self, axis: int, descending: bool, indices: bool) -> Executor:
        """An executor: the stable sort along `axis` (`indices`: the argsort, the index dtype)."""

    def cumsummer(self, axis: int) -> Executor:
        """An executor: the cumulative sum along `axis`, of the framework's dtype for it."""

    def roller(self, shifts: tuple[int, ...], axes: tuple[int, ...]) -> Executor:
        """An executor that rolls its array by ``shifts[i]`` along ``axes[i]`` (as numpy.roll)."""


class Backend(Primitives, Protocol):
    """Everything the ops call on an adapter: the `Primitives` and what is derived from them.

    `tensorops._backends._base.AdapterBase` writes each derived method once.
    """

    def known(self, x: Any) -> Any:
        """The values of the (small) array ``x`` as a NumPy array, or None if they are not known.

        A 0-d array may come back as a Python number.

        None while a graph is staged (``jax.jit``, ``tf.function``, ``torch.compile``, a
        PyTensor variable, a static paddle program) and for the families that compute only
        when asked (Dask, tinygrad): a step that would branch on values then takes the
        branch that is right for all of them.
        """

    def shifted_exp_unguarded(self, x: Any, axis: int | tuple[int, ...]) -> tuple[Any, Any]:
        """`shifted_exp` where a maximum that is not finite may be left as it is.

        The exps of such a slice are then ``nan``: a caller that asks for this checks
        the product it makes (a ``nan`` there sends it to the guarded way).
        """

    #: Each pairwise step of a planned einsum as one call of `einsummer` (TensorFlow).
    einsum_pairs: bool

    def sizes(self, x: Any) -> tuple[Any, ...]:
        """``x``'s shape as plans read it: ints, SymInts, and `RunTimeSize`.

        torch.compile's symbolic ints compare; a length known only when a graph runs is a
        `tensorops._staging.sizes.RunTimeSize`.
        """

    def traced(self, shapes: Any) -> bool:
        """Whether `shapes` (one shape, or a tuple of them) is not plain ints.

        Such a call is planned from `sizes` instead, and never cached.
        """

    def inward_lengths(self, given: dict[str, Any]) -> dict[str, Any]:
        """Axis lengths given as the framework's scalars (parse_shape's) as run-time sizes."""

    def outward_size(self, size: Any) -> Any:
        """A size as ``parse_shape`` answers it: an int, or the framework's own scalar."""

    def assert_equal(self, first: Any, second: Any, error: Callable[[], Exception]) -> Any:
        """Place a check that two lengths are equal in the graph being built, if it can."""

    def after(self, checks: Sequence[Any], run: Executor) -> Executor:
        """`run` made to run after the assertions `checks`, where they exist."""

    def reduce(self, x: Any, reduction: str, axes: tuple[int, ...]) -> Any:
        """Reduce ``axes`` (never empty) with one of `REDUCTIONS`; dims are dropped."""

    def permuter(self, axes: tuple[int, ...]) -> Executor:
        """An executor that permutes the dimensions of its array by `axes`."""

    def reshaper(self, shape: tuple[Any, ...]) -> Executor:
        """An executor that reshapes its array to `shape`."""

    def split(self, x: Any, sizes: Sequence[Any], axis: int) -> list[Any]:
        """Split along ``axis`` into consecutive pieces of the given sizes (views)."""

    def flipper(self, axes: tuple[int, ...]) -> Executor:
        """An executor that reverses its array along `axes` (never empty; a view where possible)."""

    def softmaxer(self, axes: tuple[int, ...], log: bool) -> Executor:
        """An executor: the softmax (or log-softmax) over `axes` jointly, shape kept, stable."""

    def einsummer(self, equation: str) -> Callable[..., Any] | None:
        """The framework's own einsum of `equation`, where it beats a planned program.

        `equation` is in compact letters with an explicit output; the result is
        called as ``f(*operands)`` on tiny operands. None where the framework's
        einsum is not faster (the planned program runs). An adapter with
        ``einsum_pairs = True`` (TensorFlow) is also given each pairwise step of a
        planned einsum, two operands, whatever their size.
        """

    def multiply(self, a: Any, b: Any) -> Any:
        """Element-wise product with broadcasting."""

    def maximum(self, a: Any, b: Any) -> Any:
        """The element-wise maximum, with broadcasting."""

    def minimum(self, a: Any, b: Any) -> Any:
        """The element-wise minimum, with broadcasting."""

    def logaddexp(self, a: Any, b: Any) -> Any:
        """``log(exp(a) + exp(b))``, computed stably, with broadcasting."""

    def where(self, condition: Any, a: Any, b: Any) -> Any:
        """``a`` where `condition` holds, else ``b`` (arrays, with broadcasting)."""

    def is_integer(self, dtype: Any) -> bool:
        """Whether `dtype` is an integer dtype (bool is not): what an index may hold."""

    def widened(self, x: Any) -> Any:
        """``x``, or ``x`` in float32 where it is a 16-bit float (float16, bfloat16).

        Log-space sums are computed in float32 at least: float16's exponents span 25 nats.
        """

    def constant(self, value: complex, like: Any) -> Any:
        """A 0-d array holding the Python number ``value``, of ``like``'s dtype and device.

        ``value`` is cast as an array's values are cast to another dtype (the values of
        set_at / add_at).
        """

    def ordered(self, x: Any, order: str) -> Any:
        """``x`` laid out in memory order ``"C"`` or ``"F"`` (NumPy's ``order=``)."""

    def write(self, out: Any, x: Any, casting: str) -> Any:
        """Write ``x`` into the array ``out`` (NumPy's ``out=``) and return ``out``."""
