"""Moving data between NumPy and PyTorch with tensorops: zero-copy where it is safe.

Each case asserts whether memory is shared, so the script doubles as a check of
the rules in docs/numpy_torch.md.

Usage: python examples/numpy_torch.py
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a source checkout

import tensorops as tops


def report(case: str, shared: bool) -> None:
    print(f"  {case:<58} {'shared' if shared else 'copied'}")


def main() -> int:
    if importlib.util.find_spec("torch") is None:
        print("PyTorch is not installed: nothing to show (pip install 'tensorops[torch]')")
        return 0
    import torch

    print("NumPy -> torch")
    a = np.arange(12.0).reshape(3, 4)
    t = tops.convert(a, "torch")
    t[0, 0] = -1.0  # writes through: one buffer
    assert a[0, 0] == -1.0
    assert t.data_ptr() == a.ctypes.data
    report("contiguous float64", True)

    t_f = tops.convert(np.asfortranarray(a), "torch")
    assert t_f.stride() == (1, 3)
    report("Fortran order (strides kept)", True)

    sliced = a[:, 1::2]
    t_s = tops.convert(sliced, "torch")
    assert np.shares_memory(tops.asnumpy(t_s), a)
    report("positive-stride slice a[:, 1::2]", True)

    flipped = a[::-1]
    t_n = tops.convert(flipped, "torch")
    assert not np.shares_memory(tops.asnumpy(t_n), a)
    assert np.array_equal(t_n.numpy(), flipped)
    report("negative strides a[::-1]", False)

    readonly = np.broadcast_to(np.arange(4.0), (3, 4))
    t_r = tops.convert(readonly, "torch")
    assert not np.shares_memory(t_r.numpy(), readonly)
    report("read-only (np.broadcast_to)", False)

    big_endian = np.arange(4, dtype=">f4")
    t_b = tops.convert(big_endian, "torch")
    assert t_b.dtype == torch.float32
    assert t_b.tolist() == [0.0, 1.0, 2.0, 3.0]
    report("big-endian '>f4'", False)

    scalar = tops.convert(np.float32(2.5), "torch")
    assert scalar.shape == ()
    assert scalar.item() == 2.5
    report("NumPy scalar np.float32(2.5) -> 0-d tensor", False)

    print("torch -> NumPy")
    u = torch.arange(6.0).reshape(2, 3)
    b = tops.asnumpy(u)
    b[0, 0] = 42.0
    assert u[0, 0].item() == 42.0
    report("CPU tensor", True)

    g = torch.ones(3, requires_grad=True)
    assert np.shares_memory(tops.asnumpy(g), g.detach().numpy())
    report("requires_grad (detached, still a view)", True)

    z = torch.tensor([1 + 2j, 3 - 1j])
    zc = tops.asnumpy(z.conj())
    assert zc.tolist() == [1 - 2j, 3 + 1j]
    assert not np.shares_memory(zc, z.numpy())
    report("conjugate bit (z.conj())", False)

    bf = torch.tensor([1.5, 2.25], dtype=torch.bfloat16)
    assert tops.asnumpy(bf).dtype == np.float32
    report("bfloat16 (widened to float32)", False)

    print("round trip through an op")
    images = np.zeros((2, 3, 8, 8), np.float32)
    as_tensor = tops.convert(images, "torch")
    channels_last = tops.rearrange(as_tensor, "b c h w -> b h w c")  # a view of the same memory
    back = tops.asnumpy(channels_last)
    assert np.shares_memory(back, images)
    report("numpy -> torch -> rearrange -> numpy", True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
