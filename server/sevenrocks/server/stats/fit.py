"""Order-free ratings: a Thurstone team model fitted to all results at once, on the TrueSkill scale.

Why: TrueSkill updates one match at a time, so a short event's order depends on
the order its matches were applied in (renaming a bot could change the result).
Here every result counts the same wherever it sits: the ratings maximise the
posterior of the model TrueSkill itself assumes, given the results *as a set*.

The model (TrueSkill's, fitted exactly): bot ``k`` has strength ``θ_k`` with prior
N(0, (25/3)²); a side's performance is the sum of its players' strengths plus
N(0, β²) noise per player, β = 25/6, so side 0 of a 2-vs-2 match wins with
probability Φ((x · θ) / (2β)) where ``x`` counts each bot on side 0 minus side 1
(a bot partnered with itself counts twice). A fives match is taken as every pair
of seats compared by final rank. A draw counts half a win. Published:
μ = 25 + θ (the MAP), σ = the posterior standard deviation (Laplace), μ − 3σ.

For the settled verdict (:mod:`.verdict`), :func:`fit` also returns a
cluster-robust ("sandwich") covariance with one cluster per duplicate group (a
deal and its seat exchange): matches on the same deal are not independent, and a
partnership is not always the sum of its bots, so the model's own σ alone would
claim more certainty than the data carry.

Linear algebra from numpy/scipy: Newton's method converges in a few steps, each one
Cholesky factorisation.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
from scipy import linalg, special

from .ratings import Rating, pair_name

MU0 = 25.0
SIGMA0 = 25.0 / 3
BETA = 25.0 / 6
#: Prior sd of a partnership's own effect beyond its two bots (the pairs model).
PAIR_SIGMA = BETA


@dataclass(frozen=True, slots=True)
class Result:
    """One stored match as the fit needs it."""

    seats: tuple[str, ...]
    #: Rank of each team (Seven Rocks) or seat (fives), 0 best; equal ranks draw.
    ranks: tuple[int, ...]
    #: The duplicate group (matches that share a deal); the unit of independence.
    group: str


@dataclass(frozen=True, slots=True)
class Comparison:
    """side 0 against side 1: ``x`` over the parameters, ``y`` in {0, 0.5, 1}, noise scale ``s``."""

    x: tuple[tuple[int, float], ...]
    y: float
    s: float
    cluster: int


@dataclass(frozen=True, slots=True)
class Fit:
    names: tuple[str, ...]
    #: MAP strengths (θ, 0 = the prior mean) in ``names`` order.
    theta: tuple[float, ...]
    #: Posterior covariance (inverse Hessian of the log posterior).
    cov: tuple[tuple[float, ...], ...]
    #: Cluster-robust covariance (sandwich, small-sample corrected), one cluster per duplicate group.
    robust: tuple[tuple[float, ...], ...]
    #: Independent units (duplicate groups) behind the fit.
    clusters: int

    def index(self, name: str) -> int:
        return self.names.index(name)

    def rating(self, name: str) -> Rating:
        i = self.index(name)
        return Rating(MU0 + self.theta[i], math.sqrt(max(self.cov[i][i], 0.0)))

    def ratings(self) -> dict[str, Rating]:
        return {n: self.rating(n) for n in self.names}

    def contrast(self, weights: dict[str, float], robust: bool = True) -> tuple[float, float]:
        """(estimate, standard error) of Σ w_k θ_k."""
        idx = [(self.index(n), w) for n, w in weights.items()]
        est = sum(w * self.theta[i] for i, w in idx)
        cov = self.robust if robust else self.cov
        var = sum(wi * wj * cov[i][j] for i, wi in idx for j, wj in idx)
        return est, math.sqrt(max(var, 0.0))


def phi(z: float) -> float:
    return math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)


def Phi(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2))


def comparisons(results: Iterable[Result], partnerships: bool,
                index: dict[str, int], pairs: dict[str, int] | None = None) -> tuple[list[Comparison], int]:
    """Every result as side-vs-side comparisons over the parameters in ``index`` (and ``pairs``)."""
    clusters: dict[str, int] = {}
    out: list[Comparison] = []
    for r in sorted(results, key=lambda r: (r.group, r.seats, r.ranks)):
        c = clusters.setdefault(r.group, len(clusters))
        if partnerships:
            sides = ((r.seats[0], r.seats[2]), (r.seats[1], r.seats[3]))
            x: dict[int, float] = defaultdict(float)
            for sign, side in ((1.0, sides[0]), (-1.0, sides[1])):
                for name in side:
                    x[index[name]] += sign
                if pairs is not None:
                    x[pairs[pair_name(*side)]] += sign
            y = 0.5 if r.ranks[0] == r.ranks[1] else float(r.ranks[0] < r.ranks[1])
            out.append(Comparison(_sparse(x), y, 2 * BETA, c))
        else:
            for i, j in itertools.combinations(range(len(r.seats)), 2):
                a, b = r.seats[i], r.seats[j]
                if a == b:
                    continue
                y = 0.5 if r.ranks[i] == r.ranks[j] else float(r.ranks[i] < r.ranks[j])
                out.append(Comparison(((index[a], 1.0), (index[b], -1.0)), y, math.sqrt(2) * BETA, c))
    return out, len(clusters)


def _sparse(x: dict[int, float]) -> tuple[tuple[int, float], ...]:
    return tuple(sorted((k, v) for k, v in x.items() if v != 0))


def _terms(z: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """d/dz and -d²/dz² of y log Φ(z) + (1-y) log Φ(-z), elementwise and stable in the tails."""
    lam_win = np.exp(-0.5 * z * z - 0.5 * math.log(2 * math.pi) - special.log_ndtr(z))
    lam_loss = np.exp(-0.5 * z * z - 0.5 * math.log(2 * math.pi) - special.log_ndtr(-z))
    g = y * lam_win - (1 - y) * lam_loss
    w = y * lam_win * (lam_win + z) + (1 - y) * lam_loss * (lam_loss - z)
    return g, w


def solve_map(comps: Sequence[Comparison], prior_var: Sequence[float], clusters: int,
              iterations: int = 50, tol: float = 1e-9) -> tuple[list[float], list[list[float]], list[list[float]]]:
    """Newton's method on the log posterior; returns (θ, model covariance, robust covariance).

    numpy/scipy linear algebra: one Cholesky factorisation per Newton step, reused for
    the covariance (no per-column refactorisation), and the cluster scores summed sparsely.
    """
    n = len(prior_var)
    if n == 0:
        return [], [], []
    # Identical comparisons are evaluated once: a 200-match event has a dozen kinds.
    kinds: dict[tuple[tuple[tuple[int, float], ...], float, float], int] = defaultdict(int)
    kind_of: list[int] = []
    index: dict[tuple[tuple[tuple[int, float], ...], float, float], int] = {}
    for c in comps:
        key = (c.x, c.y, c.s)
        kinds[key] += 1
        kind_of.append(index.setdefault(key, len(index)))
    keys = list(index)
    k = len(keys)
    x = np.zeros((k, n))
    for row, (xs, _, _) in enumerate(keys):
        for col, v in xs:
            x[row, col] += v
    y = np.array([key[1] for key in keys])
    s = np.array([key[2] for key in keys])
    count = np.array([kinds[key] for key in keys], dtype=float)
    inv_prior = 1 / np.asarray(prior_var, dtype=float)
    theta = np.zeros(n)
    factor = None
    for _ in range(iterations):
        g, w = _terms(x @ theta / s, y) if k else (np.zeros(0), np.zeros(0))
        grad = -theta * inv_prior + x.T @ (g * count / s)
        hess = np.diag(inv_prior) + (x.T * (w * count / (s * s))) @ x
        factor = linalg.cho_factor(hess)
        step = linalg.cho_solve(factor, grad)
        theta = theta + step
        if float(np.max(np.abs(step))) < tol:
            break
    g, w = _terms(x @ theta / s, y) if k else (np.zeros(0), np.zeros(0))
    hess = np.diag(inv_prior) + (x.T * (w * count / (s * s))) @ x
    cov = linalg.cho_solve(linalg.cho_factor(hess), np.eye(n))
    # Sandwich: A^-1 (G/(G-1) Σ_c g_c g_cᵀ) A^-1 with one score vector per cluster.
    scores = np.zeros((max(clusters, 1), n))
    if comps:
        kind_arr = np.array(kind_of)
        per = g[kind_arr] / s[kind_arr]
        rows, cols, vals = [], [], []
        for i, c in enumerate(comps):
            for col, v in c.x:
                rows.append(c.cluster)
                cols.append(col)
                vals.append(per[i] * v)
        np.add.at(scores, (np.array(rows), np.array(cols)), np.array(vals))
    scale = clusters / (clusters - 1) if clusters > 1 else 1.0
    robust = cov @ (scores.T @ scores) @ cov * scale
    return theta.tolist(), cov.tolist(), robust.tolist()


def fit(results: Iterable[Result], partnerships: bool, names: Sequence[str] | None = None) -> Fit:
    """Bot strengths from every result at once; the answer does not depend on their order."""
    results = list(results)
    found = sorted({s for r in results for s in r.seats} | set(names or ()))
    index = {n: i for i, n in enumerate(found)}
    comps, clusters = comparisons(results, partnerships, index)
    theta, cov, robust = solve_map(comps, [SIGMA0 ** 2] * len(found), clusters)
    return Fit(tuple(found), tuple(theta), _freeze(cov), _freeze(robust), clusters)


def fit_pairs(results: Iterable[Result], names: Sequence[str] | None = None) -> dict[str, Rating]:
    """Partnership ratings: its two bots' strengths plus an effect of its own (Seven Rocks only).

    A partnership's μ is 25 plus both bots' θ plus the partnership's own effect (prior
    sd β), so partnerships that never met are still compared through their bots
    rather than through whichever single opponent each happened to face.
    """
    results = list(results)
    bots = sorted({s for r in results for s in r.seats} | set(names or ()))
    pair_keys = sorted({pair_name(r.seats[t], r.seats[t + 2]) for r in results for t in (0, 1)})
    index = {n: i for i, n in enumerate(bots)}
    pairs = {p: len(bots) + i for i, p in enumerate(pair_keys)}
    comps, clusters = comparisons(results, True, index, pairs)
    prior = [SIGMA0 ** 2] * len(bots) + [PAIR_SIGMA ** 2] * len(pair_keys)
    theta, cov, _ = solve_map(comps, prior, clusters)
    out = {}
    for p, j in pairs.items():
        members = p.split("+")
        w: dict[int, float] = defaultdict(float)
        for m in members:
            w[index[m]] += 1.0
        w[j] += 1.0
        est = sum(v * theta[k] for k, v in w.items())
        var = sum(vi * vj * cov[i][k] for i, vi in w.items() for k, vj in w.items())
        out[p] = Rating(MU0 + est, math.sqrt(max(var, 0.0)))
    return out


def _freeze(m: list[list[float]]) -> tuple[tuple[float, ...], ...]:
    return tuple(tuple(row) for row in m)
