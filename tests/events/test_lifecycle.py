"""Bot lifecycle over real gRPC with real subprocess bots and a real SQLite file.

A crash costs the match it happened in (the bot is restarted), a bot that keeps
crashing is withdrawn, signals from outside void matches instead of forfeiting
them, and a bot process never plays two matches of one duplicate group.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.server.cli import cli
from sevenrocks.server.events.config import parse_config
from sevenrocks.server.events.executor import EntrantsUnreachable, LocalExecutor
from sevenrocks.server.events.store import Store
from sevenrocks.server.events.tournament import run_event
from sevenrocks.server.publish.leaderboard import build_leaderboard
from sevenrocks.server.referee import Referee, RefereeStopped, TimeControl
from sevenrocks.server.sandbox.launch import BotProcess

from .test_event_grpc import stored_count

HERE = Path(__file__).parent
BOTS = HERE / "bots"
#: Generous clocks: a loaded machine must not turn thinking into timeouts.
CLOCKS = {"per_move_ms": 10000, "connect_timeout_s": 60}


def crash_once_event(tmp_path: Path, **bots: Any) -> dict[str, Any]:
    return {
        "event": {"name": "crash", "deals": 1, "target": 100, "concurrency": 2, "seed": 3},
        "time": CLOCKS,
        "bots": {"fresh_process": "never", "restart_backoff_s": 0, **bots},
        "entrants": [
            {"name": "greedy", "bot": "greedy"},
            {"name": "random", "bot": "random"},
            {"name": "defensive", "bot": "defensive"},
            {"name": "crasher", "command": [sys.executable, str(BOTS / "crash_once_bot.py")],
             "env": {"CRASH_AFTER": "30", "CRASH_MARKER": str(tmp_path / "crashed")}},
        ],
    }


def test_a_crash_on_the_30th_decision_costs_one_match_and_the_bot_is_restarted(tmp_path: Path) -> None:
    cfg = parse_config(crash_once_event(tmp_path), "<test>")
    executor = LocalExecutor(cfg, tmp_path / "logs", cfg.concurrency)
    with Store(tmp_path / "event.db") as store:
        asyncio.run(run_event(cfg, store, executor))
        matches = store.matches()
        # Every match was played and stored, the event is finished.
        assert len(matches) == 12 and store.events()[0].finished
        faulted = [m for m in matches if m.fault is not None]
        # The crash is stored once, in the match it happened in, with its true cause.
        assert len(faulted) == 1
        (m,) = faulted
        assert m.fault is not None and m.seats[m.fault.seat] == "crasher"
        assert (m.fault.cause.value, m.fault.detail) == ("crash", "the bot process exited with code 3")
        # The bot sat in two matches at once when it died: one is charged (the one whose turn it
        # left unanswered longest), the other voided and replayed; the match it died in is one of them.
        voided = store.voided()
        died_in = (tmp_path / "crashed").read_text()
        assert died_in in {m.match_id} | {v for _e, v, _r in voided}
        assert m.reason == "forfeit" and m.winner == 1 - m.fault.seat % 2
        log = sqlite3.connect(tmp_path / "event.db").execute(
            "SELECT fault_log FROM matches WHERE match_id = ?", (m.match_id,)).fetchone()[0]
        # The stored log tail is the dying process's own: it names the match it died in
        # (the charged one, or the voided one when the other turn was older).
        assert log.endswith(f"crashing on decision 30 in {died_in}")
        # The other match the dying process was in was voided and played again, fault-free.
        assert len(voided) <= 1 and all("crash is charged to another match" in r for _e, _m, r in voided)
        assert {v for _e, v, _r in voided} <= {x.match_id for x in matches if x.fault is None}
        # Restarted once: two processes, two pids in its log.
        slot = executor.supervisor.slots["crasher"]
        assert (slot.generation, slot.restarts, slot.withdrawn) == (2, 1, None)
        starts = [line for line in (tmp_path / "logs" / "crasher.log").read_text().splitlines()
                  if line.startswith("started pid")]
        assert len(set(starts)) == 2
        lb = build_leaderboard(store)
        row = next(r for r in lb.bots if r.name == "crasher")
        assert row.matches == 12 and row.forfeits == {"crash": 1}
        assert lb.withdrawn == [] and sum(lb.voided.values()) == len(voided)


def test_a_bot_that_keeps_crashing_is_withdrawn_and_the_leaderboard_says_so(tmp_path: Path) -> None:
    toml = tmp_path / "event.toml"
    toml.write_text(f"""
[event]
name = "flaky"
format = "self"
deals = 1
target = 100
concurrency = 1
[time]
per_move_ms = 10000
connect_timeout_s = 60
[bots]
max_crashes_in_row = 2
restart_backoff_s = 0
fresh_process = "never"
[[entrants]]
name = "greedy"
bot = "greedy"
[[entrants]]
name = "random"
bot = "random"
[[entrants]]
name = "crasher"
command = [{json.dumps(sys.executable)}, {json.dumps(str(BOTS / "crashing_bot.py"))}]
env = {{CRASH_AFTER = "3"}}
""")
    db, out = tmp_path / "flaky.db", tmp_path / "out"
    r = CliRunner().invoke(cli, ["tournament", str(toml), "--db", str(db), "--out", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    assert "crasher is withdrawn from the event" in r.output
    with Store(db) as store:
        matches = store.matches()
        crashes = [m for m in matches if m.fault is not None]
        # Two crashes in a row (one match each), then withdrawn: 2 of its 4 matches not played.
        assert [(m.seats[m.fault.seat], m.fault.cause.value) for m in crashes if m.fault] == [("crasher", "crash")] * 2
        assert len(matches) == 4 and store.events()[0].finished
        lb = build_leaderboard(store)
        (w,) = lb.withdrawn
        assert (w.name, w.not_played) == ("crasher", 2)
        assert w.reason.startswith("withdrawn after 2 crashes in a row")
    table = (out / "leaderboard.txt").read_text()
    assert "WITHDRAWN crasher: withdrawn after 2 crashes in a row" in table and "2 of its matches not played" in table
    assert "4 of 6 matches (2 not played: withdrawn entrants)" in table
    assert json.loads((out / "leaderboard.json").read_text())["withdrawn"][0]["not_played"] == 2
    # A finished event says so and plays nothing.
    again = CliRunner().invoke(cli, ["tournament", str(toml), "--db", str(db), "--out", str(out), "--quiet"])
    assert again.exit_code == 0 and "is already finished" in again.output and "nothing to play" in again.output


# ---------------------------------------------------------------------- signals

def toml_event(path: Path, name: str, deals: int = 1) -> Path:
    path.write_text(f"""
[event]
name = "{name}"
deals = {deals}
target = 100
concurrency = 2
seed = 5
[time]
per_move_ms = 10000
connect_timeout_s = 60
[bots]
fresh_process = "never"
[[entrants]]
name = "greedy"
bot = "greedy"
[[entrants]]
name = "defensive"
bot = "defensive"
[[entrants]]
name = "random"
bot = "random"
[[entrants]]
name = "greedy2"
bot = "greedy"
""")
    return path


def launch(config: Path, db: Path, out: Path, ignore_sigint: bool = False) -> subprocess.Popen[str]:
    """The tournament in a process group of its own; ``ignore_sigint`` as a shell's background job runs it."""
    argv = [sys.executable, "-m", "sevenrocks.server.cli", "tournament", str(config), "--db", str(db),
            "--out", str(out), "--quiet"]
    if ignore_sigint:  # a shell's ``trap '' INT``: an ignored signal stays ignored across exec
        argv = ["/bin/sh", "-c", 'trap "" INT && exec "$@"', "sh", *argv]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def wait_stored(proc: subprocess.Popen[str], db: Path, n: int) -> None:
    deadline = time.monotonic() + 180
    while stored_count(db) < n:
        assert proc.poll() is None, f"the tournament ended early: {proc.communicate()[0]}"
        assert time.monotonic() < deadline, "no progress"
        time.sleep(0.05)


def reap(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def faults(db: Path) -> list[tuple[str, str]]:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT match_id, fault_cause FROM matches WHERE fault_cause IS NOT NULL").fetchall()
    finally:
        con.close()


def test_sigterm_and_sigint_to_the_process_group_store_no_forfeits_and_the_event_resumes(tmp_path: Path) -> None:
    config = toml_event(tmp_path / "event.toml", "signals", deals=2)
    db, out = tmp_path / "signals.db", tmp_path / "out"
    procs = []
    try:
        # SIGTERM to the tournament: a clean stop like Ctrl-C, exit 143, nothing in flight stored.
        p = launch(config, db, out)
        procs.append(p)
        wait_stored(p, db, 2)
        os.kill(p.pid, signal.SIGTERM)
        text = p.communicate(timeout=60)[0]
        assert p.returncode == 143, text
        assert "stopped by SIGTERM" in text and "run the same command again to resume" in text
        assert faults(db) == []
        # A background job (SIGINT ignored) whose process group gets SIGINT: nothing is charged;
        # any bot that dies of it has its match voided and played again, and the event finishes.
        p = launch(config, db, out, ignore_sigint=True)
        procs.append(p)
        before = stored_count(db)
        wait_stored(p, db, before + 1)
        os.killpg(p.pid, signal.SIGINT)
        # Launched bots run in sessions of their own (sandbox/launch.py), so the group's SIGINT
        # never reaches them: send it to each of them too, as a terminal's Ctrl-C to a whole
        # session would, while matches are in flight.
        bots = launched_bots(p.pid)
        assert bots, "no launched bot found under the tournament"
        for pid in bots:
            with contextlib.suppress(ProcessLookupError):  # a process gone meanwhile (its match ended)
                os.kill(pid, signal.SIGINT)
        at_signal = stored_count(db)
        text = p.communicate(timeout=300)[0]
        assert p.returncode == 0, text
    finally:
        for p in procs:
            reap(p)
    assert faults(db) == []
    assert at_signal < 22, "the signal came too late to find matches in flight"
    with Store(db) as store:
        assert len(store.matches()) == 24 and store.events()[0].finished
        reasons = [r for _e, _m, r in store.voided()]
    # The bots that died of it had their matches voided (and played again: 24 stored), never charged.
    assert reasons and all("from outside the harness" in r for r in reasons), (reasons, text)


def bots_by_entrant(harness: int) -> dict[str, set[int]]:
    """The processes under ``harness`` of each launched entrant (by its token; a sandboxed bot has several)."""
    import psutil

    found: dict[str, set[int]] = {}
    for child in psutil.Process(harness).children(recursive=True):
        try:
            token = child.environ().get("SEVENROCKS_TOKEN")
        except psutil.Error:
            continue
        if token:
            found.setdefault(token, set()).add(child.pid)
    return found


def launched_bots(harness: int) -> list[int]:
    """The processes under ``harness`` that carry an entrant's token: its launched bots."""
    return sorted(pid for pids in bots_by_entrant(harness).values() for pid in pids)


# ---------------------------------------------------------------------- starts and stops

def test_a_bot_that_exits_at_once_is_reported_at_once(tmp_path: Path) -> None:
    cfg = parse_config({
        "event": {"name": "bad", "format": "self", "deals": 1},
        "time": {"connect_timeout_s": 3600},
        "entrants": [{"name": "greedy", "bot": "greedy"},
                     {"name": "broken", "command": [sys.executable, "-c", "print('no weights'); raise SystemExit(4)"]}],
    }, "<test>")

    async def go() -> None:
        with Store(tmp_path / "bad.db") as store:
            # Far less than the hour it would wait for a bot that is merely slow.
            await asyncio.wait_for(run_event(cfg, store, LocalExecutor(cfg, tmp_path / "logs")), 120)

    with pytest.raises(EntrantsUnreachable) as e:
        asyncio.run(go())
    assert "broken: `" in str(e.value) and "exited with code 4" in str(e.value) and "no weights" in str(e.value)


def test_the_referee_stopping_mid_match_blames_nobody(tmp_path: Path) -> None:
    async def go() -> None:
        referee = Referee({"a": "token-a"}, TimeControl(per_move_ms=10000, connect_timeout_s=30))
        port = await referee.start()
        bot = BotProcess().start([sys.executable, str(BOTS / "pid_bot.py")], f"127.0.0.1:{port}", "token-a",
                                 tmp_path / "a.log", entrant="a")
        try:
            assert await referee.wait_for_entrants(["a"], 30) == {"a"}
            match = asyncio.create_task(referee.play_match("m", make_ruleset(), 1, ["a"] * 4))
            while not (tmp_path / "a.log").read_text():
                await asyncio.sleep(0.01)  # the match is under way
            await referee.stop()
            with pytest.raises(RefereeStopped, match="the referee shut down during match m"):
                await match
        finally:
            bot.terminate()

    asyncio.run(go())


def test_match_with_a_bot_that_never_started_fails(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["match", "--seat", "greedy", "--seat", f"{sys.executable} -c 'raise SystemExit(5)'",
                                 "--seat", "greedy", "--seat", "random", "--target", "50"])
    assert r.exit_code == 1, r.output
    name = f"{Path(sys.executable).name}-1"
    assert r.output.endswith(f"Error: seat 1 ({name}) never played: the bot process exited with code 5 before it "
                             "connected; no match was played\n"), r.output
    assert "forfeit after" not in r.output


# ---------------------------------------------------------------------- fresh processes

def pids_by_match(log_dir: Path) -> dict[str, dict[str, set[str]]]:
    """entrant -> match id -> pids of that entrant's processes that sat in the match."""
    out: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for log in log_dir.glob("*.log"):
        for line in log.read_text().splitlines():
            pid, _, match_id = line.partition(" ")
            if pid.isdigit():
                out[log.stem][match_id].add(pid)
    return out


@pytest.mark.parametrize("fresh", ["duplicates", "never"])
def test_no_bot_process_plays_two_matches_of_one_duplicate_group(tmp_path: Path, fresh: str) -> None:
    cfg = parse_config({
        "event": {"name": "dup", "ruleset": "fives", "players": 2, "format": "seatings", "deals": 2,
                  "target": 50, "concurrency": 2},
        "time": CLOCKS, "bots": {"fresh_process": fresh},
        "entrants": [{"name": n, "command": [sys.executable, str(BOTS / "pid_bot.py")]} for n in ("a", "b")],
    }, "<test>")
    with Store(tmp_path / "dup.db") as store:
        asyncio.run(run_event(cfg, store, LocalExecutor(cfg, tmp_path / "logs", cfg.concurrency)))
        matches = store.matches()
    assert len(matches) == 4 and all(m.fault is None for m in matches), [(m.match_id, m.fault) for m in matches]
    groups: dict[str, list[str]] = defaultdict(list)
    for m in matches:
        groups[m.group].append(m.match_id)
    assert sorted(map(len, groups.values())) == [2, 2]
    seen = pids_by_match(tmp_path / "logs")
    for entrant in ("a", "b"):
        for ids in groups.values():
            pids = [p for mid in ids for p in seen[entrant][mid]]
            assert len(pids) == 2, (entrant, ids, dict(seen[entrant]))
            if fresh == "duplicates":
                assert pids[0] != pids[1], (entrant, ids, pids)  # each match of the group on its own process
            else:
                assert pids[0] == pids[1], (entrant, ids, pids)  # one process: the check above can fail


def test_phases_put_the_matches_of_a_duplicate_group_in_different_batches() -> None:
    from sevenrocks.server.events.executor import phases
    from sevenrocks.server.events.schedule import build_schedule

    from .conftest import bots, config_of

    for cfg in (config_of(bots("a", "b", "c", "d"), deals=3),
                config_of(bots("a", "b", "c"), ruleset="fives", players=3, format="seatings", deals=2)):
        tasks = build_schedule(cfg)
        batches = [list(b) for b in phases(iter(tasks), "duplicates")]
        assert sorted(t.index for b in batches for t in b) == list(range(len(tasks)))
        for b in batches:
            assert len({t.group for t in b}) == len(b) and len({t.deal for t in b}) == 1
        per_group = max(sum(1 for t in tasks if t.group == tasks[0].group), 1)
        assert len(batches) == cfg.deals * per_group
        assert [list(b) for b in phases(iter(tasks), "always")] == [[t] for t in tasks]
        assert list(next(iter(phases(iter(tasks), "never")))) == tasks


# ---------------------------------------------------------------------- processes across rounds, large fields

def pid_entrants(*names: str) -> list[dict[str, Any]]:
    return [{"name": n, "command": [sys.executable, str(BOTS / "pid_bot.py")]} for n in names]


@dataclasses.dataclass
class CountingExecutor(LocalExecutor):
    """A LocalExecutor that counts its :meth:`run` calls (one per adaptive round)."""

    runs: int = 0

    async def run(self, tasks: Any, on_result: Any) -> None:
        self.runs += 1
        await super().run(tasks, on_result)


def test_an_adaptive_event_keeps_its_processes_across_rounds_and_still_never_shows_a_deal_twice(tmp_path: Path) -> None:
    """One recycle per round (between a round's first and second matches of its groups), none between rounds."""
    cfg = parse_config({
        "event": {"name": "rounds", "target": 50, "concurrency": 2, "seed": 5},
        "schedule": {"mode": "adaptive", "budget": 18, "round_deals": 2},
        "time": CLOCKS, "bots": {"fresh_process": "duplicates"},
        "entrants": pid_entrants("a", "b", "c", "d"),
    }, "<test>")
    executor = CountingExecutor(cfg, tmp_path / "logs", cfg.concurrency)
    with Store(tmp_path / "rounds.db") as store:
        asyncio.run(run_event(cfg, store, executor))
        matches = store.matches()
    assert executor.runs >= 2, "the test needs more than one round"
    assert 12 <= len(matches) <= 18 and all(m.fault is None for m in matches)
    seen = pids_by_match(tmp_path / "logs")
    groups: dict[str, list[str]] = defaultdict(list)
    for m in matches:
        groups[m.group].append(m.match_id)
    for entrant in "abcd":
        processes = {p for pids in seen[entrant].values() for p in pids}
        # One process at the start, then a fresh one in the middle of each round.
        assert len(processes) == executor.runs + 1, (entrant, executor.runs, len(processes))
        for ids in groups.values():
            pids = [p for mid in ids for p in seen[entrant].get(mid, ())]
            assert len(pids) == len(set(pids)), (entrant, ids, pids)  # a group's matches: never one process


def test_a_field_larger_than_max_alive_starts_bots_as_matches_need_them(tmp_path: Path) -> None:
    cfg = parse_config({
        "event": {"name": "lazy", "target": 50, "concurrency": 1, "seed": 9},
        "schedule": {"mode": "adaptive", "budget": 10},
        "time": CLOCKS, "bots": {"fresh_process": "never", "max_alive": 4},
        "entrants": pid_entrants("a", "b", "c", "d", "e", "f"),
    }, "<test>")
    executor = LocalExecutor(cfg, tmp_path / "logs", cfg.concurrency)
    peak = 0

    async def main(store: Store) -> None:
        nonlocal peak
        event = asyncio.ensure_future(run_event(cfg, store, executor))
        while not event.done():
            sup = executor.supervisor
            if sup is not None:  # every process not yet reaped counts, stopping ones included
                peak = max(peak, sum(1 for s in sup.slots.values() for b in s.bots.values() if b.returncode is None))
            await asyncio.sleep(0.005)
        await event

    with Store(tmp_path / "lazy.db") as store:
        asyncio.run(main(store))
    sup = executor.supervisor
    assert sup.lazy and sup.max_alive == 4
    assert 0 < peak <= 4, peak
    with Store(tmp_path / "lazy.db") as store:
        matches = store.matches()
        assert not store.withdrawals()
    assert 6 <= len(matches) <= 10 and all(m.fault is None for m in matches), [m.fault for m in matches]
    played = {s for m in matches for s in m.seats}
    assert len(played) > 4, "the test needs more entrants playing than max_alive"
    # Every entrant that played was started; every start past the first four needed an idle one stopped.
    assert sup.evictions > 0 and len(played) <= len(sup.start_times) <= 4 + sup.evictions
    seen = pids_by_match(tmp_path / "logs")
    for name in played:  # every match an entrant sat in was played by a live process of that entrant
        assert {m.match_id for m in matches if name in m.seats} == set(seen[name]), name

