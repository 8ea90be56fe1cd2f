"""The floor of the ladder: a uniformly random legal move."""

from __future__ import annotations

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.rules import Move
from sevenrocks.sdk.view import SeatView


class RandomBot(Bot):
    name = "random"

    def choose_move(self, view: SeatView) -> Move:
        return self.rng.choice(view.legal_moves())


if __name__ == "__main__":
    from sevenrocks.sdk.client import run

    run(RandomBot())
