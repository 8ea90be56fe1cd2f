"""Executors: where scheduled matches are played.

An :class:`Executor` takes match tasks and reports each :class:`MatchOutcome`
as it finishes; it knows nothing of storage or ratings, and a task may be run
again safely (the store keeps the first result). :class:`LocalExecutor` runs
one embedded gRPC referee on loopback and launches each command entrant's bot
process once (a bot plays many seats at once). :class:`InProcessExecutor` plays
registered bots in this process with no network, to measure the event's own
overhead. The Dask cluster executor (:mod:`..cluster.executor`) fits the same protocol.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import secrets
import socket
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..referee.dealguard import PRIVATE_PREFIX as PRIVATE_PREFIX, private  # PRIVATE_PREFIX: for submissions
from .config import EventConfig
from .outcome import MatchOutcome, Report, Skipped, Voided, Withdrawn, final_ranks
from .schedule import MatchTask, record_keys

#: Told every finished match, and every voided match, withdrawal and skipped match.
OnResult = Callable[[Report], None]


class EntrantsUnreachable(RuntimeError):
    """Some entrants never connected to the referee; the message says which and where to look."""


class Executor(Protocol):
    async def run(self, tasks: Iterable[MatchTask], on_result: OnResult) -> None:
        """Play ``tasks`` (any order, any overlap) and call ``on_result`` for each finished one."""
        ...


async def run_pool(tasks: Iterable[MatchTask], concurrency: int, play: Callable[[MatchTask], Any]) -> None:
    """Run ``play`` over the tasks with at most ``concurrency`` at once, in schedule order.

    A fixed pool of workers pulls from the (possibly lazy) iterable, so a
    billion-match event neither creates a billion waiting coroutines nor lists its
    tasks; the first error cancels the rest.
    """
    queue = iter(tasks)

    async def worker() -> None:
        for task in queue:
            await play(task)

    workers = [asyncio.create_task(worker()) for _ in range(max(1, concurrency))]
    try:
        await asyncio.gather(*workers)
    finally:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)


@dataclass
class LocalExecutor:
    """One embedded referee on loopback plus one supervised process per command entrant.

    The :class:`~.lifecycle.Supervisor` restarts a bot that crashed before its next
    match and withdraws one that keeps crashing; matches lost to an infrastructure
    fault are voided and played again. With ``[bots].fresh_process`` the processes
    are recycled so that no process plays two matches of one duplicate group, and
    only then: the referee and the processes live from the first :meth:`run` to
    :meth:`close`, so an adaptive event's rounds share them (a new round's deals are
    deals no process has seen). More launched entrants than ``[bots].max_alive``
    are started as matches need them.
    """

    config: EventConfig
    #: Bot logs go here, one file per entrant.
    log_dir: Path
    concurrency: int = 2
    #: Where the referee listens; remote entrants need an address they can reach.
    address: str = "127.0.0.1:0"
    #: Told the referee's address once it listens, when remote entrants must be pointed at it.
    announce: Callable[[str], None] | None = None
    #: Set while running: the supervisor of the launched bots (tests look at it).
    supervisor: Any = None
    #: Entrants withdrawn earlier in the event (set by :func:`run_event`): not started.
    withdrawn: set[str] = dataclasses.field(default_factory=set)
    #: PEM certificate chain and key: the referee serves TLS (remote entrants over the network).
    tls: tuple[bytes, bytes] | None = None
    #: The token spectators must send (None: the Spectator is open on loopback, closed beyond).
    spectator_token: str | None = None
    #: Handed the embedded referee once it listens (the live web pages read its spectator feed).
    on_referee: Callable[[Any], None] | None = None
    #: The event's deal guard: what the referee's spectator feed may show of a duplicate deal
    #: (None: nothing of one, ever). The event loop feeds it (events/tournament.py).
    guard: Any = None
    #: Files of the harness no bot may see even inside a folder it is given (the database).
    hidden: tuple[Path, ...] = ()
    #: Told which sandbox holds the launched bots (and its warnings), e.g. the console.
    report: Callable[[str], None] | None = None
    _announced: bool = dataclasses.field(default=False, init=False, repr=False)

    #: The referee, sandbox and supervisor, kept from one :meth:`run` to the next (an adaptive
    #: event's rounds) so that bot processes carry over between rounds; :meth:`close` ends them.
    _live: Any = dataclasses.field(default=None, init=False, repr=False)
    #: Duplicate groups some current bot process has played a match of (fresh_process = "duplicates").
    _seen: set[str] = dataclasses.field(default_factory=set, init=False, repr=False)

    async def _open(self) -> tuple[Any, Any, Any]:
        """Start the referee, open the sandbox and start the launched bots (once per event)."""
        from ..referee import FaultPolicy, Referee, TimeControl
        from ..sandbox.sandbox import open_sandbox
        from .lifecycle import Supervisor

        if self._live is not None:
            return self._live  # type: ignore[no-any-return]
        cfg = self.config
        tokens = {e.name: e.token or secrets.token_urlsafe(18) for e in cfg.entrants}
        referee = Referee(
            tokens,
            TimeControl(cfg.time.per_move_ms, cfg.time.bank_ms, cfg.time.connect_timeout_s),
            FaultPolicy(cfg.faults.kind, cfg.faults.max_strikes),
            spectator_token=self.spectator_token,
        )
        referee.feed.guard = self.guard
        launched = {e.name: list(e.command) for e in cfg.entrants if e.command is not None}
        # Only remote entrants: nothing to contain (and no trial sandbox to pay for).
        settings = cfg.sandbox if launched else dataclasses.replace(cfg.sandbox, mode="off")
        sandbox = await asyncio.to_thread(open_sandbox, settings, [*self.hidden, self.log_dir],
                                          self.log_dir if launched else None,
                                          self.report if launched and not self._announced else None)
        self._announced = True
        try:
            port = await referee.start(self.address, self.tls, unix_socket=sandbox.socket_path)
        except BaseException:
            sandbox.close()
            raise
        if self.on_referee is not None:
            self.on_referee(referee)
        host = self.address.rpartition(":")[0]
        # Launched bots dial the referee on this machine even when it listens on all interfaces.
        target = f"{'127.0.0.1' if host in ('0.0.0.0', '[::]', '') else host}:{port}"
        if referee.local_port is not None:  # TLS outside; launched bots use the loopback port
            target = f"127.0.0.1:{referee.local_port}"
        remote = [e.name for e in cfg.entrants if e.remote]
        if remote and self.announce is not None:
            self.announce(f"referee listening on {host}:{port}; waiting up to {cfg.time.connect_timeout_s:g}s "
                          f"for remote entrants: {', '.join(remote)} (SEVENROCKS_REFEREE=<this host>:{port})")
        self.log_dir.mkdir(parents=True, exist_ok=True)
        sup = self.supervisor = Supervisor(cfg, referee, target, tokens, self.log_dir, withdrawn=self.withdrawn,
                                           sandbox=sandbox)
        self._live = (referee, sup, sandbox)
        try:
            missing = await sup.start_all(cfg.time.connect_timeout_s)
            if missing:
                procs = {n: sup.process(n) for n in sup.slots}
                raise EntrantsUnreachable(unreachable_message(cfg, missing, procs, self.log_dir, target))
        except BaseException:
            await self.close()
            raise
        return referee, sup, sandbox

    async def run(self, tasks: Iterable[MatchTask], on_result: OnResult) -> None:
        """Play ``tasks``; the bots stay up for the next call until :meth:`close` (or an error)."""
        referee, sup, sandbox = await self._open()
        cfg = self.config
        host = socket.gethostname()
        for name in self.withdrawn:  # withdrawn since the last round (run_event keeps the list)
            if name in sup.slots and not sup.slots[name].withdrawn:
                sup.slots[name].withdrawn = "withdrawn earlier in the event"
        try:
            retry: list[MatchTask] = []

            def withdraw(pairs: Sequence[tuple[str, str]]) -> None:
                for name, reason in pairs:
                    on_result(Withdrawn(name, reason))

            voids: dict[str, int] = {}

            async def play(task: MatchTask) -> None:
                for report in stamp(await supervised_play(referee, sup, task), host, sandbox.mode):
                    on_result(report)
                    if isinstance(report, Voided):
                        check_voids(voids, report)
                        retry.append(task)

            fresh = cfg.bots.fresh_process
            for batch in phases(tasks, fresh):
                if (fresh == "always" and self._seen) or (fresh == "duplicates" and self._meets_seen(batch)):
                    withdraw(await sup.recycle())
                    self._seen.clear()
                await run_pool(self._noting(batch, fresh), self.concurrency, play)
                while retry:
                    if fresh != "never":
                        withdraw(await sup.recycle())
                        self._seen.clear()
                    again, retry[:] = list(retry), []
                    await run_pool(self._noting(again, fresh), self.concurrency, play)
        except BaseException:
            await self.close()
            raise

    def withdraw_entrant(self, name: str, reason: str) -> None:
        """``name`` is withdrawn by the event (its forfeits in a row): no match of it starts from now on."""
        self.withdrawn.add(name)
        sup = self.supervisor
        if sup is not None and name in sup.slots and not sup.slots[name].withdrawn:
            sup.slots[name].withdrawn = reason

    def _meets_seen(self, batch: Iterable[MatchTask]) -> bool:
        """Whether a match of ``batch`` is of a duplicate group the current processes played a match of.

        Only then are the processes recycled: a new round's or a new deal's groups are
        deals no process has seen, so processes carry over to them."""
        return isinstance(batch, list) and any(t.group in self._seen for t in batch)

    def _noting(self, batch: Iterable[MatchTask], fresh: str) -> Iterator[MatchTask]:
        """The batch, noting each match's group as played by the current processes."""
        for t in batch:
            if fresh != "never":
                self._seen.add(t.group)
            yield t

    async def close(self) -> None:
        """Stop the bots, the referee and the sandbox (the end of the event). Safe to call twice."""
        live, self._live = self._live, None
        self._seen.clear()
        if live is None:
            return
        referee, sup, sandbox = live
        sup.closing = True
        try:
            # Goodbye first, so that bots exit on their own; then make sure they are gone.
            await referee.stop()
            await sup.close()
        finally:
            sandbox.close()
            if self.report is not None and sup.start_times:
                times = sorted(sup.start_times)
                self.report(f"bot processes: {len(times)} started (median start-up "
                            f"{1000 * times[len(times) // 2]:.0f} ms, {sum(times):.1f} s in all), "
                            f"{sup.evictions} stopped to stay within "
                            f"[bots].max_alive = {sup.max_alive}")


#: A match voided this many times stops the event: something keeps stopping the bots.
MAX_VOIDS = 5


class TooManyVoids(RuntimeError):
    """One match was voided again and again: the event stops (run it again to resume)."""


def check_voids(counts: dict[str, int], report: Voided) -> None:
    """Stop the event when one match was voided :data:`MAX_VOIDS` times by what nobody answers for.

    A void whose crash was charged to another match is not counted (``Voided.counted``):
    a bot could otherwise stop every event by crashing in one match again and again,
    and the crash rules bound those voids already."""
    if not report.counted:
        return
    n = counts[report.task.match_id] = counts.get(report.task.match_id, 0) + 1
    if n >= MAX_VOIDS:
        raise TooManyVoids(f"match {report.task.match_id} was voided {n} times (the last: {report.reason}); "
                           "something outside keeps stopping the bots or the referee. The event stops here; "
                           "run the same command again to resume")


async def supervised_play(referee: Any, sup: Any, task: MatchTask) -> list[Report]:
    """Play one task on ``referee`` with the :class:`~.lifecycle.Supervisor` ``sup`` deciding its faults.

    Returns what happened, in order: entrants withdrawn before it could start (and
    then :class:`Skipped`), or the stored outcome, or :class:`Voided` (play it again),
    followed by entrants its crash withdrew.
    """
    from ..referee import RefereeStopped

    reports: list[Report] = [Withdrawn(n, r) for n, r in await sup.ready(task.seats)]
    if sup.withdrawn() & set(task.seats):
        return [*reports, Skipped(task)]
    generations = sup.begin(task.seats)
    started = time.perf_counter()
    try:
        m = await referee.play_match(task.match_id, task.ruleset.build(), task.seed, task.seats,
                                     extra=record_keys(task),
                                     # duplicate deals and private matches: never shown to spectators
                                     hidden=sup.config.duplicate or private(task.match_id))
    except RefereeStopped as e:
        sup.end(generations)
        return [*reports, Voided(task, str(e))]
    except BaseException:
        sup.end(generations)
        raise
    outcome = outcome_of(task, m, time.perf_counter() - started)
    verdict = await sup.judge(outcome, generations)
    if verdict.void is not None:
        return [*reports, Voided(task, verdict.void, counted=not verdict.charged_elsewhere)]
    if verdict.fault_log:
        outcome = dataclasses.replace(outcome, fault_log=verdict.fault_log)
    return [*reports, outcome, *(Withdrawn(n, r) for n, r in verdict.withdrawn)]


def stamp(reports: list[Report], worker: str, sandbox: str) -> list[Report]:
    """Each finished match of ``reports`` marked with where and how it ran (stored with it, not in its record)."""
    from sevenrocks.sdk.rules import engine_build

    engine = engine_build()
    return [dataclasses.replace(r, worker=worker, sandbox=sandbox, engine=engine) if isinstance(r, MatchOutcome)
            else r for r in reports]


def phases(tasks: Iterable[MatchTask], fresh: str) -> Iterator[Iterable[MatchTask]]:
    """The tasks in batches; between two batches the bot processes may be replaced by fresh ones.

    ``never``: one batch, the (lazy) tasks themselves. ``always``: one match per
    batch. ``duplicates``: first the first match of every duplicate group, then the
    second, and so on, so that no process plays two matches of one group (it could
    remember the deal) while a batch still runs many matches at once. A list of tasks
    (an adaptive round) is split once, so a round needs one recycle, not one per deal;
    a lazy stream (a fixed event, possibly huge) is split deal by deal, holding one
    deal's tasks at a time. The executor recycles only before a batch that holds a
    group some current process has already played.
    """
    if fresh == "never":
        yield tasks
        return
    if fresh == "always":
        for t in tasks:
            yield [t]
        return
    chunks = [tasks] if isinstance(tasks, list) else (
        list(deal_tasks) for _deal, deal_tasks in itertools.groupby(tasks, key=lambda t: t.deal))
    for chunk in chunks:
        by_position: list[list[MatchTask]] = []
        seen: dict[str, int] = {}
        for t in chunk:
            k = seen.get(t.group, 0)
            seen[t.group] = k + 1
            while len(by_position) <= k:
                by_position.append([])
            by_position[k].append(t)
        yield from by_position


def outcome_of(task: MatchTask, m: Any, duration_s: float) -> MatchOutcome:
    """The plain-data outcome of a :class:`~.referee.RefereeMatch` (shared with the cluster executor)."""
    fault = m.offender
    return MatchOutcome(
        task, m.reason, m.winner, tuple(m.scores),
        final_ranks(task.ruleset.build(), tuple(m.scores), m.winner, fault),
        _rounds(m.events), fault, {int(k): list(v) for k, v in m.decision_ms.items()},
        tuple(m.record_lines), duration_s, lost_turn_sent_at=getattr(m, "lost_turn_sent_at", None),
    )


def _rounds(events: Sequence[Any]) -> int:
    from sevenrocks.sdk.rules import MatchEnd

    for ev in reversed(events):
        if isinstance(ev, MatchEnd):
            return ev.rounds
    return 0


def unreachable_message(cfg: EventConfig, missing: list[str], procs: dict[str, Any], log_dir: Path, target: str) -> str:
    dead = [n for n in missing if procs.get(n) is not None and not procs[n].alive]
    if dead:  # reported as soon as a process exits: the others may just be slow to start
        lines = [f"{len(dead)} entrant(s) exited before connecting to the referee at {target}:"]
        shown = dead
    else:
        lines = [f"{len(missing)} entrant(s) did not connect to the referee at {target} "
                 f"within {cfg.time.connect_timeout_s:g}s:"]
        shown = missing
    for name in shown:
        e = cfg.entrant(name)
        if e.remote:
            lines.append(f"  {name}: remote; start it with SEVENROCKS_REFEREE={target} and its token")
        else:
            p = procs.get(name)
            state = "running but silent"
            if p is not None and not p.alive:
                from .lifecycle import describe_returncode

                state = describe_returncode(p.returncode)
            log = log_dir / f"{name}.log"
            tail = _tail(log)
            lines.append(f"  {name}: `{e.describe()}` {state}; log {log}" + (f":\n{tail}" if tail else ""))
    others = [n for n in missing if n not in shown]
    if others:
        lines.append(f"  (not connected yet at that moment: {', '.join(others)})")
    lines.append("Check the commands run on their own, or raise [time].connect_timeout_s.")
    return "\n".join(lines)


def _tail(path: Path, n: int = 5) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join("      " + line for line in text[-n:])


@dataclass
class InProcessExecutor:
    """Registered bots played in this process by :func:`play_local` (no referee, no clocks).

    For measuring the event's own cost and for quick experiments: it has no
    time control and no fault handling, so events are run over gRPC.
    """

    config: EventConfig

    async def run(self, tasks: Iterable[MatchTask], on_result: OnResult) -> None:
        from sevenrocks.sdk.local import play_local
        from sevenrocks.sdk.registry import load_bot

        classes = {}
        for e in self.config.entrants:
            if e.bot is None:
                raise ValueError(f"entrant {e.name!r} is not a registered bot; the in-process executor "
                                 "plays only bot = \"NAME\" entrants")
            classes[e.name] = load_bot(e.bot)
        for task in tasks:
            started = time.perf_counter()
            bots = [classes[s](seed=task.seed + i) for i, s in enumerate(task.seats)]
            m = play_local(bots, task.ruleset.build(), task.seed, match_id=task.match_id, names=task.seats)
            end = m.end
            on_result(MatchOutcome(
                task, end.reason.value, end.winner, tuple(end.scores), tuple(m.state.final_ranks()),
                end.rounds, None, {}, tuple(m.record_lines()), time.perf_counter() - started,
            ))
            await asyncio.sleep(0)
