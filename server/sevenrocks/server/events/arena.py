"""One referee and one process per launched entrant, reused by every match of a run.

Why a room of its own: both the Dask worker (:mod:`..cluster.executor` holds one per
worker process) and the load driver (:mod:`.loadtest`) play many matches on one set
of bot processes. The arena is the part they share; it knows nothing of Dask.
"""

from __future__ import annotations

import asyncio
import secrets
import socket
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .config import ConfigError, EventConfig
from .executor import EntrantsUnreachable, supervised_play, outcome_of, stamp, unreachable_message
from .outcome import MatchOutcome, Report
from .schedule import MatchTask, record_keys


class ArenaError(ConfigError):
    """An arena cannot hold this event (it launches its entrants; remote ones dial a referee themselves)."""


class Arena:
    """An embedded referee on loopback and one launched process per entrant, reused by every match.

    What a cluster worker holds for an event, and what the load driver
    (:mod:`.loadtest`) measures: ``open`` starts the referee and the bots and waits
    for them to connect, ``play`` plays one task on them, ``close`` says Goodbye and
    makes sure every bot process is gone. ``referee_kw`` passes limits such as
    ``max_streams`` to the :class:`~.referee.Referee`.
    """

    def __init__(self, config: EventConfig, log_dir: Path, hidden: Sequence[str | Path] = (), **referee_kw: Any) -> None:
        if any(e.remote for e in config.entrants):
            raise ArenaError("an arena launches its entrants; remote entrants connect to a referee themselves")
        self.config = config
        self.log_dir = log_dir
        self.referee_kw = referee_kw
        self.hidden = [Path(h) for h in hidden]
        self.sandbox: Any = None
        self.referee: Any = None
        self.address = ""
        self.procs: dict[str, Any] = {}
        #: Set from another thread when the arena's owner is gone: open() stops and kills its bots.
        self.abandoned = False
        self.supervisor: Any = None

    async def open(self) -> None:
        from ..referee import FaultPolicy, Referee, TimeControl
        from ..sandbox.sandbox import open_sandbox
        from .lifecycle import Supervisor

        cfg = self.config
        tokens = {e.name: e.token or secrets.token_urlsafe(18) for e in cfg.entrants}
        self.referee = referee = Referee(
            tokens,
            TimeControl(cfg.time.per_move_ms, cfg.time.bank_ms, cfg.time.connect_timeout_s),
            FaultPolicy(cfg.faults.kind, cfg.faults.max_strikes),
            **self.referee_kw,
        )
        self.sandbox = sandbox = await asyncio.to_thread(open_sandbox, cfg.sandbox, [*self.hidden, self.log_dir],
                                                         self.log_dir)
        port = await referee.start("127.0.0.1:0", unix_socket=sandbox.socket_path)
        self.address = f"127.0.0.1:{port}"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.supervisor = sup = Supervisor(cfg, referee, self.address, tokens, self.log_dir, sandbox=sandbox)
        missing = await sup.start_all(cfg.time.connect_timeout_s)
        self.procs = {n: sup.process(n) for n in sup.slots}
        if self.abandoned:
            await sup.close()
            raise RuntimeError("the process that started this worker died; its arena is closed")
        if missing:
            raise EntrantsUnreachable(unreachable_message(cfg, missing, self.procs, self.log_dir, self.address))

    async def play(self, task: MatchTask) -> MatchOutcome:
        """Play ``task`` as it comes (no restart, no voiding): what the load driver measures."""
        started = time.perf_counter()
        m = await self.referee.play_match(task.match_id, task.ruleset.build(), task.seed, task.seats,
                                          extra=record_keys(task),
                                          hidden=self.config.duplicate)  # duplicate deals: no spectator
        return outcome_of(task, m, time.perf_counter() - started)

    async def play_supervised(self, task: MatchTask, worker: str = "") -> list[Report]:
        """Play ``task`` with the bot lifecycle: a crashed bot restarted, an infrastructure fault voided.

        Each finished match names ``worker`` and the sandbox mode its bots had."""
        reports = await supervised_play(self.referee, self.supervisor, task)
        return stamp(reports, worker or socket.gethostname(), self.sandbox.mode if self.sandbox else "")

    async def close(self) -> None:
        """Goodbye to the bots, stop the referee, make sure every bot process is gone."""
        try:
            if self.supervisor is not None:
                self.supervisor.closing = True
            if self.referee is not None:
                await self.referee.stop()
        finally:
            if self.supervisor is not None:
                await self.supervisor.close()
            self.procs.clear()
            if self.sandbox is not None:
                self.sandbox.close()
                self.sandbox = None

    async def __aenter__(self) -> Arena:
        try:
            await self.open()
        except BaseException:
            await self.close()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
