"""Alpha-beta on sampled deals, compiled by mypyc in a wheel: the hot path of the ``alphabeta`` bot.

The search bot answers each candidate move with greedy replies for one turn of the
table; on a deal where every hand is known, the replies can instead be searched:
each seat picks its side's best line (alpha-beta, both partnerships playing their
best, which is what perfect information makes a two-sided zero-sum game), to a
depth, or to the round's end when few tiles are left. This is perfect-information
Monte Carlo (PIMC): the deals come from the same sampler and play evidence as the
search bot's (:class:`~.deals.MaskDeals`), so the bot sees only what its seat has
seen; the values of each move are averaged over the deals.

A position's value is the search bot's (:class:`~.rollout.Side`): points the side
gained minus its opponents', a charge per pip still held while the round goes on,
and the match result. In fives with three or four players the game is not
two-sided; the search then assumes every other seat plays against this one
(the "paranoid" reduction), which is cautious but well defined.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from sevenrocks.sdk.rules import GameState, Move, Phase
from sevenrocks.sdk.rules.bits import TILE_PIPS
from sevenrocks.sdk.rules.layout import code_of
from sevenrocks.sdk.view import SeatView

from .deals import MaskDeals, out_of_time
from .rollout import Side

#: Depth that reaches the round's end from any position (28 placements at most, passes are free).
TO_THE_END = 64

#: Larger than any value a position can have (scores and the match bonus are a few hundred points).
INFINITY = 1e9


def alphabeta(state: GameState, side: Side, depth: int, alpha: float, beta: float) -> float:
    """The value of ``state`` for ``side`` with both sides searching ``depth`` more placements.

    ``state`` is consumed (its last child reuses it instead of a copy). Moves are tried
    best-award first, heaviest tile on ties (the greedy rollout's order), which makes
    the cut-offs early.
    """
    if depth <= 0 or state.phase is not Phase.TURN:
        return side.value(state)
    codes = state.legal_codes()
    seat = state.turn
    mine = (seat & 1 if side.partnerships else seat) == side.mine
    n = len(codes)
    if n > 1:
        total_after = state.layout.total_after_code
        keyed: list[tuple[int, int]] = []
        for c in codes:
            total = total_after(c)
            keyed.append(((total * 16 if total > 0 and total % 5 == 0 else 0) + TILE_PIPS[c & 31], c))
        keyed.sort(reverse=True)
        codes = [c for _, c in keyed]
    last = n - 1
    if mine:
        best = -INFINITY
        for i in range(n):
            child = state if i == last else state.copy()
            child.play_code(codes[i], False)
            value = alphabeta(child, side, depth - 1, alpha, beta)
            if value > best:
                best = value
                if best > alpha:
                    alpha = best
                    if alpha >= beta:
                        break
        return best
    best = INFINITY
    for i in range(n):
        child = state if i == last else state.copy()
        child.play_code(codes[i], False)
        value = alphabeta(child, side, depth - 1, alpha, beta)
        if value < best:
            best = value
            if best < beta:
                beta = best
                if alpha >= beta:
                    break
    return best


def tiles_left(state: GameState) -> int:
    """Tiles still to be played this round: in the hands and (fives) the boneyard, the same on every deal of a decision.

    The round's end is at most this many placements away; a search to the end grows with
    it, so the boneyard counts too (a fives seat that cannot play draws, and plays on).
    """
    return sum(bin(m).count("1") for m in state.hand_masks) + len(state.bones)


def search_minimax(
    view: SeatView, moves: list[Move], deals: MaskDeals, rng: random.Random, iterations: int | None,
    start: float, deadline: float | None, depth: int, pip_weight: float,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[list[float], int]:
    """Each move's summed alpha-beta value over the sampled deals, and how many deals were searched.

    Every move is searched on the same deals, each with the full window (its exact
    value, not a bound, is what is averaged); ``depth`` counts the placements after
    the move. Stops after ``iterations`` deals or when another deal would likely end
    after ``deadline``; at least one deal is always searched.
    """
    totals = [0.0] * len(moves)
    codes = [code_of(m) for m in moves]
    side = Side(view, pip_weight)
    last = len(codes) - 1
    n = 0
    while iterations is None or n < iterations:
        root = deals.state(rng)
        for i in range(len(codes)):
            state = root if i == last else root.copy()
            state.play_code(codes[i], False)
            totals[i] += alphabeta(state, side, depth, -INFINITY, INFINITY)
        n += 1
        if out_of_time(clock, start, deadline, n):
            break
    return totals, n
