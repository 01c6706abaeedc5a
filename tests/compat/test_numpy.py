"""numpy's own einsum tests (``numpy._core.tests.test_einsum``), run against tensorops."""

from __future__ import annotations

from typing import Any

import tensorops as tops
from tests.compat._harness import Suite


def einsum_path(*operands: Any, **options: Any) -> tuple[list[Any], str]:
    """tensorops' plan in numpy's return shape: ``(["einsum_path", *steps], report)``."""
    plan = tops.einsum_path(*operands, **options)
    return ["einsum_path", *plan.path], str(plan)


SUITE = Suite(
    peer="numpy",
    modules=("numpy._core.tests.test_einsum",),
    redirect={"numpy": {"einsum": tops.einsum, "einsum_path": einsum_path}},
)
