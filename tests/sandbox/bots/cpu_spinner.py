"""Burns every core with SPIN_PROCS child processes for SPIN_S seconds, then reports the CPU it got."""

import os
import resource
import time

from attack import main, report


def spin() -> None:
    procs, seconds = int(os.environ.get("SPIN_PROCS", "2")), float(os.environ.get("SPIN_S", "3"))
    start = time.monotonic()
    kids = []
    for _ in range(procs):
        pid = os.fork()
        if pid == 0:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                pass
            os._exit(0)
        kids.append(pid)
    for pid in kids:
        os.waitpid(pid, 0)
    wall = time.monotonic() - start
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    report("spin", cores=(used.ru_utime + used.ru_stime) / wall, wall=wall)


main(spin, at_first_move=False)
