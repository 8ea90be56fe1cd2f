"""A duel: two entrants head to head on duplicate deals until an SPRT decides (:mod:`.sprt`).

The schedule is the ``duel`` format's (deal by deal, each deal played twice with the
seats exchanged), cut to ``max_matches``; it is played in rounds of ``round_pairs``
deals, and the test is checked only between rounds, on complete rounds. So where a
duel stops is a function of the stored results alone: a resumed duel (after Ctrl-C
or kill -9) stops at the same round, and any executor can play a round.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .config import EventConfig
from .executor import Executor
from .schedule import MatchTask, build_schedule, fingerprint
from ..stats.sprt import CONTINUE, SPRT, interval, pair_scores
from .store import Store, StoredMatch

if TYPE_CHECKING:
    from .tournament import Run


@dataclass(frozen=True, slots=True)
class DuelState:
    """Where the test stands after the complete rounds so far."""

    status: str
    pairs: int
    matches: int
    llr: float
    bounds: tuple[float, float]
    elo: float
    elo_low: float
    elo_high: float


def score_of(m: StoredMatch, a: str) -> float:
    """``a``'s result in a head-to-head match: 1 win, 0.5 draw, 0 loss."""
    team = 0 if m.seats[0] == a else 1
    if m.ranks[0] == m.ranks[1]:
        return 0.5
    return 1.0 if m.ranks[team] == 0 else 0.0


def duel_state(test: SPRT, a: str, matches: Sequence[StoredMatch]) -> DuelState:
    groups: dict[str, list[float]] = defaultdict(list)
    for m in matches:
        groups[m.group].append(score_of(m, a))
    scores = pair_scores(groups[g] for g in sorted(groups))
    elo, lo, hi = interval(scores)
    return DuelState(test.status(scores), len(scores), len(matches), test.llr(scores), test.bounds, elo, lo, hi)


class DuelRounds:
    """The duel's rounds for the one loop: ``round_pairs`` deals at a time until the test decides."""

    def __init__(self, config: EventConfig, tasks: list[MatchTask], test: SPRT, round_pairs: int,
                 on_round: Callable[[DuelState], None] | None) -> None:
        size = 2 * round_pairs if config.duplicate else round_pairs
        self.chunks = iter([tasks[i:i + size] for i in range(0, len(tasks), size)])
        self.test, self.a, self.on_round = test, config.entrants[0].name, on_round
        self.played: list[MatchTask] = []
        self.state = duel_state(test, self.a, [])

    async def plan(self, run: Run) -> list[MatchTask] | None:
        if self.played:
            ids = {t.match_id for t in self.played}
            self.state = duel_state(self.test, self.a, [m for m in run.store.matches([run.config.name])
                                                        if m.match_id in ids])
            if self.on_round is not None:
                self.on_round(self.state)
        chunk = next(self.chunks, None) if self.state.status == CONTINUE else None
        if chunk is None:
            return None
        self.played.extend(chunk)
        assert run.results is not None
        return [t for t in chunk if t.match_id not in run.results]

    def fit(self, run: Run) -> None:
        pass  # the test is read from the stored matches when the next round is planned

    def finish(self, run: Run) -> None:
        run.store.finish_event(run.config.name)


async def run_duel(
    config: EventConfig, store: Store, executor: Executor, test: SPRT, round_pairs: int = 8,
    on_round: Callable[[DuelState], None] | None = None,
    on_match: Callable[[int, int], None] | None = None,
) -> DuelState:
    """Play the duel ``config`` (format ``duel``) until ``test`` decides or the schedule ends."""
    from .tournament import close_executor, open_run, run_loop

    tasks = build_schedule(config)
    observe = None if on_match is None else (lambda p: on_match(p.done, p.total) if p.outcome else None)
    run = open_run(config, store, executor, observe, fingerprint(tasks) + f"-duel-{round_pairs}", len(tasks),
                   keep_results=True)
    rounds = DuelRounds(config, tasks, test, round_pairs, on_round)
    try:
        await run_loop(run, rounds)
    finally:
        await close_executor(executor)
    return rounds.state
