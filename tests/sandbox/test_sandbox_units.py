"""The sandbox's parts on their own: the Unix socket path to the referee, the config keys,
what a sandboxed bot can see of the files, and the log cap."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sevenrocks.sdk.client import ClientError, settings_from
from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.server.events.config import ConfigError, parse_config
from sevenrocks.server.referee import Referee, TimeControl
from sevenrocks.server.sandbox.launch import BotProcess
from sevenrocks.server.sandbox.sandbox import Limits, Sandbox, SandboxError, SandboxSettings

from .helpers import require_bwrap


def test_a_match_over_the_referees_unix_socket(tmp_path: Path) -> None:
    """The SDK dials ``unix:/path``; the referee listens there besides its TCP port."""
    async def go() -> None:
        tokens = {"a": "token-a-0123456789", "b": "token-b-0123456789"}
        referee = Referee(tokens, TimeControl(10000))
        sock = tmp_path / "r.sock"
        await referee.start("127.0.0.1:0", unix_socket=sock)
        bots = [BotProcess().start("greedy", f"unix:{sock}", tokens[n], tmp_path / f"{n}.log", entrant=n)
                for n in tokens]
        try:
            m = await referee.play_match("u1", make_ruleset("fives", 2, 60), 3, ["a", "b"])
            assert m.offender is None and m.reason in ("target", "round_cap")
        finally:
            await referee.stop()
            for b in bots:
                b.terminate()

    asyncio.run(go())
    assert settings_from([], referee="unix:/x/y.sock", token="t").referee == "unix:/x/y.sock"
    with pytest.raises(ClientError, match="socket's path"):
        settings_from([], referee="unix:", token="t")


def test_sandbox_keys_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SEVENROCKS_SANDBOX", raising=False)  # the suite's own default (tests/conftest.py)
    base = {"entrants": [{"name": "a", "bot": "greedy"}, {"name": "b", "bot": "random"}], "event": {"format": "self"}}
    cfg = parse_config({**base, "sandbox": {"mode": "rlimits", "memory_mb": 256, "cpu_cores": 0.5}}, "<t>")
    assert cfg.sandbox.mode == "rlimits" and cfg.sandbox.limits == Limits(memory_mb=256, cpu_cores=0.5)
    assert parse_config(base, "<t>").sandbox == SandboxSettings()
    for bad, message in [
        ({"mode": "docker"}, "choose one of auto, bwrap, rlimits, off"),
        ({"memory_mb": -1}, "negative"),
        ({"memory_mb": 10}, "at least 64"),
        ({"max_processes": 4}, "at least 16"),
        ({"cpu_cores": "two"}, "expected an integer or a number"),
        ({"read_only": ["relative/path"]}, "absolute path"),
        ({"read_only": ["/"]}, "whole filesystem"),
        ({"swap": 1}, "unknown key 'swap'"),
    ]:
        with pytest.raises(ConfigError, match=message):
            parse_config({**base, "sandbox": bad}, "<t>")


def test_bwrap_mode_refuses_to_run_uncontained(monkeypatch: pytest.MonkeyPatch) -> None:
    from sevenrocks.server.sandbox import sandbox

    monkeypatch.setattr(sandbox, "BWRAP", "/nonexistent/bwrap")
    with pytest.raises(SandboxError, match="is not installed"):
        Sandbox(SandboxSettings(mode="bwrap"))
    with Sandbox(SandboxSettings(mode="auto")) as sb:
        assert sb.mode == "rlimits"
        assert any("not contain" in w or "resource limits only" in w for w in sb.warnings)


def run_in(sb: Sandbox, code: str, tmp_path: Path, name: str = "probe") -> subprocess.CompletedProcess[str]:
    prep = sb.prepare([sys.executable, "-c", code], sb.environment(os.environ), name)
    try:
        return subprocess.run(prep.argv, env=prep.env, capture_output=True, text=True, timeout=60)
    finally:
        sb.release(prep)


def test_a_bwrap_bot_sees_its_files_but_not_the_harnesss(tmp_path: Path) -> None:
    require_bwrap()
    db = tmp_path / "event.db"
    db.write_text("secret")
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("x")
    with Sandbox(SandboxSettings(mode="bwrap"), hidden=[db]) as sb:
        code = ("import os, sys, sevenrocks.bots.greedy as g\n"
                f"print(os.path.exists({str(db)!r}), os.path.exists({str(outside)!r}), os.path.exists(g.__file__),\n"
                "      os.getuid() != 0, os.getcwd(), sorted(p for p in os.listdir('/proc') if p.isdigit()))\n")
        r = run_in(sb, code, tmp_path)
    assert r.returncode == 0, r.stderr
    # It starts where the harness was started (read-only there), as docs/security.md says.
    assert r.stdout.split(maxsplit=4) == ["False", "False", "True", "True", f"{os.getcwd()} ['1', '2']\n"]


def test_a_bwrap_bot_given_the_databases_folder_still_cannot_read_the_database(tmp_path: Path) -> None:
    """A bot script that sits next to the event's database gets the folder, but not the database."""
    require_bwrap()
    os.chmod(tmp_path, 0o755)  # a bot's folder must be readable by the bot's own uid
    (tmp_path / "event.db").write_text("secret")
    (tmp_path / "helper.py").write_text("VALUE = 7\n")
    script = tmp_path / "bot.py"
    script.write_text("import helper, os\nprint(helper.VALUE, os.path.exists(os.path.join(os.path.dirname(__file__),"
                      " 'event.db')))\n")
    with Sandbox(SandboxSettings(mode="bwrap"), hidden=[tmp_path / "event.db"]) as sb:
        prep = sb.prepare([sys.executable, str(script)], sb.environment(os.environ), "neighbour")
        try:
            r = subprocess.run(prep.argv, env=prep.env, capture_output=True, text=True, timeout=60)
        finally:
            sb.release(prep)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["7", "False"]  # not even an empty stand-in: the file is not in its view


def test_the_log_is_cut_at_its_limit_with_a_marker(tmp_path: Path) -> None:
    log = tmp_path / "bot.log"
    with Sandbox(SandboxSettings(mode="off", limits=Limits(log_mb=1))) as sb:
        bot = BotProcess().start([sys.executable, "-c", "import sys\nfor _ in range(5): sys.stdout.write('y' * 2**20)"],
                                 "127.0.0.1:1", "t", log, sandbox=sb)
        assert bot.wait(60) == 0
        bot.terminate()
    text = log.read_text()
    assert len(text) < 2**20 + 500 and text[:2**20] == "y" * 2**20 and text[2**20] == "\n"
    assert "log truncated at 1 MiB" in text and "4194304 bytes of output were discarded" in text


def test_a_bot_folder_the_bots_uid_cannot_read_is_refused_with_the_fix(tmp_path: Path) -> None:
    require_bwrap()
    if os.geteuid() != 0:
        pytest.skip("bots get a uid of their own only when the harness is root")
    os.chmod(tmp_path, 0o700)
    script = tmp_path / "bot.py"
    script.write_text("print('hi')\n")
    with Sandbox(SandboxSettings(mode="bwrap")) as sb:
        with pytest.raises(SandboxError, match=r"chmod -R o\+rX"):
            sb.prepare([sys.executable, str(script)], sb.environment(os.environ), "private")


def test_sevenrocks_sandbox_sets_the_default_mode_and_a_config_still_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    base = {"entrants": [{"name": "a", "bot": "greedy"}, {"name": "b", "bot": "random"}], "event": {"format": "self"}}
    monkeypatch.setenv("SEVENROCKS_SANDBOX", "rlimits")
    assert parse_config(base, "<t>").sandbox.mode == "rlimits"
    assert parse_config({**base, "sandbox": {"mode": "bwrap"}}, "<t>").sandbox.mode == "bwrap"
    monkeypatch.setenv("SEVENROCKS_SANDBOX", "docker")
    with pytest.raises(ConfigError, match="SEVENROCKS_SANDBOX='docker': choose one of auto, bwrap, rlimits, off"):
        parse_config(base, "<t>")
    monkeypatch.delenv("SEVENROCKS_SANDBOX")
    assert parse_config(base, "<t>").sandbox.mode == "auto"
