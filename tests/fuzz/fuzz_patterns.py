"""Coverage-guided fuzzing of the pattern grammar and every op with atheris.

Run: ``python tests/fuzz/fuzz_patterns.py -max_total_time=30``. Any exception
other than :class:`tensorops.TensorOpsError` is a crash and stops the run with a
non-zero exit status. Without atheris installed the script says so and exits 0.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

tops: Any = None  # imported in main(), under atheris' instrumentation

_OPS = ("rearrange", "reduce", "repeat", "einsum", "einsum_path", "pack", "parse_shape", "explain")
_REDUCTIONS = ("sum", "mean", "max", "min", "prod", "any", "all", "bogus")


def _run(data: bytes) -> None:
    import atheris

    fdp = atheris.FuzzedDataProvider(data)
    op = _OPS[fdp.ConsumeIntInRange(0, len(_OPS) - 1)]
    ndim = fdp.ConsumeIntInRange(0, 4)
    shape = tuple(fdp.ConsumeIntInRange(0, 4) for _ in range(ndim))
    name = fdp.PickValueInList(["a", "b", "h", "w", "k"])
    length: Any = fdp.PickValueInList([fdp.ConsumeIntInRange(-2, 5), 2**65, 1.5, "2", None])
    pattern = fdp.ConsumeUnicodeNoSurrogates(40)
    x = np.zeros(shape, dtype=np.float32)
    try:
        if op == "rearrange":
            tops.rearrange(x, pattern, **{name: length})
        elif op == "reduce":
            tops.reduce(x, pattern, fdp.PickValueInList(list(_REDUCTIONS)), **{name: length})
        elif op == "repeat":
            tops.repeat(x, pattern, **{name: length})
        elif op == "einsum":
            tops.einsum(pattern, *([x] * fdp.ConsumeIntInRange(1, 3)))
        elif op == "einsum_path":
            tops.einsum_path(pattern, *([shape] * fdp.ConsumeIntInRange(1, 3)))
        elif op == "pack":
            tops.pack([x, x], pattern)
        elif op == "parse_shape":
            tops.parse_shape(x, pattern)
        else:
            tops.explain(pattern, shape)
    except tops.TensorOpsError:
        pass


def main(argv: list[str]) -> int:
    try:
        import atheris
    except ImportError:
        print("atheris is not installed (pip install atheris); nothing fuzzed")
        return 0
    global tops
    with atheris.instrument_imports(include=["tensorops"]):
        import tensorops

    tops = tensorops
    atheris.Setup(argv, _run)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
