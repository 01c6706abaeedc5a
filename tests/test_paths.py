"""Tests of the einsum cost model and path planners, with opt_einsum as the oracle."""

from __future__ import annotations

import functools
import math
import os
import random
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

oe = pytest.importorskip("opt_einsum")
from opt_einsum.helpers import flop_count as oe_flop_count  # noqa: E402
from opt_einsum.testing import rand_equation  # noqa: E402

from tensorops._einsum.planning._bitnet import BitNetwork  # noqa: E402
from tensorops._einsum.planning._cost import (  # noqa: E402
    Step,
    compute_size,
    contraction_steps,
    flop_count,
    largest_intermediate,
    naive_flops,
    sliced_contraction_steps,
    total_flops,
    total_writes,
)
from tensorops._einsum.planning._dp import _dp_search, optimal_three, plan_subsets  # noqa: E402
from tensorops._einsum.planning._greedy import plan_greedy  # noqa: E402
from tensorops._einsum.planning._paths import (  # noqa: E402
    COMBO_WRITE_WEIGHT,
    OPTIMAL_MAX_OPERANDS,
    PLANNERS,
    plan_contraction,
)

Inputs = list[tuple[str, ...]]
Network = tuple[Inputs, tuple[str, ...], dict[str, int]]


def find_path(*network: Any, **options: Any) -> list[tuple[int, ...]]:
    """`plan_contraction`'s path, as a list (NumPy's and opt_einsum's form)."""
    return list(plan_contraction(*network, **options).path)


def parse(eq: str) -> tuple[Inputs, tuple[str, ...]]:
    lhs, out = eq.split("->")
    return [tuple(term) for term in lhs.split(",")], tuple(out)


def random_network(n: int, seed: int, n_out: int = 2, regularity: int = 3) -> Network:
    eq, _, size_dict = rand_equation(n, regularity, n_out=n_out, seed=seed, return_size_dict=True)
    inputs, output = parse(eq)
    return inputs, output, {k: int(v) for k, v in size_dict.items()}


def equation(inputs: Inputs, output: tuple[str, ...]) -> str:
    """The network as an opt_einsum equation, one symbol per axis."""
    symbols: dict[str, str] = {}
    for axis in [a for t in inputs for a in t] + list(output):
        symbols.setdefault(axis, oe.get_symbol(len(symbols)))
    terms = ["".join(symbols[a] for a in t) for t in inputs]
    return ",".join(terms) + "->" + "".join(symbols[a] for a in output)


def shapes_of(inputs: Inputs, size_dict: Mapping[str, int]) -> list[tuple[int, ...]]:
    return [tuple(size_dict[a] for a in t) for t in inputs]


def cost(network: Network, path: Sequence[tuple[int, ...]]) -> int:
    return total_flops(contraction_steps(*network, path))


def plan_cost(network: Network, strategy: str, memory_limit: int | None = None) -> int:
    return cost(network, find_path(*network, strategy=strategy, memory_limit=memory_limit))


def oe_info(network: Network, optimize: object) -> object:
    inputs, output, size_dict = network
    _, info = oe.contract_path(
        equation(inputs, output), *shapes_of(inputs, size_dict), shapes=True, optimize=optimize
    )
    return info


def oe_cost(network: Network, strategy: str) -> int:
    return int(oe_info(network, strategy).opt_cost)  # type: ignore[attr-defined]


def brute_force(network: Network, outer: bool = True, write_weight: int = 0) -> int:
    """Cheapest pairwise path, with optional reductions of axes only one operand has.

    Each step costs its FLOPs plus ``write_weight`` per element of its result.
    """
    inputs, output, size_dict = network
    out = frozenset(output)

    def size(axes: frozenset[str]) -> int:
        return math.prod(size_dict[a] for a in axes)

    @functools.cache
    def best(state: tuple[frozenset[str], ...]) -> int:
        if len(state) == 1:
            return 0
        options = []
        for i, axes in enumerate(state):
            others = out.union(*(state[:i] + state[i + 1 :]))
            if axes - others:  # sum it alone first
                rest = state[:i] + state[i + 1 :] + (axes & others,)
                write = write_weight * size(axes & others)
                options.append(2 * size(axes) + write + best(canonical(rest)))
        for i in range(len(state)):
            for j in range(i + 1, len(state)):
                if not outer and not (state[i] & state[j]) - out:
                    continue
                rest = tuple(x for k, x in enumerate(state) if k not in (i, j))
                union = state[i] | state[j]
                kept = union & out.union(*rest)
                step = size(union) * (2 if kept != union else 1) + write_weight * size(kept)
                options.append(step + best(canonical((*rest, kept))))
        return min(options, default=math.inf)  # type: ignore[arg-type]

    def canonical(state: tuple[frozenset[str], ...]) -> tuple[frozenset[str], ...]:
        return tuple(sorted(state, key=lambda s: sorted(s)))

    return best(canonical(tuple(frozenset(t) for t in inputs)))


def is_connected(network: Network) -> bool:
    inputs, output, _ = network
    sets = [set(t) - set(output) for t in inputs]
    seen, todo = {0}, [0]
    while todo:
        i = todo.pop()
        for j, s in enumerate(sets):
            if j not in seen and s & sets[i]:
                seen.add(j)
                todo.append(j)
    return len(seen) == len(inputs)


def geometric_mean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def with_dangling(n: int, seed: int) -> Network:
    """A random network where some operands also have axes that nothing else has."""
    inputs, output, size_dict = random_network(n, seed)
    rng = random.Random(seed)
    extended = []
    for i, axes in enumerate(inputs):
        if rng.random() < 0.5:
            extra = f"{'x' if i % 2 else 'y'}{i}"  # multi-character axis names
            size_dict[extra] = rng.randint(2, 6)
            axes = (*axes, extra)
        extended.append(axes)
    return extended, output, size_dict


def ring(n: int) -> Network:
    inputs = [(f"b{i}", f"b{(i + 1) % n}", f"p{i}") for i in range(n)]
    size_dict = {f"b{i}": 3 for i in range(n)} | {f"p{i}": 2 for i in range(n)}
    return inputs, ("p0",), size_dict


def grid(rows: int, cols: int) -> Network:
    inputs = []
    for r in range(rows):
        for c in range(cols):
            axes = [f"v{r}_{c}"] if r + 1 < rows else []
            axes += [f"v{r - 1}_{c}"] if r else []
            axes += [f"h{r}_{c}"] if c + 1 < cols else []
            axes += [f"h{r}_{c - 1}"] if c else []
            inputs.append(tuple(axes))
    size_dict = {a: 2 for t in inputs for a in t}
    return inputs, (), size_dict


SMALL = [random_network(n, seed) for n in range(3, 8) for seed in range(8)]
SMALL += [random_network(n, seed, n_out=0) for n in (3, 5, 7) for seed in range(4)]
SMALL += [with_dangling(n, seed) for n in (3, 5, 6) for seed in range(4)]
SMALL += [random_network(8, seed) for seed in range(3)]


# --- the cost model ---------------------------------------------------------------------


def test_flop_count_matches_opt_einsum() -> None:
    sizes = {"a": 2, "b": 3, "c": 5}
    for idx in ("", "a", "abc"):
        for inner in (False, True):
            for terms in (1, 2, 3, 4):
                assert flop_count(idx, inner, terms, sizes) == oe_flop_count(
                    idx, inner, terms, sizes
                )
    assert compute_size("abc", sizes) == 30
    assert compute_size((), sizes) == 1


def random_path(n: int, rng: random.Random) -> list[tuple[int, ...]]:
    """A valid path with steps of one, two or more operands."""
    path: list[tuple[int, ...]] = []
    if rng.random() < 0.3:
        path.append((rng.randrange(n),))
    while n > 1:
        k = min(n, rng.choice((2, 2, 2, 3)))
        path.append(tuple(rng.sample(range(n), k)))
        n -= k - 1
    return path


@pytest.mark.parametrize("seed", range(12))
def test_steps_match_opt_einsum_path_info(seed: int) -> None:
    rng = random.Random(seed)
    for n in (2, 3, 4, 6, 9, 13):
        network = random_network(n, seed * 31 + n, n_out=rng.randrange(3))
        paths = [random_path(n, rng), find_path(*network, strategy="greedy")]
        for path in paths:
            steps = contraction_steps(*network, path)
            info = oe_info(network, path)
            assert total_flops(steps) == info.opt_cost  # type: ignore[attr-defined]
            assert largest_intermediate(steps) == info.largest_intermediate  # type: ignore[attr-defined]
            assert naive_flops(*network) == info.naive_cost  # type: ignore[attr-defined]


def test_steps_describe_each_contraction() -> None:
    inputs = [("batch", "i", "j"), ("batch", "j", "k"), ("k", "l")]
    sizes = {"batch": 2, "i": 3, "j": 4, "k": 5, "l": 6}
    steps = contraction_steps(inputs, ("l", "batch", "i"), sizes, [(1, 0), (0, 1)])
    assert steps[0] == Step(
        operands=(1, 0),
        inputs=(("batch", "j", "k"), ("batch", "i", "j")),
        result=("batch", "k", "i"),
        summed=("j",),
        flops=2 * 2 * 3 * 4 * 5,
        size=2 * 5 * 3,
    )
    assert steps[1].result == ("l", "batch", "i")
    assert steps[1].summed == ("k",)
    assert steps[1].inputs == (("k", "l"), ("batch", "k", "i"))


def test_single_operand_steps() -> None:
    sizes = {"i": 2, "j": 3}
    (step,) = contraction_steps([("i", "j")], ("j",), sizes, [(0,)])
    assert step.result == ("j",)
    assert step.summed == ("i",)
    assert step.flops == 2 * 6
    steps = contraction_steps([("i", "j"), ("j",)], (), sizes, [(0,), (0, 1)])
    assert steps[0].result == ("j",)
    assert steps[1].result == ()


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ([], "empty"),
        ([(0, 3)], "only 3"),
        ([(0, 0), (0, 1)], "twice"),
        ([(0, 1)], "leaves 2"),
        ([(), (0, 1, 2)], "no operand"),
        ([(0, -1), (0, 1)], "only 3"),
        ([(0, 1.0), (0, 1)], "not an int"),
    ],
)
def test_invalid_paths_are_rejected(path: list[tuple[int, ...]], message: str) -> None:
    inputs = [("i", "j"), ("j", "k"), ("k",)]
    with pytest.raises(ValueError, match=message):
        contraction_steps(inputs, ("i",), {"i": 2, "j": 3, "k": 4}, path)


def test_numpy_integer_positions_are_accepted() -> None:
    inputs = [("i", "j"), ("j", "k"), ("k",)]
    sizes = {"i": 2, "j": 3, "k": 4}
    path = [(np.int64(1), np.intp(2)), (0, 1)]
    steps = contraction_steps(inputs, ("i",), sizes, path)
    assert steps[0].operands == (1, 2)
    assert type(steps[0].operands[0]) is int


def test_missing_output_axis_is_rejected() -> None:
    with pytest.raises(ValueError, match="lacks output axes"):
        contraction_steps([("i",), ("i",)], ("z",), {"i": 2, "z": 3}, [(0, 1)])
    with pytest.raises(ValueError, match="at least one operand"):
        contraction_steps([], (), {}, [(0,)])


# --- planners: exactness and quality -----------------------------------------------------


@pytest.mark.parametrize("index", range(len(SMALL)))
def test_optimal_is_the_exact_minimum(index: int) -> None:
    network = SMALL[index]
    optimal = plan_cost(network, "optimal")
    assert optimal == brute_force(network)
    dp = plan_cost(network, "dp")
    assert optimal <= dp
    if is_connected(network):
        assert dp <= brute_force(network, outer=False)
    assert optimal <= oe_cost(network, "optimal")
    assert plan_cost(network, "auto") <= 1.05 * dp


def combo_cost(network: Network, path: Sequence[tuple[int, ...]]) -> int:
    steps = contraction_steps(*network, path)
    return total_flops(steps) + COMBO_WRITE_WEIGHT * total_writes(steps)


@pytest.mark.parametrize("index", range(0, len(SMALL), 2))
def test_optimal_and_dp_minimise_flops_plus_writes_exactly(index: int) -> None:
    network = SMALL[index]
    exact = brute_force(network, write_weight=COMBO_WRITE_WEIGHT)
    optimal = combo_cost(network, find_path(*network, strategy="optimal", minimize="combo"))
    assert optimal == exact
    assert optimal <= combo_cost(network, find_path(*network, strategy="optimal"))
    dp = combo_cost(network, find_path(*network, strategy="dp", minimize="combo"))
    if is_connected(network):
        assert dp <= brute_force(network, outer=False, write_weight=COMBO_WRITE_WEIGHT)
    auto = combo_cost(network, find_path(*network, strategy="auto", minimize="combo"))
    assert optimal <= auto <= 1.05 * dp


@settings(max_examples=25, deadline=None)
@given(
    st.integers(3, 6),
    st.integers(0, 2),
    st.lists(st.integers(1, 9), min_size=40, max_size=40),
)
def test_optimal_matches_brute_force_on_any_sizes(n: int, n_out: int, dims: list[int]) -> None:
    inputs, output, size_dict = random_network(n, n * 7 + n_out, n_out=n_out)
    sizes = {axis: dims[i % len(dims)] for i, axis in enumerate(sorted(size_dict))}
    network = (inputs, output, sizes)
    assert plan_cost(network, "optimal") == brute_force(network)


def test_opt_einsum_issue_254() -> None:
    # opt_einsum's optimal caches pair results without the other operands' axes
    inputs, output = parse("bgk,bkd,bk->bgd")
    network = (inputs, output, {"b": 8, "d": 64, "g": 2, "k": 4})
    ours = plan_cost(network, "optimal")
    assert ours == brute_force(network) == 8256
    assert ours <= oe_cost(network, "optimal")


def test_opt_einsum_issue_248() -> None:
    inputs, output = parse("iP,sP,PQ,jQ,tQ,ti,sj->")
    sizes = {"P": 64, "Q": 64, "i": 5, "j": 32, "s": 8, "t": 8}
    network = (inputs, output, sizes)
    ours = plan_cost(network, "optimal")
    assert ours == brute_force(network) == 148560
    assert ours <= oe_cost(network, "optimal")
    assert plan_cost(network, "dp") == ours


@pytest.mark.parametrize("n", [6, 9, 12, 15, 18])
def test_dp_is_no_worse_than_opt_einsum_dp(n: int) -> None:
    for seed in range(3):
        network = random_network(n, 100 + seed)
        assert plan_cost(network, "dp") <= oe_cost(network, "dp")
        dangling = with_dangling(n, 200 + seed)
        assert plan_cost(dangling, "dp") <= oe_cost(dangling, "dp")


def test_greedy_is_no_worse_than_opt_einsum_greedy() -> None:
    ratios = []
    for n in (5, 10, 20, 40):
        for seed in range(8):
            network = random_network(n, 300 + seed)
            ratios.append(plan_cost(network, "greedy") / oe_cost(network, "greedy"))
    assert geometric_mean(ratios) <= 1.0


def costly(network: Network) -> Network:
    """The network with every axis 2, 4, 8... times larger, until greedy's path costs 1e9."""
    inputs, output, size_dict = network
    factor = 1
    while True:
        factor *= 2
        larger = inputs, output, {axis: size * factor for axis, size in size_dict.items()}
        if plan_cost(larger, "greedy") >= 1_000_000_000:
            return larger


def test_auto_is_exact_up_to_eight_operands() -> None:
    for n in (6, 7, 8):
        for seed in range(4):
            network = random_network(n, 400 + seed)
            assert plan_cost(network, "auto") == plan_cost(network, "dp")


def test_auto_spends_effort_in_proportion_to_the_cost() -> None:
    # past eight operands a path that runs in a few milliseconds keeps greedy's
    # order; the same network with larger axes gets within a few percent of dp
    ratios, cheap = [], 0
    for n in (10, 12, 15, 18):
        for seed in range(3):
            network = random_network(n, 400 + seed)
            if plan_cost(network, "greedy") < 20_000_000:
                cheap += 1
                greedy_path = find_path(*network, strategy="greedy")
                assert find_path(*network, strategy="auto") == greedy_path
            larger = costly(network)
            ratios.append(plan_cost(larger, "auto") / plan_cost(larger, "dp"))
    assert cheap >= 6
    assert geometric_mean(ratios) <= 1.05


# --- planners: validity and behaviour ----------------------------------------------------


def assert_valid(network: Network, path: Sequence[tuple[int, ...]]) -> None:
    steps = contraction_steps(*network, path)
    assert steps[-1].result == network[1]


@pytest.mark.parametrize("strategy", PLANNERS)
def test_paths_run_in_numpy(strategy: str) -> None:
    rng = np.random.default_rng(0)
    networks = [random_network(n, 500 + n, n_out=1) for n in (3, 5, 7)]
    networks.append(with_dangling(5, 7))
    for inputs, output, size_dict in networks:
        small = {k: 1 + v % 3 for k, v in size_dict.items()}
        letters = {a: chr(ord("a") + i) for i, a in enumerate(sorted(small))}
        eq = ",".join("".join(letters[a] for a in t) for t in inputs)
        eq += "->" + "".join(letters[a] for a in output)
        arrays = [rng.standard_normal(tuple(small[a] for a in t)) for t in inputs]
        path = find_path(inputs, output, small, strategy)
        expected = np.einsum(eq, *arrays)
        actual = np.einsum(eq, *arrays, optimize=["einsum_path", *path])
        np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("strategy", PLANNERS)
@pytest.mark.parametrize("index", range(6))
def test_memory_limit_is_respected(strategy: str, index: int) -> None:
    network = random_network(7, 600 + index, n_out=1)
    unlimited = contraction_steps(*network, find_path(*network, strategy=strategy))
    inputs_max = max(compute_size(t, network[2]) for t in network[0])
    for limit in (inputs_max, largest_intermediate(unlimited) // 2, 1):
        path, sliced = plan_contraction(*network, strategy, memory_limit=limit)
        plan = sliced_contraction_steps(*network, path, sliced)
        assert all(len(entry) <= 2 for entry in path)
        assert all(step.size <= limit for step in plan.steps[:-1])
        assert plan.largest_intermediate <= limit
        if not sliced:  # a path planned under the limit, in one piece
            assert find_path(*network, strategy, memory_limit=limit) == list(path)


def test_memory_limit_slices_instead_of_one_step() -> None:
    # no pairwise path keeps the intermediates of this chain within 5 elements;
    # the plan used to contract all four matrices in one step (10_000 FLOPs * 4)
    inputs = [("i", "j"), ("j", "k"), ("k", "l"), ("l", "m")]
    network = (inputs, ("i", "m"), dict.fromkeys("ijklm", 10))
    naive = naive_flops(*network)
    for strategy in PLANNERS:
        path, sliced = plan_contraction(*network, strategy, memory_limit=5)
        assert sliced
        assert all(len(entry) == 2 for entry in path)
        plan = sliced_contraction_steps(*network, path, sliced)
        assert plan.largest_intermediate <= 5
        assert plan.slices == 10 ** len(sliced)
        # each intermediate has two axes of 10, so three axes must be sliced: 1000
        # slices of about 41 FLOPs, a tenth of the naive step's count
        assert plan.flops <= 45_000 < naive // 8
        assert find_path(*network, strategy, memory_limit=5) == list(path)


def test_trivial_networks() -> None:
    for strategy in PLANNERS:
        assert find_path([("i", "j")], ("j", "i"), {"i": 2, "j": 3}, strategy) == [(0,)]
        assert find_path([("i",), ("i",)], (), {"i": 2}, strategy) == [(0, 1)]


@pytest.mark.parametrize("strategy", PLANNERS)
def test_awkward_networks(strategy: str) -> None:
    sizes = {"i": 2, "j": 3, "k": 4, "batch": 5}
    networks: list[Network] = [
        ([(), ("i",), (), ("i", "j")], ("j",), sizes),  # scalars
        ([("i",), ("j",), ("k",)], ("i", "j", "k"), sizes),  # outer product
        ([("i", "j"), ("i", "j"), ("i", "j"), ("j", "k")], ("k",), sizes),  # Hadamard
        ([("batch", "i"), ("batch", "j"), ("batch", "i", "j")], ("batch",), sizes),
        ([("i", "k"), ("j", "k"), ("k",), ("i", "j")], (), sizes),
        ([("i",), ("j",), ("i", "j"), ("k",), ("k",)], (), sizes),  # two components
    ]
    for network in networks:
        path = find_path(*network, strategy)
        assert_valid(network, path)
        if len(network[0]) <= 8:
            assert cost(network, path) >= brute_force(network)
            if strategy == "optimal":
                assert cost(network, path) == brute_force(network)


@pytest.mark.parametrize("strategy", ["auto", "greedy"])
def test_large_networks(strategy: str) -> None:
    for network in (ring(150), grid(10, 15), random_network(150, 7)):
        assert_valid(network, find_path(*network, strategy))


def test_dp_handles_thirty_operand_networks() -> None:
    for network in (ring(30), random_network(30, 8, regularity=2)):
        assert_valid(network, find_path(*network, "dp"))
        assert plan_cost(network, "dp") <= plan_cost(network, "greedy")


def test_errors() -> None:
    network = random_network(OPTIMAL_MAX_OPERANDS + 1, 0)
    with pytest.raises(ValueError, match=r"optimal planning of \d+ operands would take too long"):
        find_path(*network, strategy="optimal")
    with pytest.raises(
        ValueError, match=r"'auto', 'optimal', 'dp', 'greedy', 'hyper', 'partition'"
    ):
        find_path(*network, strategy="branch")
    with pytest.raises(ValueError, match="at least one operand"):
        find_path([], (), {})
    with pytest.raises(ValueError, match="max_time applies to strategy 'hyper' only, not 'auto'"):
        find_path(*network, strategy="auto", max_time=1.0)
    with pytest.raises(ValueError, match=r"unknown objective 'time'; valid values are \('flops'"):
        find_path(*network, minimize="time")


def test_paths_do_not_depend_on_hash_seed() -> None:
    script = (
        "from opt_einsum.testing import rand_equation\n"
        "from tensorops._einsum.planning._paths import plan_contraction\n"
        "for n, s, strategies in [(6, 1, 'auto optimal dp greedy'), (14, 2, 'auto dp greedy'),\n"
        "                         (19, 4, 'auto'), (60, 3, 'auto greedy')]:\n"
        "    eq, _, d = rand_equation(n, 3, n_out=2, seed=s, return_size_dict=True)\n"
        "    lhs, out = eq.split('->')\n"
        "    ins = [tuple(x + 'ax' for x in t) for t in lhs.split(',')]\n"
        "    sizes = {k + 'ax': int(v) for k, v in d.items()}\n"
        "    for strategy in strategies.split():\n"
        "        print(plan_contraction(ins, tuple(x + 'ax' for x in out), sizes, strategy).path)\n"
        "    print(plan_contraction(ins, tuple(x + 'ax' for x in out), sizes, memory_limit=50))\n"
    )
    outputs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1


_AXES3 = "abcdef"


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sets(st.sampled_from(_AXES3), max_size=4), min_size=3, max_size=3),
    st.sets(st.sampled_from(_AXES3)),
    st.lists(st.integers(1, 5), min_size=len(_AXES3), max_size=len(_AXES3)),
    st.sampled_from([0, 64]),
)
def test_three_operands_are_planned_as_the_subset_search_plans_them(
    terms: list[set[str]], extra: set[str], lengths: list[int], weight: int
) -> None:
    """`optimal_three` gives the very steps of `plan_subsets`, ties included."""
    inputs = [tuple(sorted(term)) for term in terms]
    counts = {a: sum(a in term for term in terms) for a in _AXES3}
    union = {a for term in terms for a in term}
    # every axis on one operand only is kept, so that no operand sums one on its own
    output = tuple(sorted({a for a in union if counts[a] == 1} | (extra & union)))
    sizes = dict(zip(_AXES3, lengths, strict=True))
    direct, searched = (BitNetwork(inputs, output, sizes, None, weight) for _ in range(2))
    assert not any(direct.dangling)
    optimal_three(direct)
    plan_subsets(searched)
    assert direct.ssa == searched.ssa
    assert direct.cost() == searched.cost()


def _rescoring_greedy(inputs: Inputs, output: tuple[str, ...], sizes: dict[str, int]) -> list:
    """Greedy on sets of names, every linked pair rescored at each step: the reference.

    Ids are SSA ids; a pair's score is the size of its result minus theirs, ties go
    to the lowest (larger id, smaller id); a result with the axes of an alive
    operand is multiplied with it next; the last two are contracted whatever they score.
    """
    common = set.intersection(*(set(t) for t in inputs))
    keep = set(output) | common

    def size(axes: frozenset[str]) -> int:
        return math.prod(max(1, sizes[a]) for a in axes)

    alive = [(i, frozenset(t)) for i, t in enumerate(inputs)]
    steps: list[tuple[int, int]] = []
    forced: tuple[int, int] | None = None
    while len(alive) > 2:
        choices = []
        for k in range(len(alive)):
            for h in range(k):
                (ia, a), (ib, b) = alive[h], alive[k]
                if forced is not None and {ia, ib} != set(forced):
                    continue
                if not (a & b) - keep and forced is None:
                    continue
                others = set().union(*(t for j, t in alive if j not in (ia, ib)))
                kept = frozenset(x for x in a | b if x in keep or x in others)
                choices.append((size(kept) - size(a) - size(b), ib, ia, kept))
        assert choices, "the network is connected"
        _, ib, ia, kept = min(choices, key=lambda c: c[:3])
        steps.append((ia, ib))
        alive = [(j, t) for j, t in alive if j not in (ia, ib)]
        twins = [j for j, t in alive if t == kept]
        new = len(inputs) + len(steps) - 1
        forced = (twins[0], new) if twins else None
        alive.append((new, kept))
    steps.append((alive[0][0], alive[1][0]))
    return steps


def _connected(inputs: Inputs, output: tuple[str, ...]) -> bool:
    summed = {a for t in inputs for a in t} - set(output)
    reached, frontier = {0}, [0]
    while frontier:
        i = frontier.pop()
        for j, term in enumerate(inputs):
            if j not in reached and summed & set(inputs[i]) & set(term):
                reached.add(j)
                frontier.append(j)
    return len(reached) == len(inputs)


@settings(max_examples=300, deadline=None)
@given(st.integers(3, 10), st.integers(0, 10**6), st.integers(2, 4), st.integers(0, 2))
def test_greedy_rescores_every_pair_on_small_networks(
    n: int, seed: int, regularity: int, n_out: int
) -> None:
    """Up to ten operands greedy is the plain rescoring greedy of `_rescoring_greedy`."""
    eq, _, raw = rand_equation(
        n, regularity, n_out=n_out, d_min=1, d_max=6, seed=seed, return_size_dict=True
    )
    inputs, output = parse(eq)
    sizes = {a: int(s) for a, s in raw.items()}
    distinct = len({frozenset(t) for t in inputs}) == n
    plain = all(len(set(t)) == len(t) for t in inputs)
    net = BitNetwork(inputs, output, sizes)
    if not (distinct and plain and _connected(inputs, output)) or any(net.dangling):
        return
    plan_greedy(net)
    assert net.ssa == _rescoring_greedy(inputs, output, sizes)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sets(st.sampled_from("abcdef"), min_size=1, max_size=3), min_size=4, max_size=7),
    st.sets(st.sampled_from("abcdef"), max_size=2),
    st.lists(st.integers(1, 6), min_size=6, max_size=6),
)
def test_greedy_multiplies_results_with_their_twins_as_the_reference_does(
    terms: list[set[str]], extra: set[str], lengths: list[int]
) -> None:
    """Few axes: results often have the axes of an alive operand (merged at once)."""
    inputs = [tuple(sorted(term)) for term in terms]
    used = {a for term in terms for a in term}
    output = tuple(sorted(extra & used))
    sizes = dict(zip("abcdef", lengths, strict=True))
    net = BitNetwork(inputs, output, sizes)
    if len(set(inputs)) < len(inputs) or not _connected(inputs, output) or any(net.dangling):
        return
    plan_greedy(net)
    assert net.ssa == _rescoring_greedy(inputs, output, sizes)


def _assert_counted(
    net: BitNetwork, total: int | None, inputs: Inputs, output: tuple[str, ...]
) -> None:
    """Greedy's own count is `BitNetwork.cost`, and it counts on linked plain networks."""
    if total is not None:
        assert total == net.cost()
    common = set.intersection(*(set(t) for t in inputs)) - set(output)
    countable = (
        not any(net.dangling)
        and not common
        and len(set(net.inputs)) == len(net.inputs)
        and _connected(inputs, output)
    )
    if countable:
        assert total is not None


@settings(max_examples=200, deadline=None)
@given(
    st.integers(2, 30),
    st.integers(0, 10**6),
    st.integers(0, 2),
    st.sampled_from([0, 1]),
    st.sampled_from([0, COMBO_WRITE_WEIGHT]),
)
def test_greedy_counts_the_cost_of_its_path(
    n: int, seed: int, n_out: int, weight: int, write_weight: int
) -> None:
    eq, _, raw = rand_equation(
        n, 3, n_out=n_out, d_min=1, d_max=6, seed=seed, return_size_dict=True
    )
    inputs, output = parse(eq)
    if seed % 3 == 0:  # a batch axis on every operand, summed or kept
        inputs = [(*term, "batch") for term in inputs]
        output = (*output, "batch") if seed % 2 else output
    sizes = {a: int(s) for a, s in raw.items()} | {"batch": 3}
    net = BitNetwork(inputs, output, sizes, write_weight=write_weight)
    _assert_counted(net, plan_greedy(net, weight), inputs, output)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sets(st.sampled_from("abcdef"), min_size=1, max_size=3), min_size=2, max_size=14),
    st.sets(st.sampled_from("abcdef"), max_size=2),
    st.lists(st.integers(1, 6), min_size=6, max_size=6),
    st.booleans(),
)
def test_greedy_counts_the_cost_with_twins_repeats_and_a_scorer(
    terms: list[set[str]], extra: set[str], lengths: list[int], scored: bool
) -> None:
    """Few axes: twins, repeated operands and axes on every operand are common."""
    inputs = [tuple(sorted(term)) for term in terms]
    used = {a for term in terms for a in term}
    output = tuple(sorted(extra & used))
    net = BitNetwork(inputs, output, dict(zip("abcdef", lengths, strict=True)))
    total = plan_greedy(
        net, scorer=(lambda size, operands: size - 2 * operands) if scored else None
    )
    _assert_counted(net, total, inputs, output)


def _two_networks(n: int, seed: int) -> Network:
    """Two random networks side by side, sharing no axis: two components."""
    first, second = random_network(n, seed), random_network(n, seed + 1)
    renamed = [tuple(f"{axis}'" for axis in term) for term in second[0]]
    sizes = first[2] | {f"{axis}'": size for axis, size in second[2].items()}
    output = (*first[1], *(f"{axis}'" for axis in second[1]))
    return [*first[0], *renamed], output, sizes


@pytest.mark.parametrize("write_weight", [0, COMBO_WRITE_WEIGHT])
@pytest.mark.parametrize("limit", [None, 2_000])
def test_dp_returns_the_cost_of_its_path(write_weight: int, limit: int | None) -> None:
    networks = [random_network(n, 700 + n) for n in (6, 9, 12)]
    networks += [with_dangling(8, 3), with_dangling(10, 4), _two_networks(5, 11)]
    for network in networks:
        net = BitNetwork(*network, limit, write_weight)
        assert _dp_search(net) == net.cost()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sets(st.sampled_from("abcdefghij"), max_size=3), min_size=1, max_size=12),
    st.sets(st.sampled_from("abcdefghij"), max_size=3),
)
def test_components_are_the_operands_linked_by_summed_axes(
    terms: list[set[str]], output: set[str]
) -> None:
    inputs = [tuple(sorted(term)) for term in terms]
    used = {a for term in terms for a in term}
    net = BitNetwork(inputs, tuple(sorted(output & used)), dict.fromkeys(used, 2))
    # reference: each operand joins, and merges, the groups it shares a summed axis with
    groups: list[set[int]] = []
    for i, term in enumerate(terms):
        linked = [g for g in groups if any(terms[j] & term - output for j in g)]
        groups = [g for g in groups if g not in linked] + [{i}.union(*linked)]
    expected = sorted(sorted(members) for members in groups)
    assert net.components() == expected
