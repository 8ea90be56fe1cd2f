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


def spin_while_parent_lives(parent: int) -> None:
    """Burn CPU until the bot is gone, then exit.

    Under sandbox ``off`` nothing reaps a bot's children, and a spinner left behind would
    burn the machine's cores through every later benchmark run."""
    while os.getppid() == parent:
        pass
    os._exit(0)


if __name__ == "__main__":
    me = os.getpid()
    for _ in range(int(os.environ.get("SPIN_PROCS", "2"))):
        if os.fork() == 0:
            spin_while_parent_lives(me)
    run(Spinner())
