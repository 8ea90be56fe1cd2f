"""Running an event: schedule, skip what the database already holds, play, store, rate.

The flow is one way (docs/design.md): config -> schedule -> executor -> store -> ratings. Each
finished match is stored with the ratings it leads to in one transaction, so
stopping at any moment loses at most the matches in flight, and running the same
event again plays exactly the missing ones.

Before anything is played the stored event is checked: the same schedule, the same
settings, the same entrants (:mod:`.identity`); ``replay`` names entrants whose
matches are to be played again under their new identity. During the run the
executor reports, besides finished matches, matches voided by infrastructure
faults (noted, played again, never charged) and entrants withdrawn after crashing
K times in a row (their remaining matches are skipped, and counted as not played).
"""

from __future__ import annotations

import inspect
import itertools
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .config import EventConfig
from .executor import Executor
from .adaptive import AdaptivePlan, replay_rounds, result_of
from .identity import digest, entrant_identity
from ..stats.fit import Result
from .outcome import MatchOutcome, Report, Skipped, Voided, Withdrawn
from ..stats.ratings import InOrder, RatingBook
from .schedule import MatchTask, fingerprint, iter_schedule, matches_per_deal, schedule_fingerprint, schedule_size
from .store import Store


@dataclass(frozen=True, slots=True)
class Progress:
    """What an observer hears after each stored match (and each lifecycle report)."""

    done: int
    total: int
    leader: str | None
    outcome: MatchOutcome | None
    #: A voided match, a withdrawal or a skipped match, when that is what happened.
    report: Report | None = None


@dataclass(slots=True)
class EventPlan:
    #: Matches in the schedule.
    total: int
    #: Matches already stored when the run started.
    stored: int
    #: What is left to play, generated lazily in schedule order.
    todo: Iterator[MatchTask]
    #: Entrants withdrawn (stored, or during this run): their matches are skipped.
    withdrawn: set[str] = field(default_factory=set)
    #: Entrant name -> identity digest, stored with every match.
    digests: dict[str, str] = field(default_factory=dict)
    #: The event was already finished before this run: nothing was played.
    was_finished: bool = False
    #: Matches skipped because an entrant is withdrawn (this run).
    skipped: int = 0
    #: Matches voided and played again (this run).
    voided: int = 0
    #: Entrants replayed (``replay``) before this run, with their new version.
    replayed: dict[str, int] = field(default_factory=dict)
    #: Crashes charged in this run: (match id, entrant, detail, the end of its log).
    crashes: list[tuple[str, str, str, str]] = field(default_factory=list)


class _InOrder(InOrder):
    """:class:`InOrder` that can also be told an index will never have a result (a skipped match)."""

    def add(self, index: int, seats: Sequence[str], ranks: Sequence[int]) -> None:
        self.pending[index] = (seats, ranks)
        while self.next in self.pending:
            s, r = self.pending.pop(self.next)
            if s:
                self.book.apply(s, r)
            self.next += 1


def identities_of(config: EventConfig) -> dict[str, dict[str, Any]]:
    return {e.name: entrant_identity(config, e) for e in config.entrants}


def plan_event(config: EventConfig, store: Store, replay: Sequence[str] = ()) -> EventPlan:
    """Register the event (or check it matches the stored one) and generate what is left to play.

    Nothing here is proportional to the schedule: the size is counted, the
    fingerprint reads two deals, and the tasks are generated as the executor
    asks for them (only the ids already stored are held, to skip them).
    """
    total = schedule_size(config)
    idents = identities_of(config)
    unknown = [n for n in replay if n not in idents]
    if unknown:
        from .store import StoreError

        raise StoreError(f"--replay {unknown[0]}: not an entrant of event {config.name!r}; "
                         f"entrants: {', '.join(idents)}")
    known = any(e.event_id == config.name for e in store.events())
    store.open_event(config, schedule_fingerprint(config), total, idents)
    replayed: dict[str, int] = {}
    if known:
        store.check_identities(config, idents, replay)
        for name in replay:
            replayed[name] = store.replay_entrant(config.name, name, idents[name])
    states = store.entrant_states(config.name)
    info = next(e for e in store.events() if e.event_id == config.name)
    done = store.done_ids(config.name)
    withdrawn = {n for n, st in states.items() if st.withdrawn}
    plan = EventPlan(total, len(done), iter(()), withdrawn, {n: digest(i) for n, i in idents.items()},
                     was_finished=info.finished)
    plan.todo = (t for t in iter_schedule(config) if t.match_id not in done)
    plan.replayed = replayed
    return plan


def resume_ratings(config: EventConfig, store: Store) -> InOrder:
    """The event's ratings from its stored results: the in-order prefix applied, the rest waiting."""
    book = RatingBook(config.make_ruleset().partnerships, config.ratings.tau, config.ratings.draw_probability)
    order = _InOrder(book)
    for _event, index, seats, ranks in store.results([config.name]):
        order.add(index, seats, ranks)
    return order


async def run_event(
    config: EventConfig, store: Store, executor: Executor,
    observe: Callable[[Progress], None] | None = None, replay: Sequence[str] = (),
    preflight_logs: Path | None = None, say: Callable[[str], None] | None = None,
) -> EventPlan:
    """Play every match of ``config`` not yet in ``store``; returns the plan it followed.

    With ``config.preflight``, every launched entrant with no stored match passes
    ``sevenrocks check`` first (:mod:`..check.preflight`), or nothing is played.
    An executor that keeps bots up between calls (:class:`.executor.LocalExecutor`)
    is closed at the end.
    """
    try:
        return await _run_event(config, store, executor, observe, replay, preflight_logs, say)
    finally:
        close = getattr(executor, "close", None)
        if close is not None and inspect.iscoroutinefunction(close):
            await close()


async def _run_event(
    config: EventConfig, store: Store, executor: Executor,
    observe: Callable[[Progress], None] | None, replay: Sequence[str],
    preflight_logs: Path | None, say: Callable[[str], None] | None,
) -> EventPlan:
    if config.schedule.mode == "adaptive":
        if replay:
            from .store import StoreError

            raise StoreError("--replay is not supported for adaptive events; give the changed bot a new "
                             "entrant name (e.g. name@2) or start a new event")
        return await run_adaptive(config, store, executor, observe)
    plan = plan_event(config, store, replay)
    if config.preflight and not plan.was_finished:
        from ..check.preflight import preflight

        played = {s for m in store.matches([config.name]) for s in m.seats}
        await preflight(config, played, preflight_logs or Path("sevenrocks-out") / "logs", say)
    order = resume_ratings(config, store)
    if plan.replayed:  # the replayed entrant's matches left the ratings: store them as they are now
        store.save_all_ratings(config.name, order.book.rows(), order.next)
    done = plan.stored
    if plan.was_finished:
        if observe:
            observe(Progress(done, plan.total, order.book.leader(), None))
        return plan
    lazy = plan.todo

    def todo() -> Iterator[MatchTask]:
        for t in lazy:
            if plan.withdrawn & set(t.seats):
                skip(t)
            else:
                yield t

    def skip(t: MatchTask) -> None:
        plan.skipped += 1
        order.add(t.index, (), ())  # keeps the ratings moving past a match that will not be played
        if observe:
            observe(Progress(done, plan.total, order.book.leader(), None, Skipped(t)))

    def on_result(report: Report) -> None:
        nonlocal done
        if isinstance(report, Voided):
            plan.voided += 1
            store.void(config.name, report.task.match_id, report.reason)
        elif isinstance(report, Withdrawn):
            plan.withdrawn.add(report.entrant)
            store.withdraw(config.name, report.entrant, report.reason)
        elif isinstance(report, Skipped):
            skip(report.task)
            return
        if not isinstance(report, MatchOutcome):
            if observe:
                observe(Progress(done, plan.total, order.book.leader(), None, report))
            return
        outcome = report
        t = outcome.task
        if t.index in order.pending or t.index < order.next:
            return  # already stored: a task run twice counts once
        outcome = replace(outcome, identities=tuple(plan.digests.get(s, "") for s in t.seats))
        order.add(t.index, t.seats, outcome.ranks)
        if store.record_match(outcome, order.book.rows(only_changed=True), order.next):
            done += 1
            f = outcome.fault
            if f is not None and outcome.fault_log is not None and f.detail.startswith("the bot process"):
                plan.crashes.append((t.match_id, t.seats[f.seat], f.detail, outcome.fault_log))
        if observe:
            observe(Progress(done, plan.total, order.book.leader(), outcome))

    if done < plan.total:
        if hasattr(executor, "withdrawn"):  # an executor that launches bots: not those withdrawn before
            executor.withdrawn = set(plan.withdrawn)
        await executor.run(todo(), on_result)
    if plan.withdrawn:
        per_deal = Counter(n for t in itertools.islice(iter_schedule(config), matches_per_deal(config))
                           for n in set(t.seats))
        stored = Counter(n for m in store.matches([config.name]) for n in set(m.seats))
        for name in plan.withdrawn:
            store.set_not_played(config.name, name, per_deal[name] * config.deals - stored[name])
    if done + plan.skipped >= plan.total:
        store.finish_event(config.name)
    return plan


async def run_adaptive(
    config: EventConfig, store: Store, executor: Executor,
    observe: Callable[[Progress], None] | None = None,
) -> EventPlan:
    """Play an adaptive event round by round (:mod:`.adaptive`), resuming from the stored rounds.

    The fingerprint covers the first round and the settings that shape later rounds,
    so a resumed event replans the same rounds; the budget and ``until_settled`` only
    decide when to stop and may change between runs. Identities are checked as for a
    fixed event. An entrant withdrawn after crashing ends the adaptive plan early: its
    rounds can no longer be completed, so the event is finished with what was played.
    """
    first = AdaptivePlan(config).first_round()
    s = config.schedule
    idents = identities_of(config)
    known = any(e.event_id == config.name for e in store.events())
    store.open_event(config, fingerprint(first) + f"-adaptive-{s.round_deals}-{config.ratings.level}", s.budget, idents)
    if known:
        store.check_identities(config, idents, ())
    digests = {n: digest(i) for n, i in idents.items()}
    stored: dict[str, Result] = {}

    def refresh() -> None:
        for m in store.matches([config.name]):
            stored.setdefault(m.match_id, result_of(m.seats, m.ranks, m.group))

    refresh()
    info = next(e for e in store.events() if e.event_id == config.name)
    states = store.entrant_states(config.name)
    result = EventPlan(s.budget, len(stored), iter(()), {n for n, st in states.items() if st.withdrawn}, digests,
                       was_finished=info.finished)
    order = resume_ratings(config, store)
    if observe:
        observe(Progress(len(stored), s.budget, order.book.leader(), None))
    if result.was_finished:
        return result
    plan, current = replay_rounds(config, stored.get)

    on_result, _ = _recorder(config, store, order, s.budget, observe, digests, result, stored)

    while current and not result.withdrawn:
        todo = [t for t in current if t.match_id not in stored]
        if todo:
            if hasattr(executor, "withdrawn"):
                executor.withdrawn = set(result.withdrawn)
            await executor.run(todo, on_result)
        refresh()
        if result.withdrawn:
            break
        missing = [t.match_id for t in current if t.match_id not in stored]
        if missing:
            raise RuntimeError(f"round {plan.rounds} of event {config.name!r} left {len(missing)} matches "
                               f"unplayed (e.g. {missing[0]}); run the event again to resume")
        current = plan.next_round([stored[t.match_id] for t in plan.tasks])
    store.finish_event(config.name)
    return result


def _recorder(config: EventConfig, store: Store, order: InOrder, total: int,
              observe: Callable[[Progress], None] | None, digests: dict[str, str],
              plan: EventPlan | None = None, stored: dict[str, Result] | None = None,
              ) -> tuple[Callable[[Report], None], Callable[[], int]]:
    """The callback that stores each finished match with the live (schedule-order) ratings.

    Used by the adaptive and duel loops; a voided match or a withdrawal is written
    to the store (and to ``plan``) like in :func:`run_event`. ``stored`` collects the
    results as they are stored, for loops that plan from them.
    """
    state = {"done": plan.stored if plan is not None else 0}

    def on_result(report: Report) -> None:
        if isinstance(report, Voided):
            if plan is not None:
                plan.voided += 1
            store.void(config.name, report.task.match_id, report.reason)
        elif isinstance(report, Withdrawn):
            if plan is not None:
                plan.withdrawn.add(report.entrant)
            store.withdraw(config.name, report.entrant, report.reason)
        if not isinstance(report, MatchOutcome):
            if observe:
                observe(Progress(state["done"], total, order.book.leader(), None, report))
            return
        t = report.task
        if t.index in order.pending or t.index < order.next:
            return  # already stored: a task run twice counts once
        outcome = replace(report, identities=tuple(digests.get(x, "") for x in t.seats))
        order.add(t.index, t.seats, outcome.ranks)
        if store.record_match(outcome, order.book.rows(only_changed=True), order.next):
            state["done"] += 1
            if stored is not None:
                stored.setdefault(t.match_id, result_of(t.seats, outcome.ranks, t.group))
        if observe:
            observe(Progress(state["done"], total, order.book.leader(), outcome))

    return on_result, lambda: state["done"]
