"""Greedy: the move with the best immediate award (ties to the heaviest tile, to shed pips)."""

from __future__ import annotations

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.rules import Move
from sevenrocks.sdk.view import SeatView

from .awards import award_on


class GreedyBot(Bot):
    name = "greedy"

    def choose_move(self, view: SeatView) -> Move:
        moves = view.legal_moves()
        return max(moves, key=lambda m: (award_on(view.layout, m), m.tile[0] + m.tile[1]))


if __name__ == "__main__":
    from sevenrocks.sdk.client import run

    run(GreedyBot())
