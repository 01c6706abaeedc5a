"""A hidden Markov model with einsum over other semirings: likelihood, decoding, posteriors.

An HMM's probability of a sequence of observations sums, over every sequence of hidden
states ``z0 .. zT``, the product of the start, transition and emission probabilities.
In log space that is one einsum over the chain with ``semiring="logsumexp"`` (the
forward algorithm); with ``semiring="max"`` it is the best sequence's score, and
``argmax=True`` gives that sequence (the Viterbi path). Both are checked here against
enumerating every sequence of a small model; a larger one runs the same calls. With
torch installed, the gradient of the log-likelihood gives the posterior marginals.

Usage: python examples/hmm.py
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a source checkout

import tensorops as tops

# The weather and what a friend does each day (Wikipedia's example of the Viterbi algorithm).
STATES = ("rainy", "sunny")
ACTIVITIES = ("walk", "shop", "clean")
START = np.log([0.6, 0.4])
TRANSITION = np.log([[0.7, 0.3], [0.4, 0.6]])
EMISSION = np.log([[0.1, 0.4, 0.5], [0.6, 0.3, 0.1]])


def chain(start: np.ndarray, transition: np.ndarray, emissions: list[np.ndarray]) -> list:
    """The chain's operands and subscripts (the sublist format): one index per day.

    start(z0) e0(z0) T(z0, z1) e1(z1) ... -> (): the same transition array at every step.
    """
    arguments: list = [start, [0], emissions[0], [0]]
    for day in range(1, len(emissions)):
        arguments += [transition, [day - 1, day], emissions[day], [day]]
    return [*arguments, []]


def enumerate_paths(emissions: list[np.ndarray]) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """Every sequence of states and its log-probability with the observations."""
    paths = list(itertools.product(range(len(STATES)), repeat=len(emissions)))
    scores = np.array(
        [
            START[p[0]]
            + sum(emissions[t][s] for t, s in enumerate(p))
            + sum(TRANSITION[a, b] for a, b in itertools.pairwise(p))
            for p in paths
        ]
    )
    return paths, scores


def main() -> int:
    observed = ["walk", "shop", "clean", "clean", "walk", "shop"]
    emissions = [EMISSION[:, ACTIVITIES.index(a)] for a in observed]
    arguments = chain(START, TRANSITION, emissions)

    likelihood = tops.einsum(*arguments, semiring="logsumexp")
    best, indices = tops.einsum(*arguments, semiring="max", argmax=True)
    decoded = [int(indices[day]) for day in range(len(observed))]

    paths, scores = enumerate_paths(emissions)
    top = scores.max()
    assert np.isclose(likelihood, top + np.log(np.exp(scores - top).sum())), likelihood
    assert np.isclose(best, top)
    assert tuple(decoded) == paths[int(scores.argmax())]
    print(f"observed:        {' '.join(observed)}")
    print(f"log-likelihood:  {float(likelihood):.6f}  (enumerated: the same)")
    print(f"Viterbi path:    {' '.join(STATES[s] for s in decoded)}  (log-prob {float(best):.4f})")
    print(tops.einsum_path(*arguments, semiring="logsumexp"))

    larger(states=50, days=200)
    posteriors(emissions)
    return 0


def larger(states: int, days: int) -> None:
    """The same calls on a random model; the step-by-step forward pass agrees."""
    rng = np.random.default_rng(0)
    start = np.log(rng.dirichlet(np.ones(states)))
    transition = np.log(rng.dirichlet(np.ones(states), size=states))
    emissions = [np.log(rng.dirichlet(np.ones(states))) for _ in range(days)]
    arguments = chain(start, transition, emissions)
    likelihood = tops.einsum(*arguments, semiring="logsumexp", strategy="dp")
    alpha = start + emissions[0]
    for emission in emissions[1:]:  # the forward algorithm, one einsum per day
        alpha = tops.einsum("i,ij->j", alpha, transition, semiring="logsumexp") + emission
    assert np.isclose(likelihood, tops.einsum("i->", alpha, semiring="logsumexp"))
    best, indices = tops.einsum(*arguments, semiring="max", argmax=True, strategy="dp")
    path = [int(indices[day]) for day in range(days)]
    score = start[path[0]] + sum(e[s] for e, s in zip(emissions, path, strict=True))
    score += sum(transition[a, b] for a, b in itertools.pairwise(path))
    assert np.isclose(score, best)  # the decoded path scores the maximum
    print(f"{states} states, {days} days: log-likelihood {float(likelihood):.3f}", end=", ")
    print(f"best path {float(best):.3f}")


def posteriors(emissions: list[np.ndarray]) -> None:
    """The gradient of the log-likelihood by each day's log-emissions: P(state that day)."""
    try:
        import torch
    except ImportError:
        print("(torch is not installed: posteriors skipped)")
        return
    logs = [torch.tensor(e, requires_grad=True) for e in emissions]
    arguments = chain(torch.tensor(START), torch.tensor(TRANSITION), logs)
    tops.einsum(*arguments, semiring="logsumexp").backward()
    paths, scores = enumerate_paths(emissions)
    weights = np.exp(scores - scores.max())
    weights /= weights.sum()
    for day, e in enumerate(logs):
        assert e.grad is not None
        enumerated = [weights[[p[day] == s for p in paths]].sum() for s in range(len(STATES))]
        assert np.allclose(e.grad.numpy(), enumerated)
    shown = ", ".join(f"{e.grad[0].item():.2f}" for e in logs)
    print(f"P(rainy) per day: {shown}")


if __name__ == "__main__":
    sys.exit(main())
