"""A hidden Markov model with einsum over other semirings: likelihood, decoding, posteriors.

An HMM's probability of a sequence of observations sums, over every sequence of hidden
states ``z0 .. zT``, the product of the start, transition and emission probabilities.
In log space that is one einsum over the chain with ``semiring="logsumexp"`` (the
forward algorithm); with ``semiring="max"`` it is the best sequence's score, and
``argmax=True`` gives that sequence (the Viterbi path). Both are checked here against
enumerating every sequence of a small model; a larger one runs the same calls, and the
idioms of a loop over steps: the forward step as an ``einsum_expression`` whose
transition matrix is a constant (exponentiated once), the Viterbi step with its
back-pointers, and a linear-chain CRF's partition function over a batch, with scores
spread over a thousand nats. With torch installed, the gradient of the log-likelihood
gives the posterior marginals.

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
    crf(batch=4, steps=5, tags=3)
    posteriors(emissions)
    return 0


def larger(states: int, days: int) -> None:
    """The same calls on a random model; the loops of forward and Viterbi steps agree."""
    rng = np.random.default_rng(0)
    start = np.log(rng.dirichlet(np.ones(states)))
    transition = np.log(rng.dirichlet(np.ones(states), size=states))
    emissions = [np.log(rng.dirichlet(np.ones(states))) for _ in range(days)]
    arguments = chain(start, transition, emissions)
    likelihood = tops.einsum(*arguments, semiring="logsumexp", strategy="dp")
    # the forward algorithm one day at a time: the transition matrix a constant of the step,
    # exponentiated once, so that a step is one matrix-vector product
    step = tops.einsum_expression(
        "i,ij->j", (states,), transition, constants=[1], semiring="logsumexp"
    )
    alpha = start + emissions[0]
    for emission in emissions[1:]:
        alpha = step(alpha) + emission
    assert np.isclose(likelihood, tops.einsum("i->", alpha, semiring="logsumexp"))
    best, indices = tops.einsum(*arguments, semiring="max", argmax=True, strategy="dp")
    path = [int(indices[day]) for day in range(days)]
    score = start[path[0]] + sum(e[s] for e, s in zip(emissions, path, strict=True))
    score += sum(transition[a, b] for a, b in itertools.pairwise(path))
    assert np.isclose(score, best)  # the decoded path scores the maximum
    assert viterbi(start, transition, emissions) == path
    print(f"{states} states, {days} days: log-likelihood {float(likelihood):.3f}", end=", ")
    print(f"best path {float(best):.3f}")


def viterbi(start: np.ndarray, transition: np.ndarray, emissions: list[np.ndarray]) -> list:
    """The Viterbi algorithm one day at a time: max-plus steps and their back-pointers."""
    score, pointers = start + emissions[0], []
    for emission in emissions[1:]:
        score, back = tops.einsum("i,ij->j", score, transition, semiring="max", argmax=True)
        score = score + emission
        pointers.append(back["i"])  # per state today, the best state yesterday
    path = [int(np.argmax(score))]
    for back in reversed(pointers):
        path.append(int(back[path[-1]]))
    return path[::-1]


def crf(batch: int, steps: int, tags: int) -> None:
    """A linear-chain CRF's log-partition function per sequence, at large magnitudes.

    ``log Z = logsumexp over tag sequences of start + emissions + transitions``: the
    forward recursion is a loop of ``"bi,ij->bj"`` log-space products. Scores spread over
    a thousand nats, where the terms of a product underflow when shifted by the row's and
    the column's maxima, come out exact: checked against every tag sequence.
    """
    rng = np.random.default_rng(1)
    start = 1000 * rng.standard_normal(tags)
    emissions = 1000 * rng.standard_normal((batch, steps, tags))
    transitions = 1000 * rng.standard_normal((tags, tags))
    alpha = start + emissions[:, 0]
    for t in range(1, steps):
        alpha = tops.einsum("bi,ij->bj", alpha, transitions, semiring="logsumexp")
        alpha = alpha + emissions[:, t]
    partition = tops.einsum("bj->b", alpha, semiring="logsumexp")
    sequences = np.array(list(itertools.product(range(tags), repeat=steps)))
    scores = start[sequences[:, 0]] + transitions[sequences[:, :-1], sequences[:, 1:]].sum(1)
    scores = scores + emissions[:, np.arange(steps), sequences].sum(-1)  # (batch, sequences)
    top = scores.max(1)
    enumerated = top + np.log(np.exp(scores - top[:, None]).sum(1))
    assert np.isfinite(partition).all()
    np.testing.assert_allclose(partition, enumerated, rtol=1e-12)
    print(f"CRF, {batch} sequences of {steps} steps over {tags} tags: log Z", partition.round(3))


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
