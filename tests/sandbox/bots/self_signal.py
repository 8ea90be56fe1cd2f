"""A bot that stops itself with a signal "from outside" to have a match played again.

It stands for a bot that, whenever it is losing, sends itself SIGINT (or SIGTERM,
SIGHUP: ``QUIT_SIGNAL``) so that the harness takes its death for Ctrl-C and voids
the match instead of charging it. Here every process does it on its
``QUIT_AFTER``-th decision, so that it happens in every match it plays (five
voids of one match used to stop the whole event); with ``QUIT_DELAY_S``, at its
first decision that many seconds after it started instead.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import time

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.client import run
from sevenrocks.sdk.rules import Move
from sevenrocks.sdk.view import SeatView


class SelfSignal(Bot):
    name = "self-signal"

    def __init__(self) -> None:
        super().__init__()
        self.turns = 0
        self.after = int(os.environ.get("QUIT_AFTER", "5"))
        self.signal = signal.Signals[os.environ.get("QUIT_SIGNAL", "SIGINT")]
        self.rng = random.Random(1)
        delay = os.environ.get("QUIT_DELAY_S")
        self.quit_at = time.monotonic() + float(delay) if delay else None

    def choose_move(self, view: SeatView) -> Move:
        self.turns += 1
        due = time.monotonic() >= self.quit_at if self.quit_at is not None else self.turns == self.after
        if due:
            print(f"QUIT {self.signal.name} in {view.match_id}", flush=True)
            os.kill(os.getpid(), self.signal)  # the SDK's client dies of it, as of Ctrl-C
        return self.rng.choice(view.legal_moves())


if __name__ == "__main__":
    run(SelfSignal(), argv=sys.argv[1:])
