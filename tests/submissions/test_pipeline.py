"""The pipeline on real bundles: unpack, a sandboxed build, the conformance check in bubblewrap, the states."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sevenrocks.server.events.store import Store
from sevenrocks.server.submissions import ledger
from sevenrocks.server.submissions.authors import add_author
from sevenrocks.server.submissions.build import BuildLimits
from sevenrocks.server.submissions.pipeline import Pipeline, SubmitSettings, entrant_of

from . import bundles

pytestmark = pytest.mark.usefixtures("bwrap")



def _submit(store: Store, tmp_path: Path, folder: Path, entrant: str = "bot") -> int:
    upload = tmp_path / f"{folder.name}.tgz"
    upload.write_bytes(bundles.tarball(folder))
    return ledger.create(store.db, "alice", entrant, upload)


@pytest.fixture
def league_db(tmp_path: Path) -> Store:
    store = Store(tmp_path / "league.db", writer=False)
    add_author(store.db, "alice")
    return store


def test_a_good_bot_becomes_active_from_its_snapshot(league_db: Store, tmp_path: Path) -> None:
    sid = _submit(league_db, tmp_path, bundles.sdk_bot(tmp_path / "sdk"))
    pipeline = Pipeline(league_db.path, SubmitSettings(), "auto", 1000)
    assert pipeline.work(sid)
    sub = ledger.get(league_db.db, sid)
    assert sub is not None and sub.state == "active" and sub.reason is None
    assert "sandbox: bwrap" in (sub.check_log or "") and "PASS: 11 phases" in (sub.check_log or "")
    entrant = entrant_of(sub)
    assert entrant.command is not None and str(pipeline.snapshot_root) in entrant.command[-1]
    # The snapshot is read-only: what was checked is what plays.
    assert not os.access(Path(entrant.command[-1]).parent, os.W_OK) or os.geteuid() == 0
    assert Path(entrant.command[-1]).stat().st_mode & 0o222 == 0


def test_a_bot_that_fails_the_check_is_rejected_with_its_log(league_db: Store, tmp_path: Path) -> None:
    sid = _submit(league_db, tmp_path, bundles.bad_bot(tmp_path / "bad"))
    assert not Pipeline(league_db.path, SubmitSettings(), "auto", 1000).work(sid)
    sub = ledger.get(league_db.db, sid)
    assert sub is not None and sub.state == "rejected" and (sub.reason or "").startswith("validation:")
    assert "FAIL:" in (sub.check_log or "") and "not a double-six tile" in (sub.check_log or "")
    assert ledger.active(league_db.db) == []


def test_the_build_runs_in_the_sandbox_and_its_output_is_kept(league_db: Store, tmp_path: Path) -> None:
    sid = _submit(league_db, tmp_path, bundles.built_bot(tmp_path / "built"))
    assert Pipeline(league_db.path, SubmitSettings(), "auto", 1000).work(sid)
    sub = ledger.get(league_db.db, sid)
    assert sub is not None and "wrote table.json" in (sub.build_log or "")
    assert (Path(sub.folder or "") / "table.json").is_file()


def _build_bundle(folder: Path, build: str) -> Path:
    bundles.sdk_bot(folder)
    (folder / "sevenrocks-bot.toml").write_text(f"command = [\"python3\", \"bot.py\"]\nbuild = {json.dumps(build)}\n")
    return folder


def test_a_build_has_no_network(league_db: Store, tmp_path: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    build = f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=5)'"
    sid = _submit(league_db, tmp_path, _build_bundle(tmp_path / "net", build))
    assert not Pipeline(league_db.path, SubmitSettings(), "auto", 1000).work(sid)
    sub = ledger.get(league_db.db, sid)
    assert sub is not None and sub.state == "rejected" and (sub.reason or "").startswith("build:")
    assert "ConnectionRefusedError" in (sub.build_log or "") or "Network is unreachable" in (sub.build_log or "")
    listener.close()


@pytest.mark.parametrize("build, limits, words", [
    ("head -c 300000000 /dev/zero > fill.bin", BuildLimits(disk_mb=8), "more than 8 MiB"),
    ("for i in $(seq 100); do head -c 1000000 /dev/zero > f$i; done", BuildLimits(disk_mb=8), "more than 8 MiB"),
    ("sleep 60", BuildLimits(time_s=1.5), "longer than 1.5 s"),
    # Limits of the whole build, not of each process. Many processes, each one small:
    ("for i in $(seq 300); do sleep 8 & done; wait", BuildLimits(processes=64), "more than 64 processes"),
    # Three processes of 150 MiB each: each under the limit, together over it.
    ("for i in 1 2 3; do python3 -c 'import time; b = b\"x\" * (150 * 2**20); time.sleep(8)' & done; wait",
     BuildLimits(memory_mb=300), "more than 300 MiB of memory"),
])
def test_a_build_past_its_limits_is_stopped(league_db: Store, tmp_path: Path, build: str, limits: BuildLimits,
                                            words: str) -> None:
    sid = _submit(league_db, tmp_path, _build_bundle(tmp_path / "greedy-build", build))
    started = time.monotonic()
    assert not Pipeline(league_db.path, SubmitSettings(build=limits), "auto", 1000).work(sid)
    assert time.monotonic() - started < 30
    sub = ledger.get(league_db.db, sid)
    assert sub is not None and sub.state == "rejected" and words in (sub.reason or ""), sub.reason


CHILD = textwrap.dedent("""
    import sys
    from pathlib import Path
    from sevenrocks.server.submissions.pipeline import Pipeline, SubmitSettings
    Pipeline(Path(sys.argv[1]), SubmitSettings(), "auto", 1000).work(int(sys.argv[2]))
""")


@pytest.mark.parametrize("killed_in", ["unpacked", "built"])
def test_kill_9_mid_pipeline_loses_nothing_and_is_never_half_active(league_db: Store, tmp_path: Path,
                                                                    killed_in: str) -> None:
    """Killed while building (state unpacked) or validating (state built): resumed from the upload."""
    folder = _build_bundle(tmp_path / "slow", "sleep 3; python3 -c 'print(1)'")
    sid = _submit(league_db, tmp_path, folder)
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(league_db.path), str(sid)])
    deadline = time.monotonic() + 60
    while (sub := ledger.get(league_db.db, sid)) is not None and sub.state != killed_in:
        assert time.monotonic() < deadline and child.poll() is None, sub.state
        time.sleep(0.02)
    time.sleep(0.3)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    sub = ledger.get(league_db.db, sid)
    assert sub is not None and sub.state == killed_in and ledger.active(league_db.db) == []
    pipeline = Pipeline(league_db.path, SubmitSettings(), "auto", 1000)
    assert pipeline.resume(league_db.db) == [sid]
    assert pipeline.work(sid)
    assert [s.id for s in ledger.active(league_db.db)] == [sid]


def test_a_package_bundle_runs_with_python_dash_m(league_db: Store, tmp_path: Path) -> None:
    """The bot starts in its bundle (docs/league.md), so ``python3 -m PACKAGE`` imports from it."""
    folder = tmp_path / "pkg"
    (folder / "heavybot").mkdir(parents=True)
    (folder / "heavybot" / "__init__.py").write_text("")
    (folder / "heavybot" / "__main__.py").write_text(bundles.SDK_BOT)
    (folder / "sevenrocks-bot.toml").write_text('command = "python3 -m heavybot"\n')
    sid = _submit(league_db, tmp_path, folder)
    assert Pipeline(league_db.path, SubmitSettings(), "auto", 1000).work(sid)
    sub = ledger.get(league_db.db, sid)
    entrant = entrant_of(sub)
    assert sub is not None and entrant.pin is not None and entrant.pin.workdir == sub.folder and entrant.env == ()


@pytest.mark.slow
def test_the_node_kit_submits_with_its_node_modules_and_passes(league_db: Store, tmp_path: Path) -> None:
    """The Node.js kit as its README builds it (``npm ci`` by the author: the build has no network), with a
    manifest: its ``bot.js`` becomes a path in the snapshot, node_modules beside it."""
    import shutil

    from ..kits.test_kits import NODE_KIT, build, need

    need("node", "the Node.js kit")
    need("npm", "the Node.js kit")
    stamp = NODE_KIT / "node_modules" / ".package-lock.json"
    if not stamp.exists() or stamp.stat().st_mtime < (NODE_KIT / "package-lock.json").stat().st_mtime:
        build(["npm", "ci", "--no-audit", "--no-fund"], NODE_KIT, 600)
    folder = tmp_path / "node"
    shutil.copytree(NODE_KIT, folder, symlinks=True)
    (folder / "sevenrocks-bot.toml").write_text('command = ["node", "bot.js"]\nprotocol = "grpc"\n')
    sid = _submit(league_db, tmp_path, folder)
    assert Pipeline(league_db.path, SubmitSettings(), "auto", 1000).work(sid)
    sub = ledger.get(league_db.db, sid)
    assert sub is not None and "PASS: 11 phases" in (sub.check_log or "")


def test_a_submission_the_pipeline_fails_on_does_not_stop_the_queue(league_db: Store, tmp_path: Path) -> None:
    """The upload of the first is gone (an OSError the pipeline does not expect); the second, not an
    archive, is still taken to its rejection, and the first is left where it was for the next start."""
    import asyncio

    lost = tmp_path / "lost.tgz"
    lost.write_bytes(b"")
    first = ledger.create(league_db.db, "alice", "bot", lost)
    lost.unlink()
    junk = tmp_path / "junk.tgz"
    junk.write_bytes(b"hello, world\n" * 10)
    second = ledger.create(league_db.db, "alice", "bot", junk)
    said: list[str] = []

    async def run() -> None:
        pipeline = Pipeline(league_db.path, SubmitSettings(), "auto", 1000, say=said.append)
        pipeline.start()
        for sid in (first, second):
            pipeline.queue.put_nowait(sid)
        for _ in range(200):
            sub = ledger.get(league_db.db, second)
            if sub is not None and sub.state == "rejected":
                break
            await asyncio.sleep(0.05)
        await pipeline.stop()

    asyncio.run(run())
    rejected, kept = ledger.get(league_db.db, second), ledger.get(league_db.db, first)
    assert rejected is not None and rejected.state == "rejected" and "not a readable" in (rejected.reason or "")
    assert kept is not None and kept.state == "received"
    assert any(f"submission {first}: the pipeline failed on it (FileNotFoundError" in s for s in said), said


def test_a_check_killed_by_a_signal_never_passes(league_db: Store, tmp_path: Path) -> None:
    """The OOM killer (or anyone) ends the check's process with SIGKILL: a negative return code, which
    is a failed check with a log that says so, never a pass (a hand-made mutant counted it as one)."""
    import threading

    from sevenrocks.server.submissions.manifest import Manifest

    folder = bundles.sdk_bot(tmp_path / "sdk")
    pipeline = Pipeline(league_db.path, SubmitSettings(), "auto", 1000)
    result: list[tuple[bool, str]] = []
    worker = threading.Thread(target=lambda: result.append(pipeline.validate(Manifest(("python3", "bot.py")),
                                                                             folder)))
    worker.start()
    deadline = time.monotonic() + 60
    killed = False
    while not killed and time.monotonic() < deadline:
        for entry in os.listdir("/proc"):
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent = int(stat[stat.rfind(")") + 2:].split()[1])
            if parent == os.getpid() and b"sevenrocks.server.submissions.validate" in cmd:
                time.sleep(0.5)  # well into its phases
                os.kill(int(entry), signal.SIGKILL)
                killed = True
                break
        time.sleep(0.05)
    worker.join(120)
    assert killed and result
    ok, log = result[0]
    assert not ok and "killed by signal 9" in log.splitlines()[0], log[:500]


def test_a_build_has_a_private_tmp_and_a_memory_limit(tmp_path: Path) -> None:
    """docs/league.md: the build's /tmp is its own (the host's is not seen, and nothing it writes there
    is left on the host), and past build_memory_mb it fails (a claim no test held before)."""
    import tempfile

    from sevenrocks.server.submissions.build import run_build

    host = Path(tempfile.mkdtemp(prefix="sevenrocks-host-tmp-"))
    own = f"sevenrocks-build-own-{os.getpid()}"
    folder = bundles.sdk_bot(tmp_path / "b")
    try:
        done = run_build(folder, f"test ! -e {host} && echo mine > /tmp/{own} && cat /tmp/{own}", BuildLimits(),
                         True, ())
        assert done.ok and "mine" in done.log, done.log
        assert not Path("/tmp", own).exists()
    finally:
        host.rmdir()
    eat = "python3 -c 'x = bytearray(400 * 2**20); print(len(x))'"
    assert run_build(folder, eat, BuildLimits(memory_mb=1024), True, ()).ok  # within the limit
    done = run_build(folder, eat, BuildLimits(memory_mb=128), True, ())
    assert not done.ok, done.log  # MemoryError under RLIMIT_AS; killed under a cgroup limit
