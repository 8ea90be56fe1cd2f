"""A bot that plays its first legal move and crashes (``os._exit(3)``) on its 30th decision, once.

It stands for a third-party bot with a rare crash: the first process dies in the
middle of a match; the restarted one (which finds the marker file) plays on. Each
process prints its pid when it starts, so a test can tell the processes apart.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.client import run
from sevenrocks.sdk.rules import Move
from sevenrocks.sdk.view import SeatView


class CrashOnce(Bot):
    name = "crash-once"

    def __init__(self) -> None:
        super().__init__()
        self.turns = 0
        self.after = int(os.environ.get("CRASH_AFTER", "30"))
        self.marker = Path(os.environ["CRASH_MARKER"])

    def choose_move(self, view: SeatView) -> Move:
        self.turns += 1
        if self.turns == self.after and not self.marker.exists():
            self.marker.write_text(view.match_id)
            print(f"crashing on decision {self.turns} in {view.match_id}", file=sys.stderr, flush=True)
            os._exit(3)
        return view.legal_moves()[0]


if __name__ == "__main__":
    print(f"started pid {os.getpid()}", flush=True)
    run(CrashOnce())
