"""Limits a long-running referee or cluster keeps: open streams, idle arenas; the --cluster command line."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.sdk.rules.replay import verify_lines
from sevenrocks.server.cluster import executor as cluster
from sevenrocks.server.referee.faults import TimeControl
from sevenrocks.server.sandbox.launch import BotProcess
from sevenrocks.server.referee import Referee
from sevenrocks.server.events.schedule import build_schedule
from sevenrocks.server.events.store import Store

from .conftest import is_launched_bot, small_event


def test_streams_beyond_max_streams_are_refused_and_retry(tmp_path: Path) -> None:
    async def main() -> None:
        # Two entrants (a token holds one stream at most), room for one stream.
        tokens = {"a": "token-a-0123456789", "b": "token-b-0123456789"}
        referee = Referee(tokens, TimeControl(per_move_ms=5000, connect_timeout_s=20), max_streams=1)
        port = await referee.start()
        bots = [BotProcess().start("greedy", f"127.0.0.1:{port}", tokens[n], tmp_path / f"bot-{n}.log", entrant=n)
                for n in tokens]
        try:
            deadline = time.monotonic() + 20
            while not referee.connected() and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            first = referee.connected()
            assert len(first) == 1
            (name,) = first
            logs = ""
            deadline = time.monotonic() + 30
            while "limit of 1 bot streams" not in logs and time.monotonic() < deadline:
                await asyncio.sleep(0.1)  # the other bot is refused, backs off and tries again
                logs = "".join(p.read_text() for p in tmp_path.glob("bot-*.log"))
            assert "limit of 1 bot streams" in logs
            m = await referee.play_match("limited", make_ruleset(), 5, [name] * 4)
            assert m.offender is None and verify_lines(m.record_lines) == []
            assert referee.seats.open_streams() == 1
            assert all(b.alive for b in bots)  # refused, not failed: it keeps trying
        finally:
            await referee.stop()
            for b in bots:
                b.terminate()

    asyncio.run(main())


def test_an_idle_worker_arena_closes_itself_and_its_bots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # As on a worker whose coordinator died without unregistering the plugin.
    monkeypatch.setattr(cluster, "LEASE_S", 0.5)
    config = small_event(1)
    spec = cluster.ArenaSpec("idle-test", config)
    before = {p.pid for p in psutil.Process().children()}  # an earlier test's bots may still be exiting
    outcome = cluster.play_task(build_schedule(config)[0], spec)
    assert outcome.fault is None
    bots = [p for p in psutil.Process().children() if is_launched_bot(p) and p.pid not in before]
    assert len(bots) == 3
    deadline = time.monotonic() + 60
    while "idle-test" in cluster._ARENAS and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "idle-test" not in cluster._ARENAS
    gone, alive = psutil.wait_procs(bots, timeout=30)
    assert alive == []


EVENT_TOML = """
[event]
name = "cli"
format = "self"
deals = 2
seed = 4
target = 100
concurrency = 2

[[entrants]]
name = "greedy"
bot = "greedy"

[[entrants]]
name = "defensive"
bot = "defensive"
"""


@pytest.mark.cluster
def test_tournament_command_on_a_local_cluster(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    (tmp_path / "event.toml").write_text(EVENT_TOML)
    run = subprocess.run(
        [sys.executable, "-m", "sevenrocks.server.cli", "tournament", "event.toml", "--cluster", "local:2",
         "--db", "cli.db", "--out", "site", "--quiet"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env=os.environ | {"PYTHONUNBUFFERED": "1"})
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "site" / "leaderboard.html").exists()
    with Store(tmp_path / "cli.db") as store:
        assert len(store.done_ids("cli")) == 4
        assert all(verify_lines((store.record(m) or "").splitlines()) == [] for m in store.match_ids())


def _hanging_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every match of an arena hangs (a referee that never ends it), as a worker thread would see it."""
    async def hang(self: Any, task: Any, worker: str = "") -> Any:
        await asyncio.sleep(3600)

    monkeypatch.setattr(cluster.Arena, "play_supervised", hang)


def test_a_wait_on_an_arena_ends_at_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    _hanging_match(monkeypatch)
    monkeypatch.setattr(cluster, "match_deadline_s", lambda config: 1.0)
    config = small_event(1)
    spec = cluster.ArenaSpec("deadline-test", config)
    try:
        start = time.monotonic()
        with pytest.raises(cluster.ArenaClosed, match="deadline"):
            cluster.play_supervised_task(build_schedule(config)[0], spec)
        assert time.monotonic() - start < 30
    finally:
        cluster.close_arena("deadline-test", ended=True)


def test_closing_an_arena_releases_the_threads_waiting_on_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """What Ctrl-C of a coordinator does on a worker: the plugin closes the arena while matches wait."""
    _hanging_match(monkeypatch)
    config = small_event(1)
    spec = cluster.ArenaSpec("release-test", config)
    cluster.arena_for(spec)  # open, with its bots
    errors: list[BaseException] = []

    def wait() -> None:
        try:
            cluster.play_supervised_task(build_schedule(config)[0], spec)
        except BaseException as e:
            errors.append(e)

    waiting = [threading.Thread(target=wait) for _ in range(2)]
    for t in waiting:
        t.start()
    time.sleep(1)
    cluster.close_arena("release-test", ended=True)
    for t in waiting:
        t.join(30)
    assert not any(t.is_alive() for t in waiting), "a task thread still waits on the closed arena"
    assert len(errors) == 2 and all(isinstance(e, cluster.ArenaClosed) for e in errors), errors
