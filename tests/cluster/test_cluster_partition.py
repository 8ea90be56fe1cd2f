"""A worker machine cut off from the network mid-event: the event does not wait for
it, and the worker, under docs/scale.md's supervisor line run verbatim, comes back and plays again.

A scheduler and two workers, each in a network namespace of its own (tests/cluster/test_cluster_netns.py's
``Network``); the coordinator in this namespace. Worker A runs under the documented shell loop, worker B
as a plain `dask worker`. Mid-event, A's link goes down (nothing reaches it, no error comes back, as with
a pulled cable). The scheduler's own notice is raised to 10 minutes (its TCP timeout and worker-ttl), so
an event that waited for the scheduler to give up on A could not finish while the link is down; with
duplicate phases (``fresh_process = "duplicates"``) every match of a phase would wait for A's. Checked:
the event finishes, every match stored once, while A is still cut off, and the coordinator said in one
line that A was left out; A's `dask worker` exited (Dask does not reconnect a worker) and the supervisor
started it again; once the link is back it registers as a new worker, and the next event gives it matches.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from sevenrocks.server.events.store import Store

from ..sandbox.helpers import write_config
from ..scale.conftest import is_launched_bot
from .dask_procs import DaskCluster, coordinator, stored, wait_until
from .test_cluster_netns import Network, _listening

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
pytest.importorskip("distributed")

DOCS = Path(__file__).parent.parent.parent / "docs" / "scale.md"
#: The scheduler gives up on a silent worker only after this (its TCP timeout and worker-ttl).
SCHEDULER_NOTICE_S = 600
DEALS = 3
PER_DEAL = 6


def supervisor_line() -> str:
    """The one supervisor line docs/scale.md gives for a worker machine without systemd."""
    found = [line for line in DOCS.read_text().splitlines() if line.startswith("while true; do dask worker ")]
    assert len(found) == 1, found
    return found[0]


def event(path: Path, deals: int, fresh: str) -> Path:
    entrants = [{"name": "greedy", "bot": "greedy"}, {"name": "defensive", "bot": "defensive"},
                {"name": "greedy-b", "bot": "greedy"}]
    return write_config(path, entrants, sandbox={"mode": "off"}, bots={"fresh_process": fresh}, name="cut",
                        format="self", deals=deals, seed=11, target=100, concurrency=2)


def workers_at(cluster: DaskCluster, host: str) -> set[str]:
    """The addresses the scheduler lists on ``host``."""
    from distributed import Client

    with Client(cluster.address, timeout=60) as client:
        info = client.scheduler_info(n_workers=-1)
    return {a for a in info["workers"] if a.startswith(f"tcp://{host}:")}


@pytest.fixture
def net() -> Iterator[Network]:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("needs root and ip")
    network = Network()
    try:
        yield network
    finally:
        network.close()


def test_a_cut_off_worker_holds_no_match_and_rejoins_under_the_documented_supervisor(
        net: Network, tmp_path: Path) -> None:
    wrap, host = net.space()
    # The documented port: the scheduler has a network namespace, and so a port 8786, of its own.
    cluster = DaskCluster(tmp_path, port=8786, host=host, wrap=wrap)
    cluster.env = {**cluster.env, "DASK_DISTRIBUTED__COMM__TIMEOUTS__TCP": f"{SCHEDULER_NOTICE_S}s",
                   "DASK_DISTRIBUTED__SCHEDULER__WORKER_TTL": f"{SCHEDULER_NOTICE_S}s"}
    cluster.start_scheduler()
    cluster.env = dict(os.environ)  # the workers keep Dask's defaults
    supervised: subprocess.Popen[bytes] | None = None
    tmp = Path(tempfile.mkdtemp(prefix="srsup-", dir="/tmp"))
    os.chmod(tmp, 0o1777)
    try:
        wait_until(lambda: _listening(host, cluster.port), 60, "the scheduler to listen")
        wrap_a, host_a = net.space()
        line = supervisor_line().replace("SCHEDULER_HOST", host)
        env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "TMPDIR": str(tmp),
               "SEVENROCKS_SNAPSHOTS": str(tmp / "snapshots")}
        log = tmp_path / "supervised.log"
        supervised = subprocess.Popen([*wrap_a, "sh", "-c", line], stdout=subprocess.DEVNULL, stderr=log.open("ab"),
                                      env=env, start_new_session=True)
        wrap_b, host_b = net.space()
        cluster.start_worker(wrap=wrap_b, host=host_b)
        cluster.wait_for_workers(2)
        (first_a,) = workers_at(cluster, host_a)

        config = event(tmp_path / "e.toml", DEALS, "duplicates")
        db = tmp_path / "e.db"
        run = coordinator(config, db, tmp_path / "out", cluster.address)
        sup = psutil.Process(supervised.pid)
        wait_until(lambda: len(stored(db)) >= 2 and any(is_launched_bot(p) for p in sup.children(recursive=True)),
                   300, "two matches stored and bots playing on worker A")
        net.link(1, up=False)
        cut = time.monotonic()
        try:
            text, _ = run.communicate(timeout=SCHEDULER_NOTICE_S - 200)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            text, _ = run.communicate()
            raise AssertionError(f"the event waited for the cut-off worker ({len(stored(db))} of "
                                 f"{DEALS * PER_DEAL} stored):\n{text[-3000:]}") from None
        finished = time.monotonic() - cut
        # Still cut off when the event ended; the worker's own `dask worker` gave up meanwhile (or will).
        assert run.returncode == 0, text[-3000:]
        ids = stored(db)
        assert len(ids) == len(set(ids)) == DEALS * PER_DEAL
        left_out = [ln for ln in text.splitlines() if "is left out" in ln]
        assert len(left_out) == 1 and first_a in left_out[0] and "has not heard from it" in left_out[0], text[-3000:]

        # A's dask worker exits without its scheduler; the supervisor starts it again, and once the link
        # is back it joins as a new worker (the scheduler may still list the old one).
        # (A `dask worker` started while the link is down gives up after Dask's 30 s connect timeout and
        # exits too; the loop keeps starting it.)
        wait_until(lambda: "End worker" in log.read_text(), 180, "worker A's dask worker to exit")
        assert supervised.poll() is None  # the supervisor is still there
        net.link(1, up=True)
        rejoined = wait_until(lambda: bool(workers_at(cluster, host_a) - {first_a}), 180,
                              "worker A to register again")
        (second_a,) = workers_at(cluster, host_a) - {first_a}

        db2 = tmp_path / "e2.db"
        again = coordinator(event(tmp_path / "e2.toml", 2, "never"), db2, tmp_path / "out2", cluster.address)
        text2, _ = again.communicate(timeout=600)
        assert again.returncode == 0, text2[-3000:]
        with Store(db2) as store:
            workers = {w for w, _s, _e in store.where_run().values()}
        assert any(w and w.endswith(second_a) for w in workers), (second_a, workers, text2[-2000:])
        print(f"cut off: the event finished {finished:.1f} s after the cut (scheduler's notice "
              f"{SCHEDULER_NOTICE_S} s); worker A registered again {rejoined:.1f} s after the link came back")
    finally:
        if supervised is not None:
            try:
                os.killpg(supervised.pid, signal.SIGTERM)
                supervised.wait(30)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(supervised.pid, signal.SIGKILL)
        cluster.close()
        shutil.rmtree(tmp, ignore_errors=True)
