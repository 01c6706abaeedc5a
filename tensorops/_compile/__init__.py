"""Everything tensorops does for torch.compile, in one room.

```
dynamo.py     every torch API used here, each in one feature-checked function
checks.py     the folded check a stand-in has Dynamo run itself, the graph node
              `in_graph`, and the errors they keep
stand_ins.py  what Dynamo traces in place of the public ops — a check it runs itself
              and one graph node per call
```

The room sits at the top of the house: it imports the ops. What the rest of the
package asks of the compiler (`is_compiling`, `raise_error`, the `ON_DYNAMO` hooks)
lives on the ground floor, in `tensorops._staging`.

Two paths, chosen when Dynamo is imported (`install`):

* **stand-ins** (every torch release that has the features, 2.5 and later): each
  public op on torch tensors is a folded check plus one graph node that runs
  tensorops' eager code on fake tensors (`tensorops._compile.stand_ins`). Dynamo
  traces a few dozen instructions per call and nothing of the planning.
* **fallback** (a torch without the features, or ``TENSOROPS_COMPILE=traced``):
  nothing is registered; Dynamo traces tensorops' own Python, as it traces einops'.
  Errors still reach the user as the eager ones (`raise_error`).

``tensorops/__init__.py`` imports `tensorops._compile.stand_ins` and calls `install`
once, last.
"""

from __future__ import annotations

import sys
from typing import Any

from tensorops._compile import dynamo
from tensorops._staging import ON_DYNAMO, find_compiler_check

__all__ = ["install"]

_PACKAGE = "tensorops"


def install() -> None:
    """Prepare tensorops for torch.compile: called once, at the end of ``import tensorops``.

    Nothing happens until Dynamo is imported (by the user's first ``torch.compile``);
    then `_prepare` runs, before Dynamo traces anything.
    """
    dynamo.when_dynamo_imported(_prepare)


def _prepare(torch_dynamo: Any) -> None:
    """Run once Dynamo is imported: the compiler check, the `ON_DYNAMO` hooks, the caches."""
    find_compiler_check(sys.modules["torch"])
    for hook in ON_DYNAMO:
        hook()
    modules = [
        module
        for name, module in list(sys.modules.items())
        if name == _PACKAGE or name.startswith(_PACKAGE + ".")
    ]
    dynamo.allow_lru_caches(torch_dynamo, modules)
