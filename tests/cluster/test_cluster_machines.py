"""Workers that are other machines in what they see: two `dask worker`s in mount namespaces of their own
(``unshare --mount``), one seeing another program at the path of an entrant's bot file, one without
bubblewrap, and a third with another sevenrocks version. The event asks for bwrap: the worker without
it and the one of another version are left out with a warning each, the first
runs the registered bot (shipped, verified by digest), every match names its worker and sandbox, and
the bots' logs (a crash included) come home to the coordinator's --out/logs.

The processes share loopback here, not a network of their own: tests/cluster/test_cluster_netns.py
runs the same machines in network namespaces (see docs/scale.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from sevenrocks.server.events.store import Store

from .dask_procs import DaskCluster, coordinator, event_toml

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
pytest.importorskip("distributed")

REGISTERED = '''import runpy
runpy.run_module("sevenrocks.bots.greedy", run_name="__main__")
'''
#: What the first worker finds at the same path: it would crash at once (and be withdrawn).
IMPOSTOR = '''import sys
print("impostor", flush=True)
sys.exit(3)
'''


def bot_files(folder: Path) -> tuple[Path, Path, Path]:
    """The registered bot file, the program a worker finds at its path, and an empty stand-in for
    /usr/bin/bwrap on the machine without bubblewrap."""
    bot = folder / "bots" / "mine.py"
    bot.parent.mkdir()
    bot.write_text(REGISTERED)
    impostor = folder / "impostor.py"
    impostor.write_text(IMPOSTOR)
    no_bwrap = folder / "no-bwrap"
    no_bwrap.write_text("")
    return bot, impostor, no_bwrap


def test_workers_run_the_registered_bot_in_the_sandbox_asked_and_send_their_logs_home(tmp_path: Path) -> None:
    if os.geteuid() != 0 or shutil.which("unshare") is None or not Path("/usr/bin/bwrap").exists():
        pytest.skip("needs root, unshare and bubblewrap")
    here = Path(__file__).parent.parent / "events" / "bots"
    bot, impostor, no_bwrap = bot_files(tmp_path)
    entrants = [{"name": "greedy", "bot": "greedy"}, {"name": "mine", "command": [sys.executable, str(bot)]},
                {"name": "crasher", "command": [sys.executable, str(here / "crash_once_bot.py")],
                 "env": {"CRASH_AFTER": "30", "CRASH_MARKER": str(tmp_path / "crashed")}}]
    config = event_toml(tmp_path / "e.toml", 1, mode="bwrap", entrants=entrants)
    cluster = DaskCluster(tmp_path)
    try:
        cluster.start_scheduler()
        cluster.start_worker(binds={bot: impostor})
        cluster.start_worker(binds={Path("/usr/bin/bwrap"): no_bwrap})
        # A machine with another sevenrocks: its installed metadata says 9.9.9.
        other = tmp_path / "other-install" / "sevenrocks-9.9.9.dist-info"
        other.mkdir(parents=True)
        (other / "METADATA").write_text("Metadata-Version: 2.1\nName: sevenrocks\nVersion: 9.9.9\n")
        cluster.start_worker(extra_env={"PYTHONPATH": str(other.parent)})
        cluster.wait_for_workers(3)
        run = coordinator(config, tmp_path / "e.db", tmp_path / "out", cluster.address)
        text, _ = run.communicate(timeout=600)
    finally:
        cluster.close()
    assert run.returncode == 0, text[-3000:]
    left_out = sorted(line for line in text.splitlines() if "is left out" in line)
    assert len(left_out) == 2, text[-3000:]
    assert any("--sandbox bwrap" in line for line in left_out), left_out
    assert any("its sevenrocks version is 9.9.9, the coordinator's is" in line for line in left_out), left_out
    with Store(tmp_path / "e.db") as store:
        matches = store.matches()
        where = store.where_run()
        withdrawn = {name: n for _e, name, _r, n in store.withdrawals()}
    # The crasher crashes in every match here (its marker file lies outside what bwrap lets it write)
    # and is withdrawn after three; no impostor ran: its exit at start would have faulted "mine".
    faults = {(m.seats[m.fault.seat], m.fault.cause.value) for m in matches if m.fault is not None}
    assert faults == {("crasher", "crash")}, faults
    # Whether it crashes in every match (then it is withdrawn after three) depends on where its
    # working folder lies; either way every match is stored or charged to its withdrawal.
    assert set(withdrawn) <= {"crasher"} and len(matches) + withdrawn.get("crasher", 0) == 6
    workers = {w for w, _s, _e in where.values()}
    assert len(workers) == 1 and all(s == "bwrap" for _w, s, _e in where.values()), where
    logs = tmp_path / "out" / "logs"
    crash_log = (logs / "crasher.log").read_text()
    assert f"--- from worker {next(iter(workers))} ---" in crash_log
    assert "impostor" not in (logs / "mine.log").read_text()


def test_a_worker_with_an_edited_reference_bot_and_the_same_version_is_left_out(tmp_path: Path) -> None:
    """A `dask worker` that imports sevenrocks' bots from a copy whose greedy.py was
    edited (the version still the same) is left out with one line naming the file, and the event's
    results equal the single-machine run's."""
    from ..scale.conftest import results
    from .test_worker_code import bots_copy

    edited = Path(tempfile.mkdtemp(prefix="sr-edited-", dir="/tmp"))
    try:
        greedy = bots_copy(edited) / "greedy.py"
        greedy.write_text(greedy.read_text().replace("return max(moves", "return min(moves"))
        config = event_toml(tmp_path / "e.toml", 2, mode="off")
        reference = tournament_here(config, tmp_path / "local.db", tmp_path / "local-out")
        cluster = DaskCluster(tmp_path)
        try:
            cluster.start_scheduler()
            cluster.start_worker()
            cluster.start_worker(extra_env={"PYTHONPATH": str(edited)})
            cluster.wait_for_workers(2)
            run = coordinator(config, tmp_path / "e.db", tmp_path / "out", cluster.address)
            text, _ = run.communicate(timeout=600)
        finally:
            cluster.close()
    finally:
        shutil.rmtree(edited, ignore_errors=True)
    assert run.returncode == 0, text[-3000:]
    left_out = [line for line in text.splitlines() if "is left out" in line]
    assert len(left_out) == 1 and "bots/greedy.py differs" in left_out[0], text[-3000:]
    assert results(tmp_path / "e.db") == results(reference)
    with Store(tmp_path / "e.db") as store:
        workers = {w for w, _s, _e in store.where_run().values()}
    assert len(workers) == 1, workers


def tournament_here(config: Path, db: Path, out: Path) -> Path:
    """The same event on this machine alone (no --cluster): the reference results."""
    done = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "tournament", str(config), "--db", str(db),
                           "--out", str(out), "--quiet"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return db
