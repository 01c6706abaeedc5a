"""The frameworks the op and layer tests run on, one process each.

The ``backend`` fixture (``tests/conftest.py``) yields one :class:`Family` per array
library. NumPy, torch, JAX, Dask and array-api-strict share the main test process. The
frameworks of :data:`FRAMEWORKS` do not: TensorFlow and Paddle crash the interpreter when
both are imported (TensorFlow first), and each takes seconds and hundreds of MB to import,
so ``tests/test_frameworks.py`` runs :data:`SUITE` once per framework in a process of its
own with ``TENSOROPS_TEST_FRAMEWORK=<name>``. In such a process the ``backend`` fixture
yields that framework alone, and only the tests that use it (or a file of
``tests/frameworks/``) are collected.

Example::

    TENSOROPS_TEST_FRAMEWORK=tensorflow python -m pytest tests/test_ops.py
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tests._seed import tolerance

#: The variable naming the one framework a test process runs on.
ENV = "TENSOROPS_TEST_FRAMEWORK"


@dataclass(frozen=True)
class Family:
    """How to make and read arrays of one family in tests.

    * ``name``: the test id ("numpy", "torch", "tensorflow", ...),
    * ``asarray(a)``: an array of that family with the values, shape and dtype of the
      NumPy array ``a`` (a fresh copy),
    * ``to_numpy(x)``: the values of an array of that family as a NumPy array,
    * ``lacks``: the NumPy dtype names the family has no dtype for (tests skip or narrow them),
    * ``result_class``: the class every op result is an instance of, where it is not exactly
      the type of ``asarray``'s arrays (PyTensor: constants in, graph variables out),
    * ``exp_dtypes``: NumPy dtype names whose exponentials (exp, and softmax, logsumexp,
      logaddexp through it) the family computes at a coarser precision, and that precision
      (MLX: float64 in float32); see `exp_precision`.
    """

    name: str
    asarray: Callable[[np.ndarray], Any]
    to_numpy: Callable[[Any], np.ndarray]
    lacks: frozenset[str] = field(default_factory=frozenset)
    result_class: type | None = None
    exp_dtypes: Mapping[str, str] = field(default_factory=dict)

    def exp_precision(self, dtype: Any) -> np.dtype[Any]:
        """The dtype whose rounding the family's exponentials of `dtype` arrays have.

        Example::

            tolerance(backend.exp_precision(got.dtype), terms=4)
        """
        name = np.dtype(dtype).name
        computed: np.dtype[Any] = np.dtype(self.exp_dtypes.get(name, name))
        return computed

    def exp_rtol(self, rtol: float, dtype: Any = np.float64) -> float:
        """`rtol` for results through exponentials, widened to the family's rounding of them.

        Where the family computes them coarser than `dtype`, the rounding tolerance of the
        precision it computes in (`tests._seed.tolerance`) when that is the larger.
        """
        computed = self.exp_precision(dtype)
        if computed == np.dtype(dtype):
            return rtol
        return max(rtol, tolerance(computed)["rtol"])

    def is_own(self, result: Any, like: Any) -> bool:
        """Whether `result` is an array of this family as `like` (an input) is."""
        if self.result_class is not None:
            return isinstance(result, self.result_class)
        return type(result) is type(like)


@dataclass(frozen=True)
class Framework:
    """A framework tested in a process of its own.

    * ``module``: what must be importable for the framework's tests to run,
    * ``extra``: the pip extra that installs it,
    * ``family``: ``"module:function"`` of the function returning its :class:`Family`
      (the ``backend`` fixture runs `SUITE` on it), or None for a layer family alone,
    * ``tests``: its own test files, under ``tests/frameworks/``,
    * ``einops``: its name in einops' test suite (``EINOPS_TEST_BACKENDS``), or None,
    * ``opt_einsum``: ``-k`` selecting opt_einsum's own tests of it as a ``backend=``
      (``opt_einsum.tests.test_backends``), or None,
    * ``environment``: variables the process needs (``KERAS_BACKEND``),
    * ``modules``: tensorops' modules that import the framework; their docstring examples
      run in one of its own tests, not in ``tests/test_doctests.py``.
    """

    module: str
    extra: str
    family: str | None
    tests: tuple[str, ...] = ()
    einops: str | None = None
    opt_einsum: str | None = None
    environment: dict[str, str] = field(default_factory=dict)
    modules: tuple[str, ...] = ()


def _keras(backend: str) -> Framework:
    return Framework(
        "keras",
        "keras",
        None,
        ("test_keras.py", "test_keras_staged.py"),
        environment={"KERAS_BACKEND": backend},
        modules=("tensorops.layers.keras",),
    )


FRAMEWORKS: dict[str, Framework] = {
    "tensorflow": Framework(
        "tensorflow",
        "tensorflow",
        "tests.frameworks._tensorflow:family",
        ("test_tensorflow.py", "test_tensorflow_staged.py"),
        einops="tensorflow",
        opt_einsum="test_tensorflow",
        modules=(
            "tensorops._backends._tensorflow",
            "tensorops._backends._tensorflow_kernels",
            "tensorops._backends._tensorflow_autograph",
        ),
    ),
    "paddle": Framework(
        "paddle",
        "paddle",
        "tests.frameworks._paddle:family",
        ("test_paddle.py", "test_paddle_layers.py", "test_paddle_staged.py"),
        einops="paddle",
        modules=(
            "tensorops._backends._paddle",
            "tensorops._backends._paddle_kernels",
            "tensorops.layers.paddle",
        ),
    ),
    "tinygrad": Framework(
        "tinygrad",
        "tinygrad",
        "tests.frameworks._tinygrad:family",
        ("test_tinygrad.py",),
        einops="tinygrad",
        modules=("tensorops._backends._tinygrad",),
    ),
    "pytensor": Framework(
        "pytensor",
        "pytensor",
        "tests.frameworks._pytensor:family",
        ("test_pytensor.py",),
        einops="pytensor",
        modules=("tensorops._backends._pytensor",),
    ),
    "mlx": Framework(
        "mlx.core", "mlx", "tests.frameworks._mlx:family", ("test_mlx.py", "test_mlx_staged.py")
    ),
    "flax": Framework(
        "flax",
        "flax",
        None,
        ("test_flax_layers.py", "test_nnx_layers.py", "test_jax_layers_staged.py"),
        einops="jax",
        modules=("tensorops.layers.flax", "tensorops.layers.nnx"),
    ),
    "equinox": Framework(
        "equinox",
        "equinox",
        None,
        ("test_equinox_layers.py",),
        modules=("tensorops.layers.equinox",),
    ),
    "keras_jax": _keras("jax"),
    "keras_torch": _keras("torch"),
    "keras_tensorflow": _keras("tensorflow"),
}

#: The test files run once per framework of `FRAMEWORKS` (their tests that use the
#: ``backend`` fixture), with the framework's own tests in ``tests/frameworks/``.
SUITE = (
    "tests/test_ops.py",
    "tests/test_reductions.py",
    "tests/test_einsum.py",
    "tests/test_softmax.py",
    "tests/test_indexing.py",
    "tests/test_backends.py",
    "tests/test_convert.py",
    "tests/test_check.py",
    "tests/test_concat.py",
    "tests/test_elementwise.py",
    "tests/test_along.py",
    "tests/test_semiring.py",
)


def selected() -> str | None:
    """The framework this process tests (`ENV`), or None in the main test process."""
    name = os.environ.get(ENV) or None
    if name is not None and name not in FRAMEWORKS:
        raise ValueError(f"{ENV}={name!r}: expected one of {sorted(FRAMEWORKS)}")
    return name


def family(name: str) -> Family:
    """The :class:`Family` of the framework called ``name``."""
    made_by = FRAMEWORKS[name].family
    if made_by is None:
        raise ValueError(f"{name} is a layer family: it has no arrays of its own")
    module, function = made_by.split(":")
    made: Family = getattr(importlib.import_module(module), function)()
    return made
