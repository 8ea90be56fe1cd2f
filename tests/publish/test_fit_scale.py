"""The order-free fit at scale: checked against first principles, not against itself.

The fit's MAP must be where the log posterior's gradient vanishes and its covariance
the inverse of the log posterior's curvature there; both are measured here by finite
differences of a plain-Python log posterior written from the model's definition. The
partnership model's large-field path (conjugate gradients and the block inverse) must
give the dense path's answer.
"""

from __future__ import annotations

import math
import random

import pytest

from sevenrocks.server.stats import solve as solvemod
from sevenrocks.server.stats.fit import BETA, MU0, SIGMA0, Phi, Result, fit, fit_pairs
from sevenrocks.server.stats.verdict import order_of


def field(n: int, matches: int, seed: int, fives: bool = False) -> tuple[dict[str, float], list[Result]]:
    """Random tables of four from ``n`` bots of known strength, outcomes drawn from the model."""
    rng = random.Random(seed)
    names = [f"bot-{i:03d}" for i in range(n)]
    truth = {b: rng.gauss(0, 4) for b in names}
    out = []
    for k in range(matches):
        seats = tuple(rng.sample(names, 4))
        if fives:
            perf = [truth[s] + rng.gauss(0, BETA) for s in seats]
            ranks = tuple(sorted(perf, reverse=True).index(p) for p in perf)
        else:
            p = Phi((truth[seats[0]] + truth[seats[2]] - truth[seats[1]] - truth[seats[3]]) / (2 * BETA))
            ranks = (0, 1) if rng.random() < p else (1, 0)
        out.append(Result(seats, ranks, f"g{k // 2}"))
    return truth, out


def log_posterior(theta: dict[str, float], results: list[Result], partnerships: bool) -> float:
    """The model written out directly: Gaussian prior, probit likelihood per comparison, draws half."""
    total = sum(-0.5 * t * t / SIGMA0 ** 2 for t in theta.values())
    for r in results:
        if partnerships:
            comps = [((r.seats[0], r.seats[2]), (r.seats[1], r.seats[3]), r.ranks[0], r.ranks[1], 2 * BETA)]
        else:
            comps = [((r.seats[i],), (r.seats[j],), r.ranks[i], r.ranks[j], math.sqrt(2) * BETA)
                     for i in range(len(r.seats)) for j in range(i + 1, len(r.seats)) if r.seats[i] != r.seats[j]]
        for a, b, ra, rb, s in comps:
            z = (sum(theta[x] for x in a) - sum(theta[x] for x in b)) / s
            y = 0.5 if ra == rb else float(ra < rb)
            total += y * math.log(Phi(z)) + (1 - y) * math.log(Phi(-z))
    return total


@pytest.mark.parametrize("partnerships", [True, False])
def test_the_fit_is_the_posterior_mode_and_its_curvature(partnerships: bool) -> None:
    _, results = field(6, 120, 3, fives=not partnerships)
    f = fit(results, partnerships)
    theta = dict(zip(f.names, f.theta))
    h = 1e-4
    for a in f.names:
        up, down = dict(theta), dict(theta)
        up[a] += h
        down[a] -= h
        slope = (log_posterior(up, results, partnerships) - log_posterior(down, results, partnerships)) / (2 * h)
        assert abs(slope) < 1e-5, (a, slope)
    # The covariance is the inverse of the negative Hessian: check H @ cov = I by finite differences.
    names = list(f.names)
    e = 1e-3

    def second(a: str, b: str) -> float:
        def at(da: float, db: float) -> float:
            t = dict(theta)
            t[a] += da
            t[b] += db
            return log_posterior(t, results, partnerships)
        return (at(e, e) - at(e, -e) - at(-e, e) + at(-e, -e)) / (4 * e * e)

    hess = [[-second(a, b) for b in names] for a in names]
    for i in range(len(names)):
        for j in range(len(names)):
            prod = sum(hess[i][k] * f.cov[k][j] for k in range(len(names)))
            assert abs(prod - (i == j)) < 2e-3, (i, j, prod)


def test_the_fit_does_not_depend_on_the_order_of_the_results() -> None:
    _, results = field(12, 400, 5)
    shuffled = results[:]
    random.Random(1).shuffle(shuffled)
    assert fit(results, True) == fit(shuffled, True)
    assert fit_pairs(results) == fit_pairs(shuffled)


def test_the_large_field_partnership_path_gives_the_dense_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """40 bots, 780 partnerships: solved densely, then again through conjugate gradients and the block inverse."""
    _, results = field(40, 3000, 7)
    dense = fit_pairs(results)
    monkeypatch.setattr(solvemod, "DENSE_PARAMETERS", 10)
    sparse = fit_pairs(results)
    assert dense.keys() == sparse.keys() and len(dense) > 700
    for p in dense:
        assert abs(dense[p].mu - sparse[p].mu) < 1e-7, p
        assert abs(dense[p].sigma / sparse[p].sigma - 1) < 2e-3, (p, dense[p].sigma, sparse[p].sigma)


def test_a_64_bot_field_of_10000_matches_is_fitted_and_ordered() -> None:
    truth, results = field(64, 10_000, 11)
    f = fit(results, True)
    order = order_of(f)
    true_order = sorted(truth, key=lambda b: -truth[b])
    # Kendall's tau between the fitted and the true order.
    pos = {b: i for i, b in enumerate(order)}
    agree = sum(1 if pos[a] < pos[b] else -1 for i, a in enumerate(true_order) for b in true_order[i + 1:])
    assert agree / (64 * 63 / 2) > 0.8
    pairs = fit_pairs(results)
    assert len(pairs) == 64 * 63 // 2
    a, b = true_order[0], true_order[1]
    assert pairs["+".join(sorted((a, b)))].mu > MU0


@pytest.mark.slow
def test_256_bots_and_100000_matches_are_fitted() -> None:
    truth, results = field(256, 100_000, 13)
    f = fit(results, True)
    assert len(f.names) == 256 and f.clusters == 50_000
    pairs = fit_pairs(results)
    assert len(pairs) > 30_000 and all(r.sigma > 0 for r in pairs.values())


def test_the_numerical_core_uses_the_models_constants() -> None:
    from sevenrocks.server.stats import fit as fitmod

    assert (solvemod.SIGMA0, solvemod.BETA, solvemod.PAIR_SIGMA) == (fitmod.SIGMA0, fitmod.BETA, fitmod.PAIR_SIGMA)
