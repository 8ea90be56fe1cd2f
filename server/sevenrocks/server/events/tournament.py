"""Running an event: schedule, skip what the database already holds, play, store, rate.

The flow is one way (DESIGN.md): config -> schedule -> executor -> store ->
ratings. Each finished match is stored with the ratings it leads to in one
transaction, so stopping at any moment loses at most the matches in flight,
and running the same event again plays exactly the missing ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .config import EventConfig
from .executor import Executor
from .outcome import MatchOutcome
from .ratings import InOrder, RatingBook
from .schedule import MatchTask, build_schedule, fingerprint
from .store import Store


@dataclass(frozen=True, slots=True)
class Progress:
    """What an observer hears after each stored match."""

    done: int
    total: int
    leader: str | None
    outcome: MatchOutcome | None


@dataclass(frozen=True, slots=True)
class EventPlan:
    tasks: list[MatchTask]
    todo: list[MatchTask]


def plan_event(config: EventConfig, store: Store) -> EventPlan:
    """Register the event (or check it matches the stored one) and list what is left to play."""
    tasks = build_schedule(config)
    store.open_event(config, fingerprint(tasks), len(tasks))
    done = store.done_ids(config.name)
    return EventPlan(tasks, [t for t in tasks if t.match_id not in done])


def resume_ratings(config: EventConfig, store: Store) -> InOrder:
    """The event's ratings from its stored results: the in-order prefix applied, the rest waiting."""
    book = RatingBook(config.make_ruleset().partnerships, config.ratings.tau, config.ratings.draw_probability)
    order = InOrder(book)
    for _event, index, seats, ranks in store.results([config.name]):
        order.add(index, seats, ranks)
    return order


async def run_event(
    config: EventConfig, store: Store, executor: Executor,
    observe: Callable[[Progress], None] | None = None,
    preflight_logs: Path | None = None, say: Callable[[str], None] | None = None,
) -> EventPlan:
    """Play every match of ``config`` not yet in ``store``; returns the plan it followed.

    With ``config.preflight``, every launched entrant with no stored match passes
    ``sevenrocks check`` first (:mod:`.preflight`), or nothing is played.
    """
    plan = plan_event(config, store)
    if config.preflight and plan.todo:
        from .preflight import preflight

        todo = {t.match_id for t in plan.todo}
        played = {s for t in plan.tasks if t.match_id not in todo for s in t.seats}
        await preflight(config, played, preflight_logs or Path("sevenrocks-out") / "logs", say)
    order = resume_ratings(config, store)
    done = len(plan.tasks) - len(plan.todo)
    if observe:
        observe(Progress(done, len(plan.tasks), order.book.leader(), None))

    def on_result(outcome: MatchOutcome) -> None:
        nonlocal done
        t = outcome.task
        if t.index in order.pending or t.index < order.next:
            return  # already stored: a task run twice counts once
        order.add(t.index, t.seats, outcome.ranks)
        if store.record_match(outcome, order.book.rows(only_changed=True), order.next):
            done += 1
        if observe:
            observe(Progress(done, len(plan.tasks), order.book.leader(), outcome))

    if plan.todo:
        await executor.run(plan.todo, on_result)
    if done == len(plan.tasks):
        store.finish_event(config.name)
    return plan
