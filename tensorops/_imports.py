"""Run a hook when a module is imported, without importing it: `when_imported`.

tensorops registers itself with other packages (Dynamo's stand-ins, opt_einsum's
and cotengra's path presets) but must never import them: ``import tensorops``
stays fast and free of frameworks, and a package the user never imports is never
loaded. Python has no "module imported" event, so `when_imported` puts a finder at
the front of ``sys.meta_path`` that waits for the module, lets the other finders
find it, wraps its loader so the hook runs right after the module's code, and
removes itself.

A hook that needs tensorops' public names (a framework imported before tensorops runs
its hook while tensorops is still being imported) waits for `when_ready` instead.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

__all__ = ["ready", "when_imported", "when_ready"]


def when_imported(name: str, hook: Callable[[Any], None]) -> None:
    """Run ``hook(module)`` now if module `name` is imported, else right after it is.

    A second call for a module still awaited adds its hook to the same finder;
    each hook runs once.
    """
    module = sys.modules.get(name)
    if module is not None:
        hook(module)
        return
    for finder in sys.meta_path:
        if isinstance(finder, _WaitFor) and finder.name == name:
            finder.hooks.append(hook)
            return
    sys.meta_path.insert(0, _WaitFor(name, hook))


class _WaitFor:
    """Runs hooks right after module ``name`` is executed; then leaves ``sys.meta_path``.

    A meta path finder needs only ``find_spec``: not deriving from
    ``importlib.abc.MetaPathFinder`` spares ``import tensorops`` that module (8 ms).
    """

    def __init__(self, name: str, hook: Callable[[Any], None]) -> None:
        self.name = name
        self.hooks = [hook]

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = None
        for finder in list(sys.meta_path):  # the finders that would have found it
            find = getattr(finder, "find_spec", None)
            spec = None if find is None else find(fullname, path, target)
            if spec is not None:
                break
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec  # not found, or an unusual loader: the hooks never run
        exec_module, hooks = loader.exec_module, self.hooks

        def exec_then_hook(module: Any) -> None:
            exec_module(module)
            for hook in hooks:
                hook(module)

        loader.exec_module = exec_then_hook
        return spec


#: Hooks waiting for ``import tensorops`` to finish; None once it has.
_WAITING: list[Callable[[], None]] | None = []


def when_ready(hook: Callable[[], None]) -> None:
    """Run ``hook()`` once ``tensorops`` is fully imported: now if it is, else at its end."""
    if _WAITING is None:
        hook()
    else:
        _WAITING.append(hook)


def ready() -> None:
    """Called by ``tensorops/__init__.py`` last: run the hooks `when_ready` kept."""
    global _WAITING
    hooks, _WAITING = _WAITING or [], None
    for hook in hooks:
        hook()
