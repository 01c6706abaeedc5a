"""The peers' tests that are not run, each with its reason: the one table.

Keys are test ids below the suite file: ``module``, ``module::test``,
``module::Class::test`` or one parametrized ``module::test[id]``. A key that names
nothing in the installed module is listed at the end of the run.

Tests that exercise a peer's own internals are here. Tests that call only the
peer's functions that stay the peer's (opt_einsum's ``contract_path``, path
optimizers, parser) still run: they test the peer.
"""

import os

_PARSER = "einops' parser classes (ParsedExpression, AnonymousAxis)"
_BACKENDS = "einops' backend adapters, not its public functions"
_EINMIX = "einops' private _EinmixDebugger"
_NUMPY_PATH = (
    "compares numpy's exact path; tensorops' is cheaper or equal by opt_einsum's cost "
    "(tests/test_peer_paths.py)"
)

_SHARING = (
    "counts or reads the cache of opt_einsum's shared_intermediates, which tensorops' "
    "expressions do not fill (intermediates are not shared across calls)"
)

DESELECTED: dict[str, str] = {
    # einops
    "einops.tests.test_parsing": _PARSER,
    "einops.tests.test_ops::test_enumerating_directions": "einops' private _enumerate_directions",
    "einops.tests.test_ops::test_tiling_imperatives": _BACKENDS,
    "einops.tests.test_ops::test_tiling_symbolic": _BACKENDS,
    "einops.tests.test_other::test_backends_installed": _BACKENDS,
    "einops.tests.test_other::test_is_float_type": _BACKENDS,
    "einops.tests.test_other::test_optimize_transformations_numpy": "einops' private optimizer",
    "einops.tests.test_layers::test_flax_layers": (
        "compares jax.__version__ as a string ('0.10.2' < '0.6.0'), then calls jax.tree_map, "
        "which JAX removed; its checks (init, a gradient step, flax serialization) run in "
        "tests/frameworks/test_flax_layers.py"
    ),
    "einops.tests.test_layers::test_einmix_decomposition": _EINMIX,
    "einops.tests.test_layers::test_einmix_restrictions": _EINMIX,
    "einops.tests.test_other::test_doctests_examples": "doctest of einops' own modules, on einops",
    "einops.tests.test_other::testmod": "doctest.testmod, imported there; collected for its name",
    "einops.tests.test_other::test_einops_threading": "runs einops itself in a subprocess",
    "einops.tests.test_einsum::test_functional_errors": (
        "expects NotImplementedError for (), compositions and anonymous axes in einsum, "
        "which tensorops supports (docs/migrating.md)"
    ),
    "einops.tests.test_other::test_torch_compile_for_functions": (
        "compares a float32 einsum summing 68,880 terms with rtol 1e-5: tensorops (like "
        "torch.einsum eagerly) contracts through a matrix product, relative error up to "
        "1.6e-5, where einops' compiled graph is a fused reduction (4.5e-7); the random "
        "inputs make it pass or fail (docs/einsum.md, float32 rounding). Compiling the ops "
        "into one graph is tested in tests/test_compile.py"
    ),
    "einops.tests.test_layers::test_torch_layers_scripting": (
        "torch.jit.script of layers: deprecated by torch, not supported; torch.compile and "
        "torch.export are (docs/migrating.md)"
    ),
    # numpy
    "numpy._core.tests.test_einsum::TestEinsumPath::test_long_paths": _NUMPY_PATH,
    "numpy._core.tests.test_einsum::TestEinsumPath::test_edge_paths": _NUMPY_PATH,
    "numpy._core.tests.test_einsum::TestEinsumPath::test_path_type_input": _NUMPY_PATH,
    "numpy._core.tests.test_einsum::TestEinsumPath::test_memory_contraints": (
        "expects one naive step over all operands under memory_limit=0; tensorops slices "
        "instead (tests/test_peer_paths.py)"
    ),
    "numpy._core.tests.test_einsum::TestEinsum::test_einsum_sorting_behavior": (
        "reads numpy's report text and the letters numpy's C code gives sublist subscripts"
    ),
    "numpy._core.tests.test_einsum::TestEinsum::test_subscript_range": (
        "expects ValueError past 52 sublist subscripts (numpy's C parser); tensorops takes "
        "any number, as opt_einsum does"
    ),
    # opt_einsum
    "opt_einsum.tests.test_backends::test_jax_jit_gradient": (
        "pytest.approx of a jax array reads arr.flat, which this jax refuses: fails on "
        "opt_einsum itself too (jax.jit of the expression runs; tests/test_expression.py)"
    ),
    "opt_einsum.tests.test_edge_cases::test_contract_expression_checks": (
        "expects ValueError for optimize=False (tensorops plans it as one step, as einsum "
        "does) and opt_einsum's message text ('`ContractExpression` takes exactly 2'); "
        "tests/test_expression.py checks the same errors"
    ),
    "opt_einsum.tests.test_edge_cases::test_can_blas_on_healed_broadcast_dimensions": (
        "reads opt_einsum's contraction_list (its BLAS kind per step); tensorops' steps are "
        "expr.plan"
    ),
    **{
        f"opt_einsum.tests.test_sharing::{test}": _SHARING
        for test in (
            "test_complete_sharing",
            "test_sharing_reused_cache",
            "test_no_sharing_separate_cache",
            "test_sharing_nesting",
            "test_partial_sharing",
            "test_chain_sharing",
            "test_chain_2_growth",
        )
    },
    "opt_einsum.tests.test_backends::test_tensorflow_with_sharing": _SHARING,
    "opt_einsum.tests.test_paths::test_parallel_random_greedy": (
        "opt_einsum's RandomGreedy only; forks workers while JAX threads run (deadlock warning)"
    ),
}


# einops' tests of one framework, in the processes that test another: they loop over no
# backend there, or skip. tests/test_frameworks.py runs each where its framework is tested.
_TESTED = set(os.environ.get("EINOPS_TEST_BACKENDS", "").split(","))
_ELSEWHERE = {
    "pytensor": (  # symbolic graphs
        "einops.tests.test_ops::test_reduction_symbolic",
        "einops.tests.test_ops::test_repeat_symbolic",
        "einops.tests.test_einsum::test_functional_symbolic",
        "einops.tests.test_other::test_parse_shape_symbolic",
        "einops.tests.test_other::test_parse_shape_symbolic_ellipsis",
    ),
    "tensorflow": (  # Keras layers on symbolic Keras tensors, and saved to files
        "einops.tests.test_layers::test_rearrange_symbolic",
        "einops.tests.test_layers::test_reduce_symbolic",
        "einops.tests.test_layers::test_keras_layer",
    ),
}
for _framework, _tests in _ELSEWHERE.items():
    if _framework not in _TESTED:
        for _test in _tests:
            DESELECTED[_test] = f"{_framework} only: its own process runs it (test_frameworks.py)"
