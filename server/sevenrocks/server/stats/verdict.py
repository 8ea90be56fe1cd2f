"""The settled verdict: for every pair of leaderboard neighbours, ahead, tied within δ, or open.

Why not "P(A ahead) >= 95%": an event looks at its verdict after every round
(the adaptive planner feeds the pairs that look unsettled, ``--until-settled``
stops at the first round that looks settled), and a fixed-sample probability read
again and again is crossed by luck far more often than 5% of the time: two copies
of one bot were called settled in 11.5% of default events and 26% with
``--until-settled``. Here a pair is decided by an **always-valid confidence
sequence** on d = θ_upper − θ_lower (Robbins' normal mixture): with the fit's
estimate d̂ and its information V = 1/se², the interval

    d̂ ± sqrt((V + ρ) · (2 ln(1/α) + ln((V + ρ) / ρ))) / V,      α = 1 − level

holds the true d at every look at once with probability ≥ level, whatever rule
chose when to look and which pairs to feed next (the planner's choices depend
only on results already seen). So a claim made from it — *ahead* (the interval
lies above 0), or *tied within δ* (it lies inside (−δ, δ)) — is wrong with
probability ≤ α however often the event peeks. ``ρ`` sets where the boundary is
tightest: near se ≈ 0.6 rating points, and it stays within 10% of that best
(about 3.2 se, against 1.96 for a single look) from se 0.2 to 1.2.

se is the larger of two doubts: the model's posterior standard error, and the
cluster-robust ("sandwich") one with one cluster per duplicate group, widened by
Student's t with (groups − 1) degrees of freedom: deals are the independent
units, and a partnership is not always the sum of its bots.

``p_ahead`` is still the fixed-sample P(upper ahead) the leaderboard prints; a
pair is settled only when the confidence sequence says so, which needs more
evidence than p_ahead >= level. ``bench/field.py`` and ``bench/ranking.py``
measure how often a claim is wrong.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from scipy import special

from .fit import BETA, Fit

DEFAULT_LEVEL = 0.95
#: Mixing precision of the confidence sequence, in 1 / (rating points)²: the boundary is
#: tightest (about 3.0 se, against 1.96 for one look) where ρ·se² ≈ 0.12, i.e. se ≈ 0.6,
#: and within 3.2–3.4 se from se 0.1 to 1.2, where neighbours get decided.
RHO = 0.3


@dataclass(frozen=True, slots=True)
class Neighbour:
    """Two adjacent rows of the leaderboard and what the evidence says about their order."""

    upper: str
    lower: str
    #: P(upper is really ahead of lower) from the fit, as if this were the only look.
    p_ahead: float
    #: The always-valid interval on θ_upper − θ_lower lies above 0: upper is ahead.
    settled: bool
    #: The always-valid interval lies inside (−δ, δ): the two are indistinguishable within δ.
    tied: bool = False
    #: The always-valid interval on θ_upper − θ_lower (rating points) at the verdict's level.
    low: float = -math.inf
    high: float = math.inf

    @property
    def decided(self) -> bool:
        """Nothing more to learn at this δ: ahead, or tied within δ."""
        return self.settled or self.tied

    @property
    def state(self) -> str:
        return "ahead" if self.settled else "tied" if self.tied else "open"


@dataclass(frozen=True, slots=True)
class Verdict:
    order: tuple[str, ...]
    neighbours: tuple[Neighbour, ...]
    level: float
    #: δ in rating points (0: no tie is ever claimed).
    margin: float = 0.0
    #: Only the first ``top_k`` places matter (their order and the boundary below them); None: all.
    top_k: int | None = None

    @property
    def settled(self) -> bool:
        """Every neighbour pair settled (and there is something to order)."""
        return bool(self.neighbours) and all(n.settled for n in self.neighbours)

    @property
    def considered(self) -> tuple[Neighbour, ...]:
        """The neighbour pairs that matter: the first ``top_k`` (places 1..k and k | k+1), else all."""
        return self.neighbours if self.top_k is None else self.neighbours[:self.top_k]

    @property
    def decided(self) -> bool:
        """Every pair that matters is ahead or tied within δ: the event can end."""
        return bool(self.considered) and all(n.decided for n in self.considered)

    def weakest(self) -> Neighbour | None:
        """The neighbour pair with the least certain order."""
        return min(self.neighbours, key=lambda n: (n.p_ahead, n.upper), default=None)


def order_of(fit: Fit) -> tuple[str, ...]:
    """Names by fitted strength, strongest first (name breaks exact ties)."""
    return tuple(sorted(fit.names, key=lambda n: (-fit.theta[fit.index(n)], n)))


def margin_of_win_rate(win_rate: float, partnerships: bool = True) -> float:
    """δ in rating points for a head-to-head win rate (e.g. 0.55: "ties are closer than 55/45").

    Seven Rocks head to head is A+A against B+B: P(A wins) = Φ(2d / 2β) = Φ(d / β);
    a fives pair compares two seats: P = Φ(d / (√2 β)).
    """
    if not 0.5 <= win_rate < 1:
        raise ValueError(f"a tie margin as a win rate is in [0.5, 1), got {win_rate}")
    scale = BETA if partnerships else math.sqrt(2) * BETA
    return float(scale * special.ndtri(win_rate))


def win_rate_of_margin(margin: float, partnerships: bool = True) -> float:
    """The head-to-head win rate of a rating difference (the inverse of :func:`margin_of_win_rate`)."""
    scale = BETA if partnerships else math.sqrt(2) * BETA
    return float(special.ndtr(margin / scale))


def match_information(margin: float, partnerships: bool = True) -> float:
    """What one head-to-head match teaches about a rating difference ``margin``, relative to an even pair.

    The Fisher information of a win/loss with P(win) = Φ(d / s) is φ(d/s)² / (Φ(d/s) Φ(−d/s)) / s²;
    divided by its value at d = 0 it is 1 for an even pair, 0.6 at 88/12 and 0.04 at
    99.7/0.3: a lopsided pair is ordered at a glance but proven only slowly.
    """
    scale = BETA if partnerships else math.sqrt(2) * BETA
    z = abs(margin) / scale
    p = float(special.ndtr(-z))
    if p <= 0:
        return 0.0
    phi = math.exp(-z * z / 2) / math.sqrt(2 * math.pi)
    return phi * phi / (p * (1 - p)) / (2 / math.pi)


def _widen(clusters: int, level: float) -> float:
    """How much wider Student's t with (clusters − 1) degrees of freedom is than the normal at ``level``."""
    q = (1 + level) / 2
    return float(special.stdtrit(clusters - 1, q) / special.ndtri(q))


def doubt(fit: Fit, a: str, b: str, level: float = DEFAULT_LEVEL, widen: float | None = None) -> tuple[float, float]:
    """(d̂, se) of θ_a − θ_b: se the larger of the model's and the t-widened cluster-robust error."""
    d, se_model = fit.contrast({a: 1.0, b: -1.0}, robust=False)
    if fit.clusters < 2:
        return d, se_model
    _, se_robust = fit.contrast({a: 1.0, b: -1.0}, robust=True)
    return d, max(se_model, se_robust * (widen if widen is not None else _widen(fit.clusters, level)))


def half_width(se: float, level: float = DEFAULT_LEVEL, rho: float = RHO) -> float:
    """Half-width of the always-valid interval for an estimate with standard error ``se``."""
    if not se > 0:
        return 0.0 if se == 0 else math.inf
    v = 1 / (se * se)
    return math.sqrt((v + rho) * (2 * math.log(1 / (1 - level)) + math.log((v + rho) / rho))) / v


def p_ahead(fit: Fit, a: str, b: str) -> float:
    """P(a is stronger than b) given the fit, as if this were the only look (the printed P)."""
    d, se_robust = fit.contrast({a: 1.0, b: -1.0}, robust=True)
    _, se_model = fit.contrast({a: 1.0, b: -1.0}, robust=False)
    p_model = float(special.ndtr(d / se_model)) if se_model > 0 else 0.5
    if fit.clusters < 2:
        return p_model
    # The t tail for the robust error and the normal tail for the model's: the larger doubt wins.
    p_robust = student_t_cdf(d / se_robust, fit.clusters - 1) if se_robust > 0 else 1.0 if d > 0 else 0.5
    return p_robust if abs(p_robust - 0.5) < abs(p_model - 0.5) else p_model


def judge(fit: Fit, a: str, b: str, level: float = DEFAULT_LEVEL, margin: float = 0.0,
          widen: float | None = None) -> Neighbour:
    """What the evidence says about ``a`` above ``b``: ahead, tied within ``margin``, or open."""
    d, se = doubt(fit, a, b, level, widen)
    w = half_width(se, level)
    low, high = d - w, d + w
    return Neighbour(a, b, p_ahead(fit, a, b), low > 0, margin > 0 and -margin < low and high < margin, low, high)


def verdict(fit: Fit, level: float = DEFAULT_LEVEL, order: Sequence[str] | None = None,
            margin: float = 0.0, top_k: int | None = None) -> Verdict:
    """Every pair of neighbours in ``order`` (default: the fit's) judged at ``level``, ties within ``margin``."""
    ranked = tuple(order) if order is not None else order_of(fit)
    widen = _widen(fit.clusters, level) if fit.clusters >= 2 else None
    pairs = tuple(judge(fit, a, b, level, margin, widen) for a, b in zip(ranked, ranked[1:]))
    return Verdict(ranked, pairs, level, margin, top_k)


def student_t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom (scipy's ``stdtr``, what scipy.stats.t.cdf calls).

    >>> round(student_t_cdf(2.0, 10), 4)
    0.9633
    """
    return float(special.stdtr(df, t))
