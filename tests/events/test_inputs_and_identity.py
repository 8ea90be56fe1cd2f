"""What the tournament refuses, and how: bad inputs, a second writer, a changed bot.

Every refusal is one line naming the key or path and what would be valid, exit
code 2, before anything is registered or played (the database is not created, or
not changed). Real files, a real SQLite database, real mounts for a read-only and
a full file system.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sevenrocks.server.cli import cli
from sevenrocks.server.events.store import Store

from .conftest import bots, config_of, play_in_process

HERE = Path(__file__).parent


def tournament(*args: str) -> tuple[int, str]:
    if "--out" not in args:  # never the default folder in the working directory
        args = (*args, "--out", str(Path(args[args.index("--db") + 1]).parent / "out")) if "--db" in args else args
    r = CliRunner().invoke(cli, ["tournament", *args, "--quiet"])
    return r.exit_code, r.output


def write_event(path: Path, entrants: list[dict[str, Any]], time_: dict[str, Any] | None = None,
                ratings: dict[str, Any] | None = None, **event: Any) -> Path:
    lines = ["[event]", 'name = "t"', 'format = "self"', "deals = 1", "target = 50"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in event.items()]
    lines += ["[time]"] + [f"{k} = {v}" for k, v in {"per_move_ms": 10000, "connect_timeout_s": 60, **(time_ or {})}.items()]
    if ratings:
        lines += ["[ratings]"] + [f"{k} = {v}" for k, v in ratings.items()]
    lines += ["[bots]", 'fresh_process = "never"']
    for e in entrants:
        lines.append("[[entrants]]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in e.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


GREEDY = [{"name": "greedy", "bot": "greedy"}, {"name": "random", "bot": "random"}]


def one_line_error(code: int, out: str) -> str:
    """The error is one line (after any warnings about the config, each a line of its own)."""
    assert code == 2, out
    out = "".join(line for line in out.splitlines(keepends=True) if not line.startswith("warning: "))
    assert out.startswith("Error: ") and out.count("\n") == 1, out
    return out


# ---------------------------------------------------------------------- bad inputs

@pytest.mark.parametrize(("section", "setting", "says"), [
    ("time", "bank_ms = -1000", "[time].bank_ms: -1000 is out of range; valid: an integer from 0 to 86400000"),
    ("time", f"per_move_ms = {2**63 - 1}", "[time].per_move_ms: 9223372036854775807 is out of range"),
    ("time", "connect_timeout_s = nan", "[time].connect_timeout_s: nan is out of range"),
    ("ratings", "tau = nan", "[ratings].tau: nan is out of range; valid: a finite number >= 0"),
    ("ratings", "tau = inf", "[ratings].tau: inf is out of range"),
    ("sandbox", "cpu_cores = nan", "[sandbox].cpu_cores: nan is not a number"),
    ("sandbox", "cpu_cores = inf", "[sandbox].cpu_cores: inf is not a number"),
    ("sandbox", "cpu_cores = 1e30", "[sandbox].cpu_cores: 1e+30 is out of range; give at most 4096"),
    ("sandbox", f"memory_mb = {2**62}", f"[sandbox].memory_mb: {2**62} is out of range"),
    ("event", "target = 99999999999999999999", "[event].target: 99999999999999999999 is out of range; valid: an "
                                               "integer from 1 to 1000000"),
    ("event", f"round_cap = {2**40}", f"[event].round_cap: {2**40} is out of range"),
])
def test_bad_values_are_refused_before_the_event_is_registered(tmp_path: Path, section: str, setting: str,
                                                               says: str) -> None:
    config = tmp_path / "bad.toml"
    head = f'[event]\nname = "bad"\nformat = "self"\n'
    config.write_text((f"{head}{setting}\n" if section == "event" else f"{head}[{section}]\n{setting}\n") +
                      '[[entrants]]\nname = "a"\nbot = "greedy"\n[[entrants]]\nname = "b"\nbot = "random"\n')
    out = one_line_error(*tournament(str(config), "--db", str(tmp_path / "x.db"), "--out", str(tmp_path / "o")))
    assert says in out
    assert not (tmp_path / "x.db").exists()


def test_a_config_that_is_not_utf8(tmp_path: Path) -> None:
    config = tmp_path / "latin1.toml"
    config.write_bytes('[event]\nname = "caf\u00e9"\n'.encode("latin-1"))
    out = one_line_error(*tournament(str(config), "--db", str(tmp_path / "x.db")))
    assert f"{config}: not UTF-8 text" in out and not (tmp_path / "x.db").exists()


def test_db_paths_that_cannot_work(tmp_path: Path) -> None:
    config = write_event(tmp_path / "e.toml", GREEDY)
    out = one_line_error(*tournament(str(config), "--db", str(tmp_path / "no" / "such" / "x.db")))
    assert f"the folder {tmp_path / 'no' / 'such'} does not exist" in out and not (tmp_path / "no").exists()
    code, out = tournament(str(config), "--db", str(tmp_path))
    assert code == 2 and f"Invalid value for '--db': File '{tmp_path}' is a directory" in out
    # --out where a folder cannot be made.
    (tmp_path / "plain-file").write_text("x")
    out = one_line_error(*tournament(str(config), "--db", str(tmp_path / "x.db"), "--out", str(tmp_path / "plain-file" / "o")))
    assert f"--out {tmp_path / 'plain-file' / 'o'}: cannot write there" in out and not (tmp_path / "x.db").exists()


def test_another_applications_sqlite_file_is_left_untouched(tmp_path: Path) -> None:
    other = tmp_path / "crm.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    con.execute("INSERT INTO customers VALUES (1, 'Ada')")
    con.commit()
    con.close()
    before = hashlib.sha256(other.read_bytes()).hexdigest()
    config = write_event(tmp_path / "e.toml", GREEDY)
    out = one_line_error(*tournament(str(config), "--db", str(other)))
    assert "an SQLite database of another application (tables: customers); it was left untouched" in out
    assert hashlib.sha256(other.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("crm")) == ["crm.db"]  # no -wal, no -shm
    text = tmp_path / "notes.db"
    text.write_text("shopping list\n")
    out = one_line_error(*tournament(str(config), "--db", str(text)))
    assert "not an SQLite database" in out and text.read_text() == "shopping list\n"


def test_a_damaged_database_is_reported_not_a_traceback(tmp_path: Path) -> None:
    db = tmp_path / "league.db"
    play_in_process(config_of(bots("a", "b", "c", "d"), deals=1, name="t"), db).close()
    data = bytearray(db.read_bytes())
    page = 4096
    assert len(data) > 6 * page
    data[3 * page:5 * page] = os.urandom(2 * page)  # two pages of the matches/records b-trees
    db.write_bytes(bytes(data))
    config = write_event(tmp_path / "e.toml", GREEDY)
    out = one_line_error(*tournament(str(config), "--db", str(db)))
    assert f"{db} is damaged" in out and "Restore it from a copy, or give --db a new file" in out


@pytest.fixture
def mounted(tmp_path: Path) -> Iterator[Any]:
    """Mount small tmpfs file systems (read-only, or nearly full) for a test; unmounted after."""
    points: list[Path] = []

    def mount(name: str, options: str) -> Path:
        point = tmp_path / name
        point.mkdir()
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)], capture_output=True, text=True)
        if r.returncode != 0:
            if os.environ.get("CI") == "true":
                pytest.fail(f"cannot mount a tmpfs here (CI needs root with mount): {r.stderr.strip()}")
            pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
        points.append(point)
        return point

    yield mount
    for p in points:
        subprocess.run(["umount", str(p)], capture_output=True)


def test_read_only_and_full_file_systems(tmp_path: Path, mounted: Any) -> None:
    config = write_event(tmp_path / "e.toml", GREEDY)
    ro = mounted("ro", "ro,size=1m")
    out = one_line_error(*tournament(str(config), "--db", str(ro / "x.db"), "--out", str(tmp_path / "o")))
    assert f"--db {ro / 'x.db'}: cannot create a file in {ro} (not writable)" in out
    # An existing event database on a file system that became read-only.
    held = mounted("held", "size=4m")
    play_in_process(config_of(bots("a", "b", "c", "d"), deals=1, name="t"), held / "x.db").close()
    subprocess.run(["mount", "-o", "remount,ro", str(held)], check=True)
    out = one_line_error(*tournament(str(config), "--db", str(held / "x.db"), "--out", str(tmp_path / "o")))
    assert f"--db {held / 'x.db'}: the file or its folder is read-only" in out
    full = mounted("full", "size=64k")
    st = os.statvfs(full)
    (full / "filler").write_bytes(b"\0" * (st.f_bavail * st.f_frsize))  # every block taken
    out = one_line_error(*tournament(str(config), "--db", str(full / "x.db"), "--out", str(tmp_path / "o")))
    assert f"{full / 'x.db'}: the disk is full" in out and "run the same command again" in out


# ---------------------------------------------------------------------- one writer

def test_a_second_writer_is_refused_naming_the_holder_and_the_lock_dies_with_it(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom sevenrocks.server.events.store import Store\n"
         f"s = Store({str(db)!r}, writer=True)\nprint('locked', flush=True)\ntime.sleep(120)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        config = write_event(tmp_path / "e.toml", GREEDY)
        out = one_line_error(*tournament(str(config), "--db", str(db), "--out", str(tmp_path / "o")))
        assert f"is in use by another sevenrocks tournament (pid {holder.pid} on host {socket.gethostname()}" in out
        with Store(db) as reader:  # readers (sevenrocks leaderboard) are never blocked
            assert reader.events() == []
    finally:
        holder.kill()
        holder.wait()
    # The holder is gone (kill -9: no cleanup at all); its lock went with it.
    code, out = tournament(str(config), "--db", str(db), "--out", str(tmp_path / "o"))
    assert code == 0, out
    with Store(db) as store:
        assert len(store.matches()) == 2 and store.events()[0].finished


# ---------------------------------------------------------------------- identity and replay

def test_a_changed_bot_is_refused_then_replayed_and_a_finished_event_plays_nothing(tmp_path: Path) -> None:
    bot = tmp_path / "mybot.py"
    shutil.copy(HERE / "bots" / "pid_bot.py", bot)
    entrants = [{"name": "greedy", "bot": "greedy"}, {"name": "mine", "command": [sys.executable, str(bot)]}]
    config = write_event(tmp_path / "e.toml", entrants)
    db, out = tmp_path / "id.db", tmp_path / "o"
    code, text = tournament(str(config), "--db", str(db), "--out", str(out))
    assert code == 0, text

    def rows() -> list[tuple[Any, ...]]:
        con = sqlite3.connect(db)
        try:
            return con.execute("SELECT match_id, identities, scores FROM matches ORDER BY idx").fetchall()
        finally:
            con.close()

    first = rows()
    assert len(first) == 2
    # The file behind the same command changed.
    bot.write_text(bot.read_text() + "\n# tuned\n")
    err = one_line_error(*tournament(str(config), "--db", str(db), "--out", str(out)))
    assert f"mine: content.file {bot}" in err and "--replay mine" in err
    assert rows() == first
    # Another command.
    write_event(config, [entrants[0], {"name": "mine", "command": [sys.executable, "-X", "utf8", str(bot)]}])
    err = one_line_error(*tournament(str(config), "--db", str(db), "--out", str(out)))
    assert "mine: command" in err and "-X" in err and rows() == first
    # Changed settings: every match depends on them, so no replay of one entrant fixes it.
    write_event(tmp_path / "clock.toml", entrants, time_={"per_move_ms": 9000})
    err = one_line_error(*tournament(str(tmp_path / "clock.toml"), "--db", str(db), "--out", str(out)))
    assert "[time].per_move_ms 10000 -> 9000" in err and "another [event] name" in err
    write_event(tmp_path / "tau.toml", entrants, ratings={"tau": 0.1})
    err = one_line_error(*tournament(str(tmp_path / "tau.toml"), "--db", str(db), "--out", str(out)))
    assert "[ratings].tau 0.0 -> 0.1" in err
    # --replay plays exactly that entrant's matches under its new identity; the old ones are history.
    code, text = tournament(str(config), "--db", str(db), "--out", str(out), "--replay", "mine")
    assert code == 0, text
    assert "replayed mine: its matches were played again as mine@2" in text
    again = rows()
    assert [r[0] for r in again] == [r[0] for r in first]
    assert all(a[1] != b[1] for a, b in zip(again, first))  # the new identity is stored with each match
    with Store(db) as store:
        assert store.history_count("t") == 2 and store.entrant_states("t")["mine"].version == 2
        assert store.events()[0].finished
        from sevenrocks.server.stats.ratings import rebuild

        rebuilt = rebuild(store.results(), True).rows()
        assert {(k, s): (mu, sg) for k, s, mu, sg in rebuilt} == store.stored_ratings("t")
    # A finished event says so and plays nothing.
    code, text = tournament(str(config), "--db", str(db), "--out", str(out))
    assert code == 0 and "is already finished" in text and "nothing to play" in text and rows() == again


def test_a_billion_deals_start_at_once(tmp_path: Path) -> None:
    config = write_event(tmp_path / "huge.toml", GREEDY, deals=10**9)
    config.write_text(config.read_text().replace("deals = 1\n", ""))
    db = tmp_path / "huge.db"
    p = subprocess.Popen([sys.executable, "-m", "sevenrocks.server.cli", "tournament", str(config), "--db", str(db),
                          "--out", str(tmp_path / "o"), "--quiet"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert p.poll() is None, p.communicate()[0]
            assert time.monotonic() < deadline, "no match stored"
            try:
                con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
                n = con.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
                total = con.execute("SELECT total FROM events").fetchone()[0]
                con.close()
            except (sqlite3.Error, TypeError):
                n = 0
            if n:
                break
            time.sleep(0.1)
        assert total == 2 * 10**9
        p.terminate()
        assert p.wait(60) == 143
    finally:
        if p.poll() is None:
            p.kill()


def test_a_longer_connect_timeout_is_not_a_new_identity(tmp_path: Path) -> None:
    from sevenrocks.server.events.config import parse_config
    from sevenrocks.server.events.identity import digest, entrant_identity

    def ident(connect: float, per_move: int) -> str:
        cfg = parse_config({"event": {"format": "self"}, "time": {"connect_timeout_s": connect, "per_move_ms": per_move},
                            "entrants": GREEDY}, "<t>")
        return digest(entrant_identity(cfg, cfg.entrants[0]))

    assert ident(20, 1000) == ident(120, 1000) != ident(20, 999)


def test_a_resume_with_another_time_bank_is_another_identity() -> None:
    """A resume whose [time] bank_ms changed is refused: the bank decides how matches are played."""
    from sevenrocks.server.events.config import parse_config
    from sevenrocks.server.events.identity import digest, entrant_identity

    def ident(bank: int) -> str:
        cfg = parse_config({"event": {"format": "self"}, "time": {"bank_ms": bank}, "entrants": GREEDY}, "<t>")
        return digest(entrant_identity(cfg, cfg.entrants[0]))

    assert ident(0) != ident(30_000) != ident(60_000)
