"""Checked by mypy in tests/test_typing.py: the ops keep the input's array type."""

from __future__ import annotations

from typing import assert_type

import numpy as np
import torch

import tensorops as tops

Array = np.ndarray[tuple[int, ...], np.dtype[np.float64]]
a: Array = np.zeros((2, 3))
t = torch.zeros(2, 3)
assert_type(tops.rearrange(a, "a b -> b a"), Array)
assert_type(tops.rearrange(t, "a b -> b a"), torch.Tensor)
assert_type(tops.reduce(t, "a b -> a", "sum"), torch.Tensor)
assert_type(tops.repeat(a, "a b -> a b c", c=2), Array)
assert_type(tops.rearrange([t, t], "n a b -> a n b"), torch.Tensor)
plan = tops.einsum_path("ij,jk->ik", (2, 3), (3, 4))
assert_type(plan.flops, int)
assert_type(tops.rearrange(t, pattern="a b -> b a"), torch.Tensor)
assert_type(tops.rearrange(tensor=a, pattern="a b -> b a"), Array)
assert_type(tops.reduce(tensor=t, pattern="a b -> a", reduction="sum"), torch.Tensor)
assert_type(tops.repeat(t, pattern="a b -> a b c", c=2), torch.Tensor)
