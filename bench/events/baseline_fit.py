"""The pure-Python fit as it was before the numpy/scipy rewrite: the baseline of bench_fit.py.

Kept verbatim but for the shared types (Result, Fit), imported from the new module, so that bench/events/bench_fit.py can time the old code in the
same run as the new one and check that both give the same numbers.

(The model is the one described in sevenrocks/server/stats/fit.py.)

Pure Python: the models have a handful of parameters and Newton's method converges
in a few steps.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Sequence

from sevenrocks.server.stats.ratings import Rating, pair_name

from sevenrocks.server.stats.fit import BETA, MU0, PAIR_SIGMA, SIGMA0, Fit, Phi, Result, phi  # noqa: F401


@dataclass(frozen=True, slots=True)
class Comparison:
    """side 0 against side 1: ``x`` over the parameters, ``y`` in {0, 0.5, 1}, noise scale ``s``."""

    x: tuple[tuple[int, float], ...]
    y: float
    s: float
    cluster: int


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


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Solve a x = b for a symmetric positive definite ``a`` (Cholesky)."""
    n = len(b)
    L = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = a[i][j] - sum(L[i][k] * L[j][k] for k in range(j))
            L[i][j] = math.sqrt(max(s, 1e-300)) if i == j else s / L[j][j]
    y = [0.0] * n
    for i in range(n):
        y[i] = (b[i] - sum(L[i][k] * y[k] for k in range(i))) / L[i][i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (y[i] - sum(L[k][i] * x[k] for k in range(i + 1, n))) / L[i][i]
    return x


def _inverse(a: list[list[float]]) -> list[list[float]]:
    n = len(a)
    cols = [_solve(a, [1.0 if i == j else 0.0 for i in range(n)]) for j in range(n)]
    return [[cols[j][i] for j in range(n)] for i in range(n)]


def _terms(z: float, y: float) -> tuple[float, float]:
    """d/dz and -d²/dz² of y log Φ(z) + (1-y) log Φ(-z)."""
    g = w = 0.0
    if y > 0:
        lam = phi(z) / max(Phi(z), 1e-300)
        g += y * lam
        w += y * lam * (lam + z)
    if y < 1:
        lam = phi(z) / max(Phi(-z), 1e-300)
        g -= (1 - y) * lam
        w += (1 - y) * lam * (lam - z)
    return g, w


def solve_map(comps: Sequence[Comparison], prior_var: Sequence[float], clusters: int,
              iterations: int = 50, tol: float = 1e-9) -> tuple[list[float], list[list[float]], list[list[float]]]:
    """Newton's method on the log posterior; returns (θ, model covariance, robust covariance)."""
    n = len(prior_var)
    if n == 0:
        return [], [], []
    theta = [0.0] * n
    # Identical comparisons are evaluated once: a 200-match event has a dozen kinds.
    kinds: dict[tuple[tuple[tuple[int, float], ...], float, float], int] = defaultdict(int)
    for c in comps:
        kinds[(c.x, c.y, c.s)] += 1
    hess: list[list[float]] = []
    for _ in range(iterations):
        grad = [-theta[i] / prior_var[i] for i in range(n)]
        hess = [[(1 / prior_var[i]) if i == j else 0.0 for j in range(n)] for i in range(n)]
        for (x, y, s), count in kinds.items():
            z = sum(v * theta[k] for k, v in x) / s
            g, w = _terms(z, y)
            g *= count / s
            w *= count / (s * s)
            for k, v in x:
                grad[k] += g * v
                row = hess[k]
                for k2, v2 in x:
                    row[k2] += w * v * v2
        step = _solve(hess, grad)
        theta = [t + d for t, d in zip(theta, step)]
        if max(abs(d) for d in step) < tol:
            break
    cov = _inverse(hess)
    # Sandwich: A^-1 (G/(G-1) Σ_c g_c g_cᵀ) A^-1 with one score vector per cluster.
    scores: dict[int, list[float]] = defaultdict(lambda: [0.0] * n)
    for c in comps:
        z = sum(v * theta[k] for k, v in c.x) / c.s
        g, _ = _terms(z, c.y)
        acc = scores[c.cluster]
        for k, v in c.x:
            acc[k] += g * v / c.s
    meat = [[0.0] * n for _ in range(n)]
    for acc in scores.values():
        for i in range(n):
            if acc[i]:
                for j in range(n):
                    meat[i][j] += acc[i] * acc[j]
    scale = clusters / (clusters - 1) if clusters > 1 else 1.0
    half = [[sum(cov[i][k] * meat[k][j] for k in range(n)) * scale for j in range(n)] for i in range(n)]
    robust = [[sum(half[i][k] * cov[k][j] for k in range(n)) for j in range(n)] for i in range(n)]
    return theta, cov, robust


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
