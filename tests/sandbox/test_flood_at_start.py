"""A bot that floods its own socket before it connects is withdrawn; the event goes on.

The flooder (in bubblewrap) takes every connection its socket relays
(sandbox/gates.py) and the socket's listen queue, dialling again the moment one
closes, and never joins the referee (the certain form of a flood that crowds out
the bot's own gRPC channel before it connects). It ran (it dialled its
socket), so that is its own failure, not a bad command line: it is stopped,
restarted, and withdrawn after ``max_crashes_in_row`` such starts with the reason
stored, while the other entrants play every match. Before, the whole event stopped
at start with "entrant(s) did not connect".
"""

from __future__ import annotations

import sys
from pathlib import Path

from sevenrocks.server.events.store import Store

from .helpers import attack, require_bwrap, tournament, write_config


def test_a_bot_crowding_out_its_own_connection_is_withdrawn_not_the_event(tmp_path: Path) -> None:
    require_bwrap()
    db, out = tmp_path / "crowd.db", tmp_path / "site"
    entrants = [attack("flooder", "crowd_self.py"),
                {"name": "greedy", "bot": "greedy"}, {"name": "random", "bot": "random"}]
    config = write_config(tmp_path / "crowd.toml", entrants, {"max_processes": 128},
                          {"max_crashes_in_row": 2, "restart_backoff_s": 0, "fresh_process": "never"},
                          name="crowd", format="self", deals=1, target=30)
    # A short connect timeout: the flooder's starts each wait it out.
    config.write_text(config.read_text().replace("connect_timeout_s = 60", "connect_timeout_s = 12"))
    proc = tournament(config, db, out)
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, output
    assert "did not connect to the referee" not in output, output
    with Store(db) as store:
        states = store.entrant_states("crowd")
        why = states["flooder"].withdrawn or ""
        assert "crashes in a row" in why and "did not connect within 12 s" in why and "dialled its socket" in why, why
        assert states["greedy"].withdrawn is None and states["random"].withdrawn is None
        played = store.matches(["crowd"])
        assert store.events()[0].finished
        assert played and all("flooder" not in m.seats and m.fault is None for m in played), played
    assert "flooder is withdrawn" in output, output
    assert "CROWD dialled 10" in (out / "logs" / "flooder.log").read_text(errors="replace")


def test_a_bot_that_never_dials_still_stops_the_event_at_start(tmp_path: Path) -> None:
    """A command that runs but never dials the referee is most likely a wrong command line: the event
    stops at once and says so (the operator fixes it), as before; only a bot that dialled is withdrawn."""
    require_bwrap()
    db, out = tmp_path / "silent.db", tmp_path / "site"
    entrants = [{"name": "silent", "command": [sys.executable, "-c", "import time; time.sleep(600)"]},
                {"name": "greedy", "bot": "greedy"}]
    config = write_config(tmp_path / "silent.toml", entrants, name="silent", format="self", deals=1, target=30)
    config.write_text(config.read_text().replace("connect_timeout_s = 60", "connect_timeout_s = 8"))
    proc = tournament(config, db, out)
    output, _ = proc.communicate(timeout=300)
    assert proc.returncode != 0, output
    assert "did not connect to the referee" in output and "silent: `" in output and "running but silent" in output
