"""The rules where a library differs from tensorops, each checked against the library itself.

For every case the library is called on arrays that fit the pattern: where it fails,
the linter must report the call with the rule's code; where it runs, the linter must
report nothing (tensorops' own rules would refuse some of these: the linter applies
the rules of the library that runs the call).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import einops
import numpy as np
import opt_einsum
import pytest
import torch

from tensorops._lint.linter import lint_source

a23, a34 = np.ones((2, 3)), np.ones((3, 4))
t23, t34 = torch.ones(2, 3), torch.ones(3, 4)

#: (the call as written, the same call run, the code the linter gives, or None: it runs)
CASES: list[tuple[str, Callable[[], Any], str | None]] = [
    (
        'einops.rearrange([a, b], "n c1, n c2 -> n (c1 + c2)")',
        lambda: einops.rearrange([a23, a23], "n c1, n c2 -> n (c1 + c2)"),
        "TOP012",
    ),
    (
        'einops.rearrange(a, "n (c1 + c2) -> n c1 c2", c1=1)',
        lambda: einops.rearrange(a23, "n (c1 + c2) -> n c1 c2", c1=1),
        "TOP012",
    ),
    (
        'einops.rearrange([a, b], "n c, n c -> n c")',
        lambda: einops.rearrange([a23, a23], "n c, n c -> n c"),
        "TOP012",
    ),
    (
        'einops.reduce(a, "n c -> n", "logsumexp")',
        lambda: einops.reduce(a23, "n c -> n", "logsumexp"),
        "TOP004",
    ),
    (
        'einops.reduce(a, "n c -> n", "argmax")',
        lambda: einops.reduce(a23, "n c -> n", "argmax"),
        "TOP004",
    ),
    (
        'einops.reduce(a, "n c -> c n", "rearrange")',
        lambda: einops.reduce(a23, "n c -> c n", "rearrange"),
        None,
    ),
    (
        'einops.reduce(a, "n c -> n c r", "repeat", r=2)',
        lambda: einops.reduce(a23, "n c -> n c r", "repeat", r=2),
        None,
    ),
    ('einops.reduce(a, "n c -> n", "prod")', lambda: einops.reduce(a23, "n c -> n", "prod"), None),
    ('einops.einsum(a, b, "i j, j k")', lambda: einops.einsum(a23, a34, "i j, j k"), "TOP013"),
    (
        'einops.einsum(a, b, "(i j) k, k l -> i j l")',
        lambda: einops.einsum(np.ones((6, 3)), a34, "(i j) k, k l -> i j l"),
        "TOP013",
    ),
    (
        'einops.einsum(a, b, "i 3, 3 k -> i k")',
        lambda: einops.einsum(a23, a34, "i 3, 3 k -> i k"),
        "TOP013",
    ),
    (
        'einops.einsum(a, b, "i j, j k -> i k")',
        lambda: einops.einsum(a23, a34, "i j, j k -> i k"),
        None,
    ),
    (
        'einops.einsum(a, b, "i _, _ k -> i k")',
        lambda: einops.einsum(a23, a34, "i _, _ k -> i k"),
        None,
    ),
    (
        'einops.einsum(a, b, "i j, j k -> i z")',
        lambda: einops.einsum(a23, a34, "i j, j k -> i z"),
        "TOP002",
    ),
    (
        'einops.einsum(a, b, "ij, jk -> ik")',
        lambda: einops.einsum(a23, a34, "ij, jk -> ik"),
        "TOP002",
    ),
    ('einops.parse_shape(a, "n n")', lambda: einops.parse_shape(np.ones((3, 3)), "n n"), "TOP003"),
    ('einops.parse_shape(a, "_ _")', lambda: einops.parse_shape(a23, "_ _"), None),
    (
        'numpy.einsum("\u03b1j,jk->\u03b1k", a, b)',
        lambda: np.einsum("\u03b1j,jk->\u03b1k", a23, a34),
        "TOP014",
    ),
    (
        'torch.einsum("\u03b1j,jk->\u03b1k", a, b)',
        lambda: torch.einsum("\u03b1j,jk->\u03b1k", t23, t34),
        "TOP014",
    ),
    ('numpy.einsum("i j,j k->i k", a, b)', lambda: np.einsum("i j,j k->i k", a23, a34), None),
    (
        'torch.einsum("i j , j k -> i k", a, b)',
        lambda: torch.einsum("i j , j k -> i k", t23, t34),
        None,
    ),
    ('numpy.einsum("i1,1k->ik", a, b)', lambda: np.einsum("i1,1k->ik", a23, a34), "TOP001"),
    ('torch.einsum("i_,_k->ik", a, b)', lambda: torch.einsum("i_,_k->ik", t23, t34), "TOP001"),
    (
        'opt_einsum.contract("\u03b1j,jk->\u03b1k", a, b)',
        lambda: opt_einsum.contract("\u03b1j,jk->\u03b1k", a23, a34),
        None,
    ),
    (
        'opt_einsum.contract("i1,1k->ik", a, b)',
        lambda: opt_einsum.contract("i1,1k->ik", a23, a34),
        None,
    ),
    (
        'opt_einsum.contract("i(,(k->ik", a, b)',
        lambda: opt_einsum.contract("i(,(k->ik", a23, a34),
        None,
    ),
    (
        'opt_einsum.contract("ij,jk->iz", a, b)',
        lambda: opt_einsum.contract("ij,jk->iz", a23, a34),
        "TOP002",
    ),
    (
        'jax.numpy.einsum("i1,1k->ik", a, b)',
        lambda: __import__("jax.numpy").numpy.einsum("i1,1k->ik", a23, a34),
        None,
    ),
]

HEADER = "import einops, numpy, torch, opt_einsum, jax.numpy\n"


@pytest.mark.parametrize(("call", "run", "code"), CASES, ids=[case[0] for case in CASES])
def test_each_rule_agrees_with_the_library(
    call: str, run: Callable[[], Any], code: str | None
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            run()
        except Exception:  # the library refuses the call: the linter must say so
            failed = True
        else:
            failed = False
    assert failed == (code is not None)
    assert [f.code for f in lint_source(HEADER + call)] == ([code] if code else [])
