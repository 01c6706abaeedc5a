"""Einsum: notation, path planning, cost model and execution on any backend."""

from tensorops._einsum._api import ContractionPlan as ContractionPlan
from tensorops._einsum._api import einsum as einsum
from tensorops._einsum._api import einsum_path as einsum_path
from tensorops._einsum._store import PlanStore as PlanStore

__all__ = ["ContractionPlan", "PlanStore", "einsum", "einsum_path"]
