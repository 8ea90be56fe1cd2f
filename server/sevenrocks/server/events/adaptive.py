"""Adaptive scheduling: play in rounds, and spend each new round where the order is least settled.

Round 0 plays one deal of every matchup of the format. After each round the
order-free fit (:mod:`.fit`) and the settled verdict (:mod:`.verdict`) are
recomputed from the stored results; the next round adds ``round_deals`` deals of
matchups, dealt round-robin over the neighbour pairs that are not settled yet (the
least settled first), each to the matchup that best separates the pair (head to
head when the format has it: A+A against B+B measures A − B twice as directly as
A+X against B+Y). The event stops at the match budget, or, with
``until_settled``, as soon as every neighbour pair is settled.

Deterministic: a round is a pure function of the config (its seed names every
deal) and the stored results of the rounds before it, so a resumed event replans
exactly the rounds it played, and any executor (local or Dask) can play a round.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .config import EventConfig
from ..stats.fit import Result, fit
from .schedule import MatchTask, Matchup, matchup_tasks, partnership_matchups, ruleset_spec
from ..stats.verdict import Neighbour, Verdict, verdict


def separation(matchup: Matchup, a: str, b: str) -> float:
    """How directly one match of ``matchup`` measures a − b: |x · (e_a − e_b)| of its design."""
    (p1, p2), (q1, q2) = matchup
    x: dict[str, int] = {}
    for name, sign in ((p1, 1), (p2, 1), (q1, -1), (q2, -1)):
        x[name] = x.get(name, 0) + sign
    return abs(x.get(a, 0) - x.get(b, 0))


@dataclass
class AdaptivePlan:
    """The rounds of one adaptive event, replanned from stored results."""

    config: EventConfig
    matchups: list[Matchup] = field(init=False)
    #: Deals of each matchup scheduled so far.
    deals: dict[Matchup, int] = field(init=False)
    tasks: list[MatchTask] = field(init=False, default_factory=list)
    rounds: int = field(init=False, default=0)
    #: The verdict the last round was planned from (None before round 1).
    last: Verdict | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.matchups = partnership_matchups(self.config)
        self.deals = {m: 0 for m in self.matchups}
        self._spec = ruleset_spec(self.config)

    @property
    def budget(self) -> int:
        return self.config.schedule.budget

    def _add(self, matchup: Matchup, out: list[MatchTask]) -> bool:
        new = matchup_tasks(self.config, self._spec, matchup, self.deals[matchup], len(self.tasks) + len(out))
        if len(self.tasks) + len(out) + len(new) > self.budget:
            return False
        out.extend(new)
        self.deals[matchup] += 1
        return True

    def first_round(self) -> list[MatchTask]:
        """One deal of every matchup (as many as the budget allows)."""
        out: list[MatchTask] = []
        for m in self.matchups:
            self._add(m, out)
        return self._commit(out)

    def next_round(self, results: Sequence[Result]) -> list[MatchTask]:
        """The next round from the results of every task so far; [] when the event is over."""
        names = [e.name for e in self.config.entrants]
        v = verdict(fit(results, True, names), self.config.ratings.level)
        self.last = v
        if self.config.schedule.until_settled and v.settled:
            return []
        targets = sorted((n for n in v.neighbours if not n.settled), key=lambda n: (n.p_ahead, n.upper))
        if not targets:
            targets = sorted(v.neighbours, key=lambda n: (n.p_ahead, n.upper))
        out: list[MatchTask] = []
        for i in range(self.config.schedule.round_deals):
            matchup = self._best(targets[i % len(targets)]) if targets else None
            if matchup is None or not self._add(matchup, out):
                break
        return self._commit(out)

    def _best(self, pair: Neighbour) -> Matchup | None:
        scored = [(separation(m, pair.upper, pair.lower), m) for m in self.matchups]
        best = max((s for s, _ in scored), default=0.0)
        if best == 0:
            return None
        # Among the most direct matchups, the one with the fewest deals so far (then schedule order).
        return min((m for s, m in scored if s == best), key=lambda m: self.deals[m])

    def _commit(self, out: list[MatchTask]) -> list[MatchTask]:
        self.tasks.extend(out)
        if out:
            self.rounds += 1
        return out


def result_of(seats: Sequence[str], ranks: Sequence[int], group: str) -> Result:
    return Result(tuple(seats), tuple(ranks), group)


def replay_rounds(config: EventConfig, lookup: Callable[[str], Result | None]) -> tuple[AdaptivePlan, list[MatchTask]]:
    """Replan the rounds already complete in the store; returns the plan and the round to play now.

    ``lookup(match_id)`` is the stored result of a match, or None. The round returned
    is the first with a match not stored ([] when the event is over).
    """
    plan = AdaptivePlan(config)
    current = plan.first_round()
    while current:
        found = [lookup(t.match_id) for t in current]
        if any(r is None for r in found):
            return plan, current
        current = plan.next_round([r for r in (lookup(t.match_id) for t in plan.tasks) if r is not None])
    return plan, []
