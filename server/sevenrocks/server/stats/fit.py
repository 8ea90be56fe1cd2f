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

The numbers come from numpy and scipy in :mod:`.solve` (a sparse design matrix,
one Cholesky factor reused for the covariance, conjugate gradients for the
partnerships' model of a large field). It is imported when a fit is first asked
for, so that commands which never fit do not pay for loading numpy and scipy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

from .ratings import Rating, pair_name

MU0 = 25.0
SIGMA0 = 25.0 / 3
BETA = 25.0 / 6
#: Prior sd of a partnership's own effect beyond its two bots (the pairs model).
PAIR_SIGMA = BETA
# (:mod:`.solve` repeats SIGMA0, BETA and PAIR_SIGMA: it may not import this module.)


@dataclass(frozen=True, slots=True)
class Result:
    """One stored match as the fit needs it."""

    seats: tuple[str, ...]
    #: Rank of each team (Seven Rocks) or seat (fives), 0 best; equal ranks draw.
    ranks: tuple[int, ...]
    #: The duplicate group (matches that share a deal); the unit of independence.
    group: str
    #: The seat whose fault forfeited the match (None: played out). A forfeit is rated for its
    #: faulting entrant only (:func:`fit`): nobody else's strength may move on it.
    fault_seat: int | None = None

    @property
    def faulter(self) -> str | None:
        """The entrant whose fault forfeited the match, if one did."""
        return None if self.fault_seat is None else self.seats[self.fault_seat]


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
        return {n: Rating(MU0 + t, math.sqrt(max(self.cov[i][i], 0.0)))
                for i, (n, t) in enumerate(zip(self.names, self.theta))}

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


def fit(results: Iterable[Result], partnerships: bool, names: Sequence[str] | None = None) -> Fit:
    """Bot strengths from every result at once; the answer does not depend on their order.

    A forfeit (``fault_seat`` set) moves nobody but its faulting entrant (docs/tournament.md,
    "Forfeits"): every entrant's strength is first fitted to the matches played out, then each
    faulting entrant's own is pulled down by its forfeits, each a loss against the others at
    that table at their fitted strengths (:func:`charge_forfeits`). Its partner's and its
    opponents' numbers are exactly what they would be had the forfeits never been played.
    """
    from .solve import fit_bots

    results = list(results)
    found = sorted({s for r in results for s in r.seats} | set(names or ()))
    played = [r for r in results if r.fault_seat is None]
    if not found:
        return Fit((), (), (), (), len({r.group for r in played}))
    theta, cov, robust, clusters = fit_bots(played, partnerships, found)
    out = Fit(tuple(found), tuple(theta), cov, robust, clusters)
    forfeits = [r for r in results if r.fault_seat is not None]
    return charge_forfeits(out, forfeits, partnerships) if forfeits else out


def _loss_terms(r: Result, theta: dict[str, float], partnerships: bool) -> list[tuple[float, float, float]]:
    """The forfeit ``r`` as losses of its faulting entrant f: (a, d, noise) per loss, each of
    probability Φ((d − a·θ_f) / noise), the others at the table held at ``theta``.

    Seven Rocks: f's side lost to the other side (a = how often f sits on its side minus the
    other). Fives: f ranked below every other seat (one comparison each, as the fit reads fives).
    """
    f = r.faulter
    assert f is not None
    if partnerships:
        own = r.fault_seat % 2  # type: ignore[operator]
        sides = ([r.seats[own], r.seats[own + 2]], [r.seats[1 - own], r.seats[3 - own]])
        a = sides[0].count(f) - sides[1].count(f)
        d = sum(theta[s] for s in sides[1] if s != f) - sum(theta[s] for s in sides[0] if s != f)
        return [(float(a), d, 2 * BETA)] if a else []
    return [(1.0, theta[s], math.sqrt(2) * BETA) for s in r.seats if s != f]


def charge_forfeits(clean: Fit, forfeits: Sequence[Result], partnerships: bool) -> Fit:
    """``clean`` (a fit of the matches played out) with each faulting entrant charged its forfeits.

    For a faulting entrant f, its clean posterior N(θ_f, σ_f²) is the prior and each forfeit a
    loss against the table's other entrants at their clean strengths; the new θ_f is that
    one-dimensional posterior's peak (Newton), its variance the inverse curvature there. f's row
    and column of both covariances are rescaled to the new σ_f (its correlations kept), and no
    other entry changes: a forfeit never moves an innocent seat.
    """
    theta = dict(zip(clean.names, clean.theta))
    by_faulter: dict[str, list[tuple[float, float, float]]] = {}
    for r in forfeits:
        f = r.faulter
        assert f is not None
        by_faulter.setdefault(f, []).extend(_loss_terms(r, theta, partnerships))
    new_theta = list(clean.theta)
    cov = [list(row) for row in clean.cov]
    robust = [list(row) for row in clean.robust]
    for f, terms in sorted(by_faulter.items()):
        i = clean.index(f)
        m, v = clean.theta[i], max(clean.cov[i][i], 1e-12)
        t, curv = m, 1.0 / v
        for _ in range(100):
            grad, curv = -(t - m) / v, 1.0 / v
            for a, d, n in terms:
                u = (d - a * t) / n
                lam = phi(u) / max(Phi(u), 1e-300)
                grad -= (a / n) * lam
                curv += (a / n) ** 2 * lam * (u + lam)
            step = grad / curv
            t += step
            if abs(step) < 1e-10:
                break
        new_theta[i] = t
        scale = math.sqrt((1.0 / curv) / v)
        for c in (cov, robust):
            for j in range(len(c)):
                c[i][j] *= scale
                c[j][i] *= scale
    return Fit(clean.names, tuple(new_theta), tuple(tuple(row) for row in cov), tuple(tuple(row) for row in robust),
               clean.clusters)


def fit_pairs(results: Iterable[Result], names: Sequence[str] | None = None) -> dict[str, Rating]:
    """Partnership ratings: its two bots' strengths plus an effect of its own (Seven Rocks only).

    A partnership's μ is 25 plus both bots' θ plus the partnership's own effect (prior
    sd β), so partnerships that never met are still compared through their bots
    rather than through whichever single opponent each happened to face.

    Only the variances needed are computed: one per partnership, of its bots' and its
    own effect's sum. Up to :data:`.solve.DENSE_PARAMETERS` parameters the Hessian is
    factorised and inverted densely (exact). Beyond (a field of more than ~48 bots
    with every partnership played), the MAP is still exact (conjugate gradients on
    the sparse Hessian) and the variances come from the block form of the inverse,
    bots against partnerships (:func:`.solve.pair_variances`): exact but for one term,
    taken from a four-term series; ``tests/publish/test_fit_scale.py`` checks it
    against the dense answer.

    Partnerships are never rated on a forfeit: one of the two did not play it out, so a forfeit
    is left out of this fit altogether (its partner is innocent; the faulting bot's own charge is
    in :func:`fit`).
    """
    from .solve import fit_partnerships

    results = [r for r in results if r.fault_seat is None]
    bots = sorted({s for r in results for s in r.seats} | set(names or ()))
    index = {n: i for i, n in enumerate(bots)}
    members: dict[str, tuple[int, int]] = {}
    for r in results:
        for t in (0, 1):
            a, b = r.seats[t], r.seats[t + 2]
            members.setdefault(pair_name(a, b), (min(index[a], index[b]), max(index[a], index[b])))
    if not members:
        return {}
    pair_keys = sorted(members)
    est, var = fit_partnerships(results, index, [members[p] for p in pair_keys])
    return {p: Rating(MU0 + e, math.sqrt(max(v, 0.0))) for p, e, v in zip(pair_keys, est, var)}
