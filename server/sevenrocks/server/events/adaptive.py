"""Adaptive scheduling: play in rounds, and spend each new round where the order is least settled.

The rounds are drawn by the field planner (:mod:`.planner`): round 0 is whole
matchdays (every entrant plays equally often), and after each round the
order-free fit (:mod:`..stats.fit`) and the verdict (:mod:`..stats.verdict`) are
recomputed from the stored results, and the next round spends most of its
matches on the neighbour pairs that are not decided yet (head to head where the
format has it), the rest exploring. The event stops at the match budget, or,
with ``until_settled``, as soon as every neighbour pair that matters (the first
``top_k`` places, or all) is decided: ahead, or tied within ``tie_within``.

With ``[schedule].playoff``, an event whose budget is spent with a pair that
matters still open goes on to a play-off (:mod:`.playoff`): only the contenders
play, head to head, until the pairs are decided or the play-off's own budget is
spent; what it will likely cost is stated before its first match.

Round sizes do not depend on the budget: the budget only cuts the round it falls
in. So raising the budget of a finished event continues exactly as an event run
with the larger budget from the start would have.

Deterministic: a round is a pure function of the config (its seed names every
deal) and the stored results of the rounds before it, so a resumed event replans
exactly the rounds it played, and any executor (local or Dask) can play a round.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from sevenrocks.sdk.rules import Offender

from .config import EventConfig
from .planner import judge_field, plan_round
from .playoff import Statement, plan_playoff, statement
from .schedule import MatchTask, fingerprint
from ..stats.fit import Result
from ..stats.places import Looks
from ..stats.verdict import Verdict

#: Bump when the planner's code changes what a config plays (part of the fingerprint).
PLANNER_VERSION = 4  # 3: the verdict weighs head-to-head records, one Holm family; 4: every pair judged, looks kept,
#: the last round ordered so a budget's cut keeps the exposure cap


def round_size(config: EventConfig) -> int:
    """Matches in a round after the first: ``round_deals`` head-to-head deals, and at least one
    match per entrant (so a round of a large field reaches every entrant)."""
    per_deal = 2 if config.duplicate else 1
    return max(config.schedule.round_deals * per_deal, len(config.entrants))


def first_size(config: EventConfig) -> int:
    """Matches in round 0: about three per entrant, in whole matchdays."""
    return min(round_size(config), 3 * len(config.entrants))


def adaptive_fingerprint(config: EventConfig, first: Sequence[MatchTask]) -> str:
    """What a resumed event must share: round 0 and every setting that shapes later rounds.

    The budget and ``until_settled`` only decide when to stop, so they may change between runs.
    """
    s = config.schedule
    return (f"{fingerprint(first)}-planner{PLANNER_VERSION}-{s.round_deals}-{config.ratings.level}"
            f"-{s.tie_within:.6g}-{s.top_k}")


@dataclass
class AdaptivePlan:
    """The rounds of one adaptive event, replanned from stored results."""

    config: EventConfig
    #: Every task of the rounds planned so far (a round cut by the budget included whole).
    tasks: list[MatchTask] = field(init=False, default_factory=list)
    rounds: int = field(init=False, default=0)
    #: The verdict the last round was planned from (None before round 1).
    last: Verdict | None = field(init=False, default=None)
    #: What the verdict's looks so far proved (each round's look carries them on): settled stays settled.
    looks: Looks | None = field(init=False, default=None)
    #: The play-off's statement once it has begun (None: the main stage, or no play-off).
    playoff: Statement | None = field(init=False, default=None)

    @property
    def budget(self) -> int:
        return self.config.schedule.budget

    @property
    def names(self) -> list[str]:
        return [e.name for e in self.config.entrants]

    def first_round(self) -> list[MatchTask]:
        """Round 0: whole matchdays (the part within the budget)."""
        return self._commit(plan_round(self.config, self.names, [], 0, first_size(self.config), start_index=0))

    def next_round(self, results: Sequence[Result]) -> list[MatchTask]:
        """The next round from the results of every task so far; [] when the event is over.

        The main stage plays until its budget (or, with ``until_settled``, until every
        pair that matters is decided); then, with ``[schedule].playoff`` and a pair that
        matters still open, the play-off's rounds until they are decided or its budget is spent.
        """
        s = self.config.schedule
        if self.playoff is not None:
            if len(self.tasks) >= self.playoff.start + self.playoff.budget:
                return []
        elif len(self.tasks) >= self.budget and not s.playoff:
            return []
        f, v = judge_field(self.config, self.names, results, self.looks)
        self.last, self.looks = v, v.looks
        main_over = self.playoff is None and len(self.tasks) >= self.budget
        if v.decided and (s.until_settled or main_over or self.playoff is not None):
            return []
        if self.playoff is None and not main_over:
            return self._commit(plan_round(self.config, self.names, results, self.rounds, round_size(self.config),
                                           start_index=len(self.tasks), judged=v))
        if self.playoff is None:  # the budget is spent with a pair that matters open: the play-off begins
            self.playoff = statement(self.config, f, v, len(self.tasks))
        return self._commit(plan_playoff(self.config, self.names, results, self.rounds, round_size(self.config), f,
                                         v, start_index=len(self.tasks)))

    def _commit(self, out: list[MatchTask]) -> list[MatchTask]:
        self.tasks.extend(out)
        if out:
            self.rounds += 1
        end = self.budget if self.playoff is None else self.playoff.start + self.playoff.budget
        return [t for t in out if t.index < end]


def result_of(seats: Sequence[str], ranks: Sequence[int], group: str, fault: Offender | None = None) -> Result:
    """A stored or finished match as the fit reads it (a forfeit charged to its faulting seat only)."""
    return Result(tuple(seats), tuple(ranks), group, None if fault is None else fault.seat)


def replay_rounds(config: EventConfig, lookup: Callable[[str], Result | None]) -> tuple[AdaptivePlan, list[MatchTask]]:
    """Replan the rounds already complete in the store; returns the plan and the round to play now.

    ``lookup(match_id)`` is the stored result of a match, or None. The round returned
    (its part within the budget) is the first with a match not stored ([] when the
    event is over).
    """
    plan = AdaptivePlan(config)
    current = plan.first_round()
    while current:
        if any(lookup(t.match_id) is None for t in current):
            return plan, current
        current = plan.next_round([r for r in (lookup(t.match_id) for t in plan.tasks) if r is not None])
    return plan, []
