"""The settled verdict: for every pair of leaderboard neighbours, P(the upper one is ahead).

Why not TrueSkill's own P(A > B): it comes from one pass of sequential updates,
depends on match order, and was measured claiming "settled" wrongly in a third to
four fifths of its claims on short events. Here the probability comes from the
order-free fit (:mod:`.fit`), with the uncertainty of the difference taken as the
larger of

- the model's posterior standard error, and
- the cluster-robust standard error with one cluster per duplicate group (deal),
  read against Student's t with (groups - 1) degrees of freedom: deals are the
  independent units, and this is what a paired-by-deal comparison measures;

so neither a lucky streak on few deals nor a partnership that is not the sum of
its bots can make the verdict claim more than the data carry. A neighbour pair
is *settled* at level L (default 0.95) when P(upper ahead) >= L. ``bench/ranking.py``
measures how often a settled claim is right on real reference-bot results.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from .fit import Fit, Phi

DEFAULT_LEVEL = 0.95


@dataclass(frozen=True, slots=True)
class Neighbour:
    """Two adjacent rows of the leaderboard and how sure the order between them is."""

    upper: str
    lower: str
    #: P(upper is really ahead of lower).
    p_ahead: float
    settled: bool


@dataclass(frozen=True, slots=True)
class Verdict:
    order: tuple[str, ...]
    neighbours: tuple[Neighbour, ...]
    level: float

    @property
    def settled(self) -> bool:
        """Every neighbour pair settled (and there is something to order)."""
        return bool(self.neighbours) and all(n.settled for n in self.neighbours)

    def weakest(self) -> Neighbour | None:
        """The neighbour pair with the least certain order."""
        return min(self.neighbours, key=lambda n: (n.p_ahead, n.upper), default=None)


def order_of(fit: Fit) -> tuple[str, ...]:
    """Names by fitted strength, strongest first (name breaks exact ties)."""
    return tuple(sorted(fit.names, key=lambda n: (-fit.theta[fit.index(n)], n)))


def p_ahead(fit: Fit, a: str, b: str) -> float:
    """P(a is stronger than b) given the fit."""
    d, se_robust = fit.contrast({a: 1.0, b: -1.0}, robust=True)
    _, se_model = fit.contrast({a: 1.0, b: -1.0}, robust=False)
    if fit.clusters < 2:
        return Phi(d / se_model) if se_model > 0 else 0.5
    # The t tail for the robust error and the normal tail for the model's: the larger doubt wins.
    p_robust = student_t_cdf(d / se_robust, fit.clusters - 1) if se_robust > 0 else 1.0 if d > 0 else 0.5
    p_model = Phi(d / se_model) if se_model > 0 else 0.5
    return p_robust if abs(p_robust - 0.5) < abs(p_model - 0.5) else p_model


def verdict(fit: Fit, level: float = DEFAULT_LEVEL, order: Sequence[str] | None = None) -> Verdict:
    """P(ahead) and settled / not settled for every pair of neighbours in ``order`` (default: the fit's)."""
    ranked = tuple(order) if order is not None else order_of(fit)
    pairs = []
    for a, b in zip(ranked, ranked[1:]):
        p = p_ahead(fit, a, b)
        pairs.append(Neighbour(a, b, p, p >= level))
    return Verdict(ranked, tuple(pairs), level)


# ---------------------------------------------------------------------- Student's t

def student_t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom.

    >>> round(student_t_cdf(2.0, 10), 4)
    0.9633
    """
    x = df / (df + t * t)
    tail = 0.5 * _betainc(df / 2, 0.5, x)
    return 1 - tail if t > 0 else tail


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) (continued fraction, Lentz)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    ln = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x)
    front = math.exp(ln)
    if x > (a + 1) / (a + b + 2):
        return 1 - front * _betacf(b, a, 1 - x) / b
    return front * _betacf(a, b, x) / a


def _betacf(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + num * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-12:
            break
    return h
