"""A real league process with --web, as an organiser starts it, for the submission tests."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from sevenrocks.server.events.store import Store
from sevenrocks.server.submissions.authors import add_author

CONFIG = """\
[event]
name = "subs"
ruleset = "seven-rocks"
target = 100
seed = 1
concurrency = 2

[league]
round_matches = 4
poll_s = 0.5
idle_s = 0.5

[time]
per_move_ms = 1000

[submissions]
submissions_per_day = {per_day}
{submissions}

[[entrants]]
name = "greedy"
bot = "greedy"

[[entrants]]
name = "random"
bot = "random"

[[entrants]]
name = "defensive"
bot = "defensive"

[[entrants]]
name = "greedy2"
bot = "greedy"
"""


class LeagueRun:
    """``sevenrocks league CONFIG --db --out --web 127.0.0.1:0`` in the default sandbox (auto: bubblewrap)."""

    def __init__(self, folder: Path, per_day: int = 5, submissions: str = "") -> None:
        """``submissions``: more lines of the config's [submissions] table."""
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.config = folder / "league.toml"
        if not self.config.exists():
            self.config.write_text(CONFIG.format(per_day=per_day, submissions=submissions))
        self.db = folder / "league.db"
        self.lines: list[str] = []
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""
        self.live = ""

    def add_author(self, name: str) -> str:
        with Store(self.db, writer=False) as store:
            token = add_author(store.db, name)
        assert token is not None
        return token

    def start(self, timeout: float = 90.0, args: tuple[str, ...] = (), web: str = "127.0.0.1:0") -> LeagueRun:
        """``args``: more options of ``sevenrocks league`` (``--sandbox rlimits``); ``web``: the --web address.
        Sets :attr:`url` (the site's root on 127.0.0.1) and :attr:`live` (the viewer URL the league printed)."""
        env = {k: v for k, v in os.environ.items() if k != "SEVENROCKS_SANDBOX"}  # the user's default: auto
        self.lines = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sevenrocks.server.cli", "league", str(self.config), "--db", str(self.db),
             "--out", str(self.folder / "out"), "--web", web, *args],
            cwd=self.folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                found = re.search(r"live pages at (http://[^/\s]+:(\d+))(/[^\s;]*)", line)
                if found:
                    self.url = f"http://127.0.0.1:{found.group(2)}"
                    self.live = found.group(1) + found.group(3)
                    return self
            assert self.proc.poll() is None, "".join(self.lines)
            time.sleep(0.05)
        raise AssertionError("the league did not start its web server:\n" + "".join(self.lines))

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def output(self) -> str:
        return "".join(self.lines)

    def kill9(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill9()

    def query(self, sql: str, *args: object) -> list[tuple[object, ...]]:
        db = sqlite3.connect(self.db, timeout=30)
        try:
            return db.execute(sql, args).fetchall()
        finally:
            db.close()

    def matches_of(self, name: str) -> int:
        rows = self.query("SELECT seats FROM matches")
        return sum(1 for (seats,) in rows if f'"{name}"' in str(seats))

    def wait_for(self, what: str, check: object, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert callable(check)
            if check():
                return
            assert self.proc is None or self.proc.poll() is None, self.output()
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}:\n{self.output()[-4000:]}")


def submit(url: str, token: str, path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """``sevenrocks submit`` as an author runs it."""
    return subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "submit", str(path), "--to", url,
                           "--token", token, *extra], capture_output=True, text=True, timeout=600)


def api(url: str, token: str, data: bytes | None = None) -> tuple[int, dict[str, Any]]:
    """One call of the submission API: (status, JSON answer)."""
    req = urllib.request.Request(url, data=data, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        body = e.read()
        try:
            return e.code, json.loads(body)
        except ValueError:
            return e.code, {"text": body.decode()}


def page(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
