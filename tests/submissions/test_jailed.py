"""``sandbox.jailed``: what a ``preexec_fn`` did for the build and the check, done by the jail before exec.

The league starts the build and the check through the jail (a fork with gRPC's handlers
crashed them, see test_check_log.py); it must still give them the limits, and still
kill them when the league dies, as the ``preexec_fn`` did.
"""

from __future__ import annotations

import os
import signal
import subprocess, sys
import sys
import time
from pathlib import Path

from sevenrocks.server.sandbox.sandbox import jailed

LEAGUE = '''\
import subprocess, sys
from sevenrocks.server.sandbox.sandbox import jailed
child = subprocess.Popen(jailed(["sleep", "120"]))
print(child.pid, flush=True)
sys.stdin.read()  # until the test kills this process
'''


def test_the_started_program_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    script = tmp_path / "league.py"
    script.write_text(LEAGUE)
    league = subprocess.Popen([sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert league.stdout is not None
    child = int(league.stdout.readline())
    deadline = time.monotonic() + 30
    while open(f"/proc/{child}/cmdline", "rb").read().split(b"\0")[0] != b"sleep":  # exec'd
        assert time.monotonic() < deadline
        time.sleep(0.05)
    os.kill(league.pid, signal.SIGKILL)
    league.wait()
    deadline = time.monotonic() + 30
    while os.path.exists(f"/proc/{child}") and b"Z" not in _state(child):
        assert time.monotonic() < deadline, "the program outlived the process that started it"
        time.sleep(0.05)


def test_the_limits_are_set_before_the_program_starts() -> None:
    out = subprocess.run(jailed(["sh", "-c", "ulimit -v; ulimit -f; ulimit -c"],
                                {"RLIMIT_AS": 512 * 2**20, "RLIMIT_FSIZE": 2**20, "RLIMIT_CORE": 0}),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [str(512 * 1024), str(2**20 // 512), "0"]  # KiB, 512-byte blocks, blocks


def _state(pid: int) -> bytes:
    try:
        return open(f"/proc/{pid}/stat", "rb").read().rsplit(b")", 1)[1].split()[0]
    except FileNotFoundError:
        return b"Z"
