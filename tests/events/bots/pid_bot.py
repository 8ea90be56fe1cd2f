"""A bot that plays its first legal move and prints ``<pid> <match id>`` for every match it sits in.

A test reads these lines from the bot logs to check which process played which match.
"""

from __future__ import annotations

import os

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.client import run
from sevenrocks.sdk.rules import Move
from sevenrocks.sdk.view import SeatView


class PidBot(Bot):
    name = "pid"

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def choose_move(self, view: SeatView) -> Move:
        if view.match_id not in self.seen:
            self.seen.add(view.match_id)
            print(f"{os.getpid()} {view.match_id}", flush=True)
        return view.legal_moves()[0]


if __name__ == "__main__":
    run(PidBot())
