"""tensorops' optimizer and presets in quimb, which hands ``optimize=`` to cotengra.

quimb's contraction with cotengra's greedy optimizer is the oracle: a tensor network,
a random quantum circuit's amplitude and an MPS norm agree with it. (Not quimb's
``"auto"`` / ``"auto-hq"``: on larger networks they search in a process pool, and a
fork in a test process that runs JAX's threads may deadlock.)
"""

from __future__ import annotations

import numpy as np
import pytest
import quimb.tensor as qtn

import tensorops as tops

# complex128 rounding over a contraction of a few hundred small tensors
TOLERANCE = 1e-10


@pytest.fixture(scope="module", params=["optimizer", "preset"])
def optimize(request: pytest.FixtureRequest) -> object:
    if request.param == "preset":
        tops.register_presets()
        return "tensorops-hyper"
    return tops.PathOptimizer("hyper")


def test_a_random_tensor_network(optimize: object) -> None:
    tn = qtn.TN_rand_reg(14, 3, D=3, seed=7)
    expected = tn.contract(all, optimize="greedy")
    assert tn.contract(all, optimize=optimize) == pytest.approx(expected, rel=TOLERANCE)


def _circuit(qubits: int, depth: int, seed: int) -> qtn.Circuit:
    rng = np.random.default_rng(seed)
    circuit = qtn.Circuit(qubits)
    for layer in range(depth):
        for q in range(qubits):
            circuit.apply_gate("U3", *rng.uniform(0, 2 * np.pi, 3), q)
        for q in range(layer % 2, qubits - 1, 2):
            circuit.apply_gate("CZ", q, q + 1)
    return circuit


def test_a_random_circuit_amplitude(optimize: object) -> None:
    circuit = _circuit(10, 8, seed=1)
    bits = "0110100101"
    expected = circuit.amplitude(bits, optimize="greedy")
    assert circuit.amplitude(bits, optimize=optimize) == pytest.approx(expected, rel=TOLERANCE)
    # against the state vector itself
    dense = circuit.to_dense(optimize="greedy").ravel()
    assert expected == pytest.approx(dense[int(bits, 2)], rel=TOLERANCE)


def test_an_mps_norm(optimize: object) -> None:
    psi = qtn.MPS_rand_state(30, bond_dim=8, seed=2)
    norm = (psi.H & psi).contract(all, optimize=optimize)
    assert norm == pytest.approx(1.0, rel=TOLERANCE)
    assert norm == pytest.approx((psi.H & psi).contract(all, optimize="greedy"), rel=TOLERANCE)


def test_a_sliced_tree_within_the_limit() -> None:
    tn = qtn.TN2D_rand(6, 6, D=4, seed=3)
    expected = tn.contract(all, optimize="greedy")
    opt = tops.PathOptimizer("hyper", memory_limit=4**5)
    tree = tn.contraction_tree(optimize=opt)
    assert tree.sliced_inds
    assert tree.max_size() <= 4**5
    assert tn.contract(all, optimize=opt) == pytest.approx(expected, rel=TOLERANCE)
