"""A bot that kills itself with SIGINT, SIGTERM or SIGHUP is charged like a crash.

Those signals usually come from outside (Ctrl-C reaching every bot of a
background job): the match is voided and played again, nobody charged. A bot
can send them to itself, though, whenever it is losing, and have its bad matches
played again; a match voided five times stopped the whole event. The real
attack bot here, in bubblewrap, signals itself in every match it plays. Its
deaths are charged (no other entrant's process died of a signal with it), it is
restarted and then withdrawn like any bot that keeps crashing, with the reason in
its stored faults, and the event finishes. (Before, every one of its deaths was
voided, and it was withdrawn only when its 20 restarts were used, nothing charged.)
"""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from sevenrocks.server.events.store import Store

from .helpers import attack, require_bwrap, tournament, write_config


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_bot_signalling_itself_is_charged_and_withdrawn_and_the_event_finishes(tmp_path: Path, sig: str) -> None:
    require_bwrap()
    db, out = tmp_path / "quit.db", tmp_path / "site"
    entrants = [attack("quitter", "self_signal.py", QUIT_SIGNAL=sig, QUIT_AFTER="3"),
                {"name": "greedy", "bot": "greedy"}, {"name": "random", "bot": "random"},
                {"name": "defensive", "bot": "defensive"}]
    config = write_config(tmp_path / "quit.toml", entrants, None,
                          {"restart_backoff_s": 0, "fresh_process": "never"},
                          name="quit", deals=1, target=100, concurrency=2, seed=3)
    proc = tournament(config, db, out)
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, output
    assert "voided" not in output or "times" not in output, output
    log = (out / "logs" / "quitter.log").read_text(errors="replace")
    assert f"QUIT {sig}" in log, log[-2000:]
    with Store(db) as store:
        states = store.entrant_states("quit")
        why = states["quitter"].withdrawn or ""
        assert "crashes in a row" in why and "did not come from outside" in why, states["quitter"]
        assert store.events()[0].finished
        # Nothing was voided as "from outside": the quitter's deaths were not taken for Ctrl-C.
        assert not [r for _e, _m, r in store.voided() if "from outside the harness" in r], store.voided()
        played = store.matches(["quit"])
        charged = [m for m in played if m.fault is not None]
        assert charged and all(m.seats[m.fault.seat] == "quitter" for m in charged if m.fault is not None)
        # Charged three times in a row, then withdrawn: its remaining matches were not played.
        assert len(charged) == 3 and len(played) < 12
    con = sqlite3.connect(db)
    try:
        logs = [r[0] for r in con.execute("SELECT fault_log FROM matches WHERE fault_cause IS NOT NULL")]
    finally:
        con.close()
    # The stored fault says why a death by that signal was charged.
    assert logs and all(x.startswith(f"charged as a crash: signal {sig}") and "did not come from outside" in x
                        for x in logs), logs


def stored(db: Path) -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
        try:
            return int(con.execute("SELECT count(*) FROM matches").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return 0


@pytest.mark.slow  # an event long enough for the stops to lie 10 s apart
def test_an_old_outside_stop_of_another_bot_does_not_excuse_a_later_self_signal(tmp_path: Path) -> None:
    """An outside stop excuses another death only within TOGETHER_S (5 s) of it, not forever after:
    a bystander's process is stopped from outside early on, the quitter stops itself 15 s after
    it started, and is charged."""
    import psutil

    require_bwrap()
    db, out = tmp_path / "late.db", tmp_path / "site"
    mark = "sevenrocks-bystander-" + os.urandom(4).hex()
    entrants = [attack("quitter", "self_signal.py", QUIT_SIGNAL="SIGTERM", QUIT_DELAY_S="15"),
                {"name": "bystander", "command": [sys.executable, "-m", "sevenrocks.sdk.client", "--bot", "greedy"],
                 "env": {"BYSTANDER_MARK": mark}},
                {"name": "random", "bot": "random"}, {"name": "defensive", "bot": "defensive"}]
    config = write_config(tmp_path / "late.toml", entrants, None,
                          {"restart_backoff_s": 0, "fresh_process": "never"},
                          # 20 deals: the event must outlast the quitter's 15 s (6 deals ended in 14 s
                          # once decisions got cheaper, and the quitter never quit)
                          name="late", duplicate=False, deals=20, target=250, concurrency=2, seed=3)
    proc = tournament(config, db, out)
    try:
        deadline = time.monotonic() + 120
        while not stored(db):  # playing: every bot connected
            assert proc.poll() is None and time.monotonic() < deadline, "no match was stored"
            time.sleep(0.05)
        victims: list[int] = []
        while not victims:
            assert proc.poll() is None and time.monotonic() < deadline, "the bystander never started"
            for child in psutil.Process(proc.pid).children(recursive=True):
                try:
                    if child.environ().get("BYSTANDER_MARK") == mark:
                        victims.append(child.pid)
                except psutil.Error:
                    continue
            time.sleep(0.05)
        for pid in victims:  # an operator's SIGTERM to the bystander's processes, early in the event
            os.kill(pid, signal.SIGTERM)
        output, _ = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, output
    log = (out / "logs" / "quitter.log").read_text(errors="replace")
    assert "QUIT SIGTERM" in log, log[-2000:]
    with Store(db) as store:
        voided = [r for _e, _m, r in store.voided() if "quitter" in r and "from outside the harness" in r]
        assert voided == [], voided
        charged = [m for m in store.matches(["late"]) if m.fault is not None and m.seats[m.fault.seat] == "quitter"]
        assert charged, "the quitter's deaths were charged"


def test_a_bot_recycled_by_the_harness_does_not_excuse_a_self_signal_beside_it(tmp_path: Path) -> None:
    """Bots recycled after every match (``fresh_process = "always"``) that die of the harness's
    own SIGTERM are no outside stop: the quitter, stopping itself while they are recycled, is
    charged every time (an excuse that counted them voided its first death)."""
    require_bwrap()
    db, out = tmp_path / "recycle.db", tmp_path / "site"
    entrants = [attack("quitter", "self_signal.py", QUIT_SIGNAL="SIGTERM", QUIT_AFTER="3"),
                *(attack(n, "plain_greedy.py") for n in ("g1", "g2", "g3"))]
    config = write_config(tmp_path / "recycle.toml", entrants, None,
                          {"restart_backoff_s": 0, "fresh_process": "always"},
                          name="recycle", deals=1, target=100, concurrency=2, seed=3)
    proc = tournament(config, db, out)
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, output
    with Store(db) as store:
        voided = [r for _e, _m, r in store.voided() if "from outside the harness" in r]
        assert voided == [], voided
        charged = [m for m in store.matches(["recycle"]) if m.fault is not None]
        assert len(charged) == 3 and all(m.seats[m.fault.seat] == "quitter" for m in charged if m.fault)
