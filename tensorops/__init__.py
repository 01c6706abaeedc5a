"""tensorops: one readable pattern language for tensor code, on every array library.

Examples:
    >>> import numpy as np, tensorops as tops
    >>> x = np.zeros((2, 3, 4))
    >>> tops.rearrange(x, "b c w -> b w c").shape
    (2, 4, 3)
"""

import sys
from typing import TYPE_CHECKING, Any

from tensorops import _backends
from tensorops._caches import cache_info as cache_info
from tensorops._caches import clear_caches as clear_caches
from tensorops._config import config as config
from tensorops._convert import asnumpy as asnumpy
from tensorops._convert import convert as convert
from tensorops._errors import BackendError as BackendError
from tensorops._errors import PatternError as PatternError
from tensorops._errors import ShapeError as ShapeError
from tensorops._errors import TensorOpsError as TensorOpsError
from tensorops._explain import explain as explain
from tensorops._ops import rearrange as rearrange
from tensorops._ops import reduce as reduce
from tensorops._ops import repeat as repeat
from tensorops._pack import pack as pack
from tensorops._pack import parse_shape as parse_shape
from tensorops._pack import unpack as unpack

if TYPE_CHECKING:
    from tensorops._einsum import ContractionPlan as ContractionPlan
    from tensorops._einsum import einsum as einsum
    from tensorops._einsum import einsum_path as einsum_path

# The einsum stack (notation, planner, cost model, executor) takes as long to import as
# everything else together, so it is imported on first use of one of these names.
_EINSUM_NAMES = ("ContractionPlan", "einsum", "einsum_path")


def _load_einsum() -> None:
    """Import the einsum stack and bind its names here: later lookups are plain attributes."""
    # An import and global stores only: torch.compile can trace this if a first call on a
    # tensor happens inside a compiled function (it cannot trace globals()).
    global ContractionPlan, einsum, einsum_path
    from tensorops._einsum import ContractionPlan, einsum, einsum_path


def __getattr__(name: str) -> Any:
    if name in _EINSUM_NAMES:
        _load_einsum()
        from tensorops import _einsum

        return getattr(_einsum, name)
    # __version__ is read from the installed metadata on first use: importing
    # importlib.metadata up front would double the time `import tensorops` takes.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("tensorops")
        except PackageNotFoundError:  # pragma: no cover - a source tree without install
            return "0.0.0"
    raise AttributeError(f"module 'tensorops' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


# Once torch is in use, nothing stays lazy. A first lookup through `__getattr__` or a first
# import inside a torch.compile trace depends on how Dynamo treats them, which changes
# between torch releases; and the torch adapter marks the caches of the modules loaded when
# Dynamo arrives as safe to trace, so a module loaded later would make Dynamo warn. The
# einsum stack is loaded now if torch is already imported, else just before the torch
# adapter is made. See docs/architecture.md, "What `import tensorops` loads".
if "torch" in sys.modules:
    _load_einsum()
else:
    _backends.BEFORE_TORCH.append(_load_einsum)


__all__ = [
    "BackendError",
    "ContractionPlan",
    "PatternError",
    "ShapeError",
    "TensorOpsError",
    "__version__",
    "asnumpy",
    "cache_info",
    "clear_caches",
    "config",
    "convert",
    "einsum",
    "einsum_path",
    "explain",
    "pack",
    "parse_shape",
    "rearrange",
    "reduce",
    "repeat",
    "unpack",
]
