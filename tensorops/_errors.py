r"""The error tree of tensorops, and the one place that builds and formats error messages.

```
ValueError   RuntimeError
     \\        /
    TensorOpsError
     |-- PatternError      the pattern text itself is malformed (syntax, unknown element)
     |-- ShapeError        the pattern does not fit the shapes / axis lengths given
     |-- ArgumentError     an argument of the wrong type or an unknown option (also a TypeError)
     |    `-- UnknownOptionError  an unknown name (reduction, strategy, ...): also a KeyError
     `-- BackendError      the array family cannot do it: unsupported type, refused dtype
                           (also a TypeError)
```

`TensorOpsError` derives from both `ValueError` and `RuntimeError`, so code that
catches numpy's errors (ValueError), torch's (RuntimeError) or einops'
(`EinopsError` is a RuntimeError) keeps working.

The lowest layer raises with structured fields (reason, span, hint); the public
function adds the op, the pattern, the inputs and the axis lengths with
`TensorOpsError.with_context`, the one way to add context, and re-raises it
through `tensorops._staging.raise_error` (a framework's own error stays attached
as its context). Only `TensorOpsError.__str__` turns the fields into text, so
every message has the same layout::

    rearrange: cannot split axis of length 30 into (h h2) with h2=4: 30 is not divisible by 4
      pattern: "b (h h2) w -> b h h2 w"
                  ^^^^^^
      input:   shape=(8, 30, 40) dtype=float32 backend=numpy
      lengths: h2=4
      hint:    pass h=... instead, or check the input shape

A message that several places raise (a pattern that is not a str, an unknown
option, a bad axis length) is built by one function below, so the same mistake
reads the same whichever op the user called.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

__all__ = [
    "FAST_PATH_MISSES",
    "FRAMEWORK_ERRORS",
    "MISSING",
    "ArgumentError",
    "BackendError",
    "PatternError",
    "ShapeError",
    "Span",
    "TensorOpsError",
    "UnknownOptionError",
    "bad_length",
    "describe_input",
    "describe_inputs",
    "dtype_name",
    "not_a_pattern",
    "unknown_option",
]

Span = tuple[int, int]

#: What an array library raises for input it refuses (a dtype without an order, an empty
#: axis to take the max of, a failing reduction callable): caught around framework calls
#: and reported as a `BackendError` with the call's context.
FRAMEWORK_ERRORS = (ValueError, RuntimeError, TypeError, IndexError, ArithmeticError)

#: What makes the dispatch's fast path give up and take the slow one, which reports
#: the cause: a type not seen yet (`KeyError`), an unhashable key (`TypeError`), an
#: argument without a shape (`AttributeError`, a list of arrays). Not framework
#: errors: the fast path catches `TensorOpsError` first, and `FRAMEWORK_ERRORS` only
#: around the framework calls it makes.
FAST_PATH_MISSES = (KeyError, TypeError, AttributeError)

#: How many inputs a message describes before it says "... and N more".
SHOWN_INPUTS = 4

_ErrorT = TypeVar("_ErrorT", bound="TensorOpsError")


class TensorOpsError(ValueError, RuntimeError):
    """Raised for every bad input to tensorops: malformed patterns, shape mismatches, bad types.

    It is both a `ValueError` and a `RuntimeError`. The message names the op,
    quotes the pattern with a caret under the fault, and shows the input shapes
    and axis lengths.

    Attributes:
        reason: what is wrong, with the actual values.
        op: the public function that was called (``"rearrange"``, ``"einsum"``, ...).
        pattern: the pattern text, when there is one.
        span: ``(start, end)`` character positions of the fault in ``pattern``.
        inputs: one line per input describing it (shape, dtype, backend).
        lengths: the axis lengths the caller passed.
        hint: a suggestion for the common mistake behind this error.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> try:
        ...     tops.rearrange(np.zeros((4, 9)), "b (h w) -> b h w", h=2)
        ... except tops.TensorOpsError as e:
        ...     print(e.reason)
        cannot split axis of length 9 into (h w) with h=2: 9 is not divisible by 2
    """

    def __init__(
        self,
        reason: str,
        *,
        op: str | None = None,
        pattern: str | None = None,
        span: Span | None = None,
        inputs: Sequence[str] = (),
        lengths: Mapping[str, Any] | None = None,
        hint: str | None = None,
    ) -> None:
        # `args` is all the base initializers would set. They are not called because
        # torch.compile cannot trace them on a class with two exception bases, and an
        # error raised while it traces must be constructible there.
        self.args = (reason,)
        self.reason = reason
        self.op = op
        self.pattern = pattern
        self.span = span
        self.inputs = tuple(inputs)
        self.lengths = dict(lengths) if lengths else {}
        self.hint = hint

    def with_context(
        self: _ErrorT,
        *,
        op: str | None = None,
        pattern: str | None = None,
        inputs: Sequence[str] | None = None,
        lengths: Mapping[str, Any] | None = None,
    ) -> _ErrorT:
        """Set what the caller knows and the raiser did not; returns the error itself.

        Each field given replaces the one the error holds: the public function
        sets the op, the pattern, the inputs and the lengths of the call, and a
        layer names itself as the op. ``raise error.with_context(op="rearrange")``.

        Args:
            op: the op or layer the user called.
            pattern: the pattern text of the call.
            inputs: one description per input (see `describe_inputs`).
            lengths: the axis lengths of the call.

        Returns:
            This error.

        Examples:
            >>> import tensorops as tops
            >>> error = tops.ShapeError("too short").with_context(op="repeat", lengths={"c": 3})
            >>> print(error)
            repeat: too short
              lengths: c=3
        """
        if op is not None:
            self.op = op
        if pattern is not None:
            self.pattern = pattern
        if inputs is not None:
            self.inputs = tuple(inputs)
        if lengths is not None:
            self.lengths = dict(lengths)
        return self

    def __str__(self) -> str:
        head = f"{self.op}: {self.reason}" if self.op else self.reason
        lines = [head]
        if self.pattern is not None:
            lines.append(f'  pattern: "{self.pattern}"')
            if self.span is not None:
                start, end = self.span
                start = max(0, min(start, len(self.pattern)))
                end = max(start + 1, min(end, len(self.pattern) + 1))
                # 12 = len('  pattern: "'): the caret lines up under the quoted text.
                lines.append(" " * (12 + start) + "^" * (end - start))
        if len(self.inputs) == 1:
            lines.append(f"  input:   {self.inputs[0]}")
        else:
            lines.extend(f"  input {i}: {text}" for i, text in enumerate(self.inputs))
        if self.lengths:
            shown = " ".join(f"{k}={_short(v)}" for k, v in self.lengths.items())
            lines.append(f"  lengths: {shown}")
        if self.hint:
            lines.append(f"  hint:    {self.hint}")
        return "\n".join(lines)

    def __reduce__(self) -> tuple[Any, ...]:
        # Keep the structured fields across pickling (multiprocessing, Dask workers).
        fields = {
            "op": self.op,
            "pattern": self.pattern,
            "span": self.span,
            "inputs": self.inputs,
            "lengths": self.lengths,
            "hint": self.hint,
        }
        return (_rebuild, (type(self), self.reason, fields))


def _rebuild(cls: type[TensorOpsError], reason: str, fields: dict[str, Any]) -> TensorOpsError:
    return cls(reason, **fields)


class PatternError(TensorOpsError):
    """The pattern text is malformed: bad syntax, a bad name, an element the op does not accept.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> try:
        ...     tops.rearrange(np.zeros(3), "a -> (a")
        ... except tops.PatternError as e:
        ...     print(e.reason)
        unclosed parenthesis
    """


class ShapeError(TensorOpsError):
    """The pattern does not fit the shapes or axis lengths given.

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> try:
        ...     tops.rearrange(np.zeros((2, 3)), "a b c -> a b c")
        ... except tops.ShapeError as e:
        ...     print(e.reason)
        the pattern has 3 axes but the input has 2 dimensions
    """


class ArgumentError(TensorOpsError, TypeError):
    """An argument of the wrong type, or an option tensorops does not know (also a `TypeError`).

    Examples:
        >>> import numpy as np, tensorops as tops
        >>> try:
        ...     tops.reduce(np.zeros(3), "a ->", "median")
        ... except tops.ArgumentError as e:
        ...     print(e.reason)  # doctest: +ELLIPSIS
        unknown reduction 'median'; valid: sum, mean, ...
    """


class BackendError(TensorOpsError, TypeError):
    """The array family cannot do it: an unsupported input type, or a step it refuses.

    Also a `TypeError`, as the frameworks raise for arrays they cannot take.

    Examples:
        >>> import tensorops as tops
        >>> try:
        ...     tops.rearrange("not an array", "a -> a")
        ... except tops.BackendError as e:
        ...     print(e.reason)  # doctest: +ELLIPSIS
        unsupported input type str: ...
    """


def _short(value: Any) -> str:
    """A value for a message: never an array's contents, never a wall of text."""
    shape = getattr(value, "shape", None)
    if shape is not None and not isinstance(value, (int, float, complex, str)):
        return f"<{type(value).__name__} of shape {tuple(shape)}>"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# struct format characters by the names NumPy and torch give them
_STRUCT_NAMES = {
    "?": "bool",
    "b": "int8",
    "B": "uint8",
    "h": "int16",
    "H": "uint16",
    "i": "int32",
    "I": "uint32",
    "q": "int64",
    "Q": "uint64",
    "e": "float16",
    "f": "float32",
    "d": "float64",
}


def dtype_name(dtype: Any) -> str:
    """A dtype as messages show it: ``float32`` for NumPy's, torch's, TensorFlow's and Paddle's.

    Examples:
        >>> import numpy as np
        >>> dtype_name(np.dtype("float32"))
        'float32'
    """
    text = str(dtype).removeprefix("torch.").removeprefix("paddle.")
    if text.startswith("<dtype: '") and text.endswith("'>"):  # TensorFlow's DType
        return text[len("<dtype: '") : -len("'>")]
    if text.startswith("dtypes."):  # tinygrad's DType, named after C ("dtypes.double")
        fmt = str(getattr(dtype, "fmt", None))  # its struct format character, where C has one
        return _STRUCT_NAMES.get(fmt, text.removeprefix("dtypes."))  # bfloat16: by its name
    return text


def describe_input(x: Any) -> str:
    """One line about an input for error messages: shape, dtype and family, never its values.

    A tuple of integers is taken as a shape (``einsum_path`` and ``explain`` take shapes).
    """
    shape = getattr(x, "shape", None)
    if shape is None:
        if isinstance(x, tuple) and all(isinstance(d, int) for d in x):
            return f"shape={x}"
        if isinstance(x, (list, tuple)):
            return f"{type(x).__name__} of {len(x)}"
        return f"type={type(x).__name__}"
    static = getattr(getattr(x, "type", None), "shape", None)
    if not isinstance(shape, tuple) and isinstance(static, tuple):
        shape = static  # a shape that is a graph (PyTensor): its type's, None where unknown
    try:
        # a length recorded as a tensor (torch.jit.trace) is not read: it would be traced
        shape_text = str(tuple("?" if hasattr(n, "shape") else n for n in shape))
        shape_text = shape_text.replace("'?'", "?")
    except (TypeError, ValueError):  # ValueError: TensorFlow's shape of unknown rank
        shape_text = str(shape)
    dtype = getattr(x, "dtype", None)
    module = type(x).__module__.split(".")[0]
    text = f"shape={shape_text}"
    if dtype is not None:
        text += f" dtype={dtype_name(dtype)}"
    return text + f" backend={module}"


def describe_inputs(inputs: Iterable[Any]) -> tuple[str, ...]:
    """`describe_input` of each input; past a few, one line says how many more there are."""
    items = list(inputs)
    lines = [describe_input(x) for x in items[:SHOWN_INPUTS]]
    if len(items) > SHOWN_INPUTS:
        lines.append(f"... and {len(items) - SHOWN_INPUTS} more")
    return tuple(lines)


def not_a_pattern(value: Any, example: str) -> ArgumentError:
    """The error for a pattern that is not a str (often arguments in the wrong order)."""
    return ArgumentError(
        f"the pattern must be a str, got {type(value).__name__}",
        hint=f"the array comes first, then the pattern: {example}",
    )


class _Missing:
    """The type of `MISSING`."""

    def __repr__(self) -> str:
        return "MISSING"


#: The default of an argument that einops also takes as a keyword (``pattern=``,
#: ``tensor=``): not given positionally.
MISSING: Any = _Missing()


class UnknownOptionError(ArgumentError, KeyError):
    """A name outside a fixed set (a reduction, a strategy): also a `KeyError`.

    opt_einsum raises `KeyError` for an unknown path option; code that catches it
    keeps working.
    """


def unknown_option(
    what: str, value: Any, valid: Iterable[str], extra: str = "", hint: str | None = None
) -> ArgumentError:
    """The error for a choice outside a fixed set: it lists the valid choices.

    Args:
        what: what was chosen, e.g. ``"reduction"``.
        value: what the user gave.
        valid: the names that are accepted.
        extra: more accepted forms, e.g. ``"or a callable f(x, axes)"``.
        hint: a suggestion beyond the list.
    """
    shown = repr(value) if isinstance(value, str) else _short(value)
    listed = ", ".join(valid) + (f", {extra}" if extra else "")
    return UnknownOptionError(f"unknown {what} {shown}; valid: {listed}", hint=hint)


def bad_length(name: str, value: Any, problem: str) -> ShapeError:
    """The error for an axis length that is not a non-negative integer."""
    return ShapeError(
        f"axis length {name}={_short(value)} {problem}",
        hint="axis lengths are non-negative integers, e.g. h=4",
    )
