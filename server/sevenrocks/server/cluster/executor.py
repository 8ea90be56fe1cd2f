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
import contextlib
from collections import Counter
import importlib
import logging
import os
import re
import secrets
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from concurrent.futures import CancelledError
from concurrent.futures import Future as ThreadFuture
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .workers import ROSTER_POLL_S, Roster
from ..events.arena import Arena, ArenaError
from ..events.config import EventConfig

try:
    from distributed import WorkerPlugin as _PluginBase
except ImportError:  # Dask is optional (the ``cluster`` extra): ClusterExecutor.run says how to get it
    _PluginBase = object  # type: ignore[misc,assignment]
from ..events.executor import (OnResult, check_voids, phases)
from ..events.outcome import MatchOutcome, Report, Voided
from ..events.schedule import MatchTask
from .shipping import Shipment, pack, plan, resolve, snapshot_root, unpack
from ..versions.snapshots import SnapshotStore

#: ``local:N`` starts N workers here; anything else is a scheduler address.
LOCAL = re.compile(r"^local(?::(\d+))?$")
#: How long to try reaching a scheduler before telling the operator.
CONNECT_TIMEOUT_S = 10
#: How long to wait for a worker that may play the event before telling the operator.
WORKER_WAIT_S = 60.0
#: A worker's arena that holds no live task of its event for this long closes itself and stops its
#: bots: the coordinator is gone (killed, its machine lost) and the scheduler dropped its tasks.
LEASE_S = 15.0
#: How often a worker's arena checks that the process that started the worker is alive.
ORPHAN_POLL_S = 0.25
#: How often a task thread waiting on its arena looks whether the arena closed or its task was cancelled.
WAIT_SLICE_S = 0.25
#: Decisions one round can take at most (28 tiles placed, every seat passing between two of them),
#: the basis of a match's hard deadline (:func:`match_deadline_s`).
DECISIONS_PER_ROUND = 28 * 4
#: At most this much of one log file travels home with one result.
LOG_CHUNK = 256 * 1024


class ArenaClosed(RuntimeError):
    """The arena a task waited on closed (its event ended, its coordinator left, its worker is closing)."""


class ClusterError(ArenaError):
    """The event cannot run on this cluster (no scheduler there, no workers, remote entrants).

    A :class:`ConfigError`, so that the tournament command reports it like any
    other problem the operator fixes in the command line or the config."""


@dataclass(frozen=True, slots=True)
class ArenaSpec:
    """What a worker needs to build its arena: the event, what bots may not see, how they run there."""

    #: Names this arena on the worker; unique per coordinator run.
    key: str
    config: EventConfig
    #: Files no bot may see even inside a folder it is given (the event database).
    hidden: tuple[str, ...] = ()
    #: How each launched entrant runs from this worker's verified copy of its files (:mod:`.shipping`).
    shipments: tuple[Shipment, ...] = ()


def match_deadline_s(config: EventConfig) -> float:
    """The longest a match of ``config`` can legitimately take: every decision of every round at its limit.

    A task's wait on its arena never outlasts it, whatever happens to the referee; in
    practice a wait ends much sooner, when the match ends, the arena closes or the task is
    cancelled (checked every :data:`WAIT_SLICE_S`)."""
    per_move = config.time.per_move_ms / 1000.0
    bank = (config.time.bank_ms or 0) / 1000.0
    rounds = config.round_cap
    return 60.0 + rounds * DECISIONS_PER_ROUND * 2 * per_move + 4 * bank


def _dask_worker() -> Any:
    """The Dask worker this thread runs in (None outside a worker, e.g. a test driving an arena)."""
    try:
        from distributed import get_worker
        return get_worker()
    except (ImportError, ValueError):
        return None


def _current_key() -> str | None:
    try:
        from distributed.worker import thread_state  # type: ignore[attr-defined]
    except ImportError:
        return None
    return getattr(thread_state, "key", None)


#: Worker task states of a task nobody waits for any more (the client released it or left).
GONE = frozenset({"cancelled", "released", "forgotten", "error", "memory"})


def _task_state(worker: Any, key: str) -> str:
    ts = worker.state.tasks.get(key)
    return "forgotten" if ts is None else str(ts.state)


class WorkerArena:
    """An :class:`Arena` inside a Dask worker process, driven from its task threads.

    The referee is asynchronous and Dask runs tasks in threads, so the arena
    gets an event loop in a thread of its own; a task thread hands it a match and
    waits until the match ends, the arena closes, or the task is cancelled (its
    coordinator stopped or died): never longer than :func:`match_deadline_s`. A
    cancelled task closes the arena, which kills its bots' process groups, so no
    worker thread stays blocked and no bot outlives the run that started it.
    """

    def __init__(self, spec: ArenaSpec) -> None:
        self.spec = spec
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=f"arena-{spec.key}", daemon=True)
        config = resolve(spec.config, spec.shipments) if spec.shipments else spec.config
        self.arena = Arena(config, self._log_dir(), spec.hidden)
        self.deadline_s = match_deadline_s(spec.config)
        self.worker = _dask_worker()
        #: How stored matches name this worker: its host and Dask address.
        self.label = socket.gethostname() + (f" {self.worker.address}" if self.worker is not None else "")
        self.active = 0
        self.last_used = time.monotonic()
        self._lock = threading.Lock()
        self._log_lock = threading.Lock()
        #: Bytes of each log file already sent home.
        self._shipped: dict[str, int] = {}
        self.closed = False
        self.thread.start()
        # Watching from before the bots start: a parent that dies while they launch counts too.
        threading.Thread(target=self._reap_when_orphaned, args=(os.getppid(),), name=f"orphan-{spec.key}",
                         daemon=True).start()
        try:
            self._call(self.arena.open(), spec.config.time.connect_timeout_s + 60)
        except BaseException:
            self.close()
            raise
        threading.Thread(target=self._reap_when_unwanted, name=f"lease-{spec.key}", daemon=True).start()

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
                self._discard()
                return

    def _discard(self) -> None:
        """Close this arena and forget it (from a thread other than its loop's)."""
        with _ARENAS_LOCK:
            mine = _ARENAS.get(self.spec.key) is self
        if mine:
            close_arena(self.spec.key)
        else:
            self.close()

    def _wanted(self) -> bool:
        """Whether this worker still holds a live task of this arena's run (or one is being played)."""
        if self.active:
            return True
        if self.worker is None:
            return time.monotonic() - self.last_used < LEASE_S
        prefix = f"match-{self.spec.key}-"
        try:
            states = [str(ts.state) for k, ts in list(self.worker.state.tasks.items()) if str(k).startswith(prefix)]
        except RuntimeError:  # the worker's loop changed the dict meanwhile: ask again next time
            return True
        return any(s not in GONE for s in states)

    def _reap_when_unwanted(self) -> None:
        """Close this arena once no task of its run has been on this worker for :data:`LEASE_S`.

        The coordinator's tasks are this arena's lease: when the coordinator stops or
        dies (kill -9, its machine lost), the scheduler drops its tasks and the
        worker forgets them; the bots then stop within ``LEASE_S`` instead of running
        on a long-lived cluster. The plugin closes the arena sooner at a clean end.
        """
        last_wanted = time.monotonic()
        while not self.closed:
            time.sleep(min(1.0, LEASE_S / 4))
            with self._lock:
                wanted = self._wanted()
            if wanted:
                last_wanted = time.monotonic()
            elif time.monotonic() - last_wanted > LEASE_S:
                self._discard()
                return

    def _call(self, coro: Any, deadline_s: float | None = None) -> Any:
        """Run ``coro`` on the arena's loop and wait for it, in slices, never past the deadline.

        Each slice looks whether the arena closed (its loop will never finish the
        coroutine) and whether this thread's Dask task was cancelled; either ends the
        wait with :class:`ArenaClosed`, a cancelled task after closing the arena.
        """
        fut: ThreadFuture[Any] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        key = _current_key() if self.worker is not None else None
        limit = deadline_s if deadline_s is not None else self.deadline_s
        end = time.monotonic() + limit
        while True:
            try:
                return fut.result(WAIT_SLICE_S)
            except TimeoutError:
                pass
            except CancelledError:  # the closing arena cancelled what still ran on its loop
                raise ArenaClosed(f"the arena of {self.spec.key} closed while a match waited on it") from None
            if self.closed and not self.loop.is_running():
                fut.cancel()
                raise ArenaClosed(f"the arena of {self.spec.key} closed while a match waited on it")
            if key is not None and _task_state(self.worker, key) in GONE:
                fut.cancel()
                threading.Thread(target=self._discard, daemon=True).start()
                raise ArenaClosed(f"task {key} was cancelled (its coordinator stopped or left); "
                                  "the arena and its bots are stopped")
            if time.monotonic() > end:
                fut.cancel()
                raise ArenaClosed(f"no answer from the arena of {self.spec.key} within its deadline ({limit:.0f} s)")

    def _log_dir(self) -> Path:
        """This run's bot logs on this worker: its own folder, whatever the coordinator's paths are."""
        return Path(tempfile.gettempdir()) / "sevenrocks-logs" / self.spec.key / f"worker-{os.getpid()}"

    def new_logs(self) -> tuple[tuple[str, bytes], ...]:
        """What the bots' logs (and sandbox.txt) gained since the last call: it travels home with a result.

        At most :data:`LOG_CHUNK` bytes of a file per call, so a flooding bot cannot
        make results huge; its log is capped by the sandbox's ``log_mb`` anyway."""
        out = []
        with self._log_lock:
            for path in sorted(self.arena.log_dir.glob("*.txt")) + sorted(self.arena.log_dir.glob("*.log")):
                try:
                    size = path.stat().st_size
                    start = self._shipped.get(path.name, 0)
                    if size <= start and path.name in self._shipped:  # an empty file travels once
                        continue
                    with path.open("rb") as f:
                        f.seek(start)
                        data = f.read(LOG_CHUNK)
                except OSError:
                    continue
                self._shipped[path.name] = start + len(data)
                out.append((path.name, data))
        return tuple(out)

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
            result: list[Report] = self._call(self.arena.play_supervised(task, self.label))
        finally:
            with self._lock:
                self.active -= 1
                self.last_used = time.monotonic()
        return result

    def close(self) -> None:
        """Stop the bots and the referee; every task still waiting on the arena is released."""
        self.closed = True
        if self.loop.is_running():
            try:
                fut = asyncio.run_coroutine_threadsafe(self.arena.close(), self.loop)
                fut.result(30)
            except Exception:  # best effort: the bots got SIGTERM/SIGKILL in close() whatever happened
                for proc in list(self.arena.procs.values()):
                    proc.kill()
            self.loop.call_soon_threadsafe(_cancel_all, self.loop)
            self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        # The logs went home with the results; the worker keeps no copy to fill its disk.
        shutil.rmtree(self.arena.log_dir, ignore_errors=True)


def _cancel_all(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel whatever still runs on a closing arena's loop (a match its referee did not end)."""
    for t in asyncio.all_tasks(loop):
        t.cancel()


#: Arenas of this process (a Dask worker), by spec key.
_ARENAS: dict[str, WorkerArena] = {}
_ARENAS_LOCK = threading.Lock()
#: Runs whose arena is being opened (by key): their other task threads wait on this lock.
_OPENING: dict[str, threading.Lock] = {}
#: Runs that ended (their plugin was removed): keys are unique per run, so this only grows by one per run.
_ENDED: set[str] = set()


def arena_for(spec: ArenaSpec) -> WorkerArena:
    """This process's arena for ``spec``, started on first use (one per worker, not per task).

    One thread opens a run's arena while that run's other threads wait for it; other
    runs' arenas are not held up by it (a slow start of one event's bots must not
    stall the next event's matches on the same worker). A run whose arena was closed
    by its plugin (the run ended) gets no new one."""
    with _ARENAS_LOCK:
        if spec.key in _ENDED:
            raise ArenaClosed(f"run {spec.key} has ended on this worker")
        arena = _ARENAS.get(spec.key)
        if arena is not None:
            return arena
        opening = _OPENING.setdefault(spec.key, threading.Lock())
    with opening:
        with _ARENAS_LOCK:
            arena = _ARENAS.get(spec.key)
            if arena is not None:
                return arena
        arena = WorkerArena(spec)
        with _ARENAS_LOCK:
            _OPENING.pop(spec.key, None)
            ended = spec.key in _ENDED
            if not ended:
                _ARENAS[spec.key] = arena
        if ended:  # the run ended while its arena opened
            arena.close()
            raise ArenaClosed(f"run {spec.key} has ended on this worker")
        return arena


def close_arena(key: str, ended: bool = False) -> None:
    """Close the arena of run ``key`` here; ``ended``: the run is over, no arena of it opens again."""
    with _ARENAS_LOCK:
        arena = _ARENAS.pop(key, None)
        if ended:
            _ENDED.add(key)
    if arena is not None:
        arena.close()


@atexit.register
def _close_all() -> None:  # a worker shutting down without the plugin's teardown
    for key in list(_ARENAS):
        close_arena(key)


def play_task(task: MatchTask, spec: ArenaSpec) -> MatchOutcome:
    """The Dask task: play one match on this worker's arena."""
    return arena_for(spec).play(task)


@dataclass(frozen=True, slots=True)
class TaskResult:
    """What a worker sends back for one match: what happened, and its bots' new log lines."""

    reports: list[Report]
    #: (file name, bytes appended since the worker's last result), for the coordinator's ``--out/logs``.
    logs: tuple[tuple[str, bytes], ...] = ()
    worker: str = ""


def play_supervised_task(task: MatchTask, spec: ArenaSpec) -> TaskResult:
    """The Dask task of an event: play one match on this worker's supervised arena."""
    arena = arena_for(spec)
    reports = arena.play_supervised(task)
    return TaskResult(reports, arena.new_logs(), arena.label)


class ArenaPlugin(_PluginBase):
    """A Dask worker plugin that stops a worker's arena when the event ends or the worker closes."""

    idempotent = False

    def __init__(self, key: str) -> None:
        self.key = key

    def setup(self, worker: Any) -> None:
        pass

    async def teardown(self, worker: Any) -> None:
        await asyncio.to_thread(close_arena, self.key, True)


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
    #: Told each worker admitted or left out (default: stderr).
    say: Callable[[str], None] | None = None
    #: Set while running: the admitted workers (tests and the live pages look at it).
    roster: Roster | None = None
    #: Log file -> the worker whose lines were appended to it last.
    _log_source: dict[str, str] = field(default_factory=dict, init=False, repr=False)

    def _check(self) -> None:
        remote = [e.name for e in self.config.entrants if e.remote]
        if remote:
            raise ClusterError(
                f"remote entrant(s) {', '.join(remote)}: on a cluster every worker runs its own referee, so a "
                "bot that dials in cannot reach them all; run this event without --cluster, "
                "or give the entrant a command the workers can launch")

    async def connect(self) -> tuple[Any, Any]:
        """A Dask client (asynchronous) and, for ``local:N``, the LocalCluster it talks to."""
        try:
            dd: Any = importlib.import_module("distributed")
        except ImportError:
            raise ClusterError("--cluster needs Dask distributed: python3 -m pip install '.[cluster]' "
                               "(from the project's folder)") from None
        n_local, address = parse_cluster(self.address)
        if n_local is not None:
            cluster = await dd.LocalCluster(n_workers=n_local, threads_per_worker=self.concurrency,
                                            processes=True, asynchronous=True, dashboard_address=None)
            client = await dd.Client(cluster, asynchronous=True)
            await client.wait_for_workers(n_local, timeout=WORKER_WAIT_S)
            return client, cluster
        client = dd.Client(address, asynchronous=True, timeout=f"{CONNECT_TIMEOUT_S}s")
        try:
            await client
        except (OSError, TimeoutError) as e:
            raise ClusterError(
                f"cannot reach the Dask scheduler at {address} within {CONNECT_TIMEOUT_S} s "
                f"({type(e).__name__}); start one there with `dask scheduler` and workers with "
                f"`dask worker {address}`") from None
        return client, None

    async def run(self, tasks: Iterable[MatchTask], on_result: OnResult) -> None:
        self._check()
        client: Any = None
        cluster: Any = None
        try:
            client, cluster = await self.connect()
            with client_logs_quiet():
                await self._run_on(client, tasks, on_result)
        finally:
            with client_logs_quiet():
                await disconnect(client, cluster)

    def _say(self, text: str) -> None:
        if self.say is not None:
            self.say(text)
        else:
            print(text, file=sys.stderr, flush=True)

    async def _run_on(self, client: Any, tasks: Iterable[MatchTask], on_result: OnResult) -> None:
        key = f"{re.sub(r'[^A-Za-z0-9_.-]', '_', self.config.name)}-{secrets.token_hex(4)}"
        store = SnapshotStore(snapshot_root())
        shipments = tuple(plan(self.config, store, hidden=self.hidden))
        archives = pack(store, (s.digest for s in shipments))
        spec = ArenaSpec(key, self.config, tuple(str(h) for h in self.hidden), shipments)

        async def ship(client: Any, workers: list[str]) -> dict[str, str | None]:
            """The bots' snapshots to newly admitted workers, each copy checked there by its digest."""
            done = await client.run(unpack, archives, workers=workers, on_error="return")
            return {w: None if isinstance(done.get(w), list) else f"its copy of the bots failed: {done.get(w)}"
                    for w in workers}

        roster = self.roster = Roster(self.config, self._say, self.prefetch, on_admit=ship)
        try:
            await roster.wait_for_one(client, WORKER_WAIT_S)
        except TimeoutError:
            left = "".join(f"; {a} left out: {why}" for a, why in roster.refused.items())
            raise ClusterError(f"the Dask cluster has no worker that may play this event after {WORKER_WAIT_S:g} s"
                               f"{left}; start some with `dask worker tcp://SCHEDULER:8786 --nthreads 2`") from None
        await client.register_plugin(ArenaPlugin(key), name=f"sevenrocks-arena-{key}")
        watch = asyncio.create_task(roster.watch(client))
        fresh = self.config.bots.fresh_process
        try:
            batches = phases(tasks, fresh)
            batch = next(batches, None)
            while batch is not None:
                await self._run_batch(client, spec, roster, batch, on_result)
                batch = next(batches, None)
                if batch is not None and fresh != "never":
                    # Every worker's arena (referee and bots) is closed: the next batch starts fresh
                    # processes, so no bot process plays two matches of one duplicate group.
                    await _close_arenas(client, key, roster)
        finally:
            watch.cancel()
            await _quietly(watch)
            # Workers gone already (or the scheduler): their atexit hook and lease close the arenas.
            await _quietly(client.unregister_worker_plugin(f"sevenrocks-arena-{key}"), 10)

    async def _run_batch(self, client: Any, spec: ArenaSpec, roster: Roster, tasks: Iterable[MatchTask],
                         on_result: OnResult) -> None:
        """Keep ``roster.slots`` matches submitted to the admitted workers; report each as it ends."""
        pending = iter(tasks)
        attempts: dict[str, int] = {}
        voids: dict[str, int] = {}
        running: dict[asyncio.Future[Any], tuple[Any, MatchTask]] = {}
        again: list[MatchTask] = []

        def submit(task: MatchTask) -> None:
            n = attempts[task.match_id] = attempts.get(task.match_id, 0) + 1
            suffix = f"-again{n}" if n > 1 else ""
            future = client.submit(play_supervised_task, task, spec, key=f"match-{spec.key}-{task.match_id}{suffix}",
                                   pure=False, retries=self.retries, workers=roster.workers,
                                   allow_other_workers=False)
            running[asyncio.ensure_future(future.result())] = (future, task)

        async def elsewhere() -> None:
            """Play again, on the admitted workers, every match the scheduler assigned to a lost one."""
            if not roster.lost or not roster.workers:
                return  # nowhere else to play them: the scheduler's own notice re-runs them
            try:
                on_lost = await client.processing(workers=sorted(roster.lost))
            except Exception:  # noqa: BLE001 - one the scheduler removed meanwhile (KeyError there): next time
                    return
            keys = {str(k) for ks in on_lost.values() for k in ks}
            copies = Counter(t.match_id for _f, t in running.values())
            for future, task in list(running.values()):
                if str(future.key) in keys and copies[task.match_id] == 1:  # not played again yet
                    copies[task.match_id] += 1
                    submit(task)

        try:
            await self._keep_running(submit, running, pending, again, roster, voids, on_result, elsewhere)
        finally:  # stopped (Ctrl-C, a lost scheduler): the waits still open end here, quietly
            for waiter in running:
                waiter.cancel()
            await _quietly(asyncio.gather(*running, return_exceptions=True), 5)

    async def _keep_running(self, submit: Callable[[MatchTask], None],
                            running: dict[asyncio.Future[Any], tuple[Any, MatchTask]],
                            pending: Iterator[MatchTask], again: list[MatchTask], roster: Roster,
                            voids: dict[str, int], on_result: OnResult,
                            elsewhere: Callable[[], Awaitable[None]]) -> None:
        """Keep the slots full; hand each result on once per match id.

        A match assigned to a worker the roster lost is submitted once more (``elsewhere``):
        the first of its copies to finish counts, the other is let go (released: the
        scheduler cancels it), so a duplicate phase waits for the lost worker no longer than
        the roster takes to notice it (:data:`.workers.SILENT_S`) and the match takes."""
        nxt: MatchTask | None = None
        alone_since: float | None = None
        while True:
            # Never a task without admitted workers: Dask reads an empty list as "any worker", and
            # the workers present then may be the ones left out (other code, a lost machine).
            while roster.workers and len(running) < roster.slots:
                nxt = nxt or (again.pop() if again else next(pending, None))
                if nxt is None:
                    break
                submit(nxt)
                nxt = None
            if not running:
                if roster.workers:
                    return  # every match of the batch is done
                nxt = nxt or (again.pop() if again else next(pending, None))
                if nxt is None:
                    return
                alone_since = alone_since or time.monotonic()
                if time.monotonic() - alone_since > WORKER_WAIT_S:
                    raise ClusterError(f"no worker that may play this event has been left for {WORKER_WAIT_S:g} s; "
                                       "start one with `dask worker tcp://SCHEDULER:8786` and run the same "
                                       "command again to resume")
                await asyncio.sleep(ROSTER_POLL_S / 4)
                continue
            alone_since = None
            done, _ = await asyncio.wait(running, timeout=ROSTER_POLL_S, return_when=asyncio.FIRST_COMPLETED)
            for waiter in done:
                if waiter not in running:  # a copy whose sibling counted earlier in this loop
                    continue
                future, task = running.pop(waiter)
                siblings = [w for w, (_f, t) in running.items() if t.match_id == task.match_id]
                try:
                    result: TaskResult = waiter.result()
                except Exception as e:
                    if _scheduler_lost(e):
                        raise ClusterError(self._lost(task, e)) from None
                    if siblings:  # a copy failed (its lost worker, say): the other copy decides
                        continue
                    raise
                finally:
                    future.release()
                for other in siblings:  # the other copy of a match played again: let it go
                    copy, _t = running.pop(other)
                    other.cancel()
                    copy.release()
                self._bring_home(result)
                for report in result.reports:
                    on_result(report)
                    if isinstance(report, Voided):  # an infrastructure fault: the match is played again
                        check_voids(voids, report)
                        again.append(report.task)
            await elsewhere()

    def _bring_home(self, result: TaskResult) -> None:
        """Append a worker's new log lines to ``log_dir/<entrant>.log``, as a local event writes them.

        A line names the worker whenever the lines of one file come from another worker
        than the last ones did, so a crash can be traced to its machine."""
        if self.log_dir is None or not result.logs:
            return
        self.log_dir.mkdir(parents=True, exist_ok=True)
        for name, data in result.logs:
            with (self.log_dir / name).open("ab") as f:
                if self._log_source.get(name) != result.worker:
                    f.write(f"--- from worker {result.worker} ---\n".encode())
                    self._log_source[name] = result.worker
                f.write(data)

    def _lost(self, task: MatchTask, e: BaseException) -> str:
        why = " ".join(str(e).split()) or type(e).__name__
        return (f"lost the Dask scheduler at {self.address} (match {task.match_id}: {why}); every match that "
                "finished is stored: run the same command again to resume once the scheduler and workers are back")


@contextlib.contextmanager
def client_logs_quiet() -> Iterator[None]:
    """Dask's own client-side log lines off while an event runs: a lost scheduler or worker
    is reported once, in the coordinator's words, not as Dask's tracebacks on the console.

    Dask's logging config gives ``distributed.client`` (and others) a level and a handler of
    their own, so quieting the ``distributed`` parent alone is not enough: the client's
    reconnect loop logs its ``ConnectionRefusedError`` traceback through its own logger."""
    names = ["distributed"] + [n for n in list(logging.root.manager.loggerDict) if n.startswith("distributed.")]
    loggers = [logging.getLogger(n) for n in names]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels):
            logger.setLevel(level)


def _scheduler_lost(e: BaseException) -> bool:
    """Whether a task's wait failed because the coordinator lost its scheduler (not the task itself).

    Dask cancels every future when the connection is lost (``FutureCancelledError``), or
    a gather in progress fails with ``CommClosedError``; an exception the task raised
    on its worker comes back as itself."""
    try:
        from distributed.comm.core import CommClosedError
    except ImportError:
        return False
    return isinstance(e, (CancelledError, CommClosedError))


async def disconnect(client: Any, cluster: Any) -> None:
    """Close a client and its LocalCluster, whatever state the cluster is in."""
    await _quietly(client.close() if client is not None else None)
    await _quietly(cluster.close() if cluster is not None else None)


async def _quietly(aw: Any, timeout: float = 30) -> None:
    """Await a clean-up step; a cluster that is gone already cannot make it fail or hang the exit."""
    if aw is None:
        return
    try:
        await asyncio.wait_for(aw, timeout)
    except (Exception, asyncio.CancelledError):
        pass


async def _close_arenas(client: Any, key: str, roster: Roster) -> None:
    """Close run ``key``'s arena on every admitted worker, each asked on its own.

    A worker that does not answer (cut off, frozen: its kernel may still accept the
    connection, so no timeout of Dask's ends the call) is waited for only until the
    roster loses it (:data:`.workers.SILENT_S`); it gets no match of this event again,
    so its arena does not matter, and the batch after this one does not wait for it."""
    waits = {w: asyncio.ensure_future(client.run(_close_arena_soon, key, workers=[w], on_error="ignore"))
             for w in roster.workers}
    try:
        while waits:
            await asyncio.wait(waits.values(), timeout=ROSTER_POLL_S / 4)
            for w, waiting in list(waits.items()):
                if waiting.done() or w in roster.lost or w not in roster.admitted:
                    del waits[w]
                    if waiting.done() and not waiting.cancelled():
                        waiting.exception()  # retrieved: a worker gone meanwhile is no error here
    finally:
        for waiting in waits.values():
            waiting.cancel()


async def _close_arena_soon(key: str) -> None:
    """Run on every worker by ``client.run``: close its arena off the worker's event loop."""
    await asyncio.to_thread(close_arena, key)
