"""Load a peer's installed test modules so that they call tensorops, and collect them.

A :class:`Suite` names the installed test modules of one peer and, per module of the
peer, the public names that point at tensorops instead (``"numpy": {"einsum": ...}``).
The peer itself is never modified. Each test module is executed with its own
``__import__`` (set in the module's ``__builtins__``): an ``import`` statement in that
module, at its top or inside a test, that names a redirected module of the peer gets a
:class:`PeerModule`, a stand-in whose redirected names are tensorops' and whose other
names are the peer's. So ``import numpy as np`` in numpy's test module gives an ``np``
whose ``einsum`` is tensorops', while numpy itself, tensorops' numpy backend and every
other module still see numpy's own.

Test modules of the suite that import one another (``from einops.tests.test_ops import
...``) get each other loaded the same way. Modules are loaded under their real names
through the import system, so pytest rewrites their asserts (they are registered with
``pytest.register_assert_rewrite`` when collected) and pickling classes defined in them works.
"""

from __future__ import annotations

import builtins
import functools
import importlib
import importlib.util
import pkgutil
import sys
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest


@dataclass(frozen=True, eq=False)
class Suite:
    """One peer's installed test modules and what they see of the peer.

    Attributes:
        peer: The peer's distribution name, for reports ("einops").
        modules: Dotted names of installed test modules, or of test packages whose
            ``test_*`` modules are all run (so a new peer release brings its new tests).
        redirect: Module of the peer -> {public name: tensorops' replacement}. Every name
            must exist in the peer's module: a renamed entry point fails loudly.
        patch_during_tests: Module of the peer -> {name: replacement}, set in the peer's
            module itself while each test of the suite runs (and restored after): for
            entry points the tests reach from inside the peer, where no import of theirs
            can hand them a stand-in.
        filterwarnings: Test id (as in ``deselected.py``) -> ``pytest.mark.filterwarnings``
            specs for that test, each with the reason in a comment.
        prepare: Called once before the test modules are loaded (e.g. to set the
            environment variable a peer's test helpers read).
    """

    peer: str
    modules: tuple[str, ...]
    redirect: Mapping[str, Mapping[str, Any]]
    patch_during_tests: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    filterwarnings: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    prepare: Callable[[], None] = lambda: None
    _proxies: dict[str, PeerModule] = field(default_factory=dict, repr=False)
    _loaded: dict[str, types.ModuleType] = field(default_factory=dict, repr=False)

    def test_modules(self) -> list[str]:
        """The installed test modules, packages expanded."""
        found = []
        for name in self.modules:
            spec = importlib.util.find_spec(name)
            if spec is None:
                raise ModuleNotFoundError(f"{self.peer}: {name} is not installed", name=name)
            if spec.submodule_search_locations is None:
                found.append(name)
                continue
            for module in pkgutil.iter_modules(spec.submodule_search_locations):
                if module.name.startswith("test_") and not module.ispkg:
                    found.append(f"{name}.{module.name}")
        return sorted(found)

    @functools.cached_property
    def test_packages(self) -> frozenset[str]:
        """Packages holding the test modules: imports below them load through the suite."""
        return frozenset(name.rpartition(".")[0] for name in self.test_modules())

    def proxy(self, name: str) -> PeerModule | None:
        """The stand-in for the peer's module `name`, if it or a submodule is redirected."""
        if not self._proxies:
            self._build_proxies()
        return self._proxies.get(name)

    def _build_proxies(self) -> None:
        wanted: dict[str, Mapping[str, Any]] = {}
        for module_name, names in self.redirect.items():
            parts = module_name.split(".")
            for depth in range(1, len(parts)):  # parents, so `a.b.c.name` chains reach it
                wanted.setdefault(".".join(parts[:depth]), {})
            wanted[module_name] = names
        for module_name, names in wanted.items():
            module = importlib.import_module(module_name)
            missing = [name for name in names if not hasattr(module, name)]
            if missing:
                raise AttributeError(f"{module_name} has no {', '.join(missing)}: update the suite")
            self._proxies[module_name] = PeerModule(module, names, self)

    def load(self, name: str) -> types.ModuleType:
        """Import the test module `name` with the suite's ``__import__`` (once)."""
        if name in self._loaded:
            return self._loaded[name]
        parent_name, _, child = name.rpartition(".")
        parent = importlib.import_module(parent_name)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            raise ModuleNotFoundError(f"no installed module {name}", name=name)
        module = importlib.util.module_from_spec(spec)
        module.__dict__["__builtins__"] = {**builtins.__dict__, "__import__": self._import}
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        setattr(parent, child, module)
        self._loaded[name] = module
        return module

    def _import(
        self,
        name: str,
        globals: Mapping[str, Any] | None = None,  # noqa: A002 - the signature of __import__
        locals: Mapping[str, Any] | None = None,  # noqa: A002
        fromlist: tuple[str, ...] | list[str] | None = (),
        level: int = 0,
    ) -> Any:
        """``__import__`` for the suite's test modules: redirected modules come as proxies."""
        if level:
            package = (globals or {}).get("__package__") or ""
            absolute = importlib.util.resolve_name("." * level + name, package)
        else:
            absolute = name
        submodules = (f"{absolute}.{item}" for item in fromlist or () if item != "*")
        for target in [absolute, *submodules]:
            if (
                target.rpartition(".")[0] in self.test_packages
                and target not in self._loaded
                and importlib.util.find_spec(target) is not None
            ):
                self.load(target)
        module = builtins.__import__(name, globals, locals, fromlist, level)
        if fromlist:  # `from a.b import c` is handed module a.b itself
            return self.proxy(absolute) or module
        return self.proxy(absolute.partition(".")[0]) or module


class PeerModule(types.ModuleType):
    """A peer's module as a test module sees it: redirected names are tensorops'."""

    def __init__(self, module: types.ModuleType, names: Mapping[str, Any], suite: Suite) -> None:
        super().__init__(module.__name__, module.__doc__)
        self.__dict__.update(names)
        self.__dict__["_PeerModule__module"] = module
        self.__dict__["_PeerModule__suite"] = suite

    def __getattr__(self, name: str) -> Any:
        # Only called for names not redirected: a proxied submodule, else the peer's own.
        proxy = self.__suite.proxy(f"{self.__name__}.{name}")
        return proxy if proxy is not None else getattr(self.__module, name)

    def __repr__(self) -> str:
        return f"<{self.__name__} as the tensorops compatibility suites see it>"


class SuiteFile(pytest.Module):
    """A ``tests/compat/test_<peer>.py`` file: its ``SUITE`` is collected in its place."""

    def collect(self) -> Iterator[pytest.Collector]:
        suite: Suite = self.obj.SUITE
        suite.prepare()
        names = suite.test_modules()
        pytest.register_assert_rewrite(*names)
        for name in names:
            spec = importlib.util.find_spec(name)
            assert spec is not None
            assert spec.origin is not None
            yield InstalledModule.from_parent(
                self, path=Path(spec.origin), name=name, nodeid=f"{self.nodeid}::{name}"
            )


class InstalledModule(pytest.Module):
    """One installed test module of a peer, loaded through its suite."""

    def _getobj(self) -> types.ModuleType:
        assert isinstance(self.parent, SuiteFile)
        suite: Suite = self.parent.obj.SUITE
        return suite.load(self.name)
