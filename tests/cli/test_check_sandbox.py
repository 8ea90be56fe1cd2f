"""``sevenrocks check`` runs the bot as an event would: same sandbox, working folder, environment.

So a bot the event's sandbox cannot start fails the check too, the report names the
sandbox, and a stream the referee refuses is reported with the referee's own status
and reason. Real bubblewrap (the default, ``auto``, picks it; under CI a missing one
fails), real bot processes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..user_paths import require_default_sandbox, user_env

HERE = Path(__file__).parent
SEVENROCKS = Path(sys.executable).with_name("sevenrocks")

#: A bot that loads "weights" from a folder beside its own, outside anything it is given.
NEEDS_OUTSIDE = '''import os, sys
from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.client import run

here = os.path.dirname(os.path.abspath(__file__))
WEIGHTS = open(os.path.join(here, "..", "data", "weights.txt")).read()


class Outside(Bot):
    def choose_move(self, view):
        return view.legal_moves()[0]


run(Outside())
'''


def check(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SEVENROCKS), "check", *args], cwd=cwd, env=user_env(), capture_output=True,
                          text=True, timeout=300)


def test_a_bot_the_sandbox_cannot_start_fails_the_check_as_it_would_fail_the_event(tmp_path: Path) -> None:
    require_default_sandbox()
    for d in ("bot", "data"):
        (tmp_path / d).mkdir(mode=0o755)
    os.chmod(tmp_path, 0o755)
    (tmp_path / "data" / "weights.txt").write_text("0.5")
    (tmp_path / "bot" / "bot.py").write_text(NEEDS_OUTSIDE)
    uncontained = check(tmp_path / "bot", "--sandbox", "off", "--phase", "fives-2", "--", "python", "bot.py")
    assert uncontained.returncode == 0, uncontained.stdout + uncontained.stderr
    assert "sandbox: off" in uncontained.stdout
    default = check(tmp_path / "bot", "--phase", "fives-2", "--", "python", "bot.py")
    assert default.returncode == 1, default.stdout + default.stderr
    assert "sandbox: bwrap" in default.stdout
    assert "before it connected" in default.stdout and "weights.txt" in default.stdout, default.stdout


def test_a_folder_the_bots_uid_cannot_read_fails_the_check(tmp_path: Path) -> None:
    require_default_sandbox()
    if os.geteuid() != 0:
        pytest.skip("bots get a uid of their own only when the harness is root")
    os.chmod(tmp_path, 0o755)
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "bot.py").write_text(NEEDS_OUTSIDE)
    done = check(tmp_path, "--phase", "fives-2", "--", "python", "private/bot.py")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL: the sandbox an event would use refuses this bot" in done.stderr and "chmod -R o+rX" in done.stderr


@pytest.mark.parametrize("mode, status", [
    ("no-token", "UNAUTHENTICATED: missing or unknown token"),
    ("bad-token", "UNAUTHENTICATED: missing or unknown token"),
    ("version", "FAILED_PRECONDITION: protocol version 99 is not supported"),
    ("no-hello", "INVALID_ARGUMENT: the first message on the stream must be a Hello"),
])
def test_a_refused_handshake_is_reported_as_the_referee_saw_it(mode: str, status: str) -> None:
    require_default_sandbox()
    done = check(HERE / "bots", "--phase", "seven-rocks", "--phase", "fives-2", "--connect-timeout", "15", "--",
                 "python", "handshake_bot.py", mode)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "sandbox: bwrap" in out
    assert f"the referee refused its stream: {status}" in out, out
    assert "before it connected" not in out
    assert f"not played: the referee refused the bot's stream ({status.split(':')[0]})" in out
    assert "faults: refused" in out


def test_the_report_names_the_sandbox_and_a_missing_bwrap_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where bubblewrap is missing, ``auto`` falls back as an event would (the report says so) and
    ``--sandbox bwrap`` fails the check, as it would refuse the event."""
    from click.testing import CliRunner

    from sevenrocks.server.cli import cli
    from sevenrocks.server.sandbox import sandbox

    monkeypatch.setattr(sandbox, "BWRAP", "/nonexistent/bwrap")
    runner = CliRunner()
    done = runner.invoke(cli, ["check", "--sandbox", "bwrap", "--phase", "fives-2", "--", "greedy"])
    assert done.exit_code == 1, done.output
    assert "FAIL: the sandbox an event would use refuses this bot: --sandbox bwrap" in done.output
    assert "/nonexistent/bwrap is not installed" in done.output
    done = runner.invoke(cli, ["check", "--sandbox", "auto", "--phase", "fives-2", "--", "greedy"])
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert lines[1].startswith("sandbox: rlimits") and lines[2].startswith("warning: bubblewrap is not usable")
