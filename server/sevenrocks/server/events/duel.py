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

from .config import EventConfig
from .executor import Executor
from .outcome import Report
from .schedule import MatchTask, build_schedule, fingerprint
from ..stats.sprt import CONTINUE, SPRT, interval, pair_scores
from .store import Store, StoredMatch


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


async def run_duel(
    config: EventConfig, store: Store, executor: Executor, test: SPRT, round_pairs: int = 8,
    on_round: Callable[[DuelState], None] | None = None,
    on_match: Callable[[int, int], None] | None = None,
) -> DuelState:
    """Play the duel ``config`` (format ``duel``) until ``test`` decides or the schedule ends."""
    from .identity import digest
    from .tournament import _recorder, identities_of, resume_ratings

    tasks = build_schedule(config)
    idents = identities_of(config)
    known = any(e.event_id == config.name for e in store.events())
    store.open_event(config, fingerprint(tasks) + f"-duel-{round_pairs}", len(tasks), idents)
    if known:
        store.check_identities(config, idents, ())
    a = config.entrants[0].name
    order = resume_ratings(config, store)
    on_result, _ = _recorder(config, store, order, len(tasks), None, {n: digest(i) for n, i in idents.items()})
    size = 2 * round_pairs if config.duplicate else round_pairs
    chunks = [tasks[i:i + size] for i in range(0, len(tasks), size)]
    played: list[MatchTask] = []
    state = duel_state(test, a, [])
    for chunk in chunks:
        ids = {t.match_id for t in played}
        state = duel_state(test, a, [m for m in store.matches([config.name]) if m.match_id in ids])
        if on_round is not None and played:
            on_round(state)
        if state.status != CONTINUE:
            break
        done = store.done_ids(config.name)
        todo = [t for t in chunk if t.match_id not in done]
        if todo:
            def counted(outcome: Report, _f: Callable[[Report], None] = on_result) -> None:
                _f(outcome)
                if on_match is not None:
                    on_match(len(store.done_ids(config.name)), len(tasks))
            await executor.run(todo, counted)
        played.extend(chunk)
    else:
        ids = {t.match_id for t in played}
        state = duel_state(test, a, [m for m in store.matches([config.name]) if m.match_id in ids])
        if on_round is not None:
            on_round(state)
    store.finish_event(config.name)
    return state
