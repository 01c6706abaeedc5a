"""Einsum: notation, path planning, cost model and execution on any backend."""

from tensorops._einsum._api import ContractionPlan as ContractionPlan
from tensorops._einsum._api import einsum as einsum
from tensorops._einsum._api import einsum_path as einsum_path
from tensorops._einsum._expression import EinsumExpression as EinsumExpression
from tensorops._einsum._expression import einsum_expression as einsum_expression
from tensorops._einsum.planning._optimizer import PathOptimizer as PathOptimizer
from tensorops._einsum.planning._optimizer import register_presets as register_presets
from tensorops._einsum.planning._store import PlanStore as PlanStore

__all__ = [
    "ContractionPlan",
    "EinsumExpression",
    "PathOptimizer",
    "PlanStore",
    "einsum",
    "einsum_expression",
    "einsum_path",
    "register_presets",
]
