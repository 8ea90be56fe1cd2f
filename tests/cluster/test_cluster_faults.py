"""Stopping a cluster event is safe: the coordinator stopped (Ctrl-C, SIGTERM), killed, or its scheduler
lost, the next run of the same command on the same cluster finishes with nothing lost or doubled, and
no bot outlives its coordinator on a worker by more than a short bound.

Real `dask scheduler` and `dask worker` processes on loopback, real bots in the user's default
sandbox (``auto``), the coordinator as a `sevenrocks tournament` process.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from sevenrocks.server.cluster.executor import LEASE_S
from sevenrocks.server.events.store import Store

from ..scale.conftest import is_launched_bot
from .dask_procs import DaskCluster, coordinator, event_toml, stored, wait_until

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
pytest.importorskip("distributed")

#: 3 entrants, every seating of each, per deal.
PER_DEAL = 6
DEALS = 4


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[DaskCluster]:
    c = DaskCluster(tmp_path)
    c.start_scheduler()
    c.start_worker()
    c.start_worker()
    try:
        c.wait_for_workers(2)
        yield c
    finally:
        c.close()


def run_to_the_end(config: Path, db: Path, out: Path, cluster: DaskCluster, timeout: float = 300) -> float:
    """The same command again; it must finish (exit 0) within ``timeout``. Returns its wall time."""
    start = time.monotonic()
    again = coordinator(config, db, out, cluster.address)
    try:
        text, _ = again.communicate(timeout=timeout)
    except Exception:
        again.kill()
        text, _ = again.communicate()
        _dump(cluster)
        raise AssertionError(f"the same command did not finish within {timeout:g} s:\n{text[-3000:]}") from None
    assert again.returncode == 0, text[-3000:]
    return time.monotonic() - start


def all_once(db: Path) -> None:
    ids = stored(db)
    assert len(ids) == len(set(ids)) == PER_DEAL * DEALS


def start_event(cluster: DaskCluster, tmp_path: Path) -> tuple[Path, Path, Path, subprocess.Popen[str]]:
    """The coordinator started, once it stored two matches and its bots run on the workers."""
    config, db, out = event_toml(tmp_path / "e.toml", DEALS), tmp_path / "e.db", tmp_path / "out"
    first = coordinator(config, db, out, cluster.address)
    wait_until(lambda: len(stored(db)) >= 2 and bool(cluster.bots()), 240, "matches stored and bots on workers")
    return config, db, out, first


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_a_stopped_coordinator_leaves_no_worker_blocked_and_the_same_command_finishes(
        cluster: DaskCluster, tmp_path: Path, sig: signal.Signals) -> None:
    config, db, out, first = start_event(cluster, tmp_path)
    first.send_signal(sig)
    text, _ = first.communicate(timeout=120)
    assert first.returncode == 128 + sig, text[-3000:]
    assert "run the same command again to resume" in text
    gone = wait_until(lambda: not cluster.bots(), 30, "the workers' bots to stop after the coordinator stopped")
    before = len(stored(db))
    took = run_to_the_end(config, db, out, cluster)
    all_once(db)
    print(f"{sig.name}: {before} stored at the stop, bots gone {gone:.1f} s later, the rest in {took:.1f} s")


def test_kill_9_of_the_coordinator_stops_its_bots_on_the_workers_within_the_lease(
        cluster: DaskCluster, tmp_path: Path) -> None:
    config, db, out, first = start_event(cluster, tmp_path)
    first.kill()
    first.communicate(timeout=60)
    gone = wait_until(lambda: not cluster.bots(), LEASE_S + 30, "the workers' bots to stop after kill -9")
    took = run_to_the_end(config, db, out, cluster)
    all_once(db)
    print(f"kill -9: bots gone {gone:.1f} s later, the rest in {took:.1f} s")


def test_the_scheduler_lost_ends_the_coordinator_with_one_line_and_a_restarted_cluster_resumes(
        cluster: DaskCluster, tmp_path: Path) -> None:
    config, db, out, first = start_event(cluster, tmp_path)
    cluster.kill_scheduler()
    text, _ = first.communicate(timeout=180)
    assert first.returncode != 0
    assert "Traceback" not in text, text[-3000:]
    said = [line for line in text.splitlines() if "lost the Dask scheduler" in line]
    assert len(said) == 1, text[-3000:]
    assert "run the same command again to resume" in said[0]
    start = time.monotonic()
    cluster.start_scheduler()
    with cluster.restarting():
        took = run_to_the_end(config, db, out, cluster)
    all_once(db)
    print(f"scheduler killed: the coordinator said so; restarted and finished in {time.monotonic() - start:.1f} s "
          f"(the run {took:.1f} s)")


def _dump(cluster: DaskCluster) -> None:
    import shutil
    import subprocess
    import sys

    import psutil
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    for w in cluster.workers:
        for ch in psutil.Process(w.pid).children():
            print(subprocess.run([spy, "dump", "--pid", str(ch.pid)], capture_output=True, text=True).stdout)


def test_a_worker_killed_mid_event_loses_and_doubles_nothing(cluster: DaskCluster, tmp_path: Path) -> None:
    config, db, out, first = start_event(cluster, tmp_path)
    victim = cluster.workers[0]
    start = time.monotonic()
    os.killpg(victim.pid, signal.SIGKILL)  # the nanny, the worker and its bots: a machine gone
    text, _ = first.communicate(timeout=300)
    assert first.returncode == 0, text[-3000:]
    all_once(db)
    print(f"worker killed: the event finished {time.monotonic() - start:.1f} s later")


def test_capacity_follows_the_workers_present(tmp_path: Path) -> None:
    """A worker that joins mid-event is admitted and gets matches: its threads add to those in flight."""
    c = DaskCluster(tmp_path)
    deals = 30  # long enough (180 short matches) for a worker started mid-event to join
    try:
        c.start_scheduler()
        c.start_worker(nthreads=1)
        config, db, out = event_toml(tmp_path / "e.toml", deals), tmp_path / "e.db", tmp_path / "out"
        first = coordinator(config, db, out, c.address)
        wait_until(lambda: len(stored(db)) >= 2, 240, "two matches stored")
        c.start_worker(nthreads=2)
        text, _ = first.communicate(timeout=600)
    finally:
        c.close()
    assert first.returncode == 0, text[-3000:]
    ids = stored(db)
    assert len(ids) == len(set(ids)) == PER_DEAL * deals
    with Store(db) as store:
        by_worker = Counter(w for w, _s, _e in store.where_run().values())
    assert len(by_worker) == 2, (by_worker, text[-2000:])
    print(f"matches per worker: {dict(by_worker)}")


def test_a_frozen_worker_holds_no_match_until_the_scheduler_gives_up_on_it(tmp_path: Path) -> None:
    """On loopback: a worker whose processes are stopped (SIGSTOP: a frozen machine; its
    kernel still answers, so the scheduler gives up on it only at its worker-ttl, raised here to 10
    minutes) is left out by the coordinator after 10 s of silence and its matches are played on the
    other worker: the event, in duplicate phases, finishes while it is still frozen."""
    from .test_cluster_partition import event

    c = DaskCluster(tmp_path)
    c.env = {**c.env, "DASK_DISTRIBUTED__SCHEDULER__WORKER_TTL": "600s"}
    frozen = None
    try:
        c.start_scheduler()
        c.start_worker()
        c.start_worker()
        c.wait_for_workers(2)
        config, db = event(tmp_path / "e.toml", 3, "duplicates"), tmp_path / "e.db"
        first = coordinator(config, db, tmp_path / "out", c.address)
        victim = c.workers[0]
        from distributed import Client

        with Client(c.address, timeout=60) as client:
            (address,) = [a for a, w in client.scheduler_info(n_workers=-1)["workers"].items() if w["name"] == "w0"]

            def playing() -> bool:  # frozen mid-match (not between two phases): its match must be played again
                return (len(stored(db)) >= 2 and bool(client.processing(workers=[address])[address])
                        and any(is_launched_bot(p) for p in psutil.Process(victim.pid).children(recursive=True)))

            wait_until(playing, 240, "two matches stored and a match on the first worker")
            os.killpg(victim.pid, signal.SIGSTOP)
        frozen = time.monotonic()
        try:
            text, _ = first.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            os.killpg(first.pid, signal.SIGKILL)
            text, _ = first.communicate()
            raise AssertionError(f"the event waited for the frozen worker ({len(stored(db))} of 18 stored):\n"
                                 f"{text[-3000:]}") from None
        took = time.monotonic() - frozen
    finally:
        if frozen is not None:
            os.killpg(c.workers[0].pid, signal.SIGCONT)
        c.close()
    assert first.returncode == 0, text[-3000:]
    ids = stored(db)
    assert len(ids) == len(set(ids)) == 18
    assert sum("is left out" in line and "has not heard from it" in line for line in text.splitlines()) == 1, text
    print(f"frozen worker: the event finished {took:.1f} s after the freeze")
