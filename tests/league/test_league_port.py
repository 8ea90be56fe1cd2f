"""A league keeps its referee's address across restarts, so a remote entrant's command never changes.

The port a league's referee chose is kept in the league's database; a league run
again without ``--listen`` listens there again, and ``--listen`` still says otherwise.
"""

from __future__ import annotations

import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from sevenrocks.server.events.store import Store

from ..fresh_env import fresh_env

TOKEN = "visitor-token-0123456789abc"
CONFIG = f"""[event]
name = "stable"
concurrency = 1
ruleset = "fives"
players = 2
target = 30
[time]
per_move_ms = 10000
connect_timeout_s = 60
[league]
round_matches = 2
poll_s = 0.2
idle_s = 0.3
[[entrants]]
name = "home"
bot = "greedy"
[[entrants]]
name = "visitor"
remote = true
token = "{TOKEN}"
"""


def visitor_matches(db: Path) -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
        try:
            return int(con.execute("SELECT COUNT(*) FROM matches WHERE seats LIKE '%visitor%'").fetchone()[0])
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0


def run_once(folder: Path, visitor_argv: list[str], visitor_env: Callable[[int], dict[str, str]], *extra: str) -> int:
    """Start the league (the same command every time), wait for its port, let the visitor (the
    same command every time) play one more match, stop the league; the port it listened on."""
    league = subprocess.Popen([sys.executable, "-m", "sevenrocks.server.cli", "league", "league.toml", "--db",
                               "league.db", "--out", "out", "--quiet", *extra], cwd=folder,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=fresh_env())
    visitor = None
    try:
        assert league.stderr is not None
        seen, port = "", None
        while port is None:
            line = league.stderr.readline()
            assert line, f"the league ended before listening:\n{seen}"
            seen += line
            found = re.search(r"SEVENROCKS_REFEREE=<this host>:(\d+)", line)
            port = int(found.group(1)) if found else None
        before = visitor_matches(folder / "league.db")
        visitor = subprocess.Popen(visitor_argv, env=visitor_env(port), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while visitor_matches(folder / "league.db") <= before:
            assert time.monotonic() < deadline and league.poll() is None and visitor.poll() is None, \
                (visitor.stderr.read() if visitor.poll() is not None and visitor.stderr else "") + seen
            time.sleep(0.2)
        league.send_signal(signal.SIGTERM)
        league.wait(60)
        assert visitor.wait(30) == 0  # the referee's Goodbye ends it cleanly
        return port
    finally:
        for p in (visitor, league):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()


def test_a_league_restarted_twice_keeps_its_port_and_the_visitor_its_command(tmp_path: Path) -> None:
    (tmp_path / "league.toml").write_text(CONFIG)
    argv = [sys.executable, "-m", "sevenrocks.sdk.client", "--bot", "greedy"]
    written: list[dict[str, str]] = []

    def command_env(port: int) -> dict[str, str]:
        """The visitor's environment, written once from the port the league chose the first time."""
        if not written:
            written.append({**fresh_env(), "SEVENROCKS_REFEREE": f"127.0.0.1:{port}", "SEVENROCKS_TOKEN": TOKEN})
        return written[0]

    ports = [run_once(tmp_path, argv, command_env) for _ in range(3)]
    assert ports == [ports[0]] * 3
    assert visitor_matches(tmp_path / "league.db") >= 3
    # --listen still says otherwise (and is kept from then on)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        other = s.getsockname()[1]

    def moved(port: int) -> dict[str, str]:
        return {**written[0], "SEVENROCKS_REFEREE": f"127.0.0.1:{port}"}

    assert run_once(tmp_path, argv, moved, "--listen", f"127.0.0.1:{other}") == other
    assert run_once(tmp_path, argv, moved) == other


def test_a_kept_port_that_is_taken_is_named_with_the_way_out(tmp_path: Path) -> None:
    (tmp_path / "league.toml").write_text(CONFIG)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with Store(tmp_path / "league.db") as store:  # as a first run leaves it
        store.keep_league_listen("stable", f"127.0.0.1:{port}")
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", port))
        holder.listen()
        done = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "league", "league.toml", "--db",
                               "league.db", "--out", "out", "--quiet"], cwd=tmp_path, capture_output=True, text=True,
                              env=fresh_env(), timeout=120)
    assert done.returncode == 1, done.stderr[-2000:]
    assert (f"127.0.0.1:{port} is where this league listened last" in done.stderr
            and "--listen 127.0.0.1:0" in done.stderr), done.stderr[-2000:]
    assert "Traceback" not in done.stderr
