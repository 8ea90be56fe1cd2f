"""Events on a real Dask LocalCluster (worker processes, real bots, real gRPC on loopback)."""

from __future__ import annotations

import asyncio
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import psutil
import pytest

from sevenrocks.server.cluster.executor import ClusterError, ClusterExecutor, parse_cluster
from sevenrocks.server.events.outcome import MatchOutcome
from sevenrocks.server.events.schedule import MatchTask

from .conftest import OnResult, bad_records, is_launched_bot, play, ratings, results, small_event

pytestmark = pytest.mark.cluster
pytest.importorskip("distributed")


def test_two_workers_store_what_one_machine_stores(local_run: Path, tmp_path: Path) -> None:
    config = small_event()
    db = tmp_path / "cluster.db"
    play(config, db, ClusterExecutor(config, "local:2", tmp_path / "logs", concurrency=2))
    assert results(db) == results(local_run)
    assert ratings(db) == ratings(local_run)
    assert bad_records(db) == []
    # The bots' logs came home to the coordinator's log folder, one file per entrant, and name the
    # workers they came from: both played.
    logs = tmp_path / "logs"
    assert sorted(p.name for p in logs.glob("*.log")) == ["defensive.log", "greedy-b.log", "greedy.log"]
    for log in logs.glob("*.log"):
        text = log.read_text()
        assert len(set(re.findall(r"--- from worker (.*) ---", text))) == 2, text[:2000]
    # Every stored match says where and how it ran: both Dask workers, the sandbox mode, the engine.
    from sevenrocks.sdk.rules import engine_build
    from sevenrocks.server.events.store import Store

    with Store(db) as store:
        where = store.where_run()
    assert len(where) == len(results(db))
    assert len({w for w, _s, _e in where.values()}) == 2
    assert all(w and "tcp://" in w and s == "off" and e == engine_build() for w, s, e in where.values())


class KillAWorker:
    """Wraps the cluster executor: after ``after`` results, SIGKILLs one busy worker and its bots.

    That is what a machine dying looks like to the scheduler: the worker's
    running matches are lost with it and must be played again elsewhere.
    """

    def __init__(self, inner: ClusterExecutor, after: int) -> None:
        self.inner = inner
        self.after = after
        self.seen = 0
        self.killed: list[int] = []

    async def run(self, tasks: Sequence[MatchTask], on_result: OnResult) -> None:
        def hook(outcome: MatchOutcome) -> None:
            self.seen += 1
            if self.seen == self.after:
                self.kill()
            on_result(outcome)

        await self.inner.run(tasks, hook)

    def kill(self) -> None:
        for child in psutil.Process().children():
            try:
                bots = [g for g in child.children(recursive=True) if is_launched_bot(g)]
            except psutil.Error:  # a process that came and went meanwhile
                continue
            if bots:  # a worker with an arena: it is playing matches now
                for p in [child, *bots]:
                    try:
                        p.send_signal(signal.SIGKILL)
                    except psutil.NoSuchProcess:
                        pass
                self.killed.append(child.pid)
                return


def test_a_worker_killed_mid_event_loses_and_doubles_nothing(local_run: Path, tmp_path: Path) -> None:
    config = small_event()
    db = tmp_path / "killed.db"
    executor = KillAWorker(ClusterExecutor(config, "local:2", tmp_path / "logs", concurrency=2), after=3)
    play(config, db, executor)
    assert len(executor.killed) == 1
    got = results(db)
    assert len(got) == len(results(local_run))  # every match stored once (match_id is the key)
    assert got == results(local_run)
    assert ratings(db) == ratings(local_run)  # a match counted twice would move them
    assert bad_records(db) == []


def test_cluster_addresses_and_errors() -> None:
    assert parse_cluster("local:3") == (3, None)
    assert parse_cluster("local") == (2, None)
    assert parse_cluster("10.0.0.5:8786") == (None, "tcp://10.0.0.5:8786")
    assert parse_cluster("tls://h:8786") == (None, "tls://h:8786")
    with pytest.raises(ClusterError, match="local:N"):
        parse_cluster("local:0")
    from sevenrocks.server.events.config import parse_config

    cfg = parse_config({"event": {"name": "r", "format": "self"},
                        "entrants": [{"name": "a", "bot": "greedy"}, {"name": "v", "remote": True, "token": "t"}]}, "<t>")
    with pytest.raises(ClusterError, match="remote entrant"):
        asyncio.run(ClusterExecutor(cfg, "local:1").run([], lambda o: None))


def test_dask_client_tracebacks_stay_off_the_console_while_an_event_runs() -> None:
    """A killed scheduler makes the client's reconnect loop log a traceback through
    ``distributed.client``, a logger Dask's config gives its own level and handler; the
    coordinator reports the loss in one line of its own, so that traceback must not print."""
    import logging

    import distributed  # noqa: F401  (sets up Dask's loggers as a real coordinator has them)

    from sevenrocks.server.cluster.executor import client_logs_quiet

    class Keep(logging.Handler):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.seen.append(record.getMessage())

    client_log, keep = logging.getLogger("distributed.client"), Keep()
    before = client_log.level
    client_log.addHandler(keep)
    try:
        with client_logs_quiet():
            try:
                raise ConnectionRefusedError(111, "Connection refused")
            except ConnectionRefusedError:
                client_log.exception("during the event")
        assert keep.seen == []
        assert client_log.level == before  # and Dask's own levels come back afterwards
        client_log.error("after the event")
        assert keep.seen == ["after the event"]
    finally:
        client_log.removeHandler(keep)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_event_on_dask_scheduler_and_worker_processes(tmp_path: Path) -> None:
    """What docs/scale.md tells operators to do: `dask scheduler`, `dask worker tcp://...`, then --cluster."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    procs = [subprocess.Popen([*dask, "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                              stdout=subprocess.DEVNULL, stderr=(tmp_path / "scheduler.log").open("wb"))]
    try:
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "2", "--no-dashboard"],
            stdout=subprocess.DEVNULL, stderr=(tmp_path / "worker.log").open("wb")))
        config = small_event(deals=1)
        db = tmp_path / "remote.db"
        play(config, db, ClusterExecutor(config, address))
        assert len(results(db)) == 6
        assert bad_records(db) == []
        # The event's end removed its arena from the worker: its bots are gone, the worker stays.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _bots_under(procs[1].pid):
            time.sleep(0.1)
        assert _bots_under(procs[1].pid) == []
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(30)


def _bots_under(pid: int) -> list[psutil.Process]:
    try:
        return [p for p in psutil.Process(pid).children(recursive=True) if is_launched_bot(p)]
    except psutil.Error:
        return []


@pytest.mark.slow
def test_a_crash_on_a_worker_costs_one_match_and_the_bot_is_restarted_there(tmp_path: Path) -> None:
    from sevenrocks.server.events.config import parse_config
    from sevenrocks.server.events.store import Store

    here = Path(__file__).parent.parent / "events" / "bots"
    config = parse_config({
        "event": {"name": "cl", "deals": 1, "target": 100, "concurrency": 2},
        "time": {"per_move_ms": 10000, "connect_timeout_s": 60},
        "bots": {"fresh_process": "never", "restart_backoff_s": 0},
        "entrants": [{"name": "greedy", "bot": "greedy"}, {"name": "random", "bot": "random"},
                     {"name": "defensive", "bot": "defensive"},
                     {"name": "crasher", "command": [sys.executable, str(here / "crash_once_bot.py")],
                      "env": {"CRASH_AFTER": "30", "CRASH_MARKER": str(tmp_path / "crashed")}}],
    }, "<test>")
    db = tmp_path / "cl.db"
    play(config, db, ClusterExecutor(config, "local:1", tmp_path / "logs", concurrency=2))
    with Store(db) as store:
        matches = store.matches()
        faulted = [m for m in matches if m.fault is not None]
        assert len(matches) == 12 and len(faulted) == 1
        f = faulted[0].fault
        assert f is not None and (faulted[0].seats[f.seat], f.cause.value) == ("crasher", "crash")
        assert all("crash is charged to another match" in r for _e, _m, r in store.voided())
