"""The cluster across "machines": a scheduler and two workers, each in a network namespace of its own
(``ip netns``, veth pairs on a bridge, on addresses this test creates and removes), each worker with
its own filesystem view. Worker A sees another program at an entrant's bot path and has its Python
install at another path (the coordinator's interpreter path is empty there); worker B has no
bubblewrap. The coordinator runs in this namespace and reaches them over the bridge.

Checked: an event to completion; SIGTERM of the coordinator mid-event, then the same command
finishes; the scheduler killed and restarted, then the same command resumes; the worker with the
other bot file runs the registered one; a crash's log on a worker is in the coordinator's
--out/logs; every stored match names its worker and sandbox mode (bwrap on A, rlimits on B).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sevenrocks.server.events.store import Store

from .dask_procs import DaskCluster, coordinator, event_toml, stored, wait_until
from .test_cluster_machines import bot_files

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
pytest.importorskip("distributed")


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True)


class Network:
    """A bridge in this namespace and one network namespace per member, each on a veth pair."""

    def __init__(self) -> None:
        self.tag = secrets.token_hex(2)
        self.net = f"10.{200 + secrets.randbelow(50)}.{secrets.randbelow(250)}"
        self.bridge = f"srb{self.tag}"
        self.spaces: list[str] = []
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("link", "set", self.bridge, "up")
        _ip("addr", "add", f"{self.net}.1/24", "dev", self.bridge)

    def space(self) -> tuple[list[str], str]:
        """A new namespace: the command prefix that runs in it, and its address."""
        i = len(self.spaces)
        ns, outer, inner = f"srn{self.tag}{i}", f"sr{self.tag}{i}o", f"sr{self.tag}{i}i"
        _ip("netns", "add", ns)
        self.spaces.append(ns)
        _ip("link", "add", outer, "type", "veth", "peer", "name", inner)
        _ip("link", "set", inner, "netns", ns)
        _ip("link", "set", outer, "master", self.bridge)
        _ip("link", "set", outer, "up")
        address = f"{self.net}.{i + 2}"
        _ip("-n", ns, "addr", "add", f"{address}/24", "dev", inner)
        _ip("-n", ns, "link", "set", inner, "up")
        _ip("-n", ns, "link", "set", "lo", "up")
        return ["ip", "netns", "exec", ns], address

    def link(self, i: int, up: bool) -> None:
        """Namespace ``i``'s network link down (a machine cut off: nothing reaches it, no error comes
        back) or up again."""
        _ip("-n", self.spaces[i], "link", "set", f"sr{self.tag}{i}i", "up" if up else "down")

    def close(self) -> None:
        for ns in self.spaces:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)  # its veth end goes with it
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)


@pytest.fixture
def machines(tmp_path: Path) -> Iterator[tuple[DaskCluster, Path, Path]]:
    if os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("unshare") is None:
        pytest.skip("needs root, ip and unshare")
    net = Network()
    bot, impostor, no_bwrap = bot_files(tmp_path)
    try:
        wrap, host = net.space()
        cluster = DaskCluster(tmp_path, host=host, wrap=wrap)
        cluster.start_scheduler()
        wait_until(lambda: _listening(host, cluster.port), 60, "the scheduler to listen")
        venv = Path(sys.prefix)
        moved = Path(f"/tmp/sr-install-{net.tag}")  # worker A's install path
        moved.mkdir()
        setup = (f"mount --bind {venv} {moved} && mount -t tmpfs tmpfs {venv}")
        wrap_a, host_a = net.space()
        cluster.start_worker(wrap=wrap_a, host=host_a, binds={bot: impostor}, setup=setup,
                             python=str(moved / "bin" / "python"))
        wrap_b, host_b = net.space()
        cluster.start_worker(wrap=wrap_b, host=host_b, binds={Path("/usr/bin/bwrap"): no_bwrap})
        try:
            cluster.wait_for_workers(2)  # the test asks what became of each: both must be there
            yield cluster, bot, moved
        finally:
            cluster.close()
            shutil.rmtree(moved, ignore_errors=True)
    finally:
        net.close()


def _listening(host: str, port: int) -> bool:
    import socket

    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def _finish(config: Path, db: Path, out: Path, cluster: DaskCluster) -> tuple[str, float]:
    start = time.monotonic()
    run = coordinator(config, db, out, cluster.address)
    text, _ = run.communicate(timeout=600)
    assert run.returncode == 0, text[-3000:]
    return text, time.monotonic() - start


def _mid_event(config: Path, db: Path, out: Path, cluster: DaskCluster) -> subprocess.Popen[str]:
    run = coordinator(config, db, out, cluster.address)
    wait_until(lambda: len(stored(db)) >= 2, 300, "two matches stored")
    return run


def test_the_cluster_across_network_namespaces(machines: tuple[DaskCluster, Path, Path], tmp_path: Path) -> None:
    cluster, bot, moved = machines
    here = Path(__file__).parent.parent / "events" / "bots"
    entrants = [{"name": "greedy", "bot": "greedy"}, {"name": "mine", "command": [sys.executable, str(bot)]},
                {"name": "defensive", "bot": "defensive"}]
    config = event_toml(tmp_path / "e.toml", 4, mode="auto", entrants=entrants)
    db, out = tmp_path / "e.db", tmp_path / "out"
    timings: dict[str, float] = {}

    # SIGTERM of the coordinator mid-event, then the same command finishes.
    first = _mid_event(config, db, out, cluster)
    first.send_signal(signal.SIGTERM)
    text, _ = first.communicate(timeout=120)
    assert first.returncode == 143, text[-3000:]
    admitted = [line for line in text.splitlines() if line.startswith("worker ")]
    assert any("sandbox bwrap" in line for line in admitted) and any("sandbox rlimits" in line for line in admitted), text
    _, timings["after SIGTERM"] = _finish(config, db, out, cluster)
    assert len(stored(db)) == len(set(stored(db))) == 24

    # The scheduler killed mid-event and restarted: one line, then the same command resumes.
    db2 = tmp_path / "e2.db"
    second = _mid_event(config, db2, tmp_path / "out2", cluster)
    cluster.kill_scheduler()
    text, _ = second.communicate(timeout=180)
    assert second.returncode != 0 and "Traceback" not in text, text[-3000:]
    assert sum("lost the Dask scheduler" in line for line in text.splitlines()) == 1, text[-3000:]
    start = time.monotonic()
    cluster.start_scheduler()
    wait_until(lambda: _listening(cluster.host, cluster.port), 60, "the scheduler to listen again")
    with cluster.restarting():
        _, timings["after the scheduler's restart"] = _finish(config, db2, tmp_path / "out2", cluster)
    timings["scheduler restart to the end"] = time.monotonic() - start
    assert len(stored(db2)) == len(set(stored(db2))) == 24

    # A crash on a worker: its log comes home.
    crash = event_toml(tmp_path / "c.toml", 1, mode="auto", entrants=[
        {"name": "greedy", "bot": "greedy"},
        {"name": "crasher", "command": [sys.executable, str(here / "crashing_bot.py")], "env": {"CRASH_AFTER": "20"}},
        {"name": "defensive", "bot": "defensive"}])
    _finish(crash, tmp_path / "c.db", tmp_path / "out3", cluster)
    crash_log = (tmp_path / "out3" / "logs" / "crasher.log").read_text()
    assert "--- from worker " in crash_log

    for path in (db, db2, tmp_path / "c.db"):
        with Store(path) as store:
            where = store.where_run()
            matches = store.matches()
        assert all(w and s in ("bwrap", "rlimits") for w, s, _e in where.values()), where
        # Worker A ran "mine" from the shipped copy: the impostor at its path would exit at once.
        assert not [m for m in matches if m.fault is not None and m.seats[m.fault.seat] == "mine"]
    with Store(db) as store:
        modes = {s for _w, s, _e in store.where_run().values()}
    assert modes == {"bwrap", "rlimits"}, modes
    print("network namespaces:", {k: f"{v:.1f} s" for k, v in timings.items()})
