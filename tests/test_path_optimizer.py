"""tensorops.PathOptimizer and register_presets inside opt_einsum, cotengra and quimb.

The tools are the oracles: what they compute with tensorops' optimizer agrees with
what they compute with their own defaults, and the paths cost what tensorops' own
einsum plans cost, counted by opt_einsum.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
from typing import Any

import cotengra as ctg
import numpy as np
import opt_einsum as oe
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorops as tops
from tensorops._einsum.planning import _optimizer

STRATEGIES = ("auto", "optimal", "dp", "greedy", "hyper", "partition")
RING = "ab,bc,cd,de,ea->"


def _arrays(equation: str, size: int = 3, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    terms = equation.split("->")[0].split(",")
    return [rng.standard_normal((size,) * len(term)) for term in terms]


def _tolerance(arrays: list[np.ndarray]) -> float:
    """Float64 rounding over the contraction: eps times the number of products summed."""
    elements = np.prod([a.size for a in arrays], dtype=np.float64)
    return float(np.finfo(np.float64).eps * 64 * max(1.0, np.log2(elements)))


@st.composite
def networks(draw: st.DrawFn) -> tuple[str, dict[str, int]]:
    """A random einsum of 3 to 7 operands over up to 8 letters (sizes 1 to 5)."""
    letters = "abcdefgh"[: draw(st.integers(3, 8))]
    terms = [
        "".join(draw(st.lists(st.sampled_from(letters), min_size=1, max_size=4, unique=True)))
        for _ in range(draw(st.integers(3, 7)))
    ]
    used = sorted(set("".join(terms)))
    output = "".join(draw(st.lists(st.sampled_from(used), max_size=2, unique=True)))
    sizes = {letter: draw(st.integers(1, 5)) for letter in used}
    return ",".join(terms) + "->" + output, sizes


def _shapes(equation: str, sizes: dict[str, int]) -> list[tuple[int, ...]]:
    return [tuple(sizes[c] for c in term) for term in equation.split("->")[0].split(",")]


# -- the protocol itself


def test_a_call_returns_the_path_of_einsum_path() -> None:
    arrays = _arrays("ij,jk,kl,lm->im", 5)
    for strategy in STRATEGIES:
        opt = tops.PathOptimizer(strategy)
        inputs = [set("ij"), set("jk"), set("kl"), set("lm")]
        path = opt(inputs, set("im"), dict.fromkeys("ijklm", 5))
        assert path == tops.einsum_path("ij,jk,kl,lm->im", *arrays, strategy=strategy).path


@pytest.mark.parametrize(
    "labels",
    [
        ("a", "b", "c", "d", "e"),  # opt_einsum's letters
        ("_a1b2c3", "_d4e5f6", "_x", "_y", "_z"),  # quimb's random names
        (0, 1, 2, 3, 4),  # cotengra's anything hashable
        ((0, "k"), 7, "x", 2.5, frozenset({1})),  # of several types
    ],
)
def test_any_hashable_labels_give_the_same_path(labels: tuple[Any, ...]) -> None:
    rename = dict(zip("abcde", labels, strict=True))
    sizes = {"a": 2, "b": 30, "c": 4, "d": 50, "e": 6}
    inputs = [[rename[c] for c in term] for term in RING[:-2].split(",")]
    opt = tops.PathOptimizer("optimal")
    path = opt(inputs, [], {rename[c]: n for c, n in sizes.items()})
    assert path == opt([list(term) for term in RING[:-2].split(",")], [], sizes)
    assert (
        path == tops.einsum_path(RING, *_shapes(RING, sizes), shapes=True, strategy="optimal").path
    )


def test_paths_do_not_depend_on_string_hashing() -> None:
    """Sets of labels iterate in hash order; the path must not follow it."""
    code = (
        "import tensorops as tops\n"
        "sizes = dict(zip('abcdefgh', (2, 9, 3, 8, 4, 7, 5, 6)))\n"
        "terms = ['ab', 'bc', 'cd', 'de', 'ef', 'fg', 'gh', 'ha', 'ae', 'cg']\n"
        "print(tops.PathOptimizer('greedy')([set(t) for t in terms], set(), sizes))"
    )
    seen = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": str(seed), "PATH": ""},
        ).stdout
        for seed in (1, 2, 3)
    }
    assert len(seen) == 1


def test_a_network_of_the_same_structure_is_planned_once(monkeypatch: Any) -> None:
    opt = tops.PathOptimizer("dp")
    sizes = dict.fromkeys("abcde", 4)
    first = opt([set(t) for t in RING[:-2].split(",")], set(), sizes)

    def fail(*args: Any, **keywords: Any) -> None:
        raise AssertionError("planned again")

    monkeypatch.setattr(_optimizer, "plan_contraction", fail)
    renamed = [{c.upper() for c in t} for t in RING[:-2].split(",")]
    assert opt(renamed, set(), dict.fromkeys("ABCDE", 4)) == first


def test_paths_are_kept_in_the_plan_store(tmp_path: Any, monkeypatch: Any) -> None:
    store = tops.PlanStore(tmp_path)
    sizes = dict(zip("abcde", (3, 4, 5, 6, 7), strict=True))
    inputs = [tuple(t) for t in RING[:-2].split(",")]
    with tops.config(plan_store=store):
        first = tops.PathOptimizer("hyper", seed=3)(inputs, (), sizes)
        assert len(store.entries()) == 1

        def fail(*args: Any, **keywords: Any) -> None:
            raise AssertionError("planned again")

        monkeypatch.setattr(_optimizer, "plan_contraction", fail)
        assert tops.PathOptimizer("hyper", seed=3)(inputs, (), sizes) == first


def test_a_memory_limit_keeps_every_intermediate_within_it() -> None:
    equation = "ab,bc,cd,da->"
    sizes = dict.fromkeys("abcd", 100)
    inputs = [tuple(t) for t in equation[:-2].split(",")]
    unlimited = tops.PathOptimizer("optimal")(inputs, (), sizes)
    limited = tops.PathOptimizer("optimal", memory_limit=1000)(inputs, (), sizes)
    shapes = _shapes(equation, sizes)
    assert (
        oe.contract_path(equation, *shapes, shapes=True, optimize=unlimited)[1].largest_intermediate
        > 1000
    )
    info = oe.contract_path(equation, *shapes, shapes=True, optimize=limited)[1]
    assert info.largest_intermediate <= 1000 or len(limited[-1]) > 2
    # opt_einsum's own limit: the smaller of the two applies, -1 is none
    assert tops.PathOptimizer("optimal")(inputs, (), sizes, 1000) == limited
    assert tops.PathOptimizer("optimal", memory_limit=1000)(inputs, (), sizes, -1) == limited


def test_pickles_compares_and_shows_its_settings() -> None:
    opt = tops.PathOptimizer("hyper", max_time=0.5, minimize="combo", memory_limit=10**6, seed=1)
    assert pickle.loads(pickle.dumps(opt)) == opt
    assert hash(opt) == hash(pickle.loads(pickle.dumps(opt)))
    assert opt != tops.PathOptimizer("hyper")
    assert repr(opt) == (
        "PathOptimizer('hyper', max_time=0.5, minimize='combo', memory_limit=1000000, seed=1)"
    )
    assert repr(tops.PathOptimizer()) == "PathOptimizer('auto')"


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"strategy": "best"}, "unknown path optimizer strategy 'best'; valid: auto, optimal"),
        ({"minimize": "size"}, "unknown objective 'size'; valid: flops, combo"),
        ({"strategy": "dp", "max_time": 1.0}, "applies to strategy 'hyper' only, not 'dp'"),
        ({"strategy": "greedy", "seed": 1}, "'hyper' and 'partition' only, not 'greedy'"),
        ({"strategy": "hyper", "max_time": 0}, "max_time=0 is not a positive number"),
        ({"strategy": "hyper", "seed": 1.5}, "seed=1.5 is not an integer"),
        ({"memory_limit": 0}, "memory_limit=0 is not a positive number of elements"),
        ({"memory_limit": "1GB"}, "memory_limit='1GB' is not a positive number"),
    ],
)
def test_bad_settings_raise(keywords: dict[str, Any], message: str) -> None:
    with pytest.raises(tops.TensorOpsError, match=message.replace("(", r"\(")):
        tops.PathOptimizer(**keywords)


@pytest.mark.parametrize(
    ("inputs", "output", "sizes", "message"),
    [
        ([], (), {}, "a contraction needs at least one operand"),
        ([("a", "b")], ("c",), {"a": 1, "b": 1, "c": 1}, "the output label 'c' is in no input"),
        ([("a", "b")], (), {"a": 2}, "size_dict has no size for the label 'b'"),
        ([("a",)], (), {"a": -1}, "the size of 'a', -1, is not an integer >= 0"),
        ([("a",)], (), {"a": 2.5}, "the size of 'a', 2.5, is not an integer >= 0"),
        ([[["a"]]], (), {}, "the indices are not iterables of hashable labels"),
        ([5], (), {}, "the indices are not iterables of hashable labels"),
    ],
)
def test_bad_networks_raise(inputs: Any, output: Any, sizes: Any, message: str) -> None:
    opt = tops.PathOptimizer()
    with pytest.raises(tops.TensorOpsError, match=message):
        opt(inputs, output, sizes)
    with pytest.raises(tops.TensorOpsError):
        opt(inputs, output, sizes, memory_limit=0)


def test_search_without_cotengra_says_what_it_needs(monkeypatch: Any) -> None:
    monkeypatch.delitem(sys.modules, "cotengra")
    with pytest.raises(tops.ArgumentError, match="import cotengra first"):
        tops.PathOptimizer().search([("a", "b"), ("b",)], ("a",), {"a": 2, "b": 3})


# -- opt_einsum


def test_is_an_opt_einsum_path_optimizer() -> None:
    assert isinstance(tops.PathOptimizer(), oe.paths.PathOptimizer)
    assert isinstance(tops.PathOptimizer(), tops.PathOptimizer)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_opt_einsum_contracts_with_it(strategy: str) -> None:
    equation = "abc,cd,de,efa,fb->"
    arrays = _arrays(equation, 4, seed=1)
    opt = tops.PathOptimizer(strategy)
    expected = np.einsum(equation, *arrays, optimize=False)
    assert oe.contract(equation, *arrays, optimize=opt) == pytest.approx(
        expected, rel=_tolerance(arrays), abs=_tolerance(arrays)
    )
    path, info = oe.contract_path(equation, *arrays, optimize=opt)
    plan = tops.einsum_path(equation, *arrays, strategy=strategy)
    assert path == plan.path
    assert info.opt_cost == plan.flops
    expression = oe.contract_expression(equation, *(a.shape for a in arrays), optimize=opt)
    assert expression(*arrays) == pytest.approx(expected, rel=_tolerance(arrays))


@settings(max_examples=40, deadline=None)
@given(networks())
def test_opt_einsum_costs_match_tensorops_einsum(network: tuple[str, dict[str, int]]) -> None:
    equation, sizes = network
    shapes = _shapes(equation, sizes)
    for strategy in ("optimal", "auto", "greedy"):
        _, info = oe.contract_path(
            equation, *shapes, shapes=True, optimize=tops.PathOptimizer(strategy)
        )
        plan = tops.einsum_path(equation, *shapes, shapes=True, strategy=strategy)
        assert info.opt_cost == plan.flops
    optimal = oe.contract_path(equation, *shapes, shapes=True, optimize="optimal")[1]
    ours = tops.einsum_path(equation, *shapes, shapes=True, strategy="optimal")
    assert ours.flops <= optimal.opt_cost


def test_presets_in_opt_einsum() -> None:
    names = tops.register_presets()
    assert names == tuple(_optimizer.PRESETS)
    assert tops.register_presets() == names  # again: nothing changes
    arrays = _arrays(RING, 5)
    expected = np.einsum(RING, *arrays)
    for name in names:
        assert oe.contract(RING, *arrays, optimize=name) == pytest.approx(
            expected, rel=_tolerance(arrays)
        )
        strategy = _optimizer.PRESETS[name]
        path = oe.contract_path(RING, *arrays, optimize=name)[0]
        assert path == tops.einsum_path(RING, *arrays, strategy=strategy).path


def test_presets_reach_tools_imported_afterwards() -> None:
    code = (
        "import sys, tensorops as tops\n"
        "tops.register_presets()\n"
        "assert 'opt_einsum' not in sys.modules and 'cotengra' not in sys.modules\n"
        "import opt_einsum, cotengra\n"
        "print(opt_einsum.paths.get_path_fn('tensorops-hyper'))\n"
        "print(cotengra.interface.preset_to_optimizer('tensorops-dp'))\n"
        "import numpy as np\n"
        "print(opt_einsum.contract('ab,bc,ca->', *[np.ones((2, 2))] * 3, optimize='tensorops'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.splitlines() == [
        "PathOptimizer('hyper')",
        "PathOptimizer('dp')",
        "8.0",
    ]


# -- cotengra


def _cotengra_network(equation: str) -> tuple[list[tuple[str, ...]], tuple[str, ...]]:
    left, output = equation.split("->")
    return [tuple(term) for term in left.split(",")], tuple(output)


def test_cotengra_contracts_with_it() -> None:
    equation = "abc,cd,de,efa,fbg->g"
    inputs, output = _cotengra_network(equation)
    arrays = _arrays(equation, 4, seed=2)
    expected = np.einsum(equation, *arrays)
    tolerance = _tolerance(arrays)
    for optimize in (tops.PathOptimizer("hyper"), tops.PathOptimizer("greedy")):
        result = ctg.array_contract(arrays, inputs, output, optimize=optimize)
        np.testing.assert_allclose(result, expected, rtol=tolerance, atol=tolerance)
        path = ctg.array_contract_path(
            inputs, output, shapes=[a.shape for a in arrays], optimize=optimize
        )
        assert [tuple(step) for step in path] == tops.einsum_path(
            equation, *arrays, strategy=optimize.strategy
        ).path


def test_search_gives_a_contraction_tree_of_the_path() -> None:
    equation = "abc,cd,de,efa,fbg->g"
    inputs, output = _cotengra_network(equation)
    sizes = dict(zip("abcdefg", (2, 3, 4, 5, 6, 7, 8), strict=True))
    opt = tops.PathOptimizer("optimal")
    tree = ctg.array_contract_tree(inputs, output, size_dict=sizes, optimize=opt)
    assert isinstance(tree, ctg.ContractionTree)
    plan = tops.einsum_path(equation, *_shapes(equation, sizes), shapes=True, strategy="optimal")
    assert ctg.ContractionTree.from_path(inputs, output, sizes, path=plan.path).get_path() == (
        tree.get_path()
    )
    # the round trip: the tree's path back into tensorops' einsum
    arrays = [np.random.default_rng(3).standard_normal(s) for s in _shapes(equation, sizes)]
    tolerance = _tolerance(arrays)
    np.testing.assert_allclose(
        tops.einsum(equation, *arrays, strategy=[tuple(s) for s in tree.get_path()]),
        tree.contract(arrays),
        rtol=tolerance,
        atol=tolerance,
    )


def test_search_slices_to_fit_the_memory_limit() -> None:
    equation = "ab,bc,cd,da->"
    inputs, output = _cotengra_network(equation)
    sizes = dict.fromkeys("abcd", 40)
    opt = tops.PathOptimizer("optimal", memory_limit=200)
    tree = opt.search(inputs, output, sizes)
    assert tree.sliced_inds
    assert tree.max_size() <= 200
    plan = tops.einsum_path(equation, *_shapes(equation, sizes), shapes=True, memory_limit=200)
    assert tuple(tree.sliced_inds) == plan.sliced_axes
    arrays = _arrays(equation, 40, seed=4)
    tolerance = _tolerance(arrays)
    expected = np.einsum(equation, *arrays)
    np.testing.assert_allclose(tree.contract(arrays), expected, rtol=tolerance, atol=tolerance)
    result = ctg.array_contract(arrays, inputs, output, optimize=opt)
    np.testing.assert_allclose(result, expected, rtol=tolerance, atol=tolerance)


def test_presets_in_cotengra() -> None:
    tops.register_presets()
    equation = "abc,cd,de,efa,fbg->g"
    inputs, output = _cotengra_network(equation)
    arrays = _arrays(equation, 3, seed=5)
    expected = np.einsum(equation, *arrays)
    tolerance = _tolerance(arrays)
    for name in _optimizer.PRESETS:
        result = ctg.array_contract(arrays, inputs, output, optimize=name)
        np.testing.assert_allclose(result, expected, rtol=tolerance, atol=tolerance)
    tree = ctg.array_contract_tree(
        inputs, output, shapes=[a.shape for a in arrays], optimize="tensorops-hyper"
    )
    assert isinstance(tree, ctg.ContractionTree)


def test_presets_in_a_cotengra_without_tree_functions() -> None:
    # cotengra < 0.7: register_preset(preset, optimizer, register_opt_einsum=...) only
    registered: dict[str, object] = {}

    class OldCotengra:
        @staticmethod
        def register_preset(preset: str, optimizer: object, register_opt_einsum: bool) -> None:
            assert register_opt_einsum is False
            registered[preset] = optimizer

    optimizers = {name: tops.PathOptimizer(s) for name, s in _optimizer.PRESETS.items()}
    _optimizer._register_with_cotengra(optimizers)(OldCotengra)
    assert registered == optimizers


# -- tensorops' own einsum


def test_tensorops_einsum_takes_it_and_slices_within_its_limit() -> None:
    equation = "ab,bc,cd,da->"
    arrays = _arrays(equation, 40, seed=6)
    opt = tops.PathOptimizer("optimal", memory_limit=200)
    plan = tops.einsum_path(equation, *arrays, optimize=opt)
    assert plan.sliced_axes
    assert plan.largest_intermediate <= 200
    tolerance = _tolerance(arrays)
    np.testing.assert_allclose(
        tops.einsum(equation, *arrays, optimize=opt),
        np.einsum(equation, *arrays),
        rtol=tolerance,
        atol=tolerance,
    )
