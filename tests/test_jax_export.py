"""Every op under ``jax.export`` with symbolic dimensions: exported, serialized, loaded, called.

Each call of `tests._staged.CASES` is exported once with its unknown lengths symbolic
(``jax.export.symbolic_shape``), serialized and deserialized, then called at several sizes
and compared with the eager result. einops' version, where einops has the call, is exported
beside it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

jax = pytest.importorskip("jax")
export = pytest.importorskip("jax.export")

import tensorops as tops  # noqa: E402
from tests._staged import CASES, EINOPS, SIZES, Case, assert_same, case_ids, einops_beside  # noqa: E402


def _exported(case: Case, ops: Any) -> Any:
    # one symbol for every unknown length (the calls give them all one size): JAX equates
    # lengths by their symbols, so a pattern's shared axis shares one
    scope = export.SymbolicScope()
    specs = []
    for x in case.inputs:
        dims = ", ".join("n" if n is None else str(n) for n in x.shape)
        shape = export.symbolic_shape(dims, scope=scope) if x.shape else ()
        specs.append(jax.ShapeDtypeStruct(shape, np.dtype(x.dtype)))
    made = export.export(jax.jit(lambda *xs: case.run(ops, *xs)))(*specs)
    return export.deserialize(made.serialize())


def _run_at_sizes(loaded: Any, case: Case) -> None:
    for n in SIZES:
        assert_same(loaded.call(*case.arrays(n)), case.expected(n), np.asarray)


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_every_op_under_jax_export(case: Case) -> None:
    _run_at_sizes(_exported(case, tops), case)
    einops_beside(case, lambda: _run_at_sizes(_exported(case, EINOPS), case))
