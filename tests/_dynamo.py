"""What the running torch's Dynamo can do, for tests whose subject needs it.

tensorops' compile path needs none of this (its stand-ins work from torch 2.5); these
facts decide what a test of the *fallback* (Dynamo tracing tensorops' own Python) and
of Dynamo's own features can expect. Each is a feature of torch, checked, not a
version number.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

import torch
import torch._dynamo
import torch._dynamo.utils
import torch._inductor.config

#: Whether Dynamo traces tensorops' own Python (the compile fallback, the planners, a
#: function given as reduction, NumPy arrays). The Dynamo that brought the allow-list
#: of lru_cache wrappers (torch 2.13) is the first to trace all of it; older ones stop
#: at ``bool`` of a symbolic ``Size``, ``next`` with a default, ``set.difference_update``
#: or a nested function passed as an argument.
TRACES_TENSOROPS = hasattr(torch._dynamo.utils, "allow_lru_cache_wrapper_trace_without_warning")

#: Whether AOTAutograd keeps compiled graphs across processes for graphs that call a
#: function allowed in the graph (torch 2.8 and later).
CACHES_NODES = isinstance(
    getattr(torch._inductor.config, "unsafe_marked_cacheable_functions", None), dict
)

#: Why a test of the fallback expects what it does where Dynamo cannot trace tensorops.
NOT_TRACED = (
    "this Dynamo cannot trace tensorops' own Python: the fallback is for torch whose "
    "Dynamo can (2.13 and later); every release from 2.5 has the stand-ins' features"
)


@contextlib.contextmanager
def untraceable_tolerated() -> Iterator[None]:
    """Where Dynamo cannot trace tensorops (not TRACES_TENSOROPS): its warnings pass.

    Such a Dynamo warns once per ``lru_cache`` it meets in traced code (it has no list
    of wrappers it may trace quietly), and breaks the graph where it cannot go on; the
    calls that take that path (a function as reduction, NumPy arrays) are then
    checked for the eager result only.
    """
    with warnings.catch_warnings():
        if not TRACES_TENSOROPS:
            warnings.filterwarnings("ignore", message=".*lru_cache", category=UserWarning)
        yield
