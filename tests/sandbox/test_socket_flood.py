"""A bot that floods the referee's Unix socket holds a few connections, not the harness's files.

The flooder (in bubblewrap, the real sandbox) forks 60 children (the process limit raised to 512, so the flood is not cut short by it) that each connect to
the referee's socket as often as they can and hold every connection. Each bot dials a
socket of its own that relays at most ``CONNECTIONS_PER_BOT`` connections (sandbox/gates.py),
so the tournament's open files stay near what it needs for its own work, and every match
of the innocent bots finishes clean. Before, the children held thousands of connections
(an attack run measured 19,632 of 20,000 file descriptors).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from sevenrocks.server.events.store import Store
from sevenrocks.server.sandbox.gates import CONNECTIONS_PER_BOT

from .helpers import attack, require_bwrap, tournament, write_config
from .test_attacks import reports


def open_files(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return 0


def test_a_socket_flood_is_held_to_a_few_connections_and_innocents_finish_clean(tmp_path: Path) -> None:
    require_bwrap()
    db, out = tmp_path / "flood.db", tmp_path / "out"
    entrants = [attack("flooder", "socket_flood.py", FLOOD_PROCS="60", FLOOD_S="5"),
                {"name": "greedy", "bot": "greedy"}, {"name": "random", "bot": "random"}]
    # One process per bot for the whole event, so the flood lasts while the others play. The flood
    # is short (5 s from the flooder's first move): the bot reports only when it ends, and an event
    # that finished first (a fast machine, a faster engine) killed it before it said anything.
    config = write_config(tmp_path / "flood.toml", entrants, {"max_processes": 512},
                          {"fresh_process": "never"}, name="flood", format="self", deals=2, target=100)
    proc = tournament(config, db, out)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, open_files(proc.pid))
        time.sleep(0.05)
    output = proc.stdout.read() if proc.stdout else ""
    assert proc.returncode == 0, output
    [flood] = reports(out / "logs" / "flooder.log", "flood")
    assert flood["procs"] >= 50, flood
    # At most CONNECTIONS_PER_BOT at a time get through (its own gRPC connection holds one place), plus
    # the kernel's short listen queue; the referee drops each silent one after its 5 s handshake
    # timeout and the gate lets the next in: a few dozen over the flood, against thousands before.
    assert flood["connected"] <= 15 * CONNECTIONS_PER_BOT, flood
    assert peak < 400, f"the tournament held {peak} open files during the flood"
    with Store(db) as store:
        matches = store.matches(["flood"])
        assert len(matches) == 12 and all(m.fault is None for m in matches), [m.fault for m in matches]
    print(f"flood: {flood}; the tournament's peak open files {peak}")
