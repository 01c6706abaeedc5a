"""Paddle's kernels as the Paddle adapter calls them: dtypes, numerics, reductions, indexes.

Paddle's kernels refuse or get wrong what NumPy takes in a few places; each is handled
here, where the call is made, with the reason beside it:

* no type promotion between integer dtypes or between integers and floats (`promote`),
* no CPU kernel for many ops on float16, bfloat16, int8, uint8 and int16 (`widening`),
* no max / min / sort / cumsum of bools, a mean or variance of integers that truncates
  (refused, as torch refuses it), amax's gradient over several axes,
* exp, logsumexp, logaddexp, softmax and log_softmax inexact at infinities (`exp`,
  `logsumexp`, `logaddexp`).

Only ``tensorops._backends._paddle`` imports this module; it imports paddle.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import paddle

from tensorops._backends._base import reduced_last
from tensorops._errors import BackendError, dtype_name

__all__ = [
    "BOOL",
    "COMPLEX",
    "DIRECT",
    "ELEMENTWISE",
    "EMPTY",
    "FLOATS",
    "FROM_NUMPY",
    "INDEX_DTYPES",
    "INTEGERS",
    "ONE_AXIS",
    "OPERATORS",
    "REDUCERS",
    "TENSORS",
    "VALUE",
    "WIDENED",
    "place_of",
    "exact_exp",
    "first_line",
    "floating",
    "kind_rank",
    "logaddexp",
    "promote",
    "with_promotion",
    "max_shift",
    "broadcast_where",
    "dtype_kind",
    "eager_or",
    "widening",
    "widening_results",
]

_F = TypeVar("_F", bound=Callable[..., Any])

#: A tensor of a static program: what ``to_static`` functions see (PIR, paddle >= 3.0).
VALUE = paddle.pir.Value
#: What the adapter takes: eager tensors (parameters subclass them) and static values.
TENSORS = (paddle.Tensor, VALUE)

BOOL = paddle.bool
INTEGERS = tuple(
    getattr(paddle, name)
    for name in ("uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64")
    if hasattr(paddle, name)
)
_FLOAT8 = tuple(
    getattr(paddle, name) for name in ("float8_e4m3fn", "float8_e5m2") if hasattr(paddle, name)
)
FLOATS = (paddle.float16, paddle.bfloat16, paddle.float32, paddle.float64, *_FLOAT8)
COMPLEX = (paddle.complex64, paddle.complex128)
#: dtypes NumPy cannot hold, widened on the way to NumPy (paddle writes bfloat16 as uint16).
WIDENED = (paddle.bfloat16, *_FLOAT8)
#: paddle's dtype of each NumPy dtype it holds. Not uint16: paddle reads a NumPy uint16
#: array as bfloat16 (the storage it uses for it), through DLPack and ``to_tensor`` alike.
FROM_NUMPY: dict[np.dtype[Any], Any] = {
    np.dtype(name): getattr(paddle, name)
    for name in (
        "bool",
        "uint8",
        "int8",
        "int16",
        "int32",
        "int64",
        "float16",
        "float32",
        "float64",
        "complex64",
        "complex128",
    )
}
_TO_NUMPY = {dtype: numpy for numpy, dtype in FROM_NUMPY.items()}


#: dtype object -> (the object, its kind letter), for the dtypes seen (`dtype_kind`).
_KINDS: dict[int, tuple[Any, str]] = {}


def dtype_kind(dtype: Any) -> str:
    """NumPy's kind letter of a paddle dtype: "b", "i", "f", "c" ("O" for any other).

    A paddle dtype compares slowly (~0.7 us an ``==``, so several for a tuple's ``in``);
    the answer for each dtype object seen is kept, keyed by identity, with the object
    itself so that its id cannot be reused while the entry stands.

    Examples:
        >>> import paddle
        >>> dtype_kind(paddle.int8), dtype_kind(paddle.bfloat16), dtype_kind(paddle.bool)
        ('i', 'f', 'b')
    """
    seen = _KINDS.get(id(dtype))
    if seen is not None and seen[0] is dtype:
        return seen[1]
    if dtype == BOOL:
        kind = "b"
    elif dtype in INTEGERS:
        kind = "i"
    else:
        kind = "f" if dtype in FLOATS else "c" if dtype in COMPLEX else "O"
    if len(_KINDS) < 64:  # paddle's dtypes are a handful of objects: a bound, not a limit
        _KINDS[id(dtype)] = (dtype, kind)
    return kind


def _direct_ops() -> dict[str, Callable[[Any, list[int]], Any]]:
    """Paddle's C++ ops that its Python functions end in, each as ``f(x, ints)``.

    `paddle.transpose`, `paddle.reshape` and `paddle.mean` check their arguments in
    Python first, `paddle.sum` and `paddle.amax` parse keywords (1-8 us a call), and a
    plan's arguments are valid lists of ints. ``paddle._C_ops`` is private: found by a
    feature check, an op it lacks is left out, and `eager_or` then takes the public
    function, as it does for every static value (to_static).
    """
    ops = getattr(paddle, "_C_ops", None)
    found: dict[str, Callable[[Any, list[int]], Any]] = {}
    for name in ("transpose", "reshape", "expand"):  # f(x, ints) already
        if callable(op := getattr(ops, name, None)):
            found[name] = op
    if callable(total := getattr(ops, "sum", None)):  # sum(x, axes, dtype, keepdim)
        found["sum"] = lambda x, axes: total(x, axes, None, False)
    for name in ("mean", "amax", "amin"):  # f(x, axes, keepdim)
        if callable(op := getattr(ops, name, None)):
            found[name] = functools.partial(_reduced, op)
    return found


def _reduced(op: Callable[..., Any], x: Any, axes: list[int]) -> Any:
    return op(x, axes, False)


#: The C++ ops `eager_or` calls for eager tensors, by the name of paddle's function.
DIRECT = _direct_ops()


def eager_or(name: str, public: Callable[[Any, list[int]], Any]) -> Callable[..., Any]:
    """`public`, or for a plain eager tensor its C++ op (`DIRECT`) without the checks.

    Examples:
        >>> import paddle
        >>> transpose = eager_or("transpose", paddle.transpose)
        >>> transpose(paddle.zeros([2, 3]), [1, 0]).shape
        paddle.Size([3, 2])
        >>> eager_or("no such op", paddle.transpose) is paddle.transpose
        True
    """
    direct = DIRECT.get(name)
    if direct is None:
        return public
    eager = paddle.Tensor

    def call(x: Any, sizes: list[int]) -> Any:
        return direct(x, sizes) if x.__class__ is eager else public(x, sizes)

    return call


_KIND_RANKS = {"b": 0, "i": 1, "c": 3}


def kind_rank(dtype: Any) -> int:
    """0 bool, 1 integer, 2 real floating, 3 complex: the order numbers promote in."""
    return _KIND_RANKS.get(dtype_kind(dtype), 2)


def promote(a: Any, b: Any) -> Any:
    """The dtype two paddle dtypes combine to.

    Paddle promotes floating dtypes alone (and refuses ``int32 + int64``); tensorops
    promotes the rest as torch and the array API standard do: within a kind NumPy's rule
    (the narrowest dtype that holds both), across kinds the higher kind's dtype
    (``int32`` with ``float32`` is ``float32``), a complex with ``float64`` is
    ``complex128``.

    Examples:
        >>> import paddle
        >>> print(promote(paddle.int32, paddle.int64), promote(paddle.int64, paddle.float16))
        paddle.int64 paddle.float16
    """
    if a == b:
        return a
    kind_a, kind_b = kind_rank(a), kind_rank(b)
    if kind_a != kind_b:
        high, low = (a, b) if kind_a > kind_b else (b, a)
        if high == paddle.complex64 and low == paddle.float64:
            return paddle.complex128
        return high
    if a in _TO_NUMPY and b in _TO_NUMPY:
        return FROM_NUMPY[np.promote_types(_TO_NUMPY[a], _TO_NUMPY[b])]
    # bfloat16 and float8 (no NumPy dtype): the wider float; two of 16 bits meet in float32
    order = {paddle.float16: 16, paddle.bfloat16: 16, paddle.float32: 32, paddle.float64: 64}
    bits_a, bits_b = order.get(a, 8), order.get(b, 8)
    if bits_a == bits_b:
        return paddle.float32 if bits_a == 16 else paddle.float16
    return a if bits_a > bits_b else b


def _is_floating(dtype: Any) -> bool:
    return dtype_kind(dtype) in "fc"


def floating(x: Any) -> Any:
    """``x``, or ``x`` in the default float dtype (what paddle.exp gives an integer tensor)."""
    return x if _is_floating(x.dtype) else x.astype(paddle.get_default_dtype())


def place_of(like: Any) -> Any:
    """Where arrays made beside `like` go: its place, or None in a static program."""
    return like.place if isinstance(like, paddle.Tensor) else None


def _any_all(name: str) -> Callable[[Any, list[int]], Any]:
    return lambda x, axes: getattr(paddle, name)(x, axis=axes)


def _last_flattened(x: Any, axes: list[int]) -> Any:
    """``x`` with `axes` moved last, in their order, and merged into one."""
    perm, start = reduced_last(tuple(x.shape), tuple(axes))
    if perm is not None:
        x = paddle.transpose(x, list(perm))
    return paddle.flatten(x, start, -1)


def _extreme(name: str, of_bools: str) -> Callable[[Any, list[int]], Any]:
    """The max or min; of bools (no paddle kernel) it is any / all, as in NumPy.

    Over several axes of a tensor that needs a gradient, they are merged into one first
    (a copy): paddle's gradient of amax / amin over several axes of a tensor of rank 5 is
    wrong (paddle 3.3: zeros or garbage). Its values are right, so without a gradient the
    reduction is paddle's own.
    """
    public, bools = getattr(paddle, name), getattr(paddle, of_bools)
    function = eager_or(name, lambda x, axes: public(x, axis=axes))

    def extreme(x: Any, axes: list[int]) -> Any:
        if dtype_kind(x.dtype) == "b":
            return bools(x, axis=axes)
        if len(axes) > 1 and not x.stop_gradient:
            return function(_last_flattened(x, axes), [-1])
        return function(x, axes)

    return extreme


def _floats_only(name: str, function: Callable[[Any, list[int]], Any]) -> Any:
    """A reduction paddle truncates for integers: refused for them, as torch refuses it."""

    def reduce(x: Any, axes: list[int]) -> Any:
        if not _is_floating(x.dtype):
            raise BackendError(
                f"{name} of an integer tensor is not defined in paddle (dtype "
                f"{dtype_name(x.dtype)}): paddle.{name} truncates it; convert to float first",
                hint="call x.astype('float32') before reducing, or use 'sum'",
            )
        return function(x, axes)

    return reduce


def _one_axis(name: str) -> Callable[[Any, int], Any]:
    """The argmax / argmin along one axis (several: `AdapterBase.arg_reduction`)."""
    function = getattr(paddle, name)

    def arg(x: Any, axis: int) -> Any:
        if x.dtype == BOOL:  # paddle has no argmax kernel for bools
            x = x.astype(paddle.int32)
        return function(x, axis=axis)

    return arg


def broadcast_where(condition: Any, a: Any, b: Any) -> Any:
    """``paddle.where`` with its operands brought to one shape first (a number to `a`'s dtype).

    In a static program paddle.where broadcasts through ``zeros_like``, which warns that
    a value has no place (paddle 3.3); operands of one shape take its direct path.
    """
    like = a if isinstance(a, TENSORS) else b
    a, b = (
        x if isinstance(x, TENSORS) else paddle.full([], x, like.dtype, device=place_of(like))
        for x in (a, b)
    )
    if any(n < 0 for x in (condition, a, b) for n in x.shape):
        # a static program's unknown lengths (-1): broadcast when it runs (one dtype)
        flag, a, b = paddle.broadcast_tensors([condition.astype(a.dtype), a, b])
        return paddle.where(flag.astype(BOOL), a, b)
    shape = paddle.broadcast_shape(list(condition.shape), list(a.shape))
    shape = paddle.broadcast_shape(shape, list(b.shape))
    return paddle.where(
        *(x if list(x.shape) == shape else paddle.broadcast_to(x, shape) for x in (condition, a, b))
    )


def exact_exp(x: Any) -> Any:
    """``exact_exp(x)``, flushed to 0 where it leaves the normal float64 numbers.

    paddle's CPU kernel for float64 gives 5.6e-309 for every x below about -711 (-inf
    included), where the log space needs exactly 0 (log(exact_exp(-inf)) is -inf). Below
    log(2.2e-308) = -708.4 the answer is 0 (an error under the smallest normal number).
    """
    exp = paddle.exp(x)
    if x.dtype != paddle.float64:
        return exp
    return broadcast_where(x < -708.4, 0.0, exp)


def max_shift(x: Any, axes: list[int]) -> tuple[Any, Any]:
    """The maximum of `x` over `axes` (kept as size 1), and the shift: the finite maxima, else 0.

    Detached: what the shift is used for does not depend on it. An infinite maximum
    shifts by 0, so that no ``inf - inf`` is taken.
    """
    top = paddle.amax(x.detach(), axis=axes, keepdim=True)
    return top, broadcast_where(paddle.isinf(top), 0.0, top)


def _logsumexp(x: Any, axes: list[int], keepdim: bool = False) -> Any:
    """log(sum(exact_exp(x))) over `axes`, shifted by the maximum so that nothing overflows.

    Not paddle.logsumexp: it gives nan where a slice holds an infinity. The maximum
    itself is added back, so a slice all -inf gives -inf (paddle's exp of -inf in float64
    is 5.6e-309, not 0: the log alone would give -709).
    """
    x = floating(x)
    top, shift = max_shift(x, axes)
    total = paddle.log(paddle.sum(exact_exp(x - shift), axis=axes, keepdim=keepdim))
    return total + (top if keepdim else paddle.reshape(top, total.shape))


def logaddexp(a: Any, b: Any) -> Any:
    """``log(exact_exp(a) + exact_exp(b))`` of two tensors of one dtype.

    Not paddle.logaddexp: it gives nan for two equal infinities (-inf is the log of 0).
    The larger operand is chosen with ``where`` on ``a > b``, so that at a tie each
    operand gets half the gradient.
    """
    a, b = floating(a), floating(b)
    larger = a > b
    top, low = broadcast_where(larger, a, b), broadcast_where(larger, b, a)
    same = paddle.logical_and(paddle.isinf(top), top == low)  # inf - inf is nan: 0 apart
    diff = broadcast_where(same, 0.0, low - top)
    return top + paddle.log1p(exact_exp(diff))


#: What NumPy says when asked for an extreme of nothing (paddle answers with a value).
EMPTY = {
    "max": "zero-size array to reduction operation maximum which has no identity",
    "min": "zero-size array to reduction operation minimum which has no identity",
    "argmax": "attempt to get argmax of an empty sequence",
    "argmin": "attempt to get argmin of an empty sequence",
}

#: ``f(x, axes)`` per reduction; axes is a non-empty list (paddle reads [] as "all axes").
REDUCERS: dict[str, Callable[[Any, list[int]], Any]] = {
    "sum": eager_or("sum", lambda x, axes: paddle.sum(x, axis=axes)),
    "mean": _floats_only("mean", eager_or("mean", lambda x, axes: paddle.mean(x, axis=axes))),
    # amax, not max: ties share the gradient evenly, as torch.amax
    "max": _extreme("amax", "any"),
    "min": _extreme("amin", "all"),
    "prod": lambda x, axes: paddle.prod(x, axis=axes),
    "any": _any_all("any"),
    "all": _any_all("all"),
    "logsumexp": lambda x, axes: _logsumexp(x, axes),
    "var": _floats_only("var", lambda x, axes: paddle.var(x, axis=axes, unbiased=False)),
    "std": _floats_only("std", lambda x, axes: paddle.std(x, axis=axes, unbiased=False)),
}

#: argmax / argmin along one axis, as ``f(x, axis)``.
ONE_AXIS = {"argmax": _one_axis("argmax"), "argmin": _one_axis("argmin")}

#: The element-wise functions by name (tops.add, ...).
ELEMENTWISE: dict[str, Callable[..., Any]] = {
    "add": paddle.add,
    "subtract": paddle.subtract,
    "multiply": paddle.multiply,
    "divide": paddle.divide,
    "maximum": paddle.maximum,
    "minimum": paddle.minimum,
    "logaddexp": logaddexp,
    "where": broadcast_where,
}
#: With a Python number among the operands: the operators take it on either side.
OPERATORS: dict[str, Callable[..., Any]] = {
    "add": operator.add,
    "subtract": operator.sub,
    "multiply": operator.mul,
    "divide": operator.truediv,
}
#: Index dtypes paddle's gather and scatter kernels take.
INDEX_DTYPES = (paddle.int32, paddle.int64)


def first_line(error: BaseException) -> str:
    """A framework error's first line: paddle adds C++ stack traces and hints below it."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def with_promotion(function: Callable[..., Any], first: int = 0) -> Callable[..., Any]:
    """`function` on tensors of one dtype: those from `first` on cast to their `promote`."""

    def run(*operands: Any) -> Any:
        dtype = operands[first].dtype
        if all(x.dtype == dtype for x in operands[first + 1 :]):
            return function(*operands)
        for x in operands[first + 1 :]:
            dtype = promote(dtype, x.dtype)
        head, tail = operands[:first], operands[first:]
        return function(*head, *(x if x.dtype == dtype else x.astype(dtype) for x in tail))

    return run


#: The dtype a kernel runs in where paddle has none for the narrow one (on the CPU).
_WIDER = {
    paddle.float16: paddle.float32,
    paddle.bfloat16: paddle.float32,
    paddle.int8: paddle.int32,
    paddle.uint8: paddle.int32,
    paddle.int16: paddle.int32,
}


def widening(function: _F) -> _F:
    """`function`, run again in a wider dtype where paddle has no kernel for the narrow one.

    Paddle's CPU build registers many kernels (add, amax, flip, where, gather, ...) for
    float32 and wider only. The tensor arguments of the narrow dtype are widened (exactly:
    every value is held), and results of the wide dtype are cast back; an index or a bool
    result stays as it is. In a static program the kernel is chosen when the program runs,
    so this applies in dynamic mode.
    """

    @functools.wraps(function)
    def run(*args: Any) -> Any:
        try:
            return function(*args)
        except RuntimeError as error:  # paddle's NotFound for a kernel is a RuntimeError
            narrow = _narrow_dtype(args) if "is not registered" in str(error) else None
            if narrow is None:
                raise
        wide = _WIDER[narrow]
        widened = [_widen(x, narrow, wide) for x in args]
        return _cast_back(function(*widened), wide, narrow)

    return run  # type: ignore[return-value]


def widening_results(factory: _F) -> _F:
    """A method that makes executors, whose executors are `widening`."""

    @functools.wraps(factory)
    def make(*args: Any) -> Any:
        return widening(factory(*args))

    return make  # type: ignore[return-value]


def _narrow_dtype(args: tuple[Any, ...]) -> Any:
    for x in args:
        for item in x if isinstance(x, (list, tuple)) else (x,):
            if isinstance(item, paddle.Tensor) and item.dtype in _WIDER:
                return item.dtype
    return None


def _widen(x: Any, narrow: Any, wide: Any) -> Any:
    if isinstance(x, (list, tuple)):  # the arrays of an op on several
        return type(x)(_widen(item, narrow, wide) for item in x)
    return x.astype(wide) if isinstance(x, paddle.Tensor) and x.dtype == narrow else x


def _cast_back(out: Any, wide: Any, narrow: Any) -> Any:
    if isinstance(out, (list, tuple)):
        return type(out)(_cast_back(item, wide, narrow) for item in out)
    if isinstance(out, paddle.Tensor) and out.dtype == wide:
        return out.astype(narrow)
    return out
