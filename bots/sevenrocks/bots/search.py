"""Search: determinized Monte Carlo over deals consistent with what the seat has seen.

For each decision the bot repeatedly deals the unseen tiles into the other hands (and
the fives boneyard) with the SDK's :class:`~sevenrocks.sdk.sampling.DealSampler`, so
every deal agrees with the passes, draws and hand sizes so far; it keeps a deal less
often the more earlier awards it would make the other seats have passed up
(:mod:`.inference`). On each deal it tries every legal move and plays on with a greedy
rollout through the engine itself (:meth:`GameState.play`) for ``horizon`` more
placements (by default once round the table, back to this seat), then scores the
result for its side: the partnership's (in fives, the seat's) points gained minus the
opponents', settlement included when the round ended, otherwise minus a charge per pip
still held; winning or losing the match in the rollout counts a large bonus. All moves
share the same deals, so their differences are measured with little noise. The move
with the best mean, plus ``prior`` times the defensive bot's opinion of it (which
knows about doubles and keeping tiles that play, beyond the rollout's horizon), wins.

Why short rollouts: playing every deal out to the end of the round (also an option)
measured clearly weaker on the ladder at any affordable number of deals; after one
turn of the table, small differences cascade into unrelated games, and the noise
swamps the difference between the moves.

The bot stops at whichever comes first: ``iterations`` deals, or ``time_ms`` on the
monotonic clock (never more than a third of what the referee says is left).
"""

from __future__ import annotations

import time

from sevenrocks.sdk.rules import GameState, Move
from sevenrocks.sdk.view import SeatView

from .budget import Budgeted
from .deals import MaskDeals
from .defensive import DefensiveBot
from .rollout import MATCH_BONUS, evaluate, greedy_move, play_out, search_deals

__all__ = ["MATCH_BONUS", "SearchBot", "greedy_move", "play_out"]


class SearchBot(Budgeted):
    """Determinized Monte Carlo search; plays for the partnership in Seven Rocks, for itself in fives."""

    name = "search"

    def __init__(
        self, seed: int | None = None, *, time_ms: float | None = 150.0, iterations: int | None = None,
        horizon: int | None = 3, explore: float = 0.0, pip_weight: float = 0.4,
        miss_weight: float = 0.3, resample: int = 10, prior: float = 0.5,
    ) -> None:
        super().__init__(seed, time_ms, iterations)
        #: Chance that a rollout move is random instead of greedy.
        self.explore = explore
        #: Placements played out after each candidate move (None: to the end of the round).
        self.horizon = horizon
        #: Weight of the defensive heuristic's opinion of each move, added to the searched mean.
        self.prior = prior
        self._heuristic = DefensiveBot(seed)
        #: Points per pip still in a hand when a rollout stops before the round ends.
        self.pip_weight = pip_weight
        #: Chance of keeping a sampled deal, per earlier award its seat would have passed up (1: ignore plays).
        self.miss_weight = miss_weight
        #: Deals drawn at most to find one the play evidence accepts.
        self.resample = resample

    def choose_move(self, view: SeatView) -> Move:
        moves, start, deadline = self.begin(view, time.monotonic)
        if len(moves) == 1:
            return moves[0]
        deals = MaskDeals.for_view(view, self.miss_weight, self.resample)
        totals, n = search_deals(
            view, moves, deals, self.rng, self.iterations, start, deadline, self.explore, self.horizon,
            self.pip_weight,
            clock=time.monotonic,  # this module's clock, read at call time (a test may step it)
        )
        self.last_iterations = n
        return choose_by_sums(view, moves, totals, n, self.prior, self._heuristic)

    def evaluate(self, view: SeatView, state: GameState) -> float:
        """Points the seat's side gained in the rollout minus its opponents', with the match result."""
        return evaluate(view, state, self.pip_weight)

def choose_by_sums(view: SeatView, moves: list[Move], totals: list[float], n: int, prior: float,
                   heuristic: DefensiveBot) -> Move:
    """The move with the best mean over ``n`` deals plus ``prior`` times ``heuristic``'s score of it.

    Compared as sums (the mean times ``n``), so no division; shared by the bots that value
    each move over the same deals (this one and :mod:`.alphabeta`).
    """
    if prior:
        for i, move in enumerate(moves):
            totals[i] += n * prior * heuristic.evaluate(view, move)
    best = max(range(len(moves)), key=lambda i: totals[i])
    return moves[best]


if __name__ == "__main__":
    import os

    from sevenrocks.sdk.client import run

    # An event may fix the budget to a number of deals per move (reproducible, and fast: the
    # default event plays its search entrant at 40, the budget the ladder measures).
    deals = os.environ.get("SEVENROCKS_SEARCH_ITERATIONS")
    run(SearchBot(iterations=int(deals), time_ms=None) if deals else SearchBot())
