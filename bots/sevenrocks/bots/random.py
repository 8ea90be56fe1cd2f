"""The floor of the ladder: a uniformly random legal move."""

from __future__ import annotations

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.rules import Move
from sevenrocks.sdk.rules.randomness import choice
from sevenrocks.sdk.view import SeatView


class RandomBot(Bot):
    name = "random"

    def choose_move(self, view: SeatView) -> Move:
        return choice(self.rng, view.legal_moves())  # rng.choice's very draw, compiled in a wheel


if __name__ == "__main__":
    from sevenrocks.sdk.client import run

    run(RandomBot())
