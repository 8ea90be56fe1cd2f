"""Play an event's matches on a Dask cluster (``sevenrocks tournament --cluster ...``).

Why Dask: a match is already an independent, idempotent task (a :class:`MatchTask`
names it fully), so an event that outgrows one machine needs a task scheduler,
not a home-made farm. Dask distributed gives us scheduling, worker liveness and
the re-running of tasks lost with a dead worker; this module adds only what is
ours:

* **One arena per worker.** The first match a worker process runs starts its
  :class:`WorkerArena`: an embedded referee on loopback with its own event loop
  thread, and one bot process per entrant, reused by every later match on that
  worker. A :class:`ArenaPlugin` (a Dask worker plugin) stops it when the event
  ends or the worker closes, so no bot outlives its event.
* **Bounded in flight.** A worker runs as many matches at once as it has
  threads (``--nthreads``; ``local:N`` uses the event's ``concurrency``); the
  coordinator keeps at most two tasks per thread submitted, so a 100,000-match
  event is never 100,000 futures.
* **Results as they finish.** The coordinator hands each outcome to the
  tournament (``as_completed``), which stores it at once. A match whose worker died
  is run again on another worker by the scheduler; the tournament and the store
  keep the first result of a match id, so nothing counts twice.

With deterministic bots a match is a pure function of its task, so the stored
results and ratings equal those of a single-machine run of the same event.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib
import os
import re
import secrets
import tempfile
import threading
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import Future as ThreadFuture
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import ConfigError, EventConfig

try:
    from distributed import WorkerPlugin as _PluginBase
except ImportError:  # Dask is optional (the ``cluster`` extra): ClusterExecutor.run says how to get it
    _PluginBase = object  # type: ignore[misc,assignment]
from .executor import EntrantsUnreachable, OnResult, _unreachable_message, check_voids, outcome_of, phases, supervised_play
from .outcome import MatchOutcome, Report, Voided
from .schedule import MatchTask

#: ``local:N`` starts N workers here; anything else is a scheduler address.
LOCAL = re.compile(r"^local(?::(\d+))?$")
#: How long to try reaching a scheduler before telling the operator.
CONNECT_TIMEOUT_S = 10
#: A worker's arena with no match for this long closes itself (its coordinator is gone).
ARENA_IDLE_S = 600.0
#: How often a worker's arena checks that the process that started the worker is alive.
ORPHAN_POLL_S = 0.25


class ClusterError(ConfigError):
    """The event cannot run on this cluster (no scheduler there, no workers, remote entrants).

    A :class:`ConfigError`, so that the tournament command reports it like any
    other problem the operator fixes in the command line or the config."""


@dataclass(frozen=True, slots=True)
class ArenaSpec:
    """What a worker needs to build its arena: the event and where bot logs go."""

    #: Names this arena on the worker; unique per coordinator run.
    key: str
    config: EventConfig
    #: Bot logs; None: a folder under the worker's temp dir.
    log_dir: str | None = None
    #: Files no bot may see even inside a folder it is given (the event database).
    hidden: tuple[str, ...] = ()


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
            raise ClusterError("an arena launches its entrants; remote entrants connect to a referee themselves")
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
            raise EntrantsUnreachable(_unreachable_message(cfg, missing, self.procs, self.log_dir, self.address))

    async def play(self, task: MatchTask) -> MatchOutcome:
        """Play ``task`` as it comes (no restart, no voiding): what the load driver measures."""
        started = time.perf_counter()
        m = await self.referee.play_match(task.match_id, task.ruleset.build(), task.seed, task.seats,
                                          extra={"event_id": task.event_id, "deal_number": task.deal},
                                          hidden=self.config.duplicate)  # duplicate deals: no spectator
        return outcome_of(task, m, time.perf_counter() - started)

    async def play_supervised(self, task: MatchTask) -> list[Report]:
        """Play ``task`` with the bot lifecycle: a crashed bot restarted, an infrastructure fault voided."""
        return await supervised_play(self.referee, self.supervisor, task)

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


class WorkerArena:
    """An :class:`Arena` inside a Dask worker process, driven from its task threads.

    The referee is asynchronous and Dask runs tasks in threads, so the arena
    gets an event loop in a thread of its own; a task thread hands it a match and
    blocks until the match ends.
    """

    def __init__(self, spec: ArenaSpec) -> None:
        self.spec = spec
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=f"arena-{spec.key}", daemon=True)
        self.arena = Arena(spec.config, self._log_dir(), spec.hidden)
        self.active = 0
        self.last_used = time.monotonic()
        self._lock = threading.Lock()
        self.closed = False
        self.thread.start()
        # Watching from before the bots start: a parent that dies while they launch counts too.
        threading.Thread(target=self._reap_when_orphaned, args=(os.getppid(),), name=f"orphan-{spec.key}",
                         daemon=True).start()
        try:
            self._call(self.arena.open())
        except BaseException:
            self.close()
            raise
        asyncio.run_coroutine_threadsafe(self._reap_when_idle(), self.loop)

    def _reap_when_orphaned(self, parent: int) -> None:
        """Stop this arena's bots within a second of this worker losing its parent.

        A worker of ``--cluster local:N`` is a child of the coordinator; a remote
        worker is a child of its ``dask worker`` nanny. When that parent dies
        (``kill -9``), Dask may keep this process alive for a while, but its bots
        must not outlive the event: they are killed here, at once.
        """
        while not self.closed:
            time.sleep(ORPHAN_POLL_S)
            if os.getppid() != parent:
                self.closed = True
                self.arena.abandoned = True  # an open() in progress stops launching and kills what it started
                for proc in list(self.arena.procs.values()):
                    proc.kill()  # at once: a Goodbye could take longer than the event has left
                with _ARENAS_LOCK:
                    mine = _ARENAS.get(self.spec.key) is self
                if mine:
                    close_arena(self.spec.key)
                else:
                    self.close()
                return

    async def _reap_when_idle(self) -> None:
        """Close this arena after ``ARENA_IDLE_S`` without a match.

        The plugin closes it when the event ends; this covers a coordinator that
        died (kill -9, lost machine) and never said so, which would otherwise leave
        the event's bots running on a long-lived cluster.
        """
        while True:
            await asyncio.sleep(min(60.0, ARENA_IDLE_S / 4))
            with self._lock:
                idle = self.active == 0 and time.monotonic() - self.last_used > ARENA_IDLE_S
            if idle:  # closing waits on this loop, so it runs in a thread of its own
                threading.Thread(target=close_arena, args=(self.spec.key,), daemon=True).start()
                return

    def _call(self, coro: Any, timeout: float | None = None) -> Any:
        fut: ThreadFuture[Any] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return fut.result(timeout)

    def _log_dir(self) -> Path:
        if self.spec.log_dir is not None:
            base = Path(self.spec.log_dir)
        else:
            base = Path(tempfile.gettempdir()) / "sevenrocks-logs" / self.spec.config.name
        return base / f"worker-{os.getpid()}"

    def play(self, task: MatchTask) -> MatchOutcome:
        """Play ``task`` on this worker's referee (blocks the calling task thread)."""
        with self._lock:
            self.active += 1
        try:
            result: MatchOutcome = self._call(self.arena.play(task))
        finally:
            with self._lock:
                self.active -= 1
                self.last_used = time.monotonic()
        return result

    def play_supervised(self, task: MatchTask) -> list[Report]:
        """Like :meth:`play`, with the bot lifecycle (restarts, voided matches)."""
        with self._lock:
            self.active += 1
        try:
            result: list[Report] = self._call(self.arena.play_supervised(task))
        finally:
            with self._lock:
                self.active -= 1
                self.last_used = time.monotonic()
        return result

    def close(self) -> None:
        self.closed = True
        if self.loop.is_running():
            try:
                self._call(self.arena.close(), 30)
            except Exception:  # best effort: the bots got SIGTERM/SIGKILL in close() whatever happened
                pass
            self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


#: Arenas of this process (a Dask worker), by spec key.
_ARENAS: dict[str, WorkerArena] = {}
_ARENAS_LOCK = threading.Lock()


def arena_for(spec: ArenaSpec) -> WorkerArena:
    """This process's arena for ``spec``, started on first use (one per worker, not per task)."""
    with _ARENAS_LOCK:
        arena = _ARENAS.get(spec.key)
        if arena is None:
            arena = _ARENAS[spec.key] = WorkerArena(spec)
        return arena


def close_arena(key: str) -> None:
    with _ARENAS_LOCK:
        arena = _ARENAS.pop(key, None)
    if arena is not None:
        arena.close()


@atexit.register
def _close_all() -> None:  # a worker shutting down without the plugin's teardown
    for key in list(_ARENAS):
        close_arena(key)


def play_task(task: MatchTask, spec: ArenaSpec) -> MatchOutcome:
    """The Dask task: play one match on this worker's arena."""
    return arena_for(spec).play(task)


def play_supervised_task(task: MatchTask, spec: ArenaSpec) -> list[Report]:
    """The Dask task of an event: play one match on this worker's supervised arena."""
    return arena_for(spec).play_supervised(task)


class ArenaPlugin(_PluginBase):
    """A Dask worker plugin that stops a worker's arena when the event ends or the worker closes."""

    idempotent = False

    def __init__(self, key: str) -> None:
        self.key = key

    def setup(self, worker: Any) -> None:
        pass

    async def teardown(self, worker: Any) -> None:
        await asyncio.to_thread(close_arena, self.key)


def parse_cluster(address: str) -> tuple[int | None, str | None]:
    """``local:N`` -> (N, None); ``tcp://host:port`` (or ``host:port``) -> (None, address)."""
    m = LOCAL.match(address.strip())
    if m:
        n = int(m.group(1) or 2)
        if n < 1:
            raise ClusterError("local:N needs at least one worker, e.g. --cluster local:2")
        return n, None
    if not address.strip():
        raise ClusterError("empty --cluster address: give local:N or tcp://HOST:8786")
    addr = address.strip()
    return None, addr if "://" in addr else f"tcp://{addr}"


@dataclass
class ClusterExecutor:
    """Runs matches as Dask tasks on an existing cluster or a LocalCluster it starts.

    ``address`` is ``local:N`` (N worker processes here, ``concurrency`` matches
    each) or a scheduler address such as ``tcp://10.0.0.5:8786``.
    """

    config: EventConfig
    address: str
    #: Bot logs of a local cluster (remote workers log under their own temp dir).
    log_dir: Path | None = None
    #: Matches per worker for ``local:N``.
    concurrency: int = 2
    #: Times a task that raised is tried again (a worker that died is handled by the scheduler).
    retries: int = 1
    #: Submitted tasks per worker thread (one running, the rest queued at the worker).
    prefetch: int = 2
    #: Files no bot may see (the event database), passed to every worker's sandbox.
    hidden: tuple[Path, ...] = ()

    def _check(self) -> None:
        remote = [e.name for e in self.config.entrants if e.remote]
        if remote:
            raise ClusterError(
                f"remote entrant(s) {', '.join(remote)}: on a cluster every worker runs its own referee, so a "
                "bot that dials in cannot reach them all; run this event without --cluster, "
                "or give the entrant a command the workers can launch")

    async def run(self, tasks: Iterable[MatchTask], on_result: OnResult) -> None:
        self._check()
        try:
            dd: Any = importlib.import_module("distributed")
        except ImportError:
            raise ClusterError("--cluster needs Dask distributed: python3 -m pip install '.[cluster]' (from the project's folder)") from None
        n_local, address = parse_cluster(self.address)
        cluster: Any = None
        client: Any = None
        try:
            if n_local is not None:
                cluster = await dd.LocalCluster(n_workers=n_local, threads_per_worker=self.concurrency,
                                                processes=True, asynchronous=True, dashboard_address=None)
                client = await dd.Client(cluster, asynchronous=True)
            else:
                client = dd.Client(address, asynchronous=True, timeout=f"{CONNECT_TIMEOUT_S}s")
                try:
                    await client
                except (OSError, TimeoutError) as e:
                    raise ClusterError(
                        f"cannot reach the Dask scheduler at {address} within {CONNECT_TIMEOUT_S} s "
                        f"({type(e).__name__}); start one there with `dask scheduler` and workers with "
                        f"`dask worker {address}`") from None
            await self._run_on(client, dd.as_completed, tasks, on_result)
        finally:
            if client is not None:
                await client.close()
            if cluster is not None:
                await cluster.close()

    async def _run_on(self, client: Any, as_completed: Any, tasks: Iterable[MatchTask], on_result: OnResult) -> None:
        key = f"{re.sub(r'[^A-Za-z0-9_.-]', '_', self.config.name)}-{secrets.token_hex(4)}"
        spec = ArenaSpec(key, self.config, str(self.log_dir) if self.log_dir is not None else None,
                         tuple(str(h) for h in self.hidden))
        await client.register_plugin(ArenaPlugin(key), name=f"sevenrocks-arena-{key}")
        fresh = self.config.bots.fresh_process
        try:
            slots = max(1, await _threads(client) * self.prefetch)
            batches = phases(tasks, fresh)
            batch = next(batches, None)
            while batch is not None:
                await self._run_batch(client, as_completed, spec, slots, batch, on_result)
                batch = next(batches, None)
                if batch is not None and fresh != "never":
                    # Every worker's arena (referee and bots) is closed: the next batch starts fresh
                    # processes, so no bot process plays two matches of one duplicate group.
                    await client.run(_close_arena_soon, key, on_error="ignore")
        finally:
            try:
                await client.unregister_worker_plugin(f"sevenrocks-arena-{key}")
            except Exception:  # workers gone already: their atexit hook closed the arenas
                pass

    async def _run_batch(self, client: Any, as_completed: Any, spec: ArenaSpec, slots: int,
                         tasks: Iterable[MatchTask], on_result: OnResult) -> None:
        pending = iter(tasks)

        attempts: dict[str, int] = {}
        voids: dict[str, int] = {}

        def submit(task: MatchTask) -> Any:
            n = attempts[task.match_id] = attempts.get(task.match_id, 0) + 1
            again = f"-again{n}" if n > 1 else ""
            return client.submit(play_supervised_task, task, spec, key=f"match-{spec.key}-{task.match_id}{again}",
                                 pure=False, retries=self.retries)

        first = [submit(t) for _, t in zip(range(slots), pending)]
        if not first:
            return
        queue = as_completed(first, with_results=False)
        async for future in queue:
            reports: list[Report] = await future
            future.release()
            for report in reports:
                on_result(report)
                if isinstance(report, Voided):  # an infrastructure fault: the match is played again
                    check_voids(voids, report)
                    queue.add(submit(report.task))
            nxt = next(pending, None)
            if nxt is not None:
                queue.add(submit(nxt))


async def _close_arena_soon(key: str) -> None:
    """Run on every worker by ``client.run``: close its arena off the worker's event loop."""
    await asyncio.to_thread(close_arena, key)


async def _threads(client: Any) -> int:
    """Worker threads of the cluster now (at least one worker must have joined)."""
    try:
        await client.wait_for_workers(1, timeout=60)
    except TimeoutError:
        raise ClusterError("the Dask cluster has no workers after 60 s; start some with "
                           "`dask worker tcp://SCHEDULER:8786 --nthreads 2`") from None
    info = await client.scheduler.identity(n_workers=-1)
    return sum(int(w.get("nthreads", 1)) for w in info.get("workers", {}).values()) or 1
