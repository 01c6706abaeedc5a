"""Staged calls: whether a framework is building a graph, what a length is there, errors.

The ground floor every module may import (it imports no framework and nothing of
tensorops above `tensorops._errors`):

```
compiler.py   whether torch.compile traces the caller (is_compiling, for_compiler), the
              switch to its fallback, the hooks run once Dynamo loads (ON_DYNAMO), the
              stand-in arrays of a family (STAND_INS)
sizes.py      RunTimeSize: the one form of a length known only when a graph runs, from
              every framework (TensorFlow's None, Paddle's -1, torch.jit.trace's sizes,
              PyTensor's unknown lengths, JAX's symbolic dimensions); bound, not compared
errors.py     raise_error / replayable: errors that reach the user as they are from
              inside a trace
```

The torch.compile stand-ins, which import every op, live at the top of the house in
`tensorops._compile`; nothing here imports them.
"""

from __future__ import annotations

from tensorops._staging.compiler import (
    ON_DYNAMO,
    STAND_INS,
    constant_result,
    find_compiler_check,
    for_compiler,
    is_compiling,
)
from tensorops._staging.errors import Replay, raise_error, replayable

__all__ = [
    "ON_DYNAMO",
    "STAND_INS",
    "Replay",
    "constant_result",
    "find_compiler_check",
    "for_compiler",
    "is_compiling",
    "raise_error",
    "replayable",
]
