"""Floods the referee's Unix socket from its first decision: FLOOD_PROCS children (forked at start,
before the bot's gRPC threads exist, so forking is quick) each open as many connections as they
can for FLOOD_S seconds and hold them; the bot reports how many got through, and plays on."""

import errno
import os
import socket
import threading
import time

from attack import Attacker, report
from sevenrocks.sdk.client import run


def child(path: str, go: int, counts: int, seconds: float) -> None:
    os.read(go, 1)  # the bot's first decision
    held = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(0.2)
        try:
            s.connect(path)
            held.append(s)
        except OSError as e:
            s.close()
            if e.errno == errno.EMFILE:
                break
    os.write(counts, f"{len(held)}\n".encode())
    time.sleep(3600)  # hold them until the harness ends this bot
    os._exit(0)


def main() -> None:
    path = os.environ["SEVENROCKS_REFEREE"].removeprefix("unix:")
    procs, seconds = int(os.environ.get("FLOOD_PROCS", "60")), float(os.environ.get("FLOOD_S", "15"))
    go_r, go_w = os.pipe()
    counts_r, counts_w = os.pipe()
    forked = 0
    for _ in range(procs):
        if os.fork() == 0:
            child(path, go_r, counts_w, seconds)
        forked += 1
    os.close(counts_w)

    def tally() -> None:
        total = done = 0
        with os.fdopen(counts_r) as f:
            for line in f:
                total += int(line)
                done += 1
                if done == forked:
                    break
        report("flood", procs=forked, connected=total)

    def release() -> None:
        os.write(go_w, b"x" * forked)
        threading.Thread(target=tally, daemon=True).start()

    run(Attacker(release, at_first_move=True), argv=[])


main()
