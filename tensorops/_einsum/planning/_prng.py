"""A small deterministic random number generator on Python ints, for the planners.

The randomised planners must give the same path for the same network on every
machine and under ``torch.compile``, which cannot trace the `random` module.
So they draw from SplitMix64 (Steele, Lea and Flood, OOPSLA 2014), seeded from the
network itself, and work in fixed point: `log2_fixed` and the Gumbel table
`GUMBEL` replace floating-point logarithms.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

__all__ = ["FIXED", "GUMBEL", "Random", "fingerprint", "log2_fixed"]

FIXED = 256
"""Fixed-point unit of `log2_fixed` and `GUMBEL`: 256 means 1.0."""

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15

# log2(1 + i / 256) in fixed point, for the mantissa of log2_fixed
_LOG_MANTISSA = tuple(round(FIXED * math.log2(1 + i / 256)) for i in range(256))

GUMBEL: tuple[int, ...] = tuple(
    round(-FIXED * math.log(-math.log((i + 0.5) / 1024))) for i in range(1024)
)
"""1024 evenly spaced quantiles of the standard Gumbel distribution, in fixed point."""


def log2_fixed(x: int) -> int:
    """Return ``log2(x)`` in fixed point (``FIXED`` per unit) for ``x >= 1``; 0 below."""
    if x < 1:
        return 0
    bits = x.bit_length()
    top = x >> (bits - 9) if bits > 9 else x << (9 - bits)  # 9 bits: 256 to 511
    return (bits - 1) * FIXED + _LOG_MANTISSA[top - 256]


def _mix(z: int) -> int:
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def fingerprint(values: Iterable[int]) -> int:
    """Return a 64-bit digest of some ints (of any size), the same on every machine."""
    state = 0
    for value in values:
        while True:  # fold big ints (bitsets of many axes) 64 bits at a time
            state = _mix((state ^ (value & _MASK)) + _GOLDEN)
            value >>= 64
            if not value:
                break
    return state


class Random:
    """SplitMix64: 64-bit random ints from a seed, on plain Python ints.

    Args:
        seed: Any int.


    Attributes:
        draws: How many numbers were drawn (a measure of the work done with them).
    """

    __slots__ = ("draws", "state")

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK
        self.draws = 0

    def next(self) -> int:
        """Return the next random 64-bit int."""
        self.draws += 1
        self.state = (self.state + _GOLDEN) & _MASK
        return _mix(self.state)

    def below(self, n: int) -> int:
        """Return a random int in ``range(n)`` (``n >= 1``)."""
        return (self.next() * n) >> 64

    def gumbel(self) -> int:
        """Return a standard Gumbel sample in fixed point (``FIXED`` per unit)."""
        return GUMBEL[self.next() >> 54]
