"""A bot that plays its first legal move, then kills its own process after CRASH_AFTER decisions.

It stands for a third-party bot that segfaults mid-event: the process is gone
without a goodbye, and every match it still had seats in must be forfeited.
"""

from __future__ import annotations

import os

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.client import run
from sevenrocks.sdk.rules import Move
from sevenrocks.sdk.view import SeatView


class Crashing(Bot):
    name = "crashing"

    def __init__(self) -> None:
        super().__init__()
        self.turns = 0
        self.after = int(os.environ.get("CRASH_AFTER", "40"))

    def choose_move(self, view: SeatView) -> Move:
        self.turns += 1
        if self.turns >= self.after:
            os._exit(3)
        return view.legal_moves()[0]


if __name__ == "__main__":
    run(Crashing())
