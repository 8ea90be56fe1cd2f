"""Leaves a grandchild in a session of its own, meant to outlive the bot and the event.

The grandchild's command line carries DAEMON_MARK so the test can look for it."""

import os
import sys

from attack import main, report


def daemonize() -> None:
    mark = os.environ.get("SEVENROCKS_BOT_MARK", "sevenrocks-daemon")
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", "import time\nwhile True: time.sleep(1)", mark])
        os._exit(0)
    os.wait()
    report("daemon", started=True)


main(daemonize, at_first_move=False)
