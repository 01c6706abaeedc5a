"""Einsum over other semirings (``logsumexp``, ``max``, ``min``).

The executor of a plan, the log-space product exact at any magnitude, max-plus blocks,
back-pointers, and the constants of an expression. What ``semiring=`` names, and what a
semiring costs the planners, is read in `tensorops._einsum.equations._semiring`.
"""
