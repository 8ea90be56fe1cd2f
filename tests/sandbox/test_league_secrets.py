"""``sevenrocks league`` hides its config from the bots it launches: it holds remote entrants' tokens.

A real league (the command a user runs, in the default ``auto`` sandbox, which is
bubblewrap here, and under ``rlimits``) is started from the folder that holds its
config, as a user would. A launched thief (bots/config_thief.py) reads the config
at start-up by the path on the league's command line, takes remote entrant
``remo``'s token and dials the referee as ``remo``. The real ``remo`` never
connects, so every match ``remo`` plays was stolen: there must be none, and the
thief must not have read the file at all (the referee also refuses another
entrant's token through the thief's own gate, but a token read is leaked anyway:
the thief can print it into its log, which its author reads, or use it wherever it
has a network).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..fresh_env import fresh_env
from .helpers import BOTS, require_bwrap

TOKEN = f"remo-{secrets.token_hex(12)}"


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder others may read (a bot under a uid of its own starts in it), as a user's would be."""
    folder = Path(tempfile.mkdtemp(prefix="sevenrocks-league-secrets-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def matches(db: Path) -> int:
    return sum(stored_seats(db).values()) // 2  # two entrants a match (format "self")


def stored_seats(db: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
        try:
            for (seats,) in con.execute("SELECT seats FROM matches"):
                for n in set(json.loads(seats)):
                    out[n] = out.get(n, 0) + 1
        finally:
            con.close()
    except sqlite3.OperationalError:  # not there yet
        pass
    return out


@pytest.mark.parametrize("mode", ["auto", "rlimits"])
def test_a_launched_bot_cannot_read_the_league_config_nor_play_a_remote_entrants_seats(
        open_folder: Path, mode: str) -> None:
    if mode == "auto":
        require_bwrap()
    elif os.geteuid() != 0:
        pytest.skip("rlimits hides the event's files in a mount namespace only when the harness is root")
    thief = {"name": "thief", "command": [sys.executable, str(BOTS / "config_thief.py")],
             "env": {"THIEF_CONFIG": str(open_folder / "league.toml")}}
    lines = ['[event]', 'name = "secrets"', 'format = "self"', 'concurrency = 2', 'target = 30',
             '[time]', 'per_move_ms = 10000', 'connect_timeout_s = 60',
             '[bots]', 'fresh_process = "never"',
             '[league]', 'round_matches = 4', 'poll_s = 0.2', 'idle_s = 0.5',
             '[[entrants]]', 'name = "thief"', f'command = {json.dumps(thief["command"])}',
             f'env = {{ THIEF_CONFIG = {json.dumps(thief["env"]["THIEF_CONFIG"])} }}']
    for name, bot in [("g1", "greedy"), ("g2", "greedy"), ("r1", "random")]:
        lines += ['[[entrants]]', f'name = "{name}"', f'bot = "{bot}"']
    lines += ['[[entrants]]', 'name = "remo"', 'remote = true', f'token = "{TOKEN}"']
    config = open_folder / "league.toml"
    config.write_text("\n".join(lines) + "\n")
    config.chmod(0o644)  # as a user's umask leaves it
    db, out = open_folder / "league.db", open_folder / "out"
    argv = [sys.executable, "-m", "sevenrocks.server.cli", "league", "league.toml", "--db", "league.db",
            "--out", "out", "--quiet"]
    if mode != "auto":
        argv += ["--sandbox", mode]
    env = fresh_env(drop=("SEVENROCKS_SANDBOX",))  # the user's default: auto
    proc = subprocess.Popen(argv, cwd=open_folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    log = out / "logs" / "thief.log"
    try:
        deadline = time.monotonic() + 240
        # The thief's report, then 60 more matches: ample time for a stolen seat to be used.
        while "ATTACK thief" not in (log.read_text(errors="replace") if log.exists() else ""):
            assert proc.poll() is None and time.monotonic() < deadline, "the thief never reported"
            time.sleep(0.2)
        start = matches(db)
        while matches(db) < start + 60:
            assert proc.poll() is None and time.monotonic() < deadline, "the league stopped playing"
            time.sleep(0.2)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        output, _ = proc.communicate(timeout=120)
    expected = "sandbox: bwrap" if mode == "auto" else "sandbox: rlimits"
    assert expected in output, output
    [found] = re.findall(r"^ATTACK thief (.*)$", log.read_text(errors="replace"), re.M)
    seen = json.loads(found)
    assert seen["tokens"] == 0 and seen["chars"] == 0, seen
    assert seen["config"] == ("FileNotFoundError" if mode == "auto" else "read"), seen  # rlimits: an empty stand-in
    seats = stored_seats(db)
    assert "remo" not in seats, seats
    assert seats.get("thief", 0) > 0, seats
