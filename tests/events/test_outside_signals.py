"""Deaths by SIGINT, SIGTERM or SIGHUP are excused once per entrant, not every time.

Ctrl-C reaching every bot of a background job voids the matches in flight and
nobody is charged (tests/events/test_lifecycle.py). A second Ctrl-C to every bot
in the same run of the event is more than an accident: each entrant's first
death by such a signal is excused, the next is charged like a crash, the stored
fault saying why (tests/sandbox/test_self_signal.py: a bot signalling itself
alone is charged at once). Real tournament process, real subprocess bots.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import time
from pathlib import Path

from sevenrocks.server.events.store import Store

from .test_event_grpc import stored_count
from .test_lifecycle import bots_by_entrant, launch, launched_bots, reap, toml_event, wait_stored


def fault_logs(db: Path) -> list[str]:
    con = sqlite3.connect(db)
    try:
        return [r[0] or "" for r in con.execute("SELECT fault_log FROM matches WHERE fault_cause IS NOT NULL")]
    finally:
        con.close()


def signal_every_bot(harness: int, db: Path, old: set[int]) -> set[int]:
    """SIGINT to every launched bot once each of the four entrants runs processes that are not ``old``
    and a match was stored since (so the new processes are playing, not still starting); returns them."""
    deadline = time.monotonic() + 180
    while True:
        bots = bots_by_entrant(harness)
        if len(bots) == 4 and not any(pids & old for pids in bots.values()):
            break
        assert time.monotonic() < deadline, f"the bots were not all restarted: {bots} (before: {old})"
        time.sleep(0.05)
    stored = stored_count(db)
    while stored_count(db) == stored:
        assert time.monotonic() < deadline, "the restarted bots stored no match"
        time.sleep(0.02)
    pids = set(launched_bots(harness))
    for pid in pids:  # a bot's jail and the bot (the jail passes it on too): one may be gone already
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGINT)
    return pids


def test_a_second_ctrl_c_to_every_bot_is_charged_the_first_is_not(tmp_path: Path) -> None:
    config = toml_event(tmp_path / "event.toml", "twice", deals=3)
    db, out = tmp_path / "twice.db", tmp_path / "out"
    p = launch(config, db, out, ignore_sigint=True)
    try:
        wait_stored(p, db, 1)
        first = signal_every_bot(p.pid, db, set())
        second = signal_every_bot(p.pid, db, first)
        # The event has 36 matches: fewer stored means the second signal found some still in
        # flight (a loaded machine lets more finish while the bots restart; 31 was seen).
        assert stored_count(db) < 36, "the signals came too late to find matches in flight"
        text = p.communicate(timeout=600)[0]
        assert p.returncode == 0, text
    finally:
        reap(p)
    with Store(db) as store:
        assert len(store.matches()) == 36 and store.events()[0].finished
        reasons = [r for _e, _m, r in store.voided()]
        assert not [s.withdrawn for s in store.entrant_states("twice").values() if s.withdrawn]
    # The first Ctrl-C: matches voided, nobody charged.
    assert any("from outside the harness" in r for r in reasons), reasons
    # The second: charged like a crash, the stored fault says why.
    logs = fault_logs(db)
    assert logs and all(x.startswith("charged as a crash: signal SIGINT (2) from outside is excused 1 time(s)")
                        for x in logs), (logs, second)
