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

import sqlite3
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
