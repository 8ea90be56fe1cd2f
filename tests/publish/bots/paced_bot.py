"""A bot that thinks for PACE_MS milliseconds before each move (then plays greedily).

Live spectating is about matches people can follow: bots that answer in microseconds
turn a live test into a CPU race between the referee, four bots and the browser on a
two-core machine. A paced bot plays at the rhythm of a thinking one.
"""

from __future__ import annotations

import os
import time

from sevenrocks.bots.greedy import GreedyBot
from sevenrocks.sdk.client import run
from sevenrocks.sdk.rules import Move
from sevenrocks.sdk.view import SeatView


class Paced(GreedyBot):
    name = "paced"

    def choose_move(self, view: SeatView) -> Move:
        time.sleep(int(os.environ.get("PACE_MS", "20")) / 1000)
        return super().choose_move(view)


if __name__ == "__main__":
    run(Paced())
