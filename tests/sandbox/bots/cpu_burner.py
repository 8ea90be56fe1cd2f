"""At its first decision burns one core for up to BURN_S seconds (far beyond any CPU-seconds limit
the test sets), then plays on: only RLIMIT_CPU can stop it in time."""

import os
import time

from attack import main, report


def burn() -> None:
    end = time.monotonic() + float(os.environ.get("BURN_S", "60"))
    x = 0
    while time.monotonic() < end:
        x += 1
    report("burn", survived=True)


main(burn)
