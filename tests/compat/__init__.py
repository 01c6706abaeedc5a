"""The peers' own test suites, run against tensorops.

Each ``test_<peer>.py`` here declares a :class:`~tests.compat._harness.Suite`: the
peer's test modules as installed (``einops.tests``, ``numpy._core.tests.test_einsum``,
``opt_einsum.tests``; nothing is copied into this project, so the suites follow the
installed versions) and the public names that point at tensorops instead:

* einops: ``rearrange``, ``reduce``, ``repeat``, ``einsum``, ``pack``, ``unpack``,
  ``parse_shape``, ``asnumpy`` and ``EinopsError`` (-> ``TensorOpsError``) in ``einops``,
  ``einops.einops``, ``einops.packing`` and ``einops.array_api``; the layers
  ``Rearrange``, ``Reduce``, ``EinMix`` of ``einops.layers.torch``;
  ``allow_ops_in_compiled_graph`` becomes a no-op (tensorops needs no registration).
* numpy: ``np.einsum`` -> ``tensorops.einsum``; ``np.einsum_path`` -> tensorops'
  ``einsum_path`` with its plan returned in numpy's shape, ``(["einsum_path", *plan.path],
  str(plan))``, the one adaptation: tensorops returns a ``ContractionPlan`` by design.
* opt_einsum: ``contract`` -> ``tensorops.einsum``. ``contract_path``, the path
  optimizers, ``contract_expression`` and the parser stay opt_einsum's.

How: each test module is executed with its own ``__import__``, which hands it stand-ins
for those modules (``import numpy as np`` there gives an ``np`` whose ``einsum`` is
tensorops'); numpy, einops and opt_einsum themselves are not modified, so tensorops'
numpy backend and the rest of this test suite keep calling the real ones. The one
exception is listed in ``patch_during_tests``: einops' test helpers fetch the layers from
inside einops (``backend.layers()``), so ``einops.layers.torch``'s three layer classes are
swapped while each einops test runs (pytest's monkeypatch, undone after the test).

``test_clients.py`` is a plain test module beside the suites (``PLAIN_MODULES`` in
``_report.py``): einops client models from the package index (local-attention with
hyper-connections, x-transformers, perceiver-pytorch, vector-quantize-pytorch) imported
afresh with tensorops in ``sys.modules`` as ``einops``, their outputs and gradients
compared with the same models on einops, eagerly and compiled.

Tests of a peer's internals are deselected by name in ``deselected.py`` (one table, a
reason each); warnings a peer's tests provoke are ignored per test, in the suite file,
with the reason. Failures are not hidden: a test that fails, fails.

Running: the suites carry the ``compat`` mark. They are collected when
``TENSOROPS_COMPAT=1`` is set, when ``tests/compat`` (or a file in it) is named on the
command line, or always once ``RUN_IN_DEFAULT_SUITE`` in ``conftest.py`` is True::

    python -m pytest tests/compat                        # all three suites
    python -m pytest tests/compat/test_numpy.py          # one suite
    python -m pytest tests/compat -k einops              # the same, by keyword
    TENSOROPS_COMPAT=1 python -m pytest                  # the whole project with them
    TENSOROPS_COMPAT=1 python -m pytest -m "not compat"  # ... and without them

A failure prints as the exception and the line of the peer's test that raised it; pass
``--tb=short`` (or any ``--tb``) for pytest's tracebacks, which cost about 0.15 s a failure
to build. The run ends with one line per peer: passed / failed / error / skipped /
deselected.
"""
