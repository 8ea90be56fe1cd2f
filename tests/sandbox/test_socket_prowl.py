"""Under ``rlimits`` a bot reaches no socket but its own, though it can list them all.

The attack run's prowler found every bot's socket on the machine through
``/proc/<harness>/net/unix`` and held Health.Watch streams on the victims' sockets
until they were withdrawn. As root, ``rlimits`` gives each bot a uid of its own;
its gate's folder (which holds its socket) now belongs to that uid alone (0700),
so another bot can still read the socket's path but not reach it. The prowler
(bots/socket_prowler.py) lists the paths (the control: it does find them) and connects
to each.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sevenrocks.server.events.store import Store

from .helpers import attack, tournament, write_config
from .test_attacks import reports


@pytest.mark.skipif(os.geteuid() != 0, reason="rlimits gives each bot a uid of its own only when the harness is root")
def test_an_rlimits_bot_cannot_connect_to_another_bots_socket(tmp_path: Path) -> None:
    db, out = tmp_path / "prowl.db", tmp_path / "out"
    entrants = [attack("prowler", "socket_prowler.py"), {"name": "greedy", "bot": "greedy"},
                {"name": "random", "bot": "random"}]
    config = write_config(tmp_path / "prowl.toml", entrants, {"mode": "rlimits"}, {"fresh_process": "never"},
                          name="prowl", format="self", deals=1, target=60)
    proc = tournament(config, db, out)
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, output
    assert "sandbox: rlimits" in output and "own uid per bot" in output, output
    [seen] = reports(out / "logs" / "prowler.log", "prowl")
    # This event's sockets (other harnesses on a shared machine may run anything): its run folder's.
    run_dir = str(Path(seen["mine"]).parent.parent)
    assert seen["found"] >= 2, seen  # the other bots' sockets (and the referee's own): listed
    assert [p for p in seen["connected"] if p.startswith(run_dir + "/")] == [], seen
    with Store(db) as store:
        matches = store.matches(["prowl"])
    assert len(matches) == 6 and all(m.fault is None for m in matches), [m.fault for m in matches]
