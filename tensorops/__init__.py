"""tensorops: one readable pattern language for tensor code, on every array library.

Examples:
    >>> import numpy as np, tensorops as tops
    >>> x = np.zeros((2, 3, 4))
    >>> tops.rearrange(x, "b c w -> b w c").shape
    (2, 4, 3)
"""

from typing import Any

from tensorops._along import argsort as argsort
from tensorops._along import cumsum as cumsum
from tensorops._along import flip as flip
from tensorops._along import roll as roll
from tensorops._along import sort as sort
from tensorops._caches import cache_info as cache_info
from tensorops._caches import clear_caches as clear_caches
from tensorops._check import check as check
from tensorops._compile import install as _install_compile
from tensorops._compile import stand_ins as _stand_ins  # noqa: F401  (registered with Dynamo)
from tensorops._config import config as config
from tensorops._convert import asnumpy as asnumpy
from tensorops._convert import convert as convert
from tensorops._einsum import ContractionPlan as ContractionPlan
from tensorops._einsum import EinsumExpression as EinsumExpression
from tensorops._einsum import PathOptimizer as PathOptimizer
from tensorops._einsum import PlanStore as PlanStore
from tensorops._einsum import einsum as einsum
from tensorops._einsum import einsum_expression as einsum_expression
from tensorops._einsum import einsum_path as einsum_path
from tensorops._einsum import register_presets as register_presets
from tensorops._elementwise import add as add
from tensorops._elementwise import divide as divide
from tensorops._elementwise import elementwise as elementwise
from tensorops._elementwise import logaddexp as logaddexp
from tensorops._elementwise import maximum as maximum
from tensorops._elementwise import minimum as minimum
from tensorops._elementwise import multiply as multiply
from tensorops._elementwise import subtract as subtract
from tensorops._elementwise import where as where
from tensorops._errors import ArgumentError as ArgumentError
from tensorops._errors import BackendError as BackendError
from tensorops._errors import PatternError as PatternError
from tensorops._errors import ShapeError as ShapeError
from tensorops._errors import TensorOpsError as TensorOpsError
from tensorops._explain import explain as explain
from tensorops._imports import ready as _ready
from tensorops._indexing import add_at as add_at
from tensorops._indexing import get_at as get_at
from tensorops._indexing import set_at as set_at
from tensorops._ops import rearrange as rearrange
from tensorops._ops import reduce as reduce
from tensorops._ops import repeat as repeat
from tensorops._pack import pack as pack
from tensorops._pack import parse_shape as parse_shape
from tensorops._pack import unpack as unpack
from tensorops._softmax import log_softmax as log_softmax
from tensorops._softmax import softmax as softmax


def __getattr__(name: str) -> Any:
    # __version__ is read from the installed metadata on first use: importing
    # importlib.metadata up front would add to the time `import tensorops` takes.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("tensorops")
        except PackageNotFoundError:  # pragma: no cover - a source tree without install
            return "0.0.0"
    raise AttributeError(f"module 'tensorops' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


# Every module is loaded now: prepare them for torch.compile (once Dynamo is imported).
_install_compile()


__all__ = [
    "ArgumentError",
    "BackendError",
    "ContractionPlan",
    "EinsumExpression",
    "PathOptimizer",
    "PatternError",
    "PlanStore",
    "ShapeError",
    "TensorOpsError",
    "__version__",
    "add",
    "add_at",
    "argsort",
    "asnumpy",
    "cache_info",
    "check",
    "clear_caches",
    "config",
    "convert",
    "cumsum",
    "divide",
    "einsum",
    "einsum_expression",
    "einsum_path",
    "elementwise",
    "explain",
    "flip",
    "get_at",
    "log_softmax",
    "logaddexp",
    "maximum",
    "minimum",
    "multiply",
    "pack",
    "parse_shape",
    "rearrange",
    "reduce",
    "register_presets",
    "repeat",
    "roll",
    "set_at",
    "softmax",
    "sort",
    "subtract",
    "unpack",
    "where",
]

# Last: hooks that need every public name (a framework imported before tensorops).
_ready()
