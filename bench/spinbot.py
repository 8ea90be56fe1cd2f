"""A legal bot that keeps SPIN_PROCS child processes burning CPU for as long as it lives.

The CPU-fairness half of bench_sandbox.py puts it next to innocent bots: they
must not time out more often because of it."""

from __future__ import annotations

import os
import random

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.client import run
from sevenrocks.sdk.rules import Move
from sevenrocks.sdk.view import SeatView


class Spinner(Bot):
    name = "spinner"

    def __init__(self) -> None:
        super().__init__()
        self.rng = random.Random(0)

    def choose_move(self, view: SeatView) -> Move:
        return self.rng.choice(view.legal_moves())


if __name__ == "__main__":
    for _ in range(int(os.environ.get("SPIN_PROCS", "2"))):
        if os.fork() == 0:
            while True:
                pass
    run(Spinner())
