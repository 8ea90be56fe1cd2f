"""A league reload with an out-of-range [league] value is refused and the last good config plays on.

The attack run saved ``round_matches = 200000``: the reload accepted it, planned a
round of 200,000 matches and read no config again until it ended.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from sevenrocks.server.league.runner import run_league
from sevenrocks.server.events.tournament import Progress

from .test_league import FIELD, in_process_league


def test_a_reload_with_200000_matches_a_round_is_refused_and_the_league_plays_on(tmp_path: Path) -> None:
    head = '[event]\nname = "x"\n[league]\nstop_after = 16\nround_matches = 4\n'
    game, store, said = in_process_league(tmp_path, head + FIELD)
    with store:
        path = game.path
        assert path is not None

        def edit(p: Progress) -> None:
            if p.done == 4:
                path.write_text(head.replace("round_matches = 4", "round_matches = 200000") + FIELD)

        # (Before the bound, the 200,000-match round never ended: the deadline fails the test instead.)
        asyncio.run(asyncio.wait_for(run_league(game, edit), 120))
        assert sum(1 for _ in store.results(["x"])) >= 16
    assert any("round_matches: 200000 is out of range" in line and "at most 10000" in line for line in said), said
    assert game.settings.round_matches == 4


def catches_sighup(pid: int) -> bool:
    """Has the process a handler for SIGHUP (bit 0 of SigCgt in /proc/<pid>/status)?"""
    import re

    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    found = re.search(r"^SigCgt:\s+([0-9a-f]+)", text, re.M)
    return found is not None and bool(int(found.group(1), 16) & 1)


def test_sighup_from_start_up_to_shutdown_never_stops_the_league(tmp_path: Path) -> None:
    """SIGHUP means "re-read the config". It killed a league that was still starting (before its
    loop listened) and one that was stopping (after). HUP after HUP from the moment the league's
    command catches it, through its matches and its SIGTERM stop: it stops as SIGTERM says."""
    import os
    import signal
    import time

    from .test_league import counts, start

    cfg, db, out = tmp_path / "league.toml", tmp_path / "league.db", tmp_path / "out"
    cfg.write_text('[event]\nname = "hup"\n[league]\nround_matches = 4\npoll_s = 0.2\nidle_s = 0.5\n' + FIELD)
    proc = start(cfg, db, out)
    try:
        deadline = time.monotonic() + 120
        while not catches_sighup(proc.pid):
            assert proc.poll() is None and time.monotonic() < deadline, "the league never caught SIGHUP"
            time.sleep(0.005)
        while sum(counts(db).values()) < 16:
            assert proc.poll() is None, f"the league exited ({proc.returncode}) on SIGHUP"
            assert time.monotonic() < deadline, "the league never played"
            os.kill(proc.pid, signal.SIGHUP)
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        while proc.poll() is None:  # and while it stops
            os.kill(proc.pid, signal.SIGHUP)
            time.sleep(0.01)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, proc.returncode
