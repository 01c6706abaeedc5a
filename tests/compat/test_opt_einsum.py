"""opt_einsum's own tests (``opt_einsum.tests``, shipped in its wheel), run against tensorops."""

from __future__ import annotations

import tensorops as tops
from tests.compat._harness import Suite

SUITE = Suite(
    peer="opt_einsum",
    modules=("opt_einsum.tests",),
    redirect={
        "opt_einsum": {"contract": tops.einsum, "contract_expression": tops.einsum_expression}
    },
    filterwarnings={
        # opt_einsum's own contract_expression on dask (dask.array.einsum) rechunks
        "opt_einsum.tests.test_backends::test_dask": (
            "ignore:Increasing number of chunks:dask.array.core.PerformanceWarning",
        ),
    },
)
