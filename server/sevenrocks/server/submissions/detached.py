"""``python -I -S detached.py PARENT LIMITS_JSON -- ARGV...``: arm the parent-death signal, set limits, exec ARGV.

Why a program and not a ``preexec_fn``: the league's process runs gRPC (the
referee), whose threads make Python code between ``fork()`` and ``exec()`` unsafe.
With a ``preexec_fn``, Python forks with gRPC's fork handlers, and the child can
crash before it ever execs (seen here in one start of every 3 to 7 while the
referee's streams were busy: SIGSEGV, no output, at most a line of gRPC's epoll
noise on stderr). A submission's check then "failed" with that line for its log,
the check's own report never written. Without a ``preexec_fn`` Python starts the
child with no Python code after the fork; this program, a fresh process, does the
rest before the real command's first instruction.

Standard library only; the harness imports it only for :func:`command`, its command
line. ``LIMITS_JSON`` maps ``RLIMIT_*`` names to one value each (soft = hard).
"""

import ctypes
import json
import os
import resource
import signal
import sys

PR_SET_PDEATHSIG = 1


def main(argv: list[str]) -> None:
    parent, limits, rest = int(argv[0]), json.loads(argv[1]), argv[argv.index("--") + 1:]
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the league died before the signal was armed
            os._exit(137)
    for name, value in limits.items():
        resource.setrlimit(getattr(resource, name), (value, value))
    os.execvp(rest[0], rest)


def command(argv: list[str], limits: dict[str, int] | None = None) -> list[str]:
    """``argv`` started through this program: it dies with the calling process, under ``limits``."""
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), str(os.getpid()), json.dumps(limits or {}),
            "--", *argv]


if __name__ == "__main__":
    main(sys.argv[1:])
