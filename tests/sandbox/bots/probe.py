"""Reports, before it plays, what a launched bot holds and can reach: its whole environment (a
credential of the harness, SECRET_CREDENTIAL, must not be in it), the referee's own TCP port
(PROBE_TCP, host:port), another process's abstract Unix socket (PROBE_ABSTRACT, its name), and
how many files it may open (it opens /dev/null until refused, at most 5,000 times)."""

import errno
import os
import resource
import socket

from attack import connect, main, report


def open_files() -> tuple[int, str]:
    fds: list[int] = []
    why = "no limit met"
    try:
        while len(fds) < 5000:
            fds.append(os.open("/dev/null", os.O_RDONLY))
    except OSError as e:
        why = errno.errorcode.get(e.errno or 0, str(e))
    for fd in fds:
        os.close(fd)
    return len(fds), why


def probe() -> None:
    host, _, port = os.environ.get("PROBE_TCP", "127.0.0.1:1").rpartition(":")
    opened, refused = open_files()
    report("probe", env=dict(os.environ), uid=os.getuid(),
           tcp=connect(socket.AF_INET, (host, int(port))),
           abstract=connect(socket.AF_UNIX, "\0" + os.environ.get("PROBE_ABSTRACT", "none")),
           opened=opened, refused=refused, cpu_limit=list(resource.getrlimit(resource.RLIMIT_CPU)))


main(probe, at_first_move=False)
