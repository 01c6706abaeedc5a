"""tensorops: one readable pattern language for tensor code, on every array library.

Examples:
    >>> import numpy as np, tensorops as tops
    >>> x = np.zeros((2, 3, 4))
    >>> tops.rearrange(x, "b c w -> b w c").shape
    (2, 4, 3)
"""

from importlib.metadata import PackageNotFoundError, version

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

try:
    __version__ = version("tensorops")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"

__all__ = [
    "BackendError",
    "PatternError",
    "ShapeError",
    "TensorOpsError",
    "__version__",
    "explain",
    "pack",
    "parse_shape",
    "rearrange",
    "reduce",
    "repeat",
    "unpack",
]
