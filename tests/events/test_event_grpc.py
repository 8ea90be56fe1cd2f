"""Events over real gRPC with real bot processes: end to end, crashes, unreachable bots, kill -9."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sevenrocks.sdk.rules import DEAL_PROCEDURE
from sevenrocks.sdk.rules.replay import verify_lines
from sevenrocks.server.cli import cli
from sevenrocks.server.events.config import EventConfig, parse_config
from sevenrocks.server.events.executor import EntrantsUnreachable, LocalExecutor
from sevenrocks.server.publish.leaderboard import build_leaderboard
from sevenrocks.server.stats.ratings import rebuild
from sevenrocks.server.events.store import Store
from sevenrocks.server.events.tournament import run_event

HERE = Path(__file__).parent
CLIENT = [sys.executable, "-m", "sevenrocks.sdk.client", "--bot"]


def grpc_event(tmp_path: Path, config: EventConfig) -> Store:
    store = Store(tmp_path / "event.db")
    asyncio.run(run_event(config, store, LocalExecutor(config, tmp_path / "logs", config.concurrency)))
    return store


def toml_config(path: Path, entrants: list[dict[str, Any]], **event: Any) -> Path:
    lines = ["[event]"] + [f"{k} = {json.dumps(v)}" for k, v in event.items()]
    lines += ["[time]", "per_move_ms = 10000", "connect_timeout_s = 60"]
    for e in entrants:
        lines.append("[[entrants]]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in e.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_small_event_end_to_end(tmp_path: Path) -> None:
    cfg = parse_config({
        "event": {"name": "e2e", "deals": 1, "concurrency": 3},
        # Generous clocks: a loaded CI machine must not turn into timeouts here.
        "time": {"per_move_ms": 10000, "connect_timeout_s": 60},
        "entrants": [
            {"name": "greedy", "bot": "greedy"},
            {"name": "random", "bot": "random"},
            {"name": "defensive", "bot": "defensive"},
            {"name": "greedy-sdk", "command": [*CLIENT, "greedy"]},
        ],
    }, "<test>")
    with grpc_event(tmp_path, cfg) as store:
        matches = store.matches()
        assert len(matches) == 12 and len({m.match_id for m in matches}) == 12
        faults = [(m.match_id, m.fault) for m in matches if m.fault is not None]
        assert faults == [] and all(m.reason in ("target", "round_cap") for m in matches)
        for m in matches:
            record = store.record(m.match_id)
            assert record is not None
            assert verify_lines(record.splitlines()) == [], m.match_id
            header = json.loads(record.splitlines()[0])
            assert header["match_id"] == m.match_id and [s["player"] for s in header["seats"]] == list(m.seats)
            assert header["deal"] == DEAL_PROCEDURE and header["deal_number"] == 0  # verify re-derives the deals
            assert all(len(m.decision_ms.get(s, [])) > 0 for s in range(4))
        assert store.events()[0].finished
        lb = build_leaderboard(store)
        assert lb.bots[-1].name == "random"
        assert all(r.decision_p50_ms > 0 for r in lb.bots)
        stored = store.stored_ratings("e2e")
        rebuilt = rebuild(store.results(), True).rows()
        assert {(k, s): (mu, sg) for k, s, mu, sg in rebuilt} == stored


def test_unreachable_bots_are_named_with_their_logs(tmp_path: Path) -> None:
    cfg = parse_config({
        "event": {"name": "lost", "format": "self", "deals": 1},
        "entrants": [
            {"name": "greedy", "bot": "greedy"},
            {"name": "broken", "command": [sys.executable, "-c", "print('cannot find my weights'); raise SystemExit(4)"]},
            {"name": "visitor", "remote": True, "token": "visitor-secret"},
        ],
        # Long enough for greedy to start on a loaded machine; the other two never connect.
        "time": {"connect_timeout_s": 10},
    }, "<test>")
    with pytest.raises(EntrantsUnreachable) as e:
        grpc_event(tmp_path, cfg)
    msg = str(e.value)
    # Reported as soon as the broken bot exits, without waiting out the connect timeout.
    assert msg.startswith("1 entrant(s) exited before connecting")
    assert "broken" in msg and "exited with code 4" in msg and "cannot find my weights" in msg
    assert "not connected yet at that moment:" in msg and "visitor" in msg.splitlines()[-2]


def test_a_remote_entrant_that_never_comes_is_named_after_the_timeout(tmp_path: Path) -> None:
    cfg = parse_config({
        "event": {"name": "lost", "format": "self", "deals": 1},
        "entrants": [{"name": "greedy", "bot": "greedy"}, {"name": "visitor", "remote": True, "token": "visitor-secret"}],
        "time": {"connect_timeout_s": 10},
    }, "<test>")
    with pytest.raises(EntrantsUnreachable) as e:
        grpc_event(tmp_path, cfg)
    msg = str(e.value)
    assert msg.startswith("1 entrant(s) did not connect") and "visitor: remote" in msg
    assert "greedy" not in msg.split("\n", 1)[1]


def run_cli(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(cli, list(args))
    return r.exit_code, r.output


def test_cli_reports_config_errors(tmp_path: Path) -> None:
    bad = toml_config(tmp_path / "bad.toml", [{"name": "a", "bot": "greedy"}, {"name": "a", "bot": "random"}],
                      name="bad", format="self")
    code, out = run_cli("tournament", str(bad), "--db", str(tmp_path / "x.db"), "--out", str(tmp_path / "o"))
    assert code != 0 and "duplicate entrant name 'a'" in out
    assert not (tmp_path / "x.db").exists()  # nothing is created for a config that cannot run


# ---------------------------------------------------------------------- kill -9 and resume

DETERMINISTIC = [
    {"name": "greedy", "bot": "greedy"},
    {"name": "defensive", "bot": "defensive"},
    {"name": "greedy2", "command": [*CLIENT, "greedy"]},
    {"name": "defensive2", "command": [*CLIENT, "defensive"]},
]


def stored_count(db: Path) -> int:
    if not db.exists():
        return 0
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return int(con.execute("SELECT COUNT(*) FROM matches").fetchone()[0])
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def start_tournament(config: Path, db: Path, out: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "sevenrocks.server.cli", "tournament", str(config), "--db", str(db),
         "--out", str(out), "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )


def stop_when_stored(proc: subprocess.Popen[str], db: Path, at_least: int, sig: int) -> None:
    deadline = time.monotonic() + 120
    while stored_count(db) < at_least:
        assert proc.poll() is None, f"the tournament ended early: {proc.communicate()[0]}"
        assert time.monotonic() < deadline, "no progress"
        time.sleep(0.05)
    os.kill(proc.pid, sig)
    proc.wait(60)


def reap_group(proc: subprocess.Popen[str]) -> None:
    """Kill what is left of the process group (orphaned bots of a killed tournament)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def results(db: Path) -> dict[str, tuple[Any, ...]]:
    con = sqlite3.connect(db)
    try:
        return {r[0]: r[1:] for r in con.execute(
            "SELECT match_id, reason, winner, scores, ranks, rounds, fault_cause FROM matches")}
    finally:
        con.close()


@pytest.mark.slow  # two interrupted runs and a whole one; kill -9 resume of adaptive events is in the default suite
def test_resume_after_ctrl_c_and_kill_9_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    config = toml_config(tmp_path / "event.toml", DETERMINISTIC, name="resume", deals=2, seed=5, concurrency=2)
    db, out = tmp_path / "resume.db", tmp_path / "out"
    procs = []
    try:
        # Ctrl-C: a clean stop, the database consistent, a message saying how to resume.
        p = start_tournament(config, db, out)
        procs.append(p)
        stop_when_stored(p, db, 3, signal.SIGINT)
        text = p.stdout.read() if p.stdout else ""
        assert p.returncode == 130, text
        assert "run the same command again to resume" in text
        # kill -9 at an arbitrary moment: no cleanup at all.
        p = start_tournament(config, db, out)
        procs.append(p)
        before = stored_count(db)
        stop_when_stored(p, db, before + 4, signal.SIGKILL)
        assert p.returncode == -signal.SIGKILL
        reap_group(p)
        # Finish.
        p = start_tournament(config, db, out)
        procs.append(p)
        assert p.wait(300) == 0, p.stdout.read() if p.stdout else ""
    finally:
        for p in procs:
            reap_group(p)

    con = sqlite3.connect(db)
    ids = [r[0] for r in con.execute("SELECT match_id FROM matches")]
    records = [r[0] for r in con.execute("SELECT match_id FROM records")]
    con.close()
    assert len(ids) == len(set(ids)) == 24 and sorted(records) == sorted(ids)

    # Same seed, deterministic bots, one uninterrupted run: the same results and ratings.
    whole = tmp_path / "whole.db"
    p = start_tournament(config, whole, tmp_path / "out2")
    try:
        assert p.wait(300) == 0
    finally:
        reap_group(p)
    assert results(db) == results(whole)
    with Store(db) as a, Store(whole) as b:
        assert a.stored_ratings("resume") == b.stored_ratings("resume")
        rebuilt = rebuild(a.results(), True).rows()
        assert {(k, s): (mu, sg) for k, s, mu, sg in rebuilt} == a.stored_ratings("resume")
    published = [json.loads((d / "leaderboard.json").read_text()) for d in (out, tmp_path / "out2")]
    assert [[(b["name"], b["rank"], b["mu"], b["wins"]) for b in p["bots"]] for p in published] == \
        [[(b["name"], b["rank"], b["mu"], b["wins"]) for b in published[0]["bots"]]] * 2


def test_fives_event_over_grpc_rates_a_free_for_all(tmp_path: Path) -> None:
    cfg = parse_config({
        "event": {"name": "fives", "ruleset": "fives", "players": 3, "target": 100, "format": "seatings",
                  "deals": 1, "concurrency": 3},
        "entrants": [{"name": "greedy", "bot": "greedy"}, {"name": "random", "bot": "random"},
                     {"name": "defensive", "bot": "defensive"}],
        "time": {"per_move_ms": 10000, "connect_timeout_s": 60},
    }, "<test>")
    with grpc_event(tmp_path, cfg) as store:
        matches = store.matches()
        assert len(matches) == 6 and {m.seats for m in matches} == {
            ("greedy", "random", "defensive"), ("defensive", "greedy", "random"), ("random", "defensive", "greedy"),
            ("greedy", "defensive", "random"), ("random", "greedy", "defensive"), ("defensive", "random", "greedy")}
        for m in matches:
            assert len(m.ranks) == 3 and m.ranks[m.winner] == 0 and max(m.scores) >= 100
            assert verify_lines((store.record(m.match_id) or "").splitlines()) == []
        lb = build_leaderboard(store)
        assert lb.pairs == [] and lb.matrix_kind == "bots" and sum(r.wins for r in lb.bots) == 6


def test_a_remote_entrant_connects_itself_with_its_token(tmp_path: Path) -> None:
    cfg = parse_config({
        "event": {"name": "visit", "format": "self", "deals": 1},
        "entrants": [{"name": "greedy", "bot": "greedy"},
                     {"name": "visitor", "remote": True, "token": "visitor-secret"}],
        "time": {"per_move_ms": 10000, "connect_timeout_s": 60},
    }, "<test>")
    started: list[subprocess.Popen[bytes]] = []

    def announce(text: str) -> None:
        # What an operator does on reading the announcement: start the bot elsewhere.
        port = text.split("SEVENROCKS_REFEREE=<this host>:")[1].rstrip(")")
        env = {**os.environ, "SEVENROCKS_REFEREE": f"127.0.0.1:{port}", "SEVENROCKS_TOKEN": "visitor-secret"}
        started.append(subprocess.Popen([*CLIENT, "defensive"], env=env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL))

    store = Store(tmp_path / "visit.db")
    try:
        asyncio.run(run_event(cfg, store, LocalExecutor(cfg, tmp_path / "logs", 2, announce=announce)))
        assert len(started) == 1
        matches = store.matches()
        assert len(matches) == 2 and all(m.fault is None for m in matches)
        assert {m.seats for m in matches} == {("greedy", "visitor") * 2, ("visitor", "greedy") * 2}
    finally:
        store.close()
        for p in started:
            p.terminate()
            p.wait(10)
