"""The weaker modes as root: ``rlimits`` never runs a bot as root, ``off`` says it does.

A bot in ``rlimits`` mode (what ``auto`` falls back to without bubblewrap) used to run
as root whenever the Python environment was not readable by others (this machine's
Python lives under ``/root``): it read ``/etc/shadow`` and the event database, wrote
the installed reference bots and reached the host's TCP ports. Now it runs under a
uid of its own with no groups, in a mount namespace where the event's files are
empty stand-ins and a network namespace with nothing in it, and still imports the
harness's Python and SDK.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import sevenrocks.bots.greedy as greedy
from sevenrocks.server.events.config import config_warnings, parse_config
from sevenrocks.server.sandbox.sandbox import Sandbox, SandboxSettings

PROBE = """
import json, os, socket, sys
import sevenrocks.sdk.client  # the SDK imports: the harness's Python is there for the bot
out = {"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(), "python": sys.version_info[:2] == (%d, %d)}
def attempt(what, fn):
    try:
        out[what] = fn()
    except OSError as e:
        out[what] = "refused: " + (e.strerror or type(e).__name__)
attempt("shadow", lambda: len(open("/etc/shadow").read()) > 0)
attempt("database", lambda: open(%r).read())
attempt("write_greedy", lambda: open(%r, "a").close() or "written")
attempt("tcp", lambda: socket.create_connection(("127.0.0.1", %d), timeout=3).close() or "connected")
attempt("root_home", lambda: sorted(os.listdir("/root")))
print(json.dumps(out))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the uid of its own applies when the harness is root")
def test_an_rlimits_bot_runs_as_its_own_uid_and_sees_none_of_the_harness(tmp_path: Path) -> None:
    import tempfile

    open_dir = Path(tempfile.mkdtemp(prefix="sevenrocks-test-"))  # pytest's own folders are 0700
    open_dir.chmod(0o755)
    db = open_dir / "event.db"
    db.write_text("every hand of the event")
    db.chmod(0o644)  # even readable by everyone: the bot gets an empty stand-in
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    code = PROBE % (*sys.version_info[:2], str(db), greedy.__file__, port)
    try:
        with Sandbox(SandboxSettings(mode="rlimits"), hidden=[db]) as sb:
            assert "own uid per bot" in sb.describe()
            assert not [w for w in sb.warnings if "root" in w], sb.warnings
            prep = sb.prepare([sys.executable, "-c", code], sb.environment(os.environ), "probe")
            try:
                r = subprocess.run(prep.argv, env=prep.env, capture_output=True, text=True, timeout=60)
            finally:
                sb.release(prep)
    finally:
        listener.close()
        db.unlink()
        open_dir.rmdir()
    assert r.returncode == 0, r.stderr
    seen = json.loads(r.stdout)
    assert seen["uid"] >= 2_000_000_000 and seen["gid"] == seen["uid"] and seen["groups"] == []
    assert seen["python"] is True
    assert seen["shadow"] == "refused: Permission denied"
    assert seen["database"] == ""  # the stand-in
    assert seen["write_greedy"].startswith("refused"), seen
    assert seen["tcp"].startswith("refused"), seen  # no network at all: only the referee's Unix socket
    assert seen["root_home"] == [".pyenv"] or seen["root_home"].startswith("refused"), seen


def test_off_as_root_says_so() -> None:
    with Sandbox(SandboxSettings(mode="off")) as sb:
        said = any("every bot runs as root" in w for w in sb.warnings)
        assert said == (os.geteuid() == 0)


def test_duplicate_deals_with_one_process_per_bot_are_named_as_a_risk() -> None:
    base = {"event": {"format": "self", "duplicate": True},
            "entrants": [{"name": "a", "bot": "greedy"}, {"name": "b", "bot": "random"}]}
    [warning] = config_warnings(parse_config({**base, "bots": {"fresh_process": "never"}}, "<t>"))
    assert 'fresh_process = "never" with duplicate deals' in warning and "remember" in warning
    assert config_warnings(parse_config(base, "<t>")) == []
    no_dup = {**base, "event": {"format": "self", "duplicate": False}, "bots": {"fresh_process": "never"}}
    assert config_warnings(parse_config(no_dup, "<t>")) == []


def test_an_rlimits_event_plays_with_bots_from_the_installed_environment(tmp_path: Path) -> None:
    """The reference bots import from the harness's venv (and its Python under /root, here) as their own uid."""
    from .helpers import tournament, write_config

    config = write_config(tmp_path / "rl.toml", [{"name": "g", "bot": "greedy"}, {"name": "r", "bot": "random"}],
                          {"mode": "rlimits"}, name="rl", format="self", deals=1, target=30)
    proc = tournament(config, tmp_path / "rl.db", tmp_path / "out")
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, output
    if os.geteuid() == 0:
        assert "own uid per bot" in output and "no network" in output, output
