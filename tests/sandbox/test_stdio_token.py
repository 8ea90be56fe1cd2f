"""A stdio program never gets its entrant's token: not in its environment, not from its adapter.

docs/protocol.md says the adapter speaks to the referee and the program does not. The
attack run's program read the token from ``/proc/<adapter>/environ`` and
``/proc/<ppid>/mem`` (same uid, same sandbox) and could open its own stream. The adapter
drops the token from the program's environment and makes itself non-dumpable, so
the kernel refuses both files to the program. Real ``sevenrocks match`` in bubblewrap.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from click.testing import CliRunner

from sevenrocks.server.cli import cli

from .helpers import BOTS, require_bwrap


def test_a_stdio_program_in_the_sandbox_finds_no_token(tmp_path: Path) -> None:
    require_bwrap()
    seat = f"stdio:{sys.executable} {BOTS / 'stdio_token_snoop.py'}"
    result = CliRunner().invoke(cli, ["match", "--sandbox", "auto", "--seed", "5", "--logs", str(tmp_path),
                                      "--seat", seat, "--seat", "greedy", "--seat", "greedy", "--seat", "greedy"])
    assert result.exit_code == 0, result.output
    assert "sandbox: bwrap" in result.output or "bwrap" in (tmp_path / "sandbox.txt").read_text()
    logs = "".join(p.read_text(errors="replace") for p in tmp_path.glob("*.log"))
    [found] = re.findall(r"^SNOOP (.*)$", logs, re.M)
    seen = json.loads(found)
    assert seen["own"] is False, seen
    assert seen["environ"] == "PermissionError" and seen["mem"] == "PermissionError", seen


def test_no_environ_in_the_sandbox_holds_the_adapters_secret(tmp_path: Path) -> None:
    """``/proc/1/environ`` (bubblewrap's init) once held SEVENROCKS_TOKEN and
    SEVENROCKS_REFEREE. The program reads every ``/proc/N/environ`` and every open descriptor it can
    inside the real sandbox; none may hold either (the adapter gets them through a pipe)."""
    require_bwrap()
    seat = f"stdio:{sys.executable} {BOTS / 'stdio_environ_snoop.py'}"
    result = CliRunner().invoke(cli, ["match", "--sandbox", "auto", "--seed", "5", "--logs", str(tmp_path),
                                      "--seat", seat, "--seat", "greedy", "--seat", "greedy", "--seat", "greedy"])
    assert result.exit_code == 0, result.output
    assert "sandbox: bwrap" in result.output, result.output
    logs = "".join(p.read_text(errors="replace") for p in tmp_path.glob("*.log"))
    [found] = re.findall(r"^SNOOP (.*)$", logs, re.M)
    seen = json.loads(found)
    assert seen["read"] >= 1, seen  # at least its own environ, and bubblewrap's init's
    assert seen["found"] == {}, seen
