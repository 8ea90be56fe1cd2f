"""Looks for other bots' referee sockets: every Unix socket path any process's network
namespace lists in /proc/<pid>/net/unix (the harness's included: its pid is in /proc, its
command line world-readable), then tries to connect to each one that is not its own."""

import os
import socket

from attack import connect, main, report


def prowl() -> None:
    mine = os.environ["SEVENROCKS_REFEREE"].removeprefix("unix:")
    paths: set[str] = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/net/unix") as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) >= 8 and fields[7].startswith("/") and "sevenrocks-run-" in fields[7]:
                paths.add(fields[7])
    foreign = sorted(p for p in paths if p != mine)
    results = {p: connect(socket.AF_UNIX, p) for p in foreign}
    report("prowl", mine=mine, found=len(foreign), connected=sorted(p for p, r in results.items() if r == "ok"),
           refused=sorted(set(results.values())))


main(prowl)
