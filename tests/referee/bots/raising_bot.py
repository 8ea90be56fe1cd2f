"""An SDK bot whose choose_move raises on its second turn (the SDK reports it as a crash)."""

from __future__ import annotations

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.client import run
from sevenrocks.sdk.rules import Move
from sevenrocks.sdk.view import SeatView


class Raising(Bot):
    name = "raising"
    turns = 0

    def choose_move(self, view: SeatView) -> Move:
        self.turns += 1
        if self.turns == 2:
            raise RuntimeError("my evaluation table is missing")
        return view.legal_moves()[0]


if __name__ == "__main__":
    run(Raising())
