"""Checked by mypy in tests/test_typing.py: each marked line must be a type error."""

from __future__ import annotations

import numpy as np
import torch

import tensorops as tops

a = np.zeros((2, 3))
t: torch.Tensor = tops.rearrange(a, "a b -> b a")  # E: numpy in, numpy out
tops.rearrange(a, "a b -> b a", h="4")  # E: lengths are ints
tops.reduce(a, "a b -> a", 3)  # E: a reduction is a name or a callable
