"""The play-off: once the budget is spent with a prize place still open, the contenders alone play on.

Why a stage of its own: the field planner keeps every entrant within 2x of the mean
matches (:data:`.planner.CAP`), so a prize pair can meet only about twice the
per-entrant budget, and a 56/44 pair near the prize line needs several hundred
head-to-head matches at the strict level Holm gives the first prize claim. In a
64-entrant field at 160 matches each, the top 8 was ordered right every time and
settled never. The play-off lifts the cap for the few entrants whose places still
cross a prize line or one another, and only them:

- **contenders** (:func:`contenders`): the members of the open pairs that matter
  (the first ``top_k`` neighbour pairs of the fit's order, places 1..k and the line
  below k, or every neighbour pair without ``top_k``), i.e. the entrants whose
  place intervals still touch a prize line;
- **its rounds** (:func:`plan_playoff`) are only tables that separate an open pair
  (head to head where the format has it), each pair's share in proportion to the
  matches it likely still needs, on fresh deals (new round numbers name new deals);
- **its price** is stated before its first match (:func:`statement`): the contenders,
  the open pairs, the matches each likely needs if its gap is what the fit estimates,
  and the most it may play (``[schedule].playoff``);
- **it ends** when every pair that matters is decided, or at its own budget.

The verdict is the event's own, with the looks it kept: an always-valid claim holds
at every look whatever rule chose what to play next, so the play-off's claims and
the main stage's are one family at the event's level. Deterministic like every
adaptive round: a resumed event replans the same play-off.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from typing import Any, Mapping, Sequence

from .config import EventConfig
from .planner import _Field, _focus_table, table_matches, tasks_of
from .schedule import MatchTask
from ..stats.fit import BETA, Fit, Result
from ..stats.verdict import FIT_WEIGHT, Neighbour, Verdict, doubt, half_width, match_information


@dataclass(frozen=True, slots=True)
class OpenPair:
    """One open pair that matters, and what settling it likely takes."""

    upper: str
    lower: str
    #: The fit's estimate of θ_upper − θ_lower and its always-valid interval now.
    gap: float
    low: float
    high: float
    #: Matches between the two that would likely settle it if the gap is what the fit says (None: no estimate).
    likely: int | None


@dataclass(frozen=True, slots=True)
class Statement:
    """What the play-off is and what it will cost, fixed before its first match (stored and printed)."""

    #: Index of the play-off's first match (every match before it is the main stage's).
    start: int
    #: Matches the main stage played (its budget may cut its last round short of ``start``).
    main: int
    #: The most matches the play-off may play (``[schedule].playoff``).
    budget: int
    contenders: tuple[str, ...]
    pairs: tuple[OpenPair, ...]
    #: Matches all the open pairs likely need together (at most ``budget``), and whether that is capped.
    likely: int
    capped: bool
    #: How its tables seat the pairs: "head to head", or with the nearest-ranked entrants (a table needs four).
    how: str = "head to head"

    def lines(self) -> list[str]:
        """The statement as the console and the leaderboard print it."""
        shown = "; ".join(f"{p.upper} ? {p.lower} " + (f"≈ {p.likely}" if p.likely is not None else "(no estimate)")
                          for p in self.pairs[:6]) + (" …" if len(self.pairs) > 6 else "")
        cost = (f"likely about {self.likely} matches" if not self.capped else
                f"likely more than its budget of {self.budget} matches: some pairs may stay open")
        return [f"Play-off after {self.main} matches: {len(self.contenders)} contenders "
                f"({', '.join(self.contenders)}) for {len(self.pairs)} open pair(s) that decide places; "
                f"{cost} (at most {self.budget}, {self.how}, on fresh deals).",
                f"Likely matches per open pair, if each gap is what the fit believes: {shown}."]

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @staticmethod
    def from_json(text: str) -> Statement:
        return Statement.from_dict(json.loads(text))

    @staticmethod
    def from_dict(raw: Mapping[str, Any]) -> Statement:
        """From :meth:`to_json`'s fields (keys it does not have, such as a leaderboard's ``played``, ignored)."""
        return Statement(int(raw["start"]), int(raw["main"]), int(raw["budget"]), tuple(raw["contenders"]),
                         tuple(OpenPair(**p) for p in raw["pairs"]), int(raw["likely"]), bool(raw["capped"]),
                         str(raw.get("how", "head to head")))


def open_pairs(v: Verdict) -> list[Neighbour]:
    """The pairs that matter (the first ``top_k``, or all) not yet decided."""
    return [n for n in v.considered if not n.decided]


def contenders(v: Verdict) -> list[str]:
    """The entrants of the open pairs that matter, in the fit's order: whose places still touch a prize line."""
    members = {m for n in open_pairs(v) for m in (n.upper, n.lower)}
    return [n for n in v.order if n in members]


def h2h_information(gap: float, partnerships: bool = True) -> float:
    """Fisher information about θ_a − θ_b in one head-to-head match (A+A against B+B), in 1/points².

    P(A wins) = Φ(d / s), s = β (partnerships) or √2 β (a fives pair); at d = 0 it is
    (2/π) / s², and :func:`..stats.verdict.match_information` is the share of that left at ``gap``.
    """
    s = BETA if partnerships else math.sqrt(2) * BETA
    return match_information(gap, partnerships) * (2 / math.pi) / (s * s)


def likely_matches(fit: Fit, pair: Neighbour, family: int, level: float, partnerships: bool = True,
                   per_match_scale: float = 1.0) -> int | None:
    """Matches between the pair that would likely settle it: the information at which the fit's share
    of the evidence (weight :data:`FIT_WEIGHT`) clears 0 at the strictest Holm level of ``family``
    claims, if the gap is what the fit believes (its root mean square), minus the information it has now.

    A rough price, not a promise: half the pairs whose gap is as estimated settle sooner,
    half later, and a pair whose true gap is smaller takes longer (or never settles).
    ``per_match_scale``: the share of a head-to-head match's information one play-off
    match gives (1 head to head; a partnership table with two others teaches about a quarter).
    """
    d, se = doubt(fit, pair.upper, pair.lower, level)
    if not (se > 0 and math.isfinite(se)):
        return None
    # The gap the price is read at: the posterior's root mean square, sqrt(d̂² + se²), rather than d̂
    # itself; an open pair's d̂ is often near 0 by chance, and 0 would price it at "never".
    d = math.hypot(d, se)
    strict = 1 - (1 - level) * FIT_WEIGHT / max(1, family)
    now = 1 / (se * se)
    lo, hi = now, now
    while half_width(1 / math.sqrt(hi), strict) > abs(d):
        hi *= 2
        if hi > 1e9:
            return None
    if hi == now:
        return 0
    for _ in range(60):  # bisection on the information at which the half-width reaches |d|
        mid = (lo + hi) / 2
        if half_width(1 / math.sqrt(mid), strict) > abs(d):
            lo = mid
        else:
            hi = mid
    per = h2h_information(d, partnerships) * per_match_scale
    return None if per <= 0 else math.ceil((hi - now) / per)


def needs(config: EventConfig, fit: Fit, v: Verdict) -> dict[tuple[str, str], int | None]:
    """Each open pair that matters -> the matches between them that would likely settle it.

    Holm judges the family's strongest claim at α/m, the next at α/(m − 1), …: the
    pairs are ranked by how clear they are now (|d̂| / se), the clearest held to α/m.
    """
    pairs = open_pairs(v)
    partnerships = config.make_ruleset().partnerships
    scale = _per_match(config)

    def clarity(n: Neighbour) -> float:
        d, se = doubt(fit, n.upper, n.lower, v.level)
        return abs(d) / se if se > 0 else math.inf

    ranked = sorted(pairs, key=lambda n: (-clarity(n), n.upper, n.lower))
    return {(n.upper, n.lower): likely_matches(fit, n, len(pairs) - r, v.level, partnerships, scale)
            for r, n in enumerate(ranked)}


def statement(config: EventConfig, fit: Fit, v: Verdict, start: int) -> Statement:
    """What the play-off whose first match is index ``start`` will be and likely cost (printed before it plays)."""
    budget = config.schedule.playoff
    need = needs(config, fit, v)
    pairs = []
    for n in open_pairs(v):
        d = (n.low + n.high) / 2 if math.isfinite(n.low + n.high) else 0.0
        pairs.append(OpenPair(n.upper, n.lower, round(d, 3), round(n.low, 3), round(n.high, 3),
                              need[(n.upper, n.lower)]))
    total = sum(budget if p.likely is None else p.likely for p in pairs)
    how = ("head to head; nobody else plays" if _per_match(config) == 1.0 else
           "each pair at a table with the entrants ranked nearest to it, who fill the seats")
    return Statement(start, min(start, config.schedule.budget), budget, tuple(contenders(v)), tuple(pairs),
                     min(total, budget), total > budget, how)


def _per_match(config: EventConfig) -> float:
    """What one play-off match teaches about its pair, against a head-to-head match (see :func:`likely_matches`)."""
    rs = config.make_ruleset()
    if not rs.partnerships:
        return 2 / max(2, rs.players)  # a fives group: the pair is two of its seats
    if config.format in ("self", "duel", "gauntlet") or config.head_to_head:
        return 1.0
    return 0.25  # A+x against B+y: the pair is half of each side


def plan_playoff(config: EventConfig, entrants: Sequence[str], results: Sequence[Result], round_no: int,
                 matches: int, fit: Fit, judged: Verdict, *, start_index: int,
                 groups: Mapping[str, str] | None = None) -> list[MatchTask]:
    """One play-off round: tables that separate the open pairs that matter, nobody else seated.

    Every open pair gets a table, then more in proportion to the matches it likely still
    needs now (:func:`likely_matches` on the fit of every result so far; stride
    scheduling), so the pairs tend to settle together; no exposure cap: only
    contenders play. [] when no open pair can be seated (siblings, or a gauntlet pair
    of two field entrants): the play-off cannot decide them.
    """
    fld = _Field(config, entrants, results, round_no, groups)
    fld.order = list(judged.order)
    budget = max(1, config.schedule.playoff)
    need = needs(config, fit, judged)
    targets = []
    for n in sorted(open_pairs(judged), key=lambda n: (n.upper, n.lower)):
        table = _focus_table(fld, n)
        if table is None:
            continue
        likely = need[(n.upper, n.lower)]
        weight = float(budget if likely is None else max(1, min(likely, budget)))
        targets.append((table, weight))
    if not targets:
        return []
    per = table_matches(fld.form.focus, fld.form.players, config.duplicate)
    given = [0] * len(targets)
    while fld.planned + per <= max(matches, per * len(targets)):
        i = min(range(len(targets)), key=lambda i: (given[i] / targets[i][1], i))
        fld.add(targets[i][0])
        given[i] += 1
    return tasks_of(config, fld.tables, round_no, start_index)
