"""ISMCTS: information-set Monte Carlo tree search over deals consistent with what the seat has seen.

The search bot (:mod:`.search`) tries every move on each sampled deal and answers it
with greedy replies; this bot grows one tree for the decision over many deals
(:mod:`.infoset`, single-observer ISMCTS after Cowling, Powley and Whitehouse 2012):
a fresh deal each iteration, UCB over the moves legal in that deal, one new node,
a greedy rollout to ``plies`` placements after the decision, and the search bot's
evaluation of the end (:class:`~.rollout.Side`). Deals come from the same sampler
and play evidence as the search bot's (:class:`~.deals.MaskDeals`), so it sees only
what its seat has seen.

By default (``paired``) every deal runs one iteration below each of the seat's own
moves, so the moves are compared on the same deals as in the search bot (little
noise between them), and the tree chooses the replies below them; ``paired=False``
is plain SO-ISMCTS, UCB at the root too. At the root it plays the move with the
best mean plus ``prior`` times the defensive bot's opinion of the move, as the
search bot does. It stops at whichever comes
first: ``iterations``, or ``time_ms`` on the monotonic clock (never more than a
third of what the referee says is left).
"""

from __future__ import annotations

import time

from sevenrocks.sdk.rules import Move
from sevenrocks.sdk.rules.layout import code_of
from sevenrocks.sdk.view import SeatView

from .budget import Budgeted
from .deals import MaskDeals
from .defensive import DefensiveBot
from .infoset import key_of, search_tree
from .rollout import Side


class ISMCTSBot(Budgeted):
    """Information-set MCTS; plays for the partnership in Seven Rocks, for itself in fives."""

    name = "ismcts"

    def __init__(
        self, seed: int | None = None, *, time_ms: float | None = 150.0, iterations: int | None = None,
        plies: int = 4, explore: float = 10.0, pip_weight: float = 0.4, miss_weight: float = 0.3,
        resample: int = 10, prior: float = 0.5, paired: bool = True,
    ) -> None:
        super().__init__(seed, time_ms, iterations)
        if plies < 1:
            raise ValueError(f"plies must be at least 1 (the bot's own move), got {plies}")
        #: Placements from the decision to the evaluation, the bot's own move included (4: once round the table).
        self.plies = plies
        #: UCB's exploration constant, in points (the evaluation's unit).
        self.explore = explore
        #: Points per pip still in a hand when the rollout stops before the round ends.
        self.pip_weight = pip_weight
        #: Chance of keeping a sampled deal, per earlier award its seat would have passed up (1: ignore plays).
        self.miss_weight = miss_weight
        #: Deals drawn at most to find one the play evidence accepts.
        self.resample = resample
        #: Weight of the defensive heuristic's opinion of each root move, added to its mean.
        self.prior = prior
        self._heuristic = DefensiveBot(seed)
        #: Each deal runs one iteration below every move of the seat (see :func:`.infoset.search_tree`).
        self.paired = paired

    def choose_move(self, view: SeatView) -> Move:
        moves, start, deadline = self.begin(view, time.monotonic)
        if len(moves) == 1:
            return moves[0]
        deals = MaskDeals.for_view(view, self.miss_weight, self.resample)
        rs = view.ruleset
        root, n = search_tree(
            deals, Side(view, self.pip_weight), rs.team_of, self.rng, self.iterations, start, deadline,
            self.plies, self.explore,
            clock=time.monotonic,  # this module's clock, read at call time (a test may step it)
            paired=self.paired,
        )
        self.last_iterations = n

        def score(move: Move) -> float:
            child = root.children.get(key_of(code_of(move), view.seat))
            mean = child.mean() if child is not None else -float("inf")
            return mean + (self.prior * self._heuristic.evaluate(view, move) if self.prior else 0.0)

        return max(moves, key=score)


if __name__ == "__main__":
    import os

    from sevenrocks.sdk.client import run

    # As for search: an event may fix the budget to a number of deals per move (the default event
    # plays both search bots at 40, so its whole field finishes in minutes).
    deals = os.environ.get("SEVENROCKS_SEARCH_ITERATIONS")
    run(ISMCTSBot(iterations=int(deals), time_ms=None) if deals else ISMCTSBot())
