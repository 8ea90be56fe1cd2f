"""Defensive: greedy for the team, but it looks one ply ahead at what the next opponent can score.

Every candidate move is scored by the points it wins now, minus the points the next
seat could expect to win from the layout it leaves (given the tiles this seat has not
seen and the values that seat is known to be void in), plus small terms for shedding
heavy tiles and keeping tiles that will still play. All layout arithmetic is the
engine's own (:meth:`Layout.place`); the bot only weighs the numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.rules import Layout, Move, Tile
from sevenrocks.sdk.view import SeatView

from .awards import award_of, award_on

#: A move that reaches the target wins the match outright; nothing outweighs it.
WIN = 10_000.0
#: Extra weight on an opponent's reply that would reach their target.
LOSS = 500.0


def best_reply(layout: Layout, tile: Tile) -> int:
    """The most a seat holding ``tile`` could score with it on ``layout`` (0 if it cannot play it)."""
    best = 0
    for move in layout.moves_for([tile]):
        best = max(best, award_on(layout, move))
    return best


def expected_best(awards: list[float], p: float) -> float:
    """Expected maximum of ``awards`` when the opponent holds each tile independently with chance ``p``."""
    expected, miss = 0.0, 1.0
    for a in sorted(awards, reverse=True):
        if a <= 0:
            break
        expected += a * p * miss
        miss *= 1.0 - p
    return expected


@dataclass(frozen=True, slots=True)
class Weights:
    """How much each consideration counts, in points (set by hand; the ladder in docs/bots.md measures them)."""

    threat: float = 1.0
    pip: float = 0.35
    double: float = 2.0
    flexibility: float = 1.0
    block: float = 3.0


class DefensiveBot(Bot):
    """One-ply defensive greedy; plays both rulesets (in fives the next seat is always an opponent)."""

    name = "defensive"

    def __init__(self, seed: int | None = None, weights: Weights | None = None) -> None:
        super().__init__(seed)
        self.weights = weights or Weights()

    def choose_move(self, view: SeatView) -> Move:
        moves = view.legal_moves()
        if len(moves) == 1:
            return moves[0]
        return max(moves, key=lambda m: (self.evaluate(view, m), m.tile[0] + m.tile[1]))

    def evaluate(self, view: SeatView, move: Move) -> float:
        """The value of ``move`` in points: award, minus the next seat's expected reply, plus shape."""
        w = self.weights
        rs = view.ruleset
        layout = view.layout.copy()
        award = award_of(layout.place(move))
        if award and view.scores[view.team] + award >= rs.target:
            return WIN + award
        rest = [t for t in view.hand if t != move.tile]
        value = float(award)
        a, b = move.tile
        value += w.pip * (a + b) + (w.double if a == b else 0.0)
        if not rest:
            return value + WIN / 10
        open_values = set(layout.open_ports().values())
        value += w.flexibility * sum(1 for x, y in rest if x in open_values or y in open_values) / len(rest)

        nxt = (view.seat + 1) % rs.players
        void = view.voids[nxt]
        candidates = [t for t in view.unseen() if t != move.tile and t[0] not in void and t[1] not in void]
        if not candidates:
            return value
        held = view.hand_sizes[nxt] + (1 if rs.draws and view.boneyard_size else 0)
        p = min(1.0, held / len(candidates))
        opp_score = view.scores[rs.team_of(nxt)]
        awards: list[float] = []
        playable = 0
        for t in candidates:
            if t[0] in open_values or t[1] in open_values:
                playable += 1
                r = best_reply(layout, t)
                awards.append(r + (LOSS if r and opp_score + r >= rs.target else 0.0))
        if playable == 0 and not (rs.draws and view.boneyard_size):
            value += w.block
        return value - w.threat * expected_best(awards, p)


if __name__ == "__main__":
    from sevenrocks.sdk.client import run

    run(DefensiveBot())
