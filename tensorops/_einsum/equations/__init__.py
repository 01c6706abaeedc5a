"""Reading einsum equations.

Every calling convention and keyword, the notation, the axes bound to shapes, ``+``
groups, and what ``semiring=`` may name (`_semiring`: every stage reads it).
"""
