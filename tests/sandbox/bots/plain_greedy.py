"""Greedy that lingers after the referee's Goodbye (as a program with other threads might), so
that the harness recycling it between matches has to stop it: its process ends "killed by
SIGTERM", as an outside stop would leave it, though the harness stopped it on purpose."""

import sys
import time

from sevenrocks.bots.greedy import GreedyBot
from sevenrocks.sdk.client import run

try:
    run(GreedyBot(), argv=sys.argv[1:])
except SystemExit:
    pass
time.sleep(3600)
