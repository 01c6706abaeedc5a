"""Importing tensorops stays light, and the public API is locked."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

import tensorops

HEAVY = ("torch", "jax", "dask", "array_api_strict", "cupy", "tensorflow", "tqdm", "matplotlib")
# The tensor-network tools tensorops serves (PathOptimizer, register_presets), never imports.
TOOLS = ("opt_einsum", "cotengra", "quimb")

PUBLIC_API = [
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


def _loaded_after(code: str) -> list[str]:
    """The top-level packages in sys.modules after running ``code`` in a fresh interpreter."""
    report = "import json, sys; print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    script = f"{code}\n{report}"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    loaded: list[str] = json.loads(result.stdout.splitlines()[-1])
    return loaded


def test_import_loads_no_framework() -> None:
    loaded = _loaded_after("import tensorops")
    assert [name for name in HEAVY if name in loaded] == []


def test_path_optimizers_and_presets_import_no_tool() -> None:
    """PathOptimizer and register_presets reach opt_einsum and cotengra only once imported."""
    loaded = _loaded_after(
        "import tensorops as tops\n"
        "opt = tops.PathOptimizer('greedy')\n"
        "opt([{'i', 'j'}, {'j', 'k'}, {'k'}], set(), {'i': 2, 'j': 3, 'k': 4})\n"
        "tops.register_presets()"
    )
    assert [name for name in (*HEAVY, *TOOLS) if name in loaded] == []


def test_import_loads_every_module_with_a_cache() -> None:
    """The einsum stack loads with the package: no name is looked up lazily.

    torch.compile is told which caches it may trace when it loads (tensorops._compile),
    so every module with a cache must be loaded by then: benchmarks/import_time.py
    measures what this costs.
    """
    script = "import sys, tensorops\nprint('tensorops._einsum.programs._program' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.split() == ["True"]


def test_einsum_names_are_listed_and_typed() -> None:
    from tensorops._einsum import ContractionPlan, einsum, einsum_path

    assert {"ContractionPlan", "einsum", "einsum_path"} <= set(dir(tensorops))
    assert tensorops.einsum is einsum
    assert tensorops.einsum_path is einsum_path
    assert tensorops.ContractionPlan is ContractionPlan


def test_first_call_on_numpy_loads_no_framework() -> None:
    loaded = _loaded_after(
        "import numpy as np, tensorops as tops\n"
        "tops.rearrange(np.zeros((2, 3)), 'a b -> b a')\n"
        "tops.einsum('ij,jk->ik', np.zeros((2, 3)), np.zeros((3, 4)))"
    )
    assert [name for name in HEAVY if name in loaded] == []


def test_public_api_is_locked() -> None:
    assert sorted(tensorops.__all__) == PUBLIC_API
    for name in tensorops.__all__:
        assert hasattr(tensorops, name), name


@pytest.mark.parametrize("name", [name for name in PUBLIC_API if name != "__version__"])
def test_public_names_have_docstrings_with_examples(name: str) -> None:
    doc = getattr(tensorops, name).__doc__ or ""
    assert "Examples:" in doc, f"tensorops.{name} has no 'Examples:' section"


def test_when_imported_runs_hooks_after_the_module_runs(tmp_path: Any, monkeypatch: Any) -> None:
    from tensorops._imports import when_imported

    (tmp_path / "tops_hooked_module.py").write_text("VALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen: list[tuple[str, int]] = []
    when_imported("tops_hooked_module", lambda module: seen.append(("first", module.VALUE)))
    when_imported("tops_hooked_module", lambda module: seen.append(("second", module.VALUE)))
    waiting = [f for f in sys.meta_path if getattr(f, "name", None) == "tops_hooked_module"]
    assert len(waiting) == 1  # one finder per module, however many hooks
    assert seen == []
    import tops_hooked_module  # noqa: F401

    assert seen == [("first", 42), ("second", 42)]
    assert not [f for f in sys.meta_path if getattr(f, "name", None) == "tops_hooked_module"]
    when_imported("tops_hooked_module", lambda module: seen.append(("now", module.VALUE)))
    assert seen[-1] == ("now", 42)  # imported already: at once
    monkeypatch.delitem(sys.modules, "tops_hooked_module")


def test_when_imported_leaves_a_module_no_finder_finds(monkeypatch: Any) -> None:
    from tensorops._imports import when_imported

    seen: list[Any] = []
    when_imported("tops_no_such_module", seen.append)
    with pytest.raises(ModuleNotFoundError):
        import tops_no_such_module  # noqa: F401
    assert seen == []
    assert not [f for f in sys.meta_path if getattr(f, "name", None) == "tops_no_such_module"]


@pytest.mark.parametrize("family", ["torch", "flax", "equinox"])
def test_the_package_and_the_layers_import_without_docstrings(family: str) -> None:
    """``python -OO`` strips docstrings: those made from tables are left out, not an error.

    torch's layers are plain classes; Flax's and Equinox's are dataclasses, which make a
    docstring of their own where there is none.
    """
    pytest.importorskip(family)
    script = (
        "import tensorops as tops\n"
        f"from tensorops.layers.{family} import Rearrange\n"
        "assert tops.add.__doc__ is None\n"
        "assert 'Examples:' not in (Rearrange.__doc__ or '')\n"
        "print(Rearrange('b c -> c b'))"
    )
    result = subprocess.run(
        [sys.executable, "-OO", "-c", script], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "b c -> c b" in result.stdout
