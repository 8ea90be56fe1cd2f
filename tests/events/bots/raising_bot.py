"""A bot whose ``choose_move`` raises every time: the SDK reports the error and the process lives on.

It stands for a bot that passed its check and then broke on something every real
match has (once: 888 ``crash`` forfeits, never withdrawn, its partners rated as
losers). Nothing the process rules see: it never dies.
"""

from __future__ import annotations

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.client import run
from sevenrocks.sdk.rules import Move
from sevenrocks.sdk.view import SeatView


class Raising(Bot):
    name = "raising"

    def choose_move(self, view: SeatView) -> Move:
        raise ValueError("broken on purpose: every move raises")


if __name__ == "__main__":
    run(Raising())
