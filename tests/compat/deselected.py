"""The peers' tests that are not run, each with its reason: the one table.

Keys are test ids below the suite file: ``module``, ``module::test``,
``module::Class::test`` or one parametrized ``module::test[id]``. A key that names
nothing in the installed module is listed at the end of the run.

Tests that exercise a peer's own internals are here. Tests that call only the
peer's functions that stay the peer's (opt_einsum's ``contract_path``, path
optimizers, ``contract_expression``, parser) still run: they test the peer.
"""

DESELECTED: dict[str, str] = {}
