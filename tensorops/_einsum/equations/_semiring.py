"""The semirings einsum contracts over: their names, their checks and what they cost.

An einsum adds products; over another semiring the same equation takes another
"addition" over the contracted axes and another "product" between operands:

========== ================================ ==================== =====================
semiring   result                           "addition" (its 0)   "product" (its 1)
========== ================================ ==================== =====================
sum        sum of products                  ``+`` (0)            ``*`` (1)
logsumexp  log of the sum of exp of sums    logaddexp (-inf)     ``+`` (0)
max        max of sums (max-plus, Viterbi)  max (-inf)           ``+`` (0)
min        min of sums (min-plus, paths)    min (+inf)           ``+`` (0)
========== ================================ ==================== =====================

Plans come from the same planners (`tensorops._einsum.planning._paths`); the cost model
adds `write_weight` per element of each intermediate, what the semiring's kernels
pay there beyond the FLOPs. The kernels are in `tensorops._einsum.semirings._logspace` and
`tensorops._einsum.semirings._tropical`, run by `tensorops._einsum.semirings._run_semiring`.
"""

from __future__ import annotations

import math
from typing import Any

from tensorops._errors import ArgumentError, unknown_option

__all__ = [
    "BLOCK_CAP",
    "LOGSUMEXP_WRITE_WEIGHT",
    "SEMIRINGS",
    "ZEROS",
    "check_argmax",
    "check_semiring",
    "pieces",
    "write_weight",
]

#: What ``semiring=`` takes; ``"sum"`` is the ordinary einsum.
SEMIRINGS: tuple[str, ...] = ("sum", "logsumexp", "max", "min")

#: The identity of each semiring's addition: what a contraction over an empty axis gives.
ZEROS: dict[str, float] = {"sum": 0.0, "logsumexp": -math.inf, "max": -math.inf, "min": math.inf}

LOGSUMEXP_WRITE_WEIGHT = 512
"""FLOPs an element of an intermediate costs under ``"logsumexp"`` on top of the FLOPs.

Each intermediate is made by a ``log`` (and the shifts added back) and read by the
next step through a maximum, a subtraction and an ``exp``: per element as much as
several hundred FLOPs of a matrix product on a CPU (``benchmarks/semiring.py``
measures it). The exps of the operands themselves are paid whatever the path.
"""

#: The most elements a max / min step's broadcast block holds when no memory limit is
#: given: the block (of one step's pair, broadcast over their union) is made in pieces.
BLOCK_CAP = 1 << 22


def pieces(size: int, step: int) -> list[slice]:
    """Consecutive slices of at most `step` covering ``range(size)``: the blocks of a step.

    Every stop lies within the axis: the array API leaves stops past its end undefined.

    Examples:
        >>> pieces(5, 2)
        [slice(0, 2, None), slice(2, 4, None), slice(4, 5, None)]
    """
    return [slice(start, min(start + step, size)) for start in range(0, size, step)]


def write_weight(semiring: str) -> int:
    """The planner's cost of one element of an intermediate, beyond the FLOPs.

    ``"max"`` and ``"min"`` pay their broadcast block, which is what the FLOPs count
    (an addition and a comparison per element of the pair's union): no weight.

    Examples:
        >>> write_weight("logsumexp"), write_weight("max")
        (512, 0)
    """
    return LOGSUMEXP_WRITE_WEIGHT if semiring == "logsumexp" else 0


def check_semiring(semiring: Any) -> str:
    """``semiring`` checked to be one of `SEMIRINGS`.

    Raises:
        UnknownOptionError: anything else, with the valid names.
    """
    if semiring not in SEMIRINGS:
        raise unknown_option(
            "semiring",
            semiring,
            SEMIRINGS,
            hint="'logsumexp' contracts log-values (HMMs, CRFs), 'max' and 'min' are "
            "max-plus (Viterbi) and min-plus (shortest paths)",
        )
    return str(semiring)


def check_argmax(argmax: Any, semiring: str) -> bool:
    """``argmax=`` checked: a bool, True only where the semiring takes a maximum or minimum.

    Raises:
        ArgumentError: not a bool, or True with ``"sum"`` or ``"logsumexp"``.
    """
    if not isinstance(argmax, bool):
        raise ArgumentError(f"argmax must be True or False, got {argmax!r}")
    if argmax and semiring not in ("max", "min"):
        raise ArgumentError(
            f"argmax=True needs semiring='max' or 'min': semiring {semiring!r} has no "
            "maximizing assignment",
            hint="tops.einsum(equation, *arrays, semiring='max', argmax=True) gives the "
            "Viterbi path",
        )
    return argmax
