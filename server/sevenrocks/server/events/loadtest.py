"""Load on one referee: many concurrent matches, nothing lost or corrupted, measured.

Why this shape: the claim to check is "one referee holds a thousand matches at
once without losing or corrupting any and stays responsive", so the driver uses
the real pieces end to end: the tournament's schedule, store and ratings
(:func:`~.tournament.run_event`), one embedded referee on loopback (an
:class:`~.arena.Arena`), and four bot *processes*, each an SDK client playing
its seats of every match over one stream. ``concurrency`` matches are in flight
at once (the executor starts one only when a slot is free).

While it runs, a thread polls the standard ``grpc.health.v1`` service over its own
channel and a monitor samples the referee process's memory and the seats each
stream holds. Afterwards every stored record is replayed through the engine. The
:class:`LoadReport` says whether anything was lost, doubled, corrupted or
faulted, and gives decision latency (p50/p99, measured at the referee),
throughput, memory per in-flight match and health-check latency.
"""

from __future__ import annotations

import asyncio
import math
import statistics
import sys
import threading
import time
from collections.abc import Iterable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .arena import Arena
from .config import EventConfig, parse_config
from .executor import OnResult, run_pool
from .outcome import MatchOutcome
from .schedule import MatchTask
from ..stats.intervals import percentile
from .store import Store
from .tournament import run_event

#: Matches per deal of the load event: four entrants in pairings, both seat orders, duplicated.
MATCHES_PER_DEAL = 12


@dataclass(frozen=True, slots=True)
class LoadSpec:
    """What to run. ``matches`` is rounded up to whole deals (12 matches each)."""

    matches: int = 300
    concurrency: int = 300
    #: The registered bot each of the four entrant processes runs.
    bot: str = "random"
    #: Seats each bot process accepts at once (its Hello); 0: the referee's default (1024).
    max_seats: int = 0
    #: Points to win: lower means shorter matches (fewer decisions each).
    target: int = 50
    #: Per-decision limit. Generous: the load run checks that nothing faults.
    per_move_ms: int = 60_000
    seed: int = 1
    #: Open bot streams the referee accepts (None: no limit).
    max_streams: int | None = None
    #: How long bots may take to connect (and a match to find a seat of an entrant with no stream).
    connect_timeout_s: float = 60.0
    #: Seconds between health checks.
    health_every_s: float = 0.1


@dataclass
class LoadReport:
    """What a load run did and measured. ``ok`` is the verdict; the rest explains it."""

    matches: int
    concurrency: int
    stored: int
    #: Results the executor delivered (a match delivered twice would be stored once, but shows here).
    delivered: int
    bad_records: list[str]
    faults: list[str]
    decisions: int
    p50_ms: float
    p99_ms: float
    wall_s: float
    rss_base_mb: float
    rss_peak_mb: float
    #: Most matches in play at once (seats bound), and most seats one stream held.
    peak_matches: int
    peak_seats_per_stream: int
    health_checks: int
    health_failures: list[str] = field(default_factory=list)
    health_p50_ms: float = 0.0
    health_max_ms: float = 0.0

    @property
    def matches_per_s(self) -> float:
        return self.stored / self.wall_s if self.wall_s else 0.0

    @property
    def decisions_per_s(self) -> float:
        return self.decisions / self.wall_s if self.wall_s else 0.0

    @property
    def kb_per_match(self) -> float:
        """Referee memory growth at peak over the idle referee, per match in play then."""
        return (self.rss_peak_mb - self.rss_base_mb) * 1024 / max(1, self.peak_matches)

    @property
    def ok(self) -> bool:
        return (self.stored == self.matches == self.delivered and not self.bad_records and not self.faults
                and not self.health_failures and self.health_checks > 0)

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"matches_per_s": self.matches_per_s, "decisions_per_s": self.decisions_per_s,
                               "kb_per_match": self.kb_per_match, "ok": self.ok}

    def rows(self) -> list[tuple[str, str]]:
        """The report as (measure, value) rows for a table."""
        return [
            ("matches stored / scheduled", f"{self.stored} / {self.matches}"),
            ("concurrency (in play at peak)", f"{self.concurrency} ({self.peak_matches})"),
            ("records that fail to verify", str(len(self.bad_records))),
            ("matches with a fault", str(len(self.faults))),
            ("decisions", str(self.decisions)),
            ("decision latency p50 / p99", f"{self.p50_ms:.2f} / {self.p99_ms:.2f} ms"),
            ("throughput", f"{self.matches_per_s:.1f} matches/s, {self.decisions_per_s:.0f} decisions/s"),
            ("referee memory idle / peak", f"{self.rss_base_mb:.1f} / {self.rss_peak_mb:.1f} MB"),
            ("memory per match in play", f"{self.kb_per_match:.1f} kB"),
            ("most seats on one stream", str(self.peak_seats_per_stream)),
            ("health checks (failed)", f"{self.health_checks} ({len(self.health_failures)})"),
            ("health check p50 / max", f"{self.health_p50_ms:.2f} / {self.health_max_ms:.2f} ms"),
            ("wall time", f"{self.wall_s:.1f} s"),
            ("verdict", "ok" if self.ok else "FAILED"),
        ]


def load_config(spec: LoadSpec) -> EventConfig:
    """The load event: four bot processes in pairings, enough deals for ``spec.matches``."""
    deals = max(1, math.ceil(spec.matches / MATCHES_PER_DEAL))
    entrants = [{"name": f"b{i}",
                 "command": [sys.executable, "-m", "sevenrocks.sdk.client", "--bot", spec.bot,
                             "--seed", str(spec.seed * 10 + i), "--max-seats", str(spec.max_seats)]}
                for i in range(4)]
    return parse_config({
        "event": {"name": "load", "format": "pairings", "deals": deals, "seed": spec.seed,
                  "target": spec.target, "concurrency": spec.concurrency},
        "time": {"per_move_ms": spec.per_move_ms, "connect_timeout_s": spec.connect_timeout_s},
        "entrants": entrants,
    }, "<load test>")


class HealthPoller:
    """Polls ``grpc.health.v1.Health/Check`` on its own channel from its own thread."""

    def __init__(self, address: str, every_s: float, deadline_s: float = 10.0) -> None:
        self.address = address
        self.every_s = every_s
        self.deadline_s = deadline_s
        self.latencies_ms: list[float] = []
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="health-poller", daemon=True)

    async def __aenter__(self) -> HealthPoller:
        self._thread.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        # Join from another thread: a check in flight needs this (the referee's) loop to answer.
        self._stop.set()
        await asyncio.to_thread(self._thread.join)

    def _run(self) -> None:
        import grpc
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        with grpc.insecure_channel(self.address) as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            while not self._stop.is_set():
                t0 = time.perf_counter()
                try:
                    reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=self.deadline_s)
                    if reply.status != health_pb2.HealthCheckResponse.SERVING:
                        self.failures.append(f"status {reply.status}")
                except grpc.RpcError as e:
                    self.failures.append(f"{e.code().name}: {e.details()}")
                self.latencies_ms.append((time.perf_counter() - t0) * 1000)
                self._stop.wait(self.every_s)


class Monitor:
    """Samples the referee process's RSS, matches in play and seats per stream, in the referee's loop."""

    def __init__(self, arena: Arena, every_s: float = 0.05) -> None:
        import psutil

        self.arena = arena
        self.every_s = every_s
        self.process = psutil.Process()
        self.base_mb = self.peak_mb = self.rss_mb()
        self.peak_matches = 0
        self.peak_seats = 0
        self._task: asyncio.Task[None] | None = None

    def rss_mb(self) -> float:
        return float(self.process.memory_info().rss) / 2**20

    def sample(self) -> None:
        referee = self.arena.referee
        self.peak_mb = max(self.peak_mb, self.rss_mb())
        seats = [len(s.links) for sessions in referee.sessions.values() for s in sessions]
        self.peak_seats = max(self.peak_seats, *seats, 0)
        self.peak_matches = max(self.peak_matches, sum(seats) // 4)  # four seats a match

    async def _run(self) -> None:
        while True:
            self.sample()
            await asyncio.sleep(self.every_s)

    def __enter__(self) -> Monitor:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()


@dataclass
class PoolExecutor:
    """Plays tasks on an open arena, ``concurrency`` at a time (a slot frees, a match starts)."""

    arena: Arena
    concurrency: int
    #: Sees each outcome before the tournament stores it.
    observe: Callable[[MatchOutcome], None] | None = None
    delivered: int = 0

    async def run(self, tasks: Iterable[MatchTask], on_result: OnResult) -> None:
        async def play(task: MatchTask) -> None:
            outcome = await self.arena.play(task)
            self.delivered += 1
            if self.observe is not None:
                self.observe(outcome)
            on_result(outcome)

        await run_pool(tasks, self.concurrency, play)


async def run_load(spec: LoadSpec, db: Path, log_dir: Path) -> LoadReport:
    """Run the load event into a fresh database ``db`` and check and measure it."""
    from sevenrocks.sdk.rules.replay import verify_lines

    if db.exists():
        raise FileExistsError(f"{db} exists; the load run needs a fresh database")
    config = load_config(spec)
    decisions: list[float] = []
    faults: list[str] = []

    def keep(o: MatchOutcome) -> None:  # only the small parts: the record lives in the store
        for ds in o.decision_ms.values():
            decisions.extend(ds)
        if o.fault is not None:
            faults.append(f"{o.task.match_id}: seat {o.fault.seat} {o.fault.cause}: {o.fault.detail}")

    arena = Arena(config, log_dir, max_streams=spec.max_streams)
    with Store(db) as store:
        async with arena:
            executor = PoolExecutor(arena, spec.concurrency, keep)
            monitor = Monitor(arena)
            t0 = time.perf_counter()
            async with HealthPoller(arena.address, spec.health_every_s) as health:
                with monitor:
                    plan = await run_event(config, store, executor)
            wall = time.perf_counter() - t0
            monitor.sample()
        ids = store.match_ids([config.name])
        bad = [mid for mid in ids if verify_lines((store.record(mid) or "").splitlines())]
    return LoadReport(
        matches=plan.total, concurrency=spec.concurrency, stored=len(set(ids)), delivered=executor.delivered,
        bad_records=bad, faults=faults, decisions=len(decisions),
        p50_ms=percentile(decisions, 50), p99_ms=percentile(decisions, 99), wall_s=wall,
        rss_base_mb=monitor.base_mb, rss_peak_mb=monitor.peak_mb, peak_matches=monitor.peak_matches,
        peak_seats_per_stream=monitor.peak_seats, health_checks=len(health.latencies_ms),
        health_failures=health.failures,
        health_p50_ms=statistics.median(health.latencies_ms) if health.latencies_ms else 0.0,
        health_max_ms=max(health.latencies_ms, default=0.0),
    )
