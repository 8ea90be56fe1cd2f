"""Where a league's matches play on this machine: one referee and its bots, kept across rounds.

Why not :class:`~.executor.LocalExecutor`: it starts a referee and every bot for one
call and says Goodbye at the end, which suits an event (one call) but not a league
that plans a round every few matches for weeks: remote bots would be sent away
every round. The arena opens once; the field is changed in place
(:meth:`LeagueArena.update`): a joining entrant's token is admitted and its
process started, a retired one's process stopped. :meth:`available` says who can
be seated now (launched and connected, or remote and connected), so an offline
remote entrant is simply not scheduled. Matches are played with the same
supervision as an event's (:func:`~.executor.supervised_play`): crashes restart
the bot, infrastructure faults void the match and it is played again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..events.config import Entrant, EventConfig
from ..events.executor import OnResult, check_voids, phases, run_pool, stamp, supervised_play
from ..events.outcome import Skipped, Voided, Withdrawn
from ..events.schedule import MatchTask


@dataclass
class LeagueArena:
    """An embedded referee plus the launched entrants of the active field; an :class:`Executor`."""

    config: EventConfig
    log_dir: Path
    concurrency: int = 2
    address: str = "127.0.0.1:0"
    announce: Callable[[str], None] | None = None
    tls: tuple[bytes, bytes] | None = None
    spectator_token: str | None = None
    on_referee: Callable[[Any], None] | None = None
    hidden: tuple[Path, ...] = ()
    report: Callable[[str], None] | None = None
    #: Entrants withdrawn (crashes) before a round: their tables are skipped (set by the loop).
    withdrawn: set[str] = field(default_factory=set)
    #: The league's deal guard (:mod:`..referee.dealguard`): what the referee's spectator feed may
    #: show of a duplicate deal (None: nothing of one, ever). The league loop feeds it.
    guard: Any = None
    referee: Any = None
    #: The port the referee listens on, once open.
    port: int | None = None
    supervisor: Any = None
    _tokens: dict[str, str] = field(default_factory=dict)
    _field: dict[str, Entrant] = field(default_factory=dict)
    _sandbox: Any = None

    async def open(self, entrants: Sequence[Entrant]) -> None:
        """Start the referee and the launched entrants of ``entrants`` (remote ones dial in themselves)."""
        from ..referee import FaultPolicy, Referee, TimeControl
        from ..sandbox.sandbox import open_sandbox
        from ..events.lifecycle import Supervisor

        cfg = self.config
        self._tokens = {e.name: e.token or secrets.token_urlsafe(18) for e in entrants}
        self.referee = Referee(self._tokens, TimeControl(cfg.time.per_move_ms, cfg.time.bank_ms,
                                                         cfg.time.connect_timeout_s),
                               FaultPolicy(cfg.faults.kind, cfg.faults.max_strikes),
                               spectator_token=self.spectator_token)
        self.referee.feed.guard = self.guard
        # The sandbox is opened for launched bots even if none is launched yet: one may join later.
        self._sandbox = await asyncio.to_thread(open_sandbox, cfg.sandbox, [*self.hidden, self.log_dir],
                                                self.log_dir, self.report)
        port = self.port = await self.referee.start(self.address, self.tls, unix_socket=self._sandbox.socket_path)
        if self.on_referee is not None:
            self.on_referee(self.referee)
        host = self.address.rpartition(":")[0]
        target = f"{'127.0.0.1' if host in ('0.0.0.0', '[::]', '') else host}:{port}"
        if self.referee.local_port is not None:
            target = f"127.0.0.1:{self.referee.local_port}"
        if self.announce is not None:
            self.announce(f"league referee listening on {host}:{port}; remote entrants connect with "
                          f"SEVENROCKS_REFEREE=<this host>:{port} and their token")
        self.log_dir.mkdir(parents=True, exist_ok=True)
        launched = tuple(e for e in entrants if not e.remote)
        self.supervisor = Supervisor(dataclasses.replace(cfg, entrants=launched), self.referee, target,
                                     self._tokens, self.log_dir, sandbox=self._sandbox)
        self._field = {e.name: e for e in entrants}
        missing = await self.supervisor.start_all(cfg.time.connect_timeout_s)
        self._report_unstarted(missing)

    def _report_unstarted(self, missing: Sequence[str]) -> None:
        if missing and self.report is not None:
            self.report(f"not connected yet: {', '.join(missing)}; not scheduled until it connects "
                        f"(its log: {self.log_dir}/NAME.log)")

    async def update(self, entrants: Sequence[Entrant]) -> None:
        """Make the active field ``entrants``: admit and start who joined, stop who left."""
        new = {e.name: e for e in entrants}
        for name in [n for n in self._field if n not in new]:
            if self.supervisor is not None:
                await self.supervisor.retire(name)
            del self._field[name]
        joined = [e for n, e in new.items() if n not in self._field]
        for e in joined:
            token = self._tokens.get(e.name) or e.token or secrets.token_urlsafe(18)
            self._tokens[e.name] = token
            self.referee.seats.admit(e.name, token)
            if e.command is not None:
                self.supervisor.admit(e.name, e.command, dict(e.env), token, self.log_dir, e.workdir)
            self._field[e.name] = e
        launched = [e.name for e in joined if e.command is not None]
        if launched:
            connected = await self.referee.wait_for_entrants(launched, self.config.time.connect_timeout_s)
            self._report_unstarted([n for n in launched if n not in connected])

    def dead(self) -> list[str]:
        """Launched entrants of the field whose process is gone outside a match (it exited at start or
        between rounds), not withdrawn: :meth:`revive` restarts them, or withdraws them."""
        if self.supervisor is None or self.referee is None:
            return []
        connected = self.referee.connected()
        return sorted(n for n, s in self.supervisor.slots.items()
                      if n in self._field and n not in self.withdrawn and not s.withdrawn and n not in connected
                      and s.bot is not None and not s.bot.parked and not s.alive())

    async def revive(self) -> list[tuple[str, str]]:
        """Restart the :meth:`dead` entrants, counting each death as a crash (with its backoff); returns
        those withdrawn (``[bots].max_crashes_in_row``): a broken version stops being a candidate
        instead of staying "not connected" for ever."""
        dead = self.dead()
        return await self.supervisor.ready(dead) if dead else []

    def available(self) -> set[str]:
        """The entrants of the field that can be seated now: connected, not withdrawn."""
        if self.referee is None:
            return set()
        out: set[str] = self.referee.connected() & set(self._field)
        gone: set[str] = self.supervisor.withdrawn()
        return out - gone - self.withdrawn

    async def run(self, tasks: Iterable[MatchTask], on_result: OnResult) -> None:
        """Play one round on the open arena; a voided match is played again at the end of the round."""
        sup = self.supervisor
        retry: list[MatchTask] = []
        voids: dict[str, int] = {}

        async def play(task: MatchTask) -> None:
            away = {n for n in task.seats if n in self._field and self._field[n].remote} - self.referee.connected()
            if away:  # a remote entrant left after the round was planned: not played, never forfeited
                on_result(Skipped(task))
                return
            mode = self._sandbox.mode if self._sandbox is not None else ""
            for report in stamp(await supervised_play(self.referee, sup, task), socket.gethostname(), mode):
                on_result(report)
                if isinstance(report, Voided):
                    check_voids(voids, report)
                    retry.append(task)

        def withdraw(pairs: Sequence[tuple[str, str]]) -> None:
            for name, reason in pairs:
                on_result(Withdrawn(name, reason))

        fresh = self.config.bots.fresh_process
        for n, batch in enumerate(phases(tasks, fresh)):
            if n and fresh != "never":  # no process plays two matches of one duplicate group
                withdraw(await sup.recycle())
            await run_pool(batch, self.concurrency, play)
            while retry:
                again, retry[:] = list(retry), []
                await run_pool(again, self.concurrency, play)

    async def close(self) -> None:
        if self.supervisor is not None:
            self.supervisor.closing = True
        try:
            if self.referee is not None:
                await self.referee.stop()
        finally:
            if self.supervisor is not None:
                await self.supervisor.close()
            if self._sandbox is not None:
                self._sandbox.close()
                self._sandbox = None


@dataclass
class LeagueCluster:
    """A league's matches on Dask workers: one client (and, for ``local:N``, one cluster) for every round.

    :class:`~.cluster.ClusterExecutor` starts and stops its cluster per call, which an
    event makes once but a league once per round. This keeps the client open and plays
    each round with the executor's own batch logic (a worker lost mid-match has its
    match played again elsewhere, stored once). ``config`` follows the field.
    """

    executor: Any
    _client: Any = None
    _cluster: Any = None

    @property
    def config(self) -> EventConfig:
        config: EventConfig = self.executor.config
        return config

    @config.setter
    def config(self, value: EventConfig) -> None:
        self.executor.config = value

    async def open(self) -> None:
        self._client, self._cluster = await self.executor.connect()

    async def run(self, tasks: Iterable[MatchTask], on_result: OnResult) -> None:
        if self._client is None:
            await self.open()
        self.executor._check()
        from ..cluster.executor import client_logs_quiet

        with client_logs_quiet():
            await self.executor._run_on(self._client, tasks, on_result)

    async def close(self) -> None:
        from ..cluster.executor import disconnect

        client, cluster, self._client, self._cluster = self._client, self._cluster, None, None
        await disconnect(client, cluster)
