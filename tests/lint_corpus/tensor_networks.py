"""Tensor-network contractions: numpy's einsum and opt_einsum under several spellings."""

import numpy as np
import opt_einsum as oe
from numpy import einsum
from opt_einsum import contract_expression, contract_path


def matrix_product_state(sites: int = 4, bond: int = 3, physical: int = 2) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    first = rng.standard_normal((physical, bond))
    middle = [rng.standard_normal((bond, physical, bond)) for _ in range(sites - 2)]
    last = rng.standard_normal((bond, physical))
    return [first, *middle, last]


def norm_of(mps: list[np.ndarray]) -> float:
    env = einsum("pa,pb->ab", mps[0], mps[0].conj())
    for site in mps[1:-1]:
        env = np.einsum("ab,apc,bpd->cd", env, site, site.conj())
    return float(np.einsum("ab,ap,bp->", env, mps[-1], mps[-1].conj()))


def expectation(state: np.ndarray, operator: np.ndarray) -> float:
    return float(oe.contract("i,ij,j", state.conj(), operator, state))


def transfer_matrix(site: np.ndarray) -> np.ndarray:
    matrix = oe.contract("apc,bpd->abcd", site, site.conj(), optimize="greedy")
    return matrix.reshape(site.shape[0] ** 2, site.shape[2] ** 2)


def batched_gram(vectors: np.ndarray) -> np.ndarray:
    return np.einsum("...ni,...mi->...nm", vectors, vectors)


def trace_of_product(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.einsum("ij,ji", a, b))


def diagonal(matrix: np.ndarray) -> np.ndarray:
    return np.einsum("ii->i", matrix)


def cost_of_chain() -> str:
    shapes = (8, 16), (16, 32), (32, 16), (16, 8)
    _path, info = contract_path("ab,bc,cd,de->ae", *shapes, shapes=True)
    return str(info)


def compiled_chain(size: int = 8) -> object:
    expression = contract_expression("ab,bc,cd->ad", (size, 4), (4, 4), (4, size))
    return expression


def outer(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return einsum("i,j->ij", u, v)
