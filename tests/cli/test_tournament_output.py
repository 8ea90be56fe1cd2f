"""What ``sevenrocks tournament`` prints, as an author reads it in a log and in a terminal.

Real events (small, bots as subprocesses) run as commands: with stderr a pipe they
print plain progress lines and no bar; on a terminal (a pty) the sandbox line stays a
line of its own above the bar; a finished event says so before its tables; a crash
names the bot's whole log.
"""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

from ..fresh_env import fresh_env

BOTS = Path(__file__).resolve().parents[1] / "events" / "bots"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def write_event(folder: Path, *entrants: str, name: str = "ev") -> Path:
    text = f'[event]\nname = "{name}"\nformat = "self"\ndeals = 1\n' + "".join(entrants)
    path = folder / f"{name}.toml"
    path.write_text(text)
    return path


GREEDY = '[[entrants]]\nname = "greedy"\nbot = "greedy"\n'
RANDOM = '[[entrants]]\nname = "random"\nbot = "random"\n'


def tournament(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "sevenrocks.server.cli", "tournament", *args]
    return subprocess.run(argv, cwd=folder, env=fresh_env(), capture_output=True, text=True, timeout=600)


def test_plain_progress_lines_when_stderr_is_not_a_terminal_and_finished_said_first(tmp_path: Path) -> None:
    write_event(tmp_path, GREEDY, RANDOM)
    done = tournament(tmp_path, "ev.toml")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert "━" not in done.stderr  # no bar drawn into a log
    assert any(line.startswith("sandbox: ") for line in lines)
    progress = [line for line in lines if line.startswith("ev: ")]
    assert progress and progress[-1].startswith("ev: 2/2 matches") and "leader: " in progress[-1], lines

    again = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "tournament", "ev.toml"], cwd=tmp_path,
                           env=fresh_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    assert again.returncode == 0, again.stdout
    out = again.stdout
    finished = out.index("is already finished")
    assert finished < out.index("Bots — ") and "(2 of 2 matches stored)" in out  # before the tables, not under them
    assert "┏" not in out and "│" not in out  # a pipe gets plain tables


def test_on_a_terminal_the_sandbox_line_is_a_line_of_its_own(tmp_path: Path) -> None:
    write_event(tmp_path, GREEDY, RANDOM)
    master, slave = pty.openpty()
    env = {**fresh_env(), "COLUMNS": "120", "TERM": "xterm"}
    proc = subprocess.Popen([sys.executable, "-m", "sevenrocks.server.cli", "tournament", "ev.toml"], cwd=tmp_path,
                            env=env, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    raw = b""
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the pty closed: the command is done
                break
            if not chunk:
                break
            raw += chunk
        elif proc.poll() is not None:
            break
    assert proc.wait(60) == 0, raw.decode(errors="replace")[-3000:]
    os.close(master)
    text = ANSI.sub("", raw.decode(errors="replace"))
    assert "━" in text  # a terminal gets the bar
    segments = [seg for line in text.split("\n") for seg in line.split("\r")]
    sandbox = [seg for seg in segments if "sandbox: " in seg]
    assert sandbox and all(seg.startswith("sandbox: ") and "━" not in seg for seg in sandbox), sandbox


def test_a_crash_names_the_bots_whole_log(tmp_path: Path) -> None:
    crasher = (f'[[entrants]]\nname = "crasher"\ncommand = ["{sys.executable}", "{BOTS / "crashing_bot.py"}"]\n'
               '[bots]\nmax_crashes_in_row = 1\n')
    write_event(tmp_path, GREEDY, crasher)
    done = tournament(tmp_path, "ev.toml")
    line = next((x for x in done.stderr.splitlines() if x.startswith("crasher crashed in ")), None)
    assert line is not None, done.stderr
    assert f"its whole log: {Path('sevenrocks-out') / 'logs' / 'crasher.log'}" in line
    assert (tmp_path / "sevenrocks-out" / "logs" / "crasher.log").exists()
