"""Starts two ordinary children at start-up (its own process group, no setsid), meant to run
on when the bot is gone; their command lines carry SEVENROCKS_BOT_MARK."""

import os
import subprocess
import sys

from attack import main, report


def children() -> None:
    mark = os.environ.get("SEVENROCKS_BOT_MARK", "sevenrocks-child")
    for _ in range(2):
        subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(1)", mark])
    report("children", started=2)


main(children, at_first_move=False)
