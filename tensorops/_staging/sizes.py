"""The one form of a length known only when a graph runs: `RunTimeSize`.

A framework that builds a graph before it has data may not know a length while the
graph is built: TensorFlow's ``None`` dimensions inside ``tf.function`` and Keras,
Paddle's ``-1`` under ``paddle.jit.to_static``, every size while ``torch.jit.trace``
records, PyTensor's unknown lengths, the symbolic dimensions of ``jax.export``. Each
adapter reads such a length as a `RunTimeSize` (`leaf`), and the plans compute with
it as with an int:

* products, quotients, sums and differences of sizes and ints are sizes again, kept as
  a polynomial over the lengths read from the arrays (`leaf`s), so that ``(n * 4) // 4``
  is ``n`` again and a product is one length, not a chain of ops;
* a size is never compared with another: two lengths that a pattern says are equal
  are bound as one by construction (the planner takes one of them), and the framework
  checks them when the graph runs. `same_length` answers only what is certain;
* a quotient assumes that it divides (``(n * 2) // 2``): an input that does not fit
  fails when the graph runs, in the framework's reshape, or in an assertion the
  adapter places where the framework has one;
* nothing about it is an int: ``int(size)``, ``hash(size)`` and ``size == size2``
  between different lengths raise, so a plan from such sizes is never cached and
  never turned into a constant.

An adapter asks for the framework's own value of a size only when it hands it to a
framework call (`value_of`): then, and only then, the arithmetic is emitted into the
graph, once per size. This module imports no framework: a leaf is made from a function
that returns the framework's scalar (``tf.shape(x)[i]``), and the arithmetic on those
scalars is Python's operators, which every framework overloads.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from fractions import Fraction
from typing import Any, NoReturn

from tensorops._errors import ShapeError, TensorOpsError

__all__ = [
    "Pending",
    "RunTimeSize",
    "deferred_checks",
    "is_run_time",
    "known_as",
    "known_length",
    "leaf",
    "mode_of",
    "require_equal",
    "same_length",
    "same_shape",
    "shape_values",
    "value_of",
]

#: A monomial: the leaves with their exponents, sorted by the leaves' numbers.
_Monomial = tuple[tuple["_Leaf", int], ...]
#: A polynomial: each monomial with its (rational) coefficient; the empty monomial is
#: the constant term.
_Polynomial = dict[_Monomial, Fraction]


class _Leaf:
    """A length read from an array: the framework's scalar, made when first asked for."""

    __slots__ = ("label", "make", "mode", "number", "value")
    _count = 0

    def __init__(self, make: Callable[[], Any], label: str, mode: str) -> None:
        _Leaf._count += 1
        self.number = _Leaf._count  # orders the monomials (leaves have no other order)
        self.make: Callable[[], Any] | None = make
        self.value: Any = None
        self.label = label
        self.mode = mode

    def get(self) -> Any:
        if self.make is not None:
            self.value, self.make = self.make(), None
        return self.value

    def __lt__(self, other: _Leaf) -> bool:
        return self.number < other.number


class RunTimeSize:
    """A length known only when the graph runs, as a polynomial over lengths read from arrays.

    Made by an adapter with `leaf`; the plans multiply, divide, add and subtract it with
    ints and with other sizes. It cannot be hashed, compared with a different length,
    or read as an int: see the module's docstring.

    Examples:
        >>> n = leaf(lambda: "the framework's scalar", "n")
        >>> (n * 4) // 4 == n
        True
        >>> n * 3, n * 3 // 2, n + 1
        (3*n, 3/2*n, n + 1)
        >>> known_length(n // n), same_length(n, n + 1)
        (1, False)
    """

    __slots__ = ("_build", "_terms", "_value")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, terms: _Polynomial, build: Callable[[], Any] | None = None) -> None:
        self._terms = terms
        #: how the framework's value is computed: the operation that made this size, on
        #: its operands' values (each computed once), so that a graph reuses them
        self._build = build
        self._value: Any = None

    # -- arithmetic: sizes and ints ---------------------------------------------------

    def __mul__(self, other: Any) -> Any:
        return _made(_times(self._terms, _polynomial(other)), operator.mul, self, other)

    def __rmul__(self, other: Any) -> Any:
        return _made(_times(_polynomial(other), self._terms), operator.mul, other, self)

    def __floordiv__(self, other: Any) -> Any:
        return _made(_divided(self._terms, _polynomial(other)), operator.floordiv, self, other)

    def __rfloordiv__(self, other: Any) -> Any:
        return _made(_divided(_polynomial(other), self._terms), operator.floordiv, other, self)

    def __add__(self, other: Any) -> Any:
        return _made(_plus(self._terms, _polynomial(other), 1), operator.add, self, other)

    def __radd__(self, other: Any) -> Any:
        return _made(_plus(_polynomial(other), self._terms, 1), operator.add, other, self)

    def __sub__(self, other: Any) -> Any:
        return _made(_plus(self._terms, _polynomial(other), -1), operator.sub, self, other)

    def __rsub__(self, other: Any) -> Any:
        return _made(_plus(_polynomial(other), self._terms, -1), operator.sub, other, self)

    def __neg__(self) -> Any:
        return 0 - self

    def __mod__(self, other: Any) -> int:
        # a remainder is asked for only to check that a length divides: assumed, and
        # checked by the framework when the graph runs (see the module's docstring)
        return 0

    # -- what a length known later cannot answer now ---------------------------------

    def __eq__(self, other: object) -> bool:
        if type(other) is not RunTimeSize and (
            not isinstance(other, int) or isinstance(other, bool)
        ):
            return NotImplemented
        same = same_length(self, other)
        if same is None:
            _undecidable(self, other, "==")
        return same

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __lt__(self, other: object) -> NoReturn:
        _undecidable(self, other, "<")

    __le__ = __gt__ = __ge__ = __lt__

    def __bool__(self) -> bool:
        return True  # a length is assumed not to be 0 (an empty graph input is not planned)

    def __index__(self) -> NoReturn:
        raise ShapeError(
            f"this step needs the length {self!r} as a number, but it is known only when "
            f"the graph runs ({_mode(self._terms)})",
            hint="give the input that length in its static shape (an input signature, "
            "InputSpec or static shape with that length)",
        )

    __int__ = __index__

    def __repr__(self) -> str:
        return _show(self._terms)


def leaf(
    make: Callable[[], Any], label: str = "?", mode: str = "a graph being built"
) -> RunTimeSize:
    """A length read from an array, as an adapter reads an unknown dimension.

    Args:
        make: returns the framework's scalar for the length (``tf.shape(x)[i]``); called
            once, the first time an adapter needs the value (`value_of`).
        label: how the length prints in messages and in `repr`.
        mode: what builds the graph, for messages (``"inside tf.function"``).

    Examples:
        >>> n = leaf(lambda: 7, "batch")
        >>> n, value_of(n * 2)
        (batch, 14)
    """
    return RunTimeSize({((_Leaf(make, label, mode), 1),): Fraction(1)})


def is_run_time(size: Any) -> bool:
    """Whether `size` is a `RunTimeSize`."""
    return type(size) is RunTimeSize


def known_length(size: Any) -> Any:
    """`size` as an int where it is one (a run-time size that cancelled out too), else None.

    Examples:
        >>> n = leaf(lambda: 5)
        >>> known_length(3), known_length(n), known_length(n * 2 // n)
        (3, None, 2)
    """
    if type(size) is not RunTimeSize:
        return size
    return None


def known_as(size: Any, value: int) -> bool:
    """Whether `size` is certainly `value`: a run-time size is certainly no number.

    Examples:
        >>> known_as(1, 1), known_as(leaf(lambda: 1), 1)
        (True, False)
    """
    return type(size) is not RunTimeSize and size == value


def same_length(first: Any, second: Any) -> bool | None:
    """Whether two lengths are equal: True or False where certain, None where not.

    Two sizes made of the same leaves in the same way are equal; sizes of different
    leaves may be equal when the graph runs, so the answer is None. A run-time size
    is never certainly different from an int, nor certainly equal to one.

    Examples:
        >>> n, m = leaf(lambda: 2), leaf(lambda: 2)
        >>> same_length(n * 2, 2 * n), same_length(n, m), same_length(3, 4)
        (True, None, False)
    """
    if type(first) is not RunTimeSize and type(second) is not RunTimeSize:
        # a branch, not bool(): Dynamo keeps bool() of a symbolic length's comparison
        # symbolic, and `same is False` of it would never hold (a branch guards on it)
        return True if first == second else False  # noqa: SIM210
    difference = _plus(_polynomial(first), _polynomial(second), -1)
    if not difference:
        return True
    if all(not monomial for monomial in difference):  # differ by a constant
        return False
    return None


def same_shape(first: Sequence[Any], second: Sequence[Any]) -> bool:
    """Whether two shapes are certainly equal (`same_length` of each length is True)."""
    return len(first) == len(second) and all(
        a is b or same_length(a, b) is True for a, b in zip(first, second, strict=True)
    )


#: A check left to the graph: two lengths that must be equal, and the error if they are not.
Pending = tuple[Any, Any, Callable[[], TensorOpsError]]
_PENDING: ContextVar[list[Pending] | None] = ContextVar("tensorops_pending_checks", default=None)


def require_equal(first: Any, second: Any, error: Callable[[], TensorOpsError]) -> None:
    """Check that two lengths are equal: now where it is certain, else when the graph runs.

    Raises ``error()`` when they certainly differ. When only the graph can tell (a
    run-time size), the check is kept for the adapter to place in the graph, where a
    `deferred_checks` block collects them (the dispatch's); without one, the framework
    checks the lengths when it runs the steps.
    """
    same = same_length(first, second)
    if same is False:
        raise error()
    if same is None:
        pending = _PENDING.get()
        if pending is not None:
            pending.append((first, second, error))


@contextmanager
def deferred_checks() -> Iterator[list[Pending]]:
    """Collect the checks `require_equal` leaves to the graph while a plan is made."""
    pending: list[Pending] = []
    token = _PENDING.set(pending)
    try:
        yield pending
    finally:
        _PENDING.reset(token)


def mode_of(size: RunTimeSize) -> str:
    """What builds the graph a run-time size was read in, for messages ("inside tf.function")."""
    return _mode(size._terms)


def value_of(size: Any) -> Any:
    """The framework's value of a length: an int as it is, a `RunTimeSize` computed.

    The computation is made once per size, when an adapter first hands it to a
    framework call: the operation that made the size, on its operands' values (each
    computed once too), so that ``h * w`` multiplies the values of ``h`` and ``w``.
    """
    if type(size) is not RunTimeSize:
        return size
    if size._value is None:
        size._value = size._build() if size._build is not None else _compute(size._terms)
    return size._value


def shape_values(shape: Sequence[Any]) -> tuple[Any, ...]:
    """A shape as the framework takes it: each length an int or the framework's scalar."""
    for n in shape:  # a loop, not a generator: most shapes hold no RunTimeSize (every call)
        if type(n) is RunTimeSize:
            return tuple([value_of(n) for n in shape])
    return shape if type(shape) is tuple else tuple(shape)


# -- the polynomials --------------------------------------------------------------------


def _polynomial(value: Any) -> _Polynomial:
    if type(value) is RunTimeSize:
        return value._terms
    if isinstance(value, int) and not isinstance(value, bool):
        return {(): Fraction(value)} if value else {}
    raise TypeError(f"cannot compute a length with {type(value).__name__} {value!r}")


def _made(terms: _Polynomial, operation: Callable[[Any, Any], Any], *operands: Any) -> Any:
    """The result of `operation` on `operands`, as simple as it is.

    An int where it is a constant integer, an operand where it is that operand again
    (``(n * 4) // 4`` is ``n``), else a new size computed by the operation on the
    operands' values.
    """
    if not terms:
        return 0
    if len(terms) == 1 and () in terms and terms[()].denominator == 1:
        return int(terms[()])
    for operand in operands:
        if type(operand) is RunTimeSize and operand._terms == terms:
            return operand
    first, second = operands
    return RunTimeSize(terms, lambda: _operate(operation, first, second))


def _operate(operation: Callable[[Any, Any], Any], first: Any, second: Any) -> Any:
    """`operation` on the values of two lengths, without an op where one of them is neutral."""
    a, b = value_of(first), value_of(second)
    if (operation is operator.mul and _is_int(a, 1)) or (
        operation is operator.add and _is_int(a, 0)
    ):
        return b
    if operation in (operator.mul, operator.floordiv) and _is_int(b, 1):
        return a
    if operation in (operator.add, operator.sub) and _is_int(b, 0):
        return a
    return operation(a, b)


def _plus(first: _Polynomial, second: _Polynomial, sign: int) -> _Polynomial:
    total = dict(first)
    for monomial, coefficient in second.items():
        value = total.get(monomial, Fraction(0)) + sign * coefficient
        if value:
            total[monomial] = value
        else:
            total.pop(monomial, None)
    return total


def _merge(first: _Monomial, second: _Monomial, sign: int) -> _Monomial:
    powers = dict(first)
    for atom, power in second:
        powers[atom] = powers.get(atom, 0) + sign * power
    return tuple(sorted((atom, p) for atom, p in powers.items() if p))


def _times(first: _Polynomial, second: _Polynomial) -> _Polynomial:
    total: _Polynomial = {}
    for m1, c1 in first.items():
        for m2, c2 in second.items():
            total = _plus(total, {_merge(m1, m2, 1): c1 * c2}, 1)
    return total


def _divided(first: _Polynomial, second: _Polynomial) -> _Polynomial:
    """`first // second`, exact by assumption (the module's docstring)."""
    if not second:
        raise ZeroDivisionError("a length divided by 0")
    if len(second) == 1:  # a monomial: its inverse multiplies
        ((monomial, coefficient),) = second.items()
        inverse = tuple((atom, -power) for atom, power in monomial)
        return _times(first, {inverse: 1 / coefficient})
    # a sum in the divisor: the quotient is a length of its own
    quotient = _Leaf(lambda: _compute(first) // _compute(second), "?", _mode(first))
    return {((quotient, 1),): Fraction(1)}


def _compute(terms: _Polynomial) -> Any:
    """The framework's value of a polynomial: its monomials computed and added."""
    total: Any = 0
    for monomial, coefficient in sorted(terms.items()):
        above: Any = coefficient.numerator
        below: Any = coefficient.denominator
        for atom, power in monomial:
            for _ in range(abs(power)):
                if power > 0:
                    above = atom.get() if _is_int(above, 1) else above * atom.get()
                else:
                    below = atom.get() if _is_int(below, 1) else below * atom.get()
        term = above if _is_int(below, 1) else above // below
        total = term if _is_int(total, 0) else total + term
    return total


def _is_int(value: Any, number: int) -> bool:
    """Whether `value` is the Python int `number` (not a framework's scalar: no comparison)."""
    return type(value) is int and value == number


def _show(terms: _Polynomial) -> str:
    parts = []
    for monomial, coefficient in terms.items():
        names = [atom.label if power == 1 else f"{atom.label}^{power}" for atom, power in monomial]
        if coefficient != 1 or not names:
            names.insert(0, str(coefficient))
        parts.append("*".join(names))
    return " + ".join(parts)


def _mode(terms: _Polynomial) -> str:
    """What builds the graph the leaves of `terms` were read in."""
    return next((atom.mode for monomial in terms for atom, _ in monomial), "a graph being built")


def _undecidable(size: RunTimeSize, other: object, operator: str) -> NoReturn:
    raise ShapeError(
        f"cannot compare the length {size!r} with {other!r} ({operator}): it is known only "
        f"when the graph runs ({_mode(size._terms)})",
        hint="give the input that length in its static shape",
    )
