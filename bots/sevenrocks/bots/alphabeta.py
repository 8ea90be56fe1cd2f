"""Alpha-beta: the search bot's sampled deals, each answered by both sides' best replies.

The search bot (:mod:`.search`) plays each candidate move on many sampled deals and
answers it with greedy replies for one turn of the table. Its ladder results say the
rollout model, not the number of deals, limits it: twenty times more deals buy
little. This bot spends the same clock on fewer deals, searched deeper: on each deal
(every hand known) it runs alpha-beta (:mod:`.minimax`) for ``depth`` placements
after the move, and to the round's end once ``solve`` or fewer tiles are left to
play (in the hands and, in fives, the boneyard), where a domino or a block, and
every hand's settlement, decide the round.

Deals, play evidence, the evaluation and the defensive prior are the search bot's,
so the two differ only in how a deal is answered. It stops at whichever comes first:
``iterations`` deals, or ``time_ms`` on the monotonic clock (never more than a third
of what the referee says is left).
"""

from __future__ import annotations

import time

from sevenrocks.sdk.rules import Move
from sevenrocks.sdk.view import SeatView

from .budget import Budgeted
from .deals import MaskDeals
from .defensive import DefensiveBot
from .minimax import TO_THE_END, search_minimax
from .search import choose_by_sums


class AlphaBetaBot(Budgeted):
    """Alpha-beta on sampled deals; plays for the partnership in Seven Rocks, for itself in fives."""

    name = "alphabeta"

    def __init__(
        self, seed: int | None = None, *, time_ms: float | None = 150.0, iterations: int | None = None,
        depth: int = 5, solve: int = 12, pip_weight: float = 0.4, miss_weight: float = 0.3,
        resample: int = 10, prior: float = 0.5,
    ) -> None:
        super().__init__(seed, time_ms, iterations)
        if depth < 0:
            raise ValueError(f"depth must be 0 or more placements after the move, got {depth}")
        #: Placements searched after the move before the evaluation (5: round the table, this seat's next
        #: move and the reply to it).
        self.depth = depth
        #: Tiles left to play (hands and boneyard) at or below which every deal is searched to the round's end.
        self.solve = solve
        #: Points per pip still in a hand when the search stops before the round ends.
        self.pip_weight = pip_weight
        #: Chance of keeping a sampled deal, per earlier award its seat would have passed up (1: ignore plays).
        self.miss_weight = miss_weight
        #: Deals drawn at most to find one the play evidence accepts.
        self.resample = resample
        #: Weight of the defensive heuristic's opinion of each move, added to the searched mean.
        self.prior = prior
        self._heuristic = DefensiveBot(seed)

    def choose_move(self, view: SeatView) -> Move:
        moves, start, deadline = self.begin(view, time.monotonic)
        if len(moves) == 1:
            return moves[0]
        left = sum(view.hand_sizes) + view.boneyard_size  # minimax.tiles_left of every deal
        depth = TO_THE_END if left <= self.solve else self.depth
        deals = MaskDeals.for_view(view, self.miss_weight, self.resample)
        totals, n = search_minimax(
            view, moves, deals, self.rng, self.iterations, start, deadline, depth, self.pip_weight,
            clock=time.monotonic,  # this module's clock, read at call time (a test may step it)
        )
        self.last_iterations = n
        return choose_by_sums(view, moves, totals, n, self.prior, self._heuristic)


if __name__ == "__main__":
    import os

    from sevenrocks.sdk.client import run

    deals = os.environ.get("SEVENROCKS_SEARCH_ITERATIONS")
    run(AlphaBetaBot(iterations=int(deals), time_ms=None) if deals else AlphaBetaBot())
