"""Executors: where scheduled matches are played.

An :class:`Executor` takes match tasks and reports each :class:`MatchOutcome`
as it finishes; it knows nothing of storage or ratings, and a task may be run
again safely (the store keeps the first result). :class:`LocalExecutor` runs
one embedded gRPC referee on loopback and launches each command entrant's bot
process once (a bot plays many seats at once). :class:`InProcessExecutor` plays
registered bots in this process with no network, to measure the event's own
overhead. A cluster executor (issue 6) fits the same protocol.
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from .config import EventConfig
from .outcome import MatchOutcome, final_ranks
from .schedule import MatchTask

OnResult = Callable[[MatchOutcome], None]


class EntrantsUnreachable(RuntimeError):
    """Some entrants never connected to the referee; the message says which and where to look."""


class Executor(Protocol):
    async def run(self, tasks: Sequence[MatchTask], on_result: OnResult) -> None:
        """Play ``tasks`` (any order, any overlap) and call ``on_result`` for each finished one."""
        ...


async def run_pool(tasks: Sequence[MatchTask], concurrency: int, play: Callable[[MatchTask], Any]) -> None:
    """Run ``play`` over the tasks with at most ``concurrency`` at once, in schedule order.

    A fixed pool of workers pulls from the list, so a 100,000-match event does not
    create 100,000 waiting coroutines; the first error cancels the rest.
    """
    queue = iter(tasks)

    async def worker() -> None:
        for task in queue:
            await play(task)

    workers = [asyncio.create_task(worker()) for _ in range(max(1, min(concurrency, len(tasks))))]
    try:
        await asyncio.gather(*workers)
    finally:
        for w in workers:
            w.cancel()
        await asyncio.gather(*workers, return_exceptions=True)


@dataclass
class LocalExecutor:
    """One embedded referee on loopback plus one process per command entrant."""

    config: EventConfig
    #: Bot logs go here, one file per entrant.
    log_dir: Path
    concurrency: int = 2
    #: Where the referee listens; remote entrants need an address they can reach.
    address: str = "127.0.0.1:0"
    #: Told the referee's address once it listens, when remote entrants must be pointed at it.
    announce: Callable[[str], None] | None = None
    #: Files of the harness no bot may see even inside a folder it is given (the database).
    hidden: tuple[Path, ...] = ()
    #: Told which sandbox holds the launched bots (and its warnings), e.g. the console.
    report: Callable[[str], None] | None = None

    async def run(self, tasks: Sequence[MatchTask], on_result: OnResult) -> None:
        from ..referee.launch import BotProcess
        from ..referee import FaultPolicy, Referee, TimeControl
        from ..referee.sandbox import open_sandbox, other_entrants_paths

        cfg = self.config
        tokens = {e.name: e.token or secrets.token_urlsafe(18) for e in cfg.entrants}
        referee = Referee(
            tokens,
            TimeControl(cfg.time.per_move_ms, cfg.time.bank_ms, cfg.time.connect_timeout_s),
            FaultPolicy(cfg.faults.kind, cfg.faults.max_strikes),
        )
        launched = {e.name: list(e.command) for e in cfg.entrants if e.command is not None}
        # Only remote entrants: nothing to contain (and no trial sandbox to pay for).
        settings = cfg.sandbox if launched else dataclasses.replace(cfg.sandbox, mode="off")
        sandbox = await asyncio.to_thread(open_sandbox, settings, [*self.hidden, self.log_dir],
                                          self.log_dir if launched else None, self.report if launched else None)
        try:
            port = await referee.start(self.address, unix_socket=sandbox.socket_path)
        except BaseException:
            sandbox.close()
            raise
        host = self.address.rpartition(":")[0]
        # Launched bots dial the referee on this machine even when it listens on all interfaces.
        target = f"{'127.0.0.1' if host in ('0.0.0.0', '[::]', '') else host}:{port}"
        remote = [e.name for e in cfg.entrants if e.remote]
        if remote and self.announce is not None:
            self.announce(f"referee listening on {host}:{port}; waiting up to {cfg.time.connect_timeout_s:g}s "
                          f"for remote entrants: {', '.join(remote)} (SEVENROCKS_REFEREE=<this host>:{port})")
        procs: dict[str, Any] = {}
        self.log_dir.mkdir(parents=True, exist_ok=True)
        try:
            for e in cfg.entrants:
                if e.command is not None:
                    procs[e.name] = BotProcess().start(list(e.command), target, tokens[e.name],
                                                       self.log_dir / f"{e.name}.log", entrant=e.name, env=dict(e.env),
                                                       sandbox=sandbox, others=other_entrants_paths(launched, e.name))
                    # Lets the referee tell a crash (process exited) from a disconnect.
                    referee.attach_process(e.name, procs[e.name])
            names = [e.name for e in cfg.entrants]
            connected = await referee.wait_for_entrants(names, cfg.time.connect_timeout_s)
            missing = [n for n in names if n not in connected]
            if missing:
                raise EntrantsUnreachable(_unreachable_message(cfg, missing, procs, self.log_dir, target))

            async def play(task: MatchTask) -> None:
                started = time.perf_counter()
                m = await referee.play_match(task.match_id, task.ruleset.build(), task.seed, task.seats,
                                             extra={"event_id": task.event_id, "deal": task.deal})
                on_result(outcome_of(task, m, time.perf_counter() - started))

            await run_pool(tasks, self.concurrency, play)
        finally:
            # Goodbye first, so that bots exit on their own; then make sure they are gone.
            await referee.stop()
            await asyncio.gather(*(asyncio.to_thread(p.terminate) for p in procs.values()))
            sandbox.close()


def outcome_of(task: MatchTask, m: Any, duration_s: float) -> MatchOutcome:
    """The plain-data outcome of a :class:`~.referee.RefereeMatch` (shared with the cluster executor)."""
    fault = m.offender
    return MatchOutcome(
        task, m.reason, m.winner, tuple(m.scores),
        final_ranks(task.ruleset.build(), tuple(m.scores), m.winner, fault),
        _rounds(m.events), fault, {int(k): list(v) for k, v in m.decision_ms.items()},
        tuple(m.record_lines), duration_s,
    )


def _rounds(events: Sequence[Any]) -> int:
    from sevenrocks.sdk.rules import MatchEnd

    for ev in reversed(events):
        if isinstance(ev, MatchEnd):
            return ev.rounds
    return 0


def _unreachable_message(cfg: EventConfig, missing: list[str], procs: dict[str, Any], log_dir: Path, target: str) -> str:
    lines = [f"{len(missing)} entrant(s) did not connect to the referee at {target} "
             f"within {cfg.time.connect_timeout_s:g}s:"]
    for name in missing:
        e = cfg.entrant(name)
        if e.remote:
            lines.append(f"  {name}: remote; start it with SEVENROCKS_REFEREE={target} and its token")
        else:
            p = procs.get(name)
            state = f"exited with code {p.returncode}" if p is not None and not p.alive else "running but silent"
            log = log_dir / f"{name}.log"
            tail = _tail(log)
            lines.append(f"  {name}: `{e.describe()}` {state}; log {log}" + (f":\n{tail}" if tail else ""))
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

    async def run(self, tasks: Sequence[MatchTask], on_result: OnResult) -> None:
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
