"""einops' own tests (``einops.tests``, shipped in its wheel), run against tensorops."""

from __future__ import annotations

import importlib
import importlib.util
import os
import warnings

import einops
from tensorops.layers import torch as layers

import tensorops as tops
from tests import _frameworks
from tests.compat._harness import Suite

_FUNCTIONS = ("rearrange", "reduce", "repeat", "einsum", "pack", "unpack", "parse_shape", "asnumpy")

# A name einops starts exporting would be tested on einops itself: map it first.
_UNMAPPED = set(einops.__all__) - {*_FUNCTIONS, "EinopsError"}
if _UNMAPPED:
    raise ImportError(f"einops exports {sorted(_UNMAPPED)}: point them at tensorops here")


def _public(module: str) -> dict[str, object]:
    """tensorops' function for each of einops' public functions `module` holds."""
    real = importlib.import_module(module)
    found = {name: getattr(tops, name) for name in _FUNCTIONS if hasattr(real, name)}
    return {**found, "EinopsError": tops.TensorOpsError}


def _nothing_to_register() -> None:
    """tensorops' functions compile without being registered with Dynamo."""


def _choose_frameworks() -> None:
    # einops' test helpers read the frameworks to test from this variable.
    installed = [name for name in ("numpy", "torch", "jax") if importlib.util.find_spec(name)]
    os.environ.setdefault("EINOPS_TEST_BACKENDS", ",".join(installed))


_LAYERS = {"Rearrange": layers.Rearrange, "Reduce": layers.Reduce, "EinMix": layers.EinMix}


def _framework_layers() -> dict[str, dict[str, object]]:
    """einops' layer modules of the framework this process tests, pointed at tensorops' layers.

    Importing one of them imports its framework, and TensorFlow and Paddle crash a process
    they share: each is redirected in its own framework's process alone.
    """
    selected = _frameworks.selected()
    keras_backend = os.environ.get("KERAS_BACKEND", "tensorflow")
    if selected in ("tensorflow", "keras_tensorflow") and keras_backend == "tensorflow":
        from tensorops.layers import keras  # einops' Keras layers are TensorFlow's

        names: dict[str, object] = {
            "Rearrange": keras.Rearrange,
            "Reduce": keras.Reduce,
            "EinMix": keras.EinMix,
        }
        custom = {"keras_custom_objects": dict(names)}
        return {"einops.layers.tensorflow": names, "einops.layers.keras": {**names, **custom}}
    if selected == "flax":
        from tensorops.layers import flax

        return {
            "einops.layers.flax": {
                "Rearrange": flax.Rearrange,
                "Reduce": flax.Reduce,
                "EinMix": flax.EinMix,
            }
        }
    if selected == "paddle":
        with warnings.catch_warnings():
            # paddle warns on import where the compiler cache `ccache` is not installed
            warnings.filterwarnings("ignore", "No ccache found", UserWarning)
            from tensorops.layers import paddle

        return {
            "einops.layers.paddle": {
                "Rearrange": paddle.Rearrange,
                "Reduce": paddle.Reduce,
                "EinMix": paddle.EinMix,
            }
        }
    return {}


_FRAMEWORK_LAYERS = _framework_layers()

SUITE = Suite(
    peer="einops",
    modules=("einops.tests",),
    redirect={
        "einops": _public("einops"),
        "einops.einops": _public("einops.einops"),
        "einops.packing": _public("einops.packing"),
        "einops.array_api": _public("einops.array_api"),
        "einops.layers.torch": _LAYERS,
        **_FRAMEWORK_LAYERS,
        "einops._torch_specific": {"allow_ops_in_compiled_graph": _nothing_to_register},
    },
    patch_during_tests={"einops.layers.torch": _LAYERS, **_FRAMEWORK_LAYERS},
    filterwarnings={
        # torch deprecates torch.jit; torch.compile's first use imports torch._inductor, whose
        # torch.utils.mkldnn still defines script methods
        **dict.fromkeys(
            (
                "einops.tests.test_ops::test_torch_compile_with_dynamic_shape",
                "einops.tests.test_other::test_torch_compile_for_functions",
                "einops.tests.test_other::test_torch_compile_for_layers",
            ),
            (r"ignore:`torch\.jit\.script_method` is deprecated:DeprecationWarning",),
        ),
        # ... and these tests call torch.jit.trace / torch.jit.script (which warn for their parts)
        **dict.fromkeys(
            (
                "einops.tests.test_layers::test_torch_layer",
                "einops.tests.test_layers::test_torch_layers_scripting",
            ),
            (r"ignore:`torch\.jit\.\w+` is deprecated:DeprecationWarning",),
        ),
        # the test builds its Keras model the old way (input_shape= on the first layer) and
        # saves it as HDF5, where h5py reads TensorFlow's variables through an __array__
        # without NumPy 2's copy keyword
        "einops.tests.test_layers::test_keras_layer": (
            "ignore:Do not pass an `input_shape`/`input_dim` argument to a layer:UserWarning",
            "ignore:__array__ implementation doesn't accept a copy keyword:DeprecationWarning",
        ),
        # the test's prod over 240,000 float32 values overflows; einops warns the same
        "einops.tests.test_layers::test_reduce_imperative": (
            "ignore:overflow encountered in reduce:RuntimeWarning",
        ),
        # its unseeded random shapes sometimes take a prod past float64; numpy warns in
        # einops' call and in the test's own expected value alike
        "einops.tests.test_ops::test_reduction_stress_imperatives": (
            "ignore:overflow encountered in reduce:RuntimeWarning",
        ),
    },
    prepare=_choose_frameworks,
)
