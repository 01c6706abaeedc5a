"""TensorFlow's AutoGraph told to leave tensorops alone: the one use of its private API.

Inside ``tf.function`` AutoGraph rewrites every Python function the traced code calls,
tensorops' included, unless the function's module matches a rule of
``tensorflow.python.autograph.core.config.CONVERSION_RULES``; TensorFlow lists itself
and NumPy there. Rewritten, tensorops' planning (plain Python on shapes) would be
turned into graph ops where a size is a tensor, and its errors would reach the user as
AutoGraph's ``StagingError``. `install` adds a rule for tensorops and marks its errors
``ag_pass_through`` (AutoGraph re-raises such errors as they are). It runs right after
``import tensorflow`` (``tensorops._backends`` registers it with
`tensorops._imports.when_imported`), before any function is traced.

Where the private names are missing (another TensorFlow release), nothing is changed:
tensorops' code is then converted like user code, which works for known shapes.
"""

from __future__ import annotations

from typing import Any

from tensorops._errors import TensorOpsError

__all__ = ["install"]

_PACKAGE = "tensorops"


def install(module: Any = None) -> bool:
    """Keep tensorops out of AutoGraph's conversion; whether AutoGraph's rules were found.

    Examples:
        >>> import tensorflow as tf
        >>> install(tf)
        True
    """
    # AutoGraph's error rewriting skips exceptions that carry this attribute
    setattr(TensorOpsError, "ag_pass_through", True)  # noqa: B010 - a foreign attribute name
    try:
        from tensorflow.python.autograph.core import config
    except ImportError:
        return False
    rules = getattr(config, "CONVERSION_RULES", None)
    rule_type = getattr(config, "DoNotConvert", None)
    if not isinstance(rules, tuple) or rule_type is None:
        return False
    if not any(getattr(rule, "_prefix", None) == _PACKAGE for rule in rules):
        config.CONVERSION_RULES = (rule_type(_PACKAGE), *rules)
    return True
