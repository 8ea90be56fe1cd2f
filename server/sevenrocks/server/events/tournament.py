"""Running an event: schedule, skip what the database already holds, play, store, rate.

The flow is one way (DESIGN.md): config -> schedule -> executor -> store ->
ratings. Each finished match is stored with the ratings it leads to in one
transaction, so stopping at any moment loses at most the matches in flight,
and running the same event again plays exactly the missing ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .adaptive import AdaptivePlan, replay_rounds, result_of
from .config import EventConfig
from .executor import Executor
from .fit import Result
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
) -> EventPlan:
    """Play every match of ``config`` not yet in ``store``; returns the plan it followed."""
    if config.schedule.mode == "adaptive":
        return await run_adaptive(config, store, executor, observe)
    plan = plan_event(config, store)
    order = resume_ratings(config, store)
    done = len(plan.tasks) - len(plan.todo)
    if observe:
        observe(Progress(done, len(plan.tasks), order.book.leader(), None))
    on_result, count = _recorder(store, order, len(plan.tasks), observe, done)
    if plan.todo:
        await executor.run(plan.todo, on_result)
    if count() == len(plan.tasks):
        store.finish_event(config.name)
    return plan


def _recorder(store: Store, order: InOrder, total: int, observe: Callable[[Progress], None] | None,
              done: int) -> tuple[Callable[[MatchOutcome], None], Callable[[], int]]:
    """The callback that stores each finished match with the live (schedule-order) ratings."""
    state = {"done": done}

    def on_result(outcome: MatchOutcome) -> None:
        t = outcome.task
        if t.index in order.pending or t.index < order.next:
            return  # already stored: a task run twice counts once
        order.add(t.index, t.seats, outcome.ranks)
        if store.record_match(outcome, order.book.rows(only_changed=True), order.next):
            state["done"] += 1
        if observe:
            observe(Progress(state["done"], total, order.book.leader(), outcome))

    return on_result, lambda: state["done"]


async def run_adaptive(
    config: EventConfig, store: Store, executor: Executor,
    observe: Callable[[Progress], None] | None = None,
) -> EventPlan:
    """Play an adaptive event round by round (:mod:`.adaptive`), resuming from the stored rounds.

    The fingerprint covers the first round and the settings that shape later rounds,
    so a resumed event replans the same rounds; the budget and ``until_settled`` only
    decide when to stop and may change between runs.
    """
    first = AdaptivePlan(config).first_round()
    s = config.schedule
    store.open_event(config, fingerprint(first) + f"-adaptive-{s.round_deals}-{config.ratings.level}", s.budget)
    stored: dict[str, Result] = {}

    def refresh() -> None:
        for m in store.matches([config.name]):
            stored.setdefault(m.match_id, result_of(m.seats, m.ranks, m.group))

    refresh()
    plan, current = replay_rounds(config, stored.get)
    order = resume_ratings(config, store)
    if observe:
        observe(Progress(len(stored), s.budget, order.book.leader(), None))
    on_result, _ = _recorder(store, order, s.budget, observe, len(stored))
    while current:
        todo = [t for t in current if t.match_id not in stored]
        if todo:
            await executor.run(todo, on_result)
        refresh()
        missing = [t.match_id for t in current if t.match_id not in stored]
        if missing:
            raise RuntimeError(f"round {plan.rounds} of event {config.name!r} left {len(missing)} matches "
                               f"unplayed (e.g. {missing[0]}); run the event again to resume")
        current = plan.next_round([stored[t.match_id] for t in plan.tasks])
    store.finish_event(config.name)
    return EventPlan(plan.tasks, [])
