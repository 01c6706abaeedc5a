"""The operands of an einsum over another semiring: checked, and the dtype computed in.

The operands are real numbers. ``"logsumexp"`` computes in floating point: integer
operands are converted as the family's ``exp`` converts them (NumPy: to float64 for
int32 / int64), and 16-bit floats are computed in float32, the result converted back;
``"max"`` and ``"min"`` keep integers (shortest paths over integer weights are exact).
Booleans and complex numbers are refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensorops._einsum.equations._arguments import Extras
from tensorops._einsum.programs._program import cast_operands
from tensorops._einsum.programs._program import finish as finish_result
from tensorops._errors import ArgumentError
from tensorops._types import Backend

__all__ = ["TAKEN_AS_THEY_ARE", "checked", "finished"]


def checked(
    backend: Backend, operands: Sequence[Any], semiring: str, extras: Extras | None
) -> tuple[list[Any], Any]:
    """The operands cast as ``dtype=`` says, checked to be real; log-values in floating point.

    Log-values of 16 bits are computed in float32: the dtype of the result is returned
    too where it is narrower than the operands computed with (else None).
    """
    dtype = operands[0].dtype if operands and extras is None else None
    if dtype is not None and all(x.dtype == dtype for x in operands):
        try:
            if (backend, semiring, dtype) in TAKEN_AS_THEY_ARE:
                return list(operands), None
        except TypeError:  # a dtype that cannot be hashed
            dtype = None
    operands, narrow = _checked(backend, operands, semiring, extras)
    if dtype is not None and narrow is None and operands[0].dtype == dtype:
        TAKEN_AS_THEY_ARE.add((backend, semiring, dtype))
    return operands, narrow


#: (adapter, semiring, dtype) of operands that `checked` found need nothing.
TAKEN_AS_THEY_ARE: set[tuple[Backend, str, Any]] = set()


def _checked(
    backend: Backend, operands: Sequence[Any], semiring: str, extras: Extras | None
) -> tuple[list[Any], Any]:
    operands = list(cast_operands(backend, operands, extras))
    dtype = None if extras is None else extras.dtype
    for number, x in enumerate(operands):
        kind = backend.dtype_kind(x.dtype)
        if kind not in "if":
            raise ArgumentError(
                f"semiring {semiring!r} takes real numbers, but operand {number} has dtype "
                f"{x.dtype}",
                hint="booleans as log-values are 0 and -inf (np.log of them); weights of "
                "max-plus and log-values are real",
            )
        if kind == "i" and semiring == "logsumexp" and dtype is not None:
            raise ArgumentError(
                f"dtype={x.dtype} cannot hold the log-values of semiring 'logsumexp'",
                hint="give a floating dtype, or none: integers are converted as exp converts them",
            )
    if semiring != "logsumexp":
        return operands, None
    operands = [backend.floating(x) for x in operands]
    wide = [backend.widened(x) for x in operands]
    if all(w is x for w, x in zip(wide, operands, strict=True)):
        return operands, None
    return wide, backend.result_type(operands) if len(operands) > 1 else operands[0].dtype


def finished(
    backend: Backend, values: Any, narrow: Any, operands: Sequence[Any], extras: Extras | None
) -> Any:
    """The result in the operands' dtype (`narrow`: computed wider), as NumPy's keywords say."""
    if narrow is not None:
        values = backend.astype(values, narrow)
    return values if extras is None else finish_result(backend, values, operands, extras)
