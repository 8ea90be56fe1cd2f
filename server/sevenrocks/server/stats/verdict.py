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
tightest: near se ≈ 0.6 rating points (3.04 se, against 1.96 for a single look),
and it stays within 7% of that best (at most 3.25 se) from se 0.2 to 1.2.

se is the larger of two doubts: the model's posterior standard error, and the
cluster-robust ("sandwich") one with one cluster per duplicate group, widened by
Student's t with (groups − 1) degrees of freedom: deals are the independent
units, and a partnership is not always the sum of its bots.

**A pair that wins every match.** Under complete separation the fit's peak runs
towards the prior's edge and se grows with the evidence (Hauck–Donner): 160 wins of
160 read "open". So in a format that seats pairs head to head, a pair's evidence is
the average of two e-values, fixed in advance: the fit's (the Robbins mixture
above, as an e-value: it is ≥ 1/α exactly outside the interval) with weight
:data:`FIT_WEIGHT`, and its own head-to-head record's (:mod:`.record`, an exact
betting test) with the rest. An average of e-values is an e-value, so the interval
{d : evidence against d < 1/α} is still always-valid, and the verdict is monotone
in wins: each win raises the record's e-value.

**The order as one claim.** k neighbour pairs each wrong with probability ≤ α
would make an order wrong with probability up to k·α. The pairs that matter (all,
or the first ``top_k``) are one family judged by Holm's step-down (:func:`holm`):
every claim on them holds at once with probability ≥ level. Pairs past the top k
are judged each on its own, so with ``top_k`` the whole order is never claimed.

``p_ahead`` is the fixed-sample P(upper ahead) as if this were the only look; the
terminal no longer prints it (it read 100% beside "open"); JSON and CSV keep it.
``bench/ranking/ranking.py`` and ``bench/ranking/field.py`` measure how often a claim is wrong.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
from scipy import special

import numpy.typing as npt

from .fit import BETA, Fit
from .places import Looks, place_intervals, place_text
from .record import Record, record_of

DEFAULT_LEVEL = 0.95
#: Mixing precision of the confidence sequence, in 1 / (rating points)²: the boundary is
#: tightest (3.04 se, against 1.96 for one look) where ρ·se² ≈ 0.12, i.e. se ≈ 0.6,
#: and within 3.04–3.44 se from se 0.1 to 1.2, where neighbours get decided
#: (bench/ranking/settle_cost.py weighs other values: docs/tournament.md).
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
    #: The level this pair was judged at (stricter than the verdict's when its family has several pairs).
    judged_at: float = DEFAULT_LEVEL

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
    #: Every claim "x is ahead of y" of the family (every pair's, or the neighbours' that matter).
    ahead: frozenset[tuple[str, str]] = frozenset()
    #: Claims in the family (n(n − 1)/2 pairs, plus a tie claim per neighbour pair when δ > 0).
    family: int = 0
    #: What every look so far proved, this one included (store it for the next look).
    looks: Looks | None = None

    @property
    def places(self) -> list[tuple[int, int]]:
        """(best, worst) place of each entrant of :attr:`order` that the claims allow (:mod:`.places`)."""
        return place_intervals(self.order, self.ahead)

    def place_texts(self) -> list[str]:
        """:attr:`places` printed: ``1``, ``2–3``, ``4–9``."""
        return [place_text(b, w) for b, w in self.places]

    @property
    def settled(self) -> bool:
        """The whole order is settled: every neighbour pair ahead, all judged as one family.

        With ``top_k`` the pairs below the prize places are judged each on its own, so
        the whole order is never claimed (see :attr:`top_settled`).
        """
        return (bool(self.neighbours) and len(self.considered) == len(self.neighbours)
                and all(n.settled for n in self.neighbours))

    @property
    def top_settled(self) -> bool:
        """Every pair that matters (the first ``top_k``, or all) is ahead: their order is settled."""
        return bool(self.considered) and all(n.settled for n in self.considered)

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
    if fit.clusters < 2 or not se_robust > 0:  # no spread between groups: the model's tail alone
        return p_model
    # The t tail for the robust error and the normal tail for the model's: the larger doubt wins.
    p_robust = student_t_cdf(d / se_robust, fit.clusters - 1)
    return p_robust if abs(p_robust - 0.5) < abs(p_model - 0.5) else p_model


#: Share of the fit's e-value in the evidence of a pair that may meet head to head; the pair's own
#: record (:mod:`.record`) gets the rest. Fixed before any match: the average of two e-values is one.
FIT_WEIGHT = 0.8
#: Points of the grid the combined evidence is read on (over the fit's widest interval).
GRID = 201


@dataclass(frozen=True, slots=True)
class Evidence:
    """What one pair's results say, before the family's levels are applied (:func:`verdict`)."""

    #: The combined e-value against "upper is not ahead" (d ≤ 0), and against "not within ±δ" (log).
    log_ahead: float
    log_tied: float
    #: The grid of differences d and the combined log e-value against each (to read intervals at any level).
    grid: tuple[float, ...]
    log_e: tuple[float, ...]
    #: The combined e-value against "lower is not ahead" (d ≥ 0, log): the pair the other way round.
    log_behind: float = 0.0

    def interval(self, level: float) -> tuple[float, float]:
        """The always-valid interval at ``level``: every d whose e-value stays below 1/(1 − level)."""
        bound = math.log(1 / (1 - level))
        inside = [d for d, e in zip(self.grid, self.log_e) if e < bound]
        if not inside:  # the fit and the record contradict each other: the least rejected point
            best = self.grid[min(range(len(self.grid)), key=lambda i: self.log_e[i])]
            return best, best
        low, high = inside[0], inside[-1]
        # An interval reaching the grid's edge is not bounded there (the fit had no information).
        return (low if low > self.grid[0] else -math.inf, high if high < self.grid[-1] else math.inf)


def evidence(fit: Fit, a: str, b: str, level: float = DEFAULT_LEVEL, margin: float = 0.0,
             widen: float | None = None, record: Record | None = None, partnerships: bool = True,
             least_level: float | None = None) -> Evidence:
    """The combined evidence on θ_a − θ_b: the fit's confidence sequence and, when given, a's
    head-to-head ``record`` against b (weights :data:`FIT_WEIGHT` and the rest).

    The grid spans the fit's own interval at the strictest level the family may ask for
    (``least_level``): beyond it the fit's share alone already rejects every d.
    """
    d, se = doubt(fit, a, b, level, widen)
    strictest = least_level if least_level is not None else level
    weight = FIT_WEIGHT if record is not None else 1.0
    reach = half_width(se, 1 - (1 - strictest) * weight) if se > 0 else 0.0
    if not math.isfinite(reach):
        return Evidence(0.0, 0.0, (-math.inf, math.inf), (0.0, 0.0))
    span = max(reach * 1.05, 1e-9)
    points = np.unique(np.concatenate([np.linspace(d - span, d + span, GRID), [0.0, margin, -margin]]))
    v = 1 / (se * se) if se > 0 else math.inf
    if math.isfinite(v):
        # Robbins' normal mixture as an e-value against each d: ≥ 1/α exactly outside d̂ ± half_width.
        fit_log = 0.5 * math.log(RHO / (v + RHO)) + v * v * (d - points) ** 2 / (2 * (v + RHO))
    else:
        fit_log = np.where(points == d, 0.0, np.inf)
    if record is None:
        log_e = fit_log
    else:
        scale = BETA if partnerships else math.sqrt(2) * BETA
        rec_log = record.log_evalues(special.ndtr(points / scale))
        log_e = np.logaddexp(math.log(weight) + fit_log, math.log(1 - weight) + rec_log)
    not_ahead = log_e[points <= 0]
    not_behind = log_e[points >= 0]
    outside = log_e[np.abs(points) >= margin] if margin > 0 else np.array([0.0])
    return Evidence(float(not_ahead.min()), float(outside.min()), tuple(points.tolist()), tuple(log_e.tolist()),
                    float(not_behind.min()))


def judge(fit: Fit, a: str, b: str, level: float = DEFAULT_LEVEL, margin: float = 0.0,
          widen: float | None = None, record: Record | None = None, partnerships: bool = True) -> Neighbour:
    """What the evidence says about ``a`` above ``b`` on its own (one pair, at ``level``)."""
    return _neighbour(fit, a, b, evidence(fit, a, b, level, margin, widen, record, partnerships), level, margin)


def _neighbour(fit: Fit, a: str, b: str, ev: Evidence, level: float, margin: float,
               best_ahead: float | None = None, best_tied: float | None = None) -> Neighbour:
    """The pair's state at ``level``; ``best_*``: the largest evidence any look reached (:class:`.places.Looks`)."""
    low, high = ev.interval(level)
    bound = math.log(1 / (1 - level))
    ahead_now = ev.log_ahead >= bound and low > 0
    tied_now = margin > 0 and ev.log_tied >= bound and -margin < low and high < margin
    ahead = ahead_now or (best_ahead is not None and best_ahead >= bound)
    tied = tied_now or (margin > 0 and best_tied is not None and best_tied >= bound)
    return Neighbour(a, b, p_ahead(fit, a, b), ahead, tied, low, high, level)


def holm(evidence: Sequence[Evidence], level: float, margin: float) -> list[float]:
    """The level each pair is judged at so that every claim of the family holds at once with
    probability ≥ ``level`` (Holm's step-down over the claims' e-values as anytime p-values).

    The family is every claim the pairs could make: "ahead" for each, and "tied within δ"
    for each when δ > 0. The strongest claim is held to α/m, the next to α/(m − 1), …;
    at the first that fails, it and every weaker one are held to that level (so nothing
    weaker is claimed). Returns one level per pair (1 − its α).
    """
    if not evidence:  # no pair to judge (a field with no match shown yet): no claim, no level
        return []
    alpha = 1 - level
    claims = sorted(((max(e.log_ahead, e.log_tied if margin > 0 else -math.inf), i) for i, e in enumerate(evidence)),
                    reverse=True)
    family = len(evidence) * (2 if margin > 0 else 1)
    out = [1 - alpha / family] * len(evidence)
    failed: float | None = None
    for step, (log_e, i) in enumerate(claims):
        need = alpha / (family - step) if failed is None else failed
        if failed is None and log_e < math.log(1 / need):
            failed = need  # Holm stops here: this pair and every weaker one are held to it
        out[i] = 1 - need
    return out


def holm_levels(log_e: npt.NDArray[np.float64], level: float, family: int) -> npt.NDArray[np.float64]:
    """:func:`holm` for a large family, vectorised: ``log_e`` holds each claim's log e-value
    (``family`` may count more claims than entries: a pair with a tie claim counts twice)."""
    count = len(log_e)
    if count == 0:
        return np.zeros(0)
    alpha = 1 - level
    ranked = np.argsort(-log_e, kind="stable")
    need = alpha / (family - np.arange(count))
    passed = log_e[ranked] >= np.log(1 / need)
    if not passed.all():
        first = int(np.argmin(passed))
        need[first:] = need[first]  # Holm stops at the first that fails: it and every weaker one held there
    out = np.empty(count)
    out[ranked] = 1 - need
    return out


def _far_pairs(fit: Fit, ranked: Sequence[str], widen: float | None) -> tuple[
        npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Every pair (i, j), i + 1 < j, of ``ranked`` and the fit's log e-values that i is ahead, and j is.

    The same Robbins mixture as :func:`evidence`, read where it is least (d = 0 when
    the estimate lies on the other side), for all pairs at once: a field of 128 has
    8,128 pairs, and the grid of :func:`evidence` is kept for pairs with a record.
    """
    n = len(ranked)
    i, j = np.triu_indices(n, k=2)
    idx = np.array([fit.index(x) for x in ranked], dtype=np.int64)
    theta = np.asarray(fit.theta, dtype=np.float64)[idx]
    d = theta[i] - theta[j]

    def se_of(cov: tuple[tuple[float, ...], ...]) -> npt.NDArray[np.float64]:
        c = np.asarray(cov, dtype=np.float64)[np.ix_(idx, idx)]
        diag = np.diag(c)
        return np.sqrt(np.maximum(diag[i] + diag[j] - 2 * c[i, j], 0.0))

    se = se_of(fit.cov)
    if fit.clusters >= 2:
        se = np.maximum(se, se_of(fit.robust) * (widen if widen is not None else 1.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.where(se > 0, 1 / np.maximum(se, 1e-300) ** 2, np.inf)
        base = np.where(np.isfinite(v), 0.5 * np.log(RHO / (v + RHO)), 0.0)
        quad = np.where(np.isfinite(v), v * v * d * d / (2 * (v + RHO)), np.inf)
    forward = base + np.where(d > 0, quad, 0.0)
    backward = base + np.where(d < 0, quad, 0.0)
    return i, j, forward, backward


def verdict(fit: Fit, level: float = DEFAULT_LEVEL, order: Sequence[str] | None = None,
            margin: float = 0.0, top_k: int | None = None,
            records: Mapping[tuple[str, str], Record] | None = None, partnerships: bool = True,
            every_pair: bool = True, looks: Looks | None = None) -> Verdict:
    """Every pair of ``order`` (default: the fit's) judged at ``level``, ties within ``margin``.

    With ``every_pair`` (and no ``top_k``) the family is every pair of the field,
    n(n − 1)/2 "ahead" claims (and a "tied within δ" claim per neighbour pair when δ > 0),
    judged by one Holm step-down: all of them hold at once with probability ≥ ``level``,
    and the places (:attr:`Verdict.places`) follow from them. Otherwise the family is
    the neighbour pairs that matter (all, or the first ``top_k``), as before; pairs past
    the top k are judged each on its own and claim nothing about places.
    ``records`` (:func:`.record.records` of the results) adds each pair's head-to-head
    record to the fit's evidence (None: the fit alone). ``looks``: what earlier looks on
    this field proved (:class:`.places.Looks`); the verdict returns them updated.
    """
    ranked = tuple(order) if order is not None else order_of(fit)
    widen = _widen(fit.clusters, level) if fit.clusters >= 2 else None
    pairs = list(zip(ranked, ranked[1:]))
    everything = every_pair and top_k is None and len(ranked) > 2
    family_pairs = len(pairs) if top_k is None else min(top_k, len(pairs))
    ties = 2 if margin > 0 else 1
    family = family_pairs * ties + (len(ranked) * (len(ranked) - 1) // 2 - len(pairs) if everything else 0)
    least = 1 - (1 - level) / max(1, family)
    seen = (looks or Looks()).for_field(fit.names, margin)
    evs = [evidence(fit, a, b, level, margin, widen, None if records is None else record_of(records, a, b),
                    partnerships, least) for a, b in pairs]
    best_ahead = [seen.best_ahead(a, b, e.log_ahead) for (a, b), e in zip(pairs, evs)]
    best_tied = [seen.best_tied(a, b, e.log_tied) if margin > 0 else -math.inf for (a, b), e in zip(pairs, evs)]
    # A claim made the other way round at an earlier look (the fit's order has swapped them since) is kept.
    best_behind = [seen.best_ahead(b, a, e.log_behind) for (a, b), e in zip(pairs, evs)]
    stat = np.array([max(x, y, z) for x, y, z in zip(best_ahead, best_tied, best_behind)][:family_pairs],
                    dtype=np.float64)
    far: list[tuple[str, str, float, float]] = []
    if everything:
        far = _far_evidence(fit, ranked, level, widen, records, partnerships, least, seen)
        stat = np.concatenate([stat, np.array([max(f, b) for _, _, f, b in far], dtype=np.float64)])
    levels = list(holm_levels(stat, level, family)) + [level] * (len(pairs) - family_pairs)
    judged = tuple(_neighbour(fit, a, b, ev, lv, margin, ba, bt)
                   for (a, b), ev, lv, ba, bt in zip(pairs, evs, levels[:len(pairs)], best_ahead, best_tied))
    # A claim made at an earlier look stands (the family's promise covers every look's claims).
    judged = tuple(dataclasses.replace(n, settled=True) if (n.upper, n.lower) in seen.claims and not n.settled
                   else n for n in judged)
    claims = {(n.upper, n.lower) for n in judged[:family_pairs] if n.settled}
    for (a, b), x, lv in zip(pairs[:family_pairs], best_behind, levels):
        if x >= math.log(1 / (1 - lv)) and (a, b) not in claims:
            claims.add((b, a))
    for (a, b, fwd, bwd), lv in zip(far, levels[len(pairs):] if everything else []):
        bound = math.log(1 / (1 - lv))
        if fwd >= bound:
            claims.add((a, b))
        elif bwd >= bound:
            claims.add((b, a))
    names = set(ranked)
    claims |= {(x, y) for x, y in seen.claims if x in names and y in names}
    kept = math.log(1 / (1 - level))  # no claim is judged more leniently: lower evidence never decides one
    remembered_ahead = {k: v for k, v in seen.ahead.items() if v >= kept}
    for (a, b), x, y in zip(pairs, best_ahead, best_behind):
        if x >= kept:
            remembered_ahead[(a, b)] = x
        if y >= kept:
            remembered_ahead[(b, a)] = y
    for a, b, fwd, bwd in far:
        if fwd >= kept:
            remembered_ahead[(a, b)] = fwd
        if bwd >= kept:
            remembered_ahead[(b, a)] = bwd
    remembered_tied = dict(seen.tied)
    for (a, b), x in zip(pairs, best_tied):
        if x >= kept:
            remembered_tied[(a, b) if a < b else (b, a)] = x
    after = Looks(seen.names, margin, remembered_ahead, remembered_tied, frozenset(claims) | seen.claims)
    return Verdict(ranked, judged, level, margin, top_k, frozenset(claims), family, after)


def _far_evidence(fit: Fit, ranked: Sequence[str], level: float, widen: float | None,
                  records: Mapping[tuple[str, str], Record] | None, partnerships: bool, least: float,
                  seen: Looks) -> list[tuple[str, str, float, float]]:
    """(upper, lower, log e that upper is ahead, log e that lower is) for every pair that is not a
    neighbour pair, each the larger of now and any earlier look (``seen``)."""
    i, j, fwd, bwd = _far_pairs(fit, ranked, widen)
    out = []
    for a_i, b_i, f, b in zip(i.tolist(), j.tolist(), fwd.tolist(), bwd.tolist()):
        a, c = ranked[a_i], ranked[b_i]
        rec = None if records is None else record_of(records, a, c)
        if rec is not None and rec.bets:
            ev = evidence(fit, a, c, level, 0.0, widen, rec, partnerships, least)
            f, b = ev.log_ahead, ev.log_behind
        out.append((a, c, seen.best_ahead(a, c, f), seen.best_ahead(c, a, b)))
    return out


def student_t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom (scipy's ``stdtr``, what scipy.stats.t.cdf calls).

    >>> round(student_t_cdf(2.0, 10), 4)
    0.9633
    """
    return float(special.stdtr(df, t))
