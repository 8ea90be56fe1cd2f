"""The one loop every event, duel and league runs: plan a round, play it, store it, fit.

The flow is one way (docs/design.md): config -> plan -> executor -> store -> fit.

1. **Plan** a round (:class:`Rounds`): a fixed event's whole schedule (one lazy
   round), an adaptive event's next round (:mod:`.adaptive`), a duel's next deals,
   or a league's next tables (:mod:`..league.runner`, from the field planner).
2. **Play** it on an executor (embedded referee, Dask workers, in process).
3. **Store** each finished match with the ratings it leads to in one transaction
   (:meth:`Run.record`), so stopping at any moment loses at most the matches in
   flight, and running again plays exactly what is missing.
4. **Fit** the stored results, which is what the next plan (and the stopping rule)
   reads.

An event is a league that stops at its budget and admits no one. Before anything
is played the stored event is checked: the same schedule, the same settings, the
same entrants (:mod:`.identity`); ``replay`` names entrants whose matches are to be
played again under their new identity. During the run the executor reports,
besides finished matches, matches voided by infrastructure faults (noted, played
again, never charged) and entrants withdrawn after crashing K times in a row
(their remaining matches are skipped, and counted as not played).
"""

from __future__ import annotations

import inspect
import itertools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from ..referee.dealguard import DealGuard
from .adaptive import AdaptivePlan, adaptive_fingerprint, replay_rounds, result_of
from .config import EventConfig
from .executor import Executor
from .identity import digest, entrant_identity
from .outcome import FaultStreaks, MatchOutcome, Report, Skipped, Voided, Withdrawn
from .schedule import MatchTask, fingerprint, iter_schedule, matches_per_deal, schedule_fingerprint, schedule_size
from .store import SeedCommitment, Store, StoreError
from ..stats.fit import Result
from ..stats.ratings import InOrder, RatingBook


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
    """What a run did: the report the command line prints."""

    #: Matches in the schedule (an adaptive event's budget).
    total: int
    #: Matches already stored when the run started.
    stored: int
    #: Unused (kept for callers of the earlier plan): the loop plans round by round.
    todo: Iterator[MatchTask] = field(default_factory=lambda: iter(()))
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


class SkippingInOrder(InOrder):
    """:class:`InOrder` that can also be told an index will never have a result (a skipped match)."""

    def add(self, index: int, seats: Sequence[str], ranks: Sequence[int], fault_seat: int | None = None) -> None:
        self.pending[index] = (seats, ranks, fault_seat)
        while self.next in self.pending:
            s, r, f = self.pending.pop(self.next)
            if s:
                self.book.apply(s, r, f)
            self.next += 1


def identities_of(config: EventConfig) -> dict[str, dict[str, Any]]:
    return {e.name: entrant_identity(config, e) for e in config.entrants}


def resume_ratings(config: EventConfig, store: Store) -> InOrder:
    """The event's ratings from its stored results: the in-order prefix applied, the rest waiting."""
    book = RatingBook(config.make_ruleset().partnerships, config.ratings.tau, config.ratings.draw_probability)
    order = SkippingInOrder(book)
    for _event, index, seats, ranks, fault_seat in store.results([config.name]):
        order.add(index, seats, ranks, fault_seat)
    return order


@dataclass
class Run:
    """What the four steps of one run share: the event, where it plays, what is stored so far."""

    config: EventConfig
    store: Store
    executor: Executor
    observe: Callable[[Progress], None] | None
    plan: EventPlan
    #: The live ratings, applied in schedule order and stored with each match.
    order: InOrder
    #: Stored results by match id, for rounds planned from them (None: not kept, a fixed event).
    results: dict[str, Result] | None = None
    #: Matches stored, this run's and earlier ones.
    done: int = 0
    #: Told each match stored by this run (the league's live site and field bookkeeping).
    on_stored: Callable[[MatchOutcome], None] | None = None
    #: The event's deal guard (what the live pages and the spectator feed may show): the
    #: rounds tell it each duplicate group as they plan it, :meth:`record` each match stored.
    guard: DealGuard | None = None
    #: Forfeits by its own fault each entrant has in a row (``[bots].max_faults_in_row``).
    streaks: FaultStreaks | None = None
    #: The commitment to the seed the deals now come from, written into every record (docs/records.md).
    commitment: str = ""

    async def play(self, tasks: Iterable[MatchTask]) -> None:
        """Step 2: play ``tasks`` (possibly lazy); step 3 (:meth:`record`) runs as each one finishes."""
        if isinstance(tasks, list) and not tasks:
            return
        if hasattr(self.executor, "withdrawn"):  # an executor that launches bots: not those withdrawn
            self.executor.withdrawn = set(self.plan.withdrawn)
        await self.executor.run(self._unless_withdrawn(tasks), self.record)

    def _unless_withdrawn(self, tasks: Iterable[MatchTask]) -> Iterator[MatchTask]:
        for t in tasks:
            if self.plan.withdrawn & set(t.seats):
                self.record(Skipped(t))
            else:
                yield replace(t, commitment=self.commitment) if self.commitment else t

    def record(self, report: Report) -> None:
        """Step 3: store what the executor reports; a match with the ratings it leads to, atomically."""
        plan, store, event = self.plan, self.store, self.config.name
        if isinstance(report, Voided):
            plan.voided += 1
            store.void(event, report.task.match_id, report.reason)
        elif isinstance(report, Withdrawn):
            plan.withdrawn.add(report.entrant)
            store.withdraw(event, report.entrant, report.reason)
        elif isinstance(report, Skipped):
            plan.skipped += 1
            self.order.add(report.task.index, (), ())  # the ratings move past a match never played
        if not isinstance(report, MatchOutcome):
            self._tell(None, report)
            return
        t = report.task
        if t.index in self.order.pending or t.index < self.order.next:
            return  # already stored: a task run twice counts once
        outcome = replace(report, identities=tuple(plan.digests.get(s, "") for s in t.seats))
        self.order.add(t.index, t.seats, outcome.ranks, None if outcome.fault is None else outcome.fault.seat)
        if store.record_match(outcome, self.order.book.rows(only_changed=True), self.order.next):
            self.done += 1
            if self.guard is not None:
                self.guard.stored([t.match_id])
            f = outcome.fault
            if f is not None and outcome.fault_log is not None and f.detail.startswith("the bot process"):
                plan.crashes.append((t.match_id, t.seats[f.seat], f.detail, outcome.fault_log))
            if self.on_stored is not None:
                self.on_stored(outcome)
        if self.results is not None:
            self.results.setdefault(t.match_id, result_of(t.seats, outcome.ranks, t.group, outcome.fault))
        self._tell(outcome, None)
        due = self.streaks.add(t.seats, outcome.fault) if self.streaks is not None else None
        if due is not None and due.entrant not in plan.withdrawn:
            self.record(due)
            withdraw = getattr(self.executor, "withdraw_entrant", None)
            if withdraw is not None:  # its matches already handed to the executor are skipped too
                withdraw(due.entrant, due.reason)

    def _tell(self, outcome: MatchOutcome | None, report: Report | None) -> None:
        if self.observe is not None:
            self.observe(Progress(self.done, self.plan.total, self.order.book.leader(), outcome, report))


class Rounds(Protocol):
    """Steps 1 and 4 of the loop for one kind of event."""

    async def plan(self, run: Run) -> Iterable[MatchTask] | None:
        """The next round to play (lazy is fine); None when the event is over."""
        ...

    def fit(self, run: Run) -> None:
        """After a round: fit the stored results, for the next :meth:`plan`."""
        ...

    def finish(self, run: Run) -> None:
        """The loop ended (not interrupted): note what the store should know."""
        ...


async def run_loop(run: Run, rounds: Rounds) -> EventPlan:
    """The loop: plan a round, play it (each result stored as it finishes), fit; until the plan is empty."""
    while (tasks := await rounds.plan(run)) is not None:  # 1. plan
        await run.play(tasks)                               # 2. play, 3. store
        rounds.fit(run)                                     # 4. fit
    rounds.finish(run)
    return run.plan


def seal_seed(config: EventConfig, store: Store, generate: bool = False,
              stage: str = "event") -> tuple[EventConfig, SeedCommitment]:
    """Commit to the seed ``config``'s deals come from, before its first match; the config to play.

    The commitment (SHA-256 of ``SEED:SALT``) is stored once and shown; the seed is revealed when
    the event ends (:meth:`.store.Store.finish_event`), so anyone can check with ``sevenrocks verify
    --seed`` that no deal was picked after the entrants were known. A seed the config gives is
    public and the commitment binds it; ``generate``: a config that gives none gets a secret one
    (an event stored before commitments existed keeps the seed it played with)."""
    row = store.seed_of(config.name, stage)
    if row is None:
        existed = any(e.event_id == config.name for e in store.events())
        secret = generate and not config.seed_given and not existed
        row = store.commit_seed(config.name, stage, None if secret else config.seed)
    elif config.seed_given and row.given and row.seed != config.seed:
        raise StoreError(f"event {config.name!r} committed to seed {row.commitment[:16]}… before its first match; "
                         f"[event].seed cannot change now (give the event a new name for new deals)")
    return replace(config, seed=row.seed), row


def fault_streaks(config: EventConfig, store: Store, fix: str = "a new event") -> FaultStreaks:
    """Each entrant's forfeits in a row as stored: a resumed run withdraws at the same count."""
    streaks = FaultStreaks(config.bots.max_faults_in_row, fix)
    streaks.replay((m.seats, m.fault) for m in store.matches([config.name]))
    return streaks


def open_run(config: EventConfig, store: Store, executor: Executor, observe: Callable[[Progress], None] | None,
             fingerprint_: str, total: int, replay: Sequence[str] = (), keep_results: bool = False) -> Run:
    """Register the event (or check it matches the stored one) and resume its ratings: the run's start."""
    idents = identities_of(config)
    unknown = [n for n in replay if n not in idents]
    if unknown:
        raise StoreError(f"--replay {unknown[0]}: not an entrant of event {config.name!r}; "
                         f"entrants: {', '.join(idents)}")
    resumed = store.resume_event(config, fingerprint_, total, idents, replay)
    plan = EventPlan(total, resumed.stored, withdrawn=set(resumed.withdrawn),
                     digests={n: digest(i) for n, i in idents.items()}, was_finished=resumed.finished,
                     replayed=dict(resumed.replayed))
    order = resume_ratings(config, store)
    if plan.replayed:  # the replayed entrant's matches left the ratings: store them as they are now
        store.save_all_ratings(config.name, order.book.rows(), order.next)
    results = None
    if keep_results:
        results = {m.match_id: result_of(m.seats, m.ranks, m.group, m.fault) for m in store.matches([config.name])}
    run = Run(config, store, executor, observe, plan, order, results, resumed.stored,
              streaks=fault_streaks(config, store))
    run._tell(None, None)
    return run


# ---------------------------------------------------------------------- the kinds of rounds


class FixedRounds:
    """A fixed event: one round, the rest of the schedule, generated lazily in schedule order."""

    def __init__(self, config: EventConfig, store: Store) -> None:
        self.config = config
        self.done_ids = store.done_ids(config.name)
        self.planned = False

    async def plan(self, run: Run) -> Iterable[MatchTask] | None:
        if self.planned or run.plan.was_finished or run.done >= run.plan.total:
            return None
        self.planned = True
        done = self.done_ids
        schedule: Iterable[MatchTask] = iter_schedule(self.config)
        if run.guard is not None:  # each deal's groups registered before any of its matches is played
            schedule = run.guard.planned(schedule)
        return (t for t in schedule if t.match_id not in done)

    def fit(self, run: Run) -> None:
        self.done_ids = set()  # nothing follows the one round: its ratings were stored as it played

    def finish(self, run: Run) -> None:
        cfg, store, plan = self.config, run.store, run.plan
        if plan.was_finished:
            return
        if plan.withdrawn:
            per_deal = Counter(n for t in itertools.islice(iter_schedule(cfg), matches_per_deal(cfg))
                               for n in set(t.seats))
            stored = Counter(n for m in store.matches([cfg.name]) for n in set(m.seats))
            for name in plan.withdrawn:
                store.set_not_played(cfg.name, name, per_deal[name] * cfg.deals - stored[name])
        if run.done + plan.skipped >= plan.total:
            store.finish_event(cfg.name)


class AdaptiveRounds:
    """An adaptive event: each round from the verdict on everything stored (:mod:`.adaptive`).

    The fingerprint covers the first round and the settings that shape later rounds,
    so a resumed event replans the same rounds; the budget and ``until_settled`` only
    decide when to stop and may change between runs. An entrant withdrawn after
    crashing ends the plan early: its rounds can no longer be completed, so the
    event is finished with what was played.
    """

    def __init__(self, config: EventConfig, results: dict[str, Result],
                 say: Callable[[str], None] | None = None) -> None:
        self.schedule, self.current = replay_rounds(config, results.get)
        self.guarded = False
        self.say = say
        self.announced = False

    @staticmethod
    def fingerprint(config: EventConfig) -> str:
        planned = AdaptivePlan(config)
        planned.first_round()
        return adaptive_fingerprint(config, planned.tasks)

    def resume(self, run: Run) -> None:
        """A finished event run again with a larger budget continues where it stopped.

        Round sizes do not depend on the budget (it only cuts the round it lands in), so
        the rounds replayed from the store end in a round with matches still to play
        exactly when the budget was raised. The stored total is the budget in force.
        """
        assert run.results is not None
        name = run.config.name
        stated = run.store.playoff(name)
        if run.config.schedule.playoff or stated is not None:
            planned = {t.match_id for t in self.schedule.tasks}
            strays = sorted(set(run.results) - planned)
            if strays:  # a play-off was played after the main stage's budget; a new budget would rewrite it
                raise StoreError(
                    f"event {name!r} has {len(strays)} stored matches its rounds no longer plan (e.g. "
                    f"{strays[0]}): its play-off began after the budget it was played with; resume with that "
                    "--budget and [schedule].playoff at least as large as before")
        self.announced = stated is not None
        self.announce(run)
        left = any(t.match_id not in run.results for t in self.current)
        if run.plan.was_finished and (run.plan.withdrawn or not left):
            return
        run.store.set_total(run.config.name, self.total(run.config), reopen=run.plan.was_finished)
        run.plan.was_finished = False

    def total(self, config: EventConfig) -> int:
        """The matches the event may play now: its budget, and once the play-off began, the play-off's too."""
        said = self.schedule.playoff
        return config.schedule.budget if said is None else said.main + said.budget

    async def plan(self, run: Run) -> Iterable[MatchTask] | None:
        if run.plan.was_finished or run.plan.withdrawn or not self.current:
            return None
        assert run.results is not None
        if run.guard is not None:  # the round's groups, before any of its matches is played
            if not self.guarded:
                run.guard.plan(self.schedule.tasks)  # the rounds replayed from the store
                self.guarded = True
            run.guard.plan(self.current)
        return [t for t in self.current if t.match_id not in run.results]

    def fit(self, run: Run) -> None:
        results = run.results
        assert results is not None
        if run.plan.withdrawn:
            self.current = []
            return
        missing = [t.match_id for t in self.current if t.match_id not in results]
        if missing:
            raise RuntimeError(f"round {self.schedule.rounds} of event {run.config.name!r} left {len(missing)} "
                               f"matches unplayed (e.g. {missing[0]}); run the event again to resume")
        self.current = self.schedule.next_round([results[t.match_id] for t in self.schedule.tasks
                                                 if t.match_id in results])
        if self.schedule.looks is not None:  # the leaderboard reads them (a replay rebuilds them the same)
            run.store.save_verdict_looks(run.config.name, self.schedule.looks.to_json())
        self.announce(run)

    def announce(self, run: Run) -> None:
        """Store and say the play-off's statement once it has begun, before its first match is played."""
        said = self.schedule.playoff
        if said is None or self.announced:
            return
        self.announced = True
        run.store.save_playoff(run.config.name, said.to_json())
        run.plan.total = self.total(run.config)
        run.store.set_total(run.config.name, run.plan.total)
        if self.say is not None:
            for line in said.lines():
                self.say(line)

    def finish(self, run: Run) -> None:
        if not run.plan.was_finished:
            run.store.finish_event(run.config.name)


# ---------------------------------------------------------------------- entry points


async def run_event(
    config: EventConfig, store: Store, executor: Executor,
    observe: Callable[[Progress], None] | None = None, replay: Sequence[str] = (),
    preflight_logs: Path | None = None, say: Callable[[str], None] | None = None,
    guard: DealGuard | None = None,
) -> EventPlan:
    """Play every match of ``config`` not yet in ``store``; returns what the run did.

    With ``config.preflight``, every launched entrant with no stored match passes
    ``sevenrocks check`` first (:mod:`..check.preflight`), or nothing is played.
    ``guard``: the event's deal guard (what the live pages and the spectator feed may
    show), told every duplicate group as it is planned and every match as it is stored.
    An executor that keeps bots up between calls (:class:`.executor.LocalExecutor`,
    whose processes serve every round) is closed at the end.
    """
    try:
        return await _run_event(config, store, executor, observe, replay, preflight_logs, say, guard)
    finally:
        await close_executor(executor)


async def close_executor(executor: Executor) -> None:
    """Close an executor that keeps its referee and bots up between rounds (:class:`.executor.LocalExecutor`).

    Its gRPC server must stop on the event loop that runs it: one left for the garbage
    collector after the loop has closed crashes the interpreter at exit.
    """
    close = getattr(executor, "close", None)
    if close is not None and inspect.iscoroutinefunction(close):
        await close()


async def _run_event(
    config: EventConfig, store: Store, executor: Executor, observe: Callable[[Progress], None] | None,
    replay: Sequence[str], preflight_logs: Path | None, say: Callable[[str], None] | None,
    guard: DealGuard | None,
) -> EventPlan:
    config, sealed = seal_seed(config, store)
    adaptive = config.schedule.mode == "adaptive"
    if adaptive and replay:
        raise StoreError("--replay is not supported for adaptive events; give the changed bot a new "
                         "entrant name (e.g. name@2) or start a new event")
    if adaptive:
        run = open_run(config, store, executor, observe, AdaptiveRounds.fingerprint(config),
                       config.schedule.budget, keep_results=True)
    else:
        run = open_run(config, store, executor, observe, schedule_fingerprint(config), schedule_size(config),
                       replay)
    run.commitment = sealed.commitment
    if config.preflight and not run.plan.was_finished:
        from ..check.preflight import preflight

        played = {s for m in store.matches([config.name]) for s in m.seats}
        await preflight(config, played, preflight_logs or Path("sevenrocks-out") / "logs", say,
                        hidden=getattr(executor, "hidden", ()))
    if guard is not None:
        run.guard = guard
        guard.stored(store.done_ids(config.name))
    assert run.results is not None or not adaptive
    rounds: Rounds
    if run.results is not None:
        rounds = AdaptiveRounds(config, run.results, say)
        rounds.resume(run)
    else:
        rounds = FixedRounds(config, store)
    return await run_loop(run, rounds)


async def run_adaptive(
    config: EventConfig, store: Store, executor: Executor,
    observe: Callable[[Progress], None] | None = None, guard: DealGuard | None = None,
) -> EventPlan:
    """Play an adaptive event round by round, resuming from the stored rounds."""
    return await run_event(config, store, executor, observe, guard=guard)
