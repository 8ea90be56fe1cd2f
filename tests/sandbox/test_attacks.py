"""Attack bots in one real event, in the real bubblewrap sandbox: each is stopped or sees nothing.

One ``sevenrocks tournament`` process (so that its command line names the database,
as an attacker would read it) plays a small round robin of seven entrants: a memory
hog, a fork bomb, a double-forking daemon, a 200 MB log writer, a CPU spinner, a
snoop that looks for other processes, tokens, the database, the logs, the network
and the reference bots' source, and greedy. The hog and the bomb must forfeit with
a ``crash`` that names the limit; every other match must finish clean with a record
the rules engine verifies; nothing the bots started may be left afterwards.
"""

from __future__ import annotations

import json
import re
import secrets
import socket
from pathlib import Path
from typing import Any

from sevenrocks.sdk.rules.replay import verify_lines
from sevenrocks.server.events.store import Store
from sevenrocks.server.sandbox.sandbox import BOT_DIR

from .helpers import attack, marked, reach_unsandboxed, require_bwrap, tournament, write_config

SPIN_CORES = 0.5


def reports(log: Path, kind: str) -> list[dict[str, Any]]:
    text = log.read_text(errors="replace") if log.exists() else ""
    return [json.loads(m) for m in re.findall(rf"^ATTACK {kind} (.*)$", text, re.M)]


def test_attack_bots_are_contained_and_every_other_match_finishes_clean(tmp_path: Path) -> None:
    require_bwrap()
    mark = f"sevenrocks-daemon-{secrets.token_hex(6)}"
    # The referee listens on a port the snoop is told (as it could find it with ss on the host),
    # and the test holds an abstract Unix socket (another bot's, say) that the snoop must not reach.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    abstract = f"sevenrocks-snoop-{secrets.token_hex(6)}"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind("\0" + abstract)
    listener.listen(8)
    db, out = tmp_path / "league.db", tmp_path / "site"
    entrants = [
        attack("hog", "memory_hog.py"),
        attack("bomb", "fork_bomb.py"),
        attack("daemon", "double_fork.py", SEVENROCKS_BOT_MARK=mark),
        attack("flood", "log_flood.py"),
        attack("spinner", "cpu_spinner.py", SPIN_PROCS="2", SPIN_S="3"),
        attack("snoop", "snoop.py", SNOOP_DB=str(db), SNOOP_LOGS=str(out / "logs"), SNOOP_TCP=f"127.0.0.1:{port}",
               SNOOP_ABSTRACT=abstract),
        {"name": "greedy", "bot": "greedy"},
    ]
    # The hog and the bomb die in every match: never withdraw them, so that every match is played
    # (and each of their deaths is judged), and keep one process per entrant between matches.
    config = write_config(tmp_path / "attacks.toml", entrants, {"cpu_cores": SPIN_CORES},
                          {"max_crashes_in_row": 1000, "max_faults_in_row": 1000, "max_restarts": 100000,
                           "restart_backoff_s": 0, "fresh_process": "never"},
                          name="attacks", format="self", deals=1, target=60, concurrency=2)
    proc = tournament(config, db, out, "--listen", f"127.0.0.1:{port}")
    try:
        # The control: outside the sandbox the snoop's own probes reach both while the event runs.
        control = reach_unsandboxed(proc, port, abstract)
        output, _ = proc.communicate(timeout=600)
    finally:
        listener.close()
    assert proc.returncode == 0, output
    assert "sandbox: bwrap" in output
    logs = out / "logs"
    assert "sandbox: bwrap" in (logs / "sandbox.txt").read_text()

    with Store(db) as store:
        matches = store.matches()
        assert len(matches) == 42
        killed = {"hog": "killed: memory limit 512 MiB exceeded",
                  "bomb": "killed: process limit 128 exceeded"}
        for name, detail in killed.items():
            faults = [m.fault for m in matches if m.fault is not None and m.seats[m.fault.seat] == name]
            assert any(f.cause == "crash" and detail in f.detail for f in faults), (name, faults)
        for m in matches:
            if m.fault is not None:
                # Only the two killed bots ever fault; their side loses, the match still has a record.
                assert m.seats[m.fault.seat] in killed, (m.match_id, m.fault)
                assert m.reason == "forfeit"
            else:
                assert m.reason in ("target", "round_cap"), m.match_id
            record = store.record(m.match_id)
            assert record is not None and verify_lines(record.splitlines()) == [], m.match_id
        clean = [m for m in matches if not set(m.seats) & set(killed)]
        assert len(clean) == 20 and all(m.fault is None for m in clean)

    # The 200 MB writer: its log is cut at 10 MiB with a marker, and it played on.
    flood = logs / "flood.log"
    assert flood.stat().st_size < 10 * 2**20 + 4096
    assert "log truncated at 10 MiB" in flood.read_text(errors="replace")

    # The spinner's two busy children together got no more than its CPU quota.
    spin = reports(logs / "spinner.log", "spin")
    assert spin and spin[0]["cores"] < SPIN_CORES * 1.3, spin

    # The snoop saw only its own sandbox: no other process, token, database, log or network.
    seen = reports(logs / "snoop.log", "snoop")
    assert seen, (logs / "snoop.log").read_text()[-2000:]
    s = seen[0]
    assert s["pids"] <= 3, s["cmdlines"]
    assert s["foreign_tokens"] == 0 and s["db_mentions"] == []
    assert not s["db_exists"] and not s["db_readable"] and s["log_files"] == []
    assert not s["wrote_bot_source"]
    # Not the referee's own port, not an abstract socket, which the same probes reach unsandboxed.
    assert control == {"tcp": "ok", "abstract": "ok"}, control
    assert s["tcp"] != "ok" and s["abstract"] != "ok", s
    # It starts in its own snapshot (read-only), shown at /bot, and sees nothing of the database's folder
    # (where the snapshots are kept): not even its path.
    assert s["cwd"] == BOT_DIR and str(tmp_path) not in json.dumps(s)

    # The daemon's grandchild did start, and is gone with the event.
    assert reports(logs / "daemon.log", "daemon") == [{"started": True}]
    assert marked(mark) == {}
