"""A bot in bubblewrap holds at most four connections to the referee through its own socket.

docs/security.md promises 4 at once (a gRPC channel needs one, two while it
reconnects). A bot in the real sandbox opens ten connections to its socket and
holds them; its gate (sandbox/gates.py) relays four and leaves the rest unaccepted.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

from sevenrocks.server.sandbox.sandbox import BOT_SOCKET, Sandbox, SandboxSettings

from .helpers import require_bwrap

HOLDER = f"""
import socket, sys, time
held = []
for _ in range(10):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(1)
    try:
        s.connect({BOT_SOCKET!r})
        held.append(s)
    except OSError:
        s.close()
print(len(held), flush=True)
time.sleep(60)
"""


def test_a_bot_gets_four_connections_relayed_at_once_and_no_more() -> None:
    require_bwrap()
    with Sandbox(SandboxSettings(mode="bwrap")) as sb:
        assert sb.socket_path is not None
        referee = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # stands for the referee: accepts, holds
        referee.bind(str(sb.socket_path))
        referee.listen(64)
        prep = sb.prepare([sys.executable, "-c", HOLDER], {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, "holder")
        bot = subprocess.Popen(prep.argv, env=prep.env, stdout=subprocess.PIPE, text=True, start_new_session=True)
        try:
            assert bot.stdout is not None
            connected = int(bot.stdout.readline())
            assert prep.gate is not None
            deadline = time.monotonic() + 10
            while prep.gate.open < 4 and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.5)  # room for a fifth, were it allowed
            assert connected >= 5, connected  # the kernel's listen queue takes more than the gate relays
            assert (prep.gate.open, prep.gate.accepted) == (4, 4)
        finally:
            os.killpg(bot.pid, 9)
            bot.wait(30)
            sb.release(prep)
            referee.close()
