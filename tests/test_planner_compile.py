"""The planner under torch.compile: Dynamo traces through planning into plain Python.

tensorops' own calls never have Dynamo trace the planner (their stand-ins plan outside
the trace); the fallback (``TENSOROPS_COMPILE=traced``) and a planner called in a
compiled function do. ``auto`` must then give the path it gives eagerly, with no graph
break: everything it runs is Python on ints, tuples, lists, dicts and sets, with its own
random numbers and no clock, and a pure-Python heap while traced
(``tensorops/_einsum/planning/_heap.py``: Dynamo cannot trace the C ``heapq``).
"""

from __future__ import annotations

import pytest

from tensorops._einsum.planning._bitnet import BitNetwork
from tensorops._einsum.planning._hyper import Effort, search
from tests.test_paths import find_path, random_network

torch = pytest.importorskip("torch")

from tests._dynamo import NOT_TRACED, TRACES_TENSOROPS  # noqa: E402 - after importorskip

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not TRACES_TENSOROPS, reason=NOT_TRACED)]


def test_auto_plans_a_25_operand_network_inside_torch_compile() -> None:
    network = random_network(25, 3, n_out=2)
    eager = find_path(*network, "auto")

    @torch.compile(fullgraph=True, backend="eager")
    def plan_and_add(x: torch.Tensor) -> tuple[torch.Tensor, list[tuple[int, ...]]]:
        path = find_path(*network, "auto")
        return x + len(path), path

    total, path = plan_and_add(torch.zeros(1))
    assert path == eager
    assert total.item() == len(eager)


def test_the_large_network_search_traces_to_the_eager_path() -> None:
    # the search of auto past twenty operands: random numbers, randomised greedy
    # paths, reconfiguration with random cuts (a small network keeps the trace short)
    network = random_network(12, 3, n_out=2)

    def plan() -> list[tuple[int, ...]]:
        net = BitNetwork(*network)
        search(net, Effort(2_000))
        return net.linear_path()

    eager = plan()

    @torch.compile(fullgraph=True, backend="eager")
    def plan_and_add(x: torch.Tensor) -> tuple[torch.Tensor, list[tuple[int, ...]]]:
        path = plan()
        return x + len(path), path

    _, path = plan_and_add(torch.zeros(1))
    assert path == eager
