r"""The error tree of tensorops and the one place that formats error messages.

```
ValueError   RuntimeError
     \\        /
    TensorOpsError
     |-- PatternError      the pattern text itself is malformed (syntax, unknown element)
     |-- ShapeError        the pattern does not fit the shapes / axis lengths given
     `-- BackendError      the input's type is not supported (also a TypeError)
```

`TensorOpsError` derives from both `ValueError` and `RuntimeError`, so code that
catches numpy's errors (ValueError), torch's (RuntimeError) or einops'
(`EinopsError` is a RuntimeError) keeps working.

The lowest layer raises with structured fields (reason, span, hint); the public
function adds the op, the pattern, the shapes and the axis lengths through
:func:`add_context`, and re-raises ``from None``. Only :meth:`TensorOpsError.__str__`
turns the fields into text, so every message has the same layout::

    rearrange: cannot split axis of length 30 into (h h2) with h2=4: 30 is not divisible by 4
      pattern: "b (h h2) w -> b h h2 w"
                  ^^^^^^
      input:   shape=(8, 30, 40)
      lengths: h2=4
      hint:    pass h=... instead, or check the input shape
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "BackendError",
    "PatternError",
    "ShapeError",
    "TensorOpsError",
    "add_context",
    "describe_input",
]

Span = tuple[int, int]


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
        super().__init__(reason)
        self.reason = reason
        self.op = op
        self.pattern = pattern
        self.span = span
        self.inputs = tuple(inputs)
        self.lengths = dict(lengths) if lengths else {}
        self.hint = hint

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
            for i, text in enumerate(self.inputs):
                lines.append(f"  input {i}: {text}")
        if self.lengths:
            shown = " ".join(f"{k}={v}" for k, v in self.lengths.items())
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


class BackendError(TensorOpsError, TypeError):
    """The input's type is not an array tensorops can work with (also a `TypeError`).

    Examples:
        >>> import tensorops as tops
        >>> try:
        ...     tops.rearrange("not an array", "a -> a")
        ... except tops.BackendError as e:
        ...     print(e.reason)  # doctest: +ELLIPSIS
        unsupported input type str: ...
    """


def describe_input(x: Any) -> str:
    """One line about an input for error messages: shape, dtype and family, never its values."""
    shape = getattr(x, "shape", None)
    if shape is None:
        if isinstance(x, (list, tuple)):
            return f"{type(x).__name__} of {len(x)}"
        return f"type={type(x).__name__}"
    try:
        shape_text = str(tuple(shape))
    except TypeError:
        shape_text = str(shape)
    dtype = getattr(x, "dtype", None)
    module = type(x).__module__.split(".")[0]
    text = f"shape={shape_text}"
    if dtype is not None:
        text += f" dtype={str(dtype).removeprefix('torch.')}"
    return text + f" backend={module}"


def add_context(
    error: TensorOpsError,
    op: str,
    pattern: str | None = None,
    inputs: Sequence[Any] = (),
    lengths: Mapping[str, Any] | None = None,
) -> TensorOpsError:
    """Fill in what the public function knows and the lower layer did not; returns `error`."""
    if error.op is None:
        error.op = op
    if error.pattern is None and pattern is not None:
        error.pattern = pattern
    if not error.inputs and inputs:
        error.inputs = tuple(describe_input(x) for x in inputs)
    if not error.lengths and lengths:
        error.lengths = dict(lengths)
    return error
