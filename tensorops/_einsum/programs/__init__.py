"""Running programs.

A plan compiled to primitive calls (`_execute`), the einsum plan and its
`ContractionPlan` (`_program`), and the run slice by slice (`_sliced`).
"""
