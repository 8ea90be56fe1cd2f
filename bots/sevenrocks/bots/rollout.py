"""The search bot's hot path, compiled by mypyc in a wheel: the deal loop, the greedy rollouts, the scoring.

Kept apart from :mod:`.search` because a compiled module cannot be run with
``python -m`` (the bot's command); :class:`~.search.SearchBot` holds the settings and
the move choice, and calls :func:`search_deals` for the numbers.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from sevenrocks.sdk.rules import GameState, Move, Phase
from sevenrocks.sdk.rules.bits import TILE_PIPS, mask_pips
from sevenrocks.sdk.rules.layout import code_of, move_of
from sevenrocks.sdk.view import SeatView

from .deals import MaskDeals, out_of_time

#: Value of winning (or losing) the match inside a rollout, in points.
MATCH_BONUS = 150.0


def greedy_move(state: GameState, rng: random.Random, explore: float) -> Move:
    """The rollout policy: the best immediate award, heaviest tile on ties; random with chance ``explore``."""
    return move_of(greedy_code(state, rng, explore))


def greedy_code(state: GameState, rng: random.Random, explore: float) -> int:
    """:func:`greedy_move` as a move number (the engine's own representation, no objects).

    Each candidate's award comes from :meth:`Layout.total_after_code` (arithmetic, no
    copy of the layout): this loop runs for every step of every rollout, and is most
    of a search's time.
    """
    codes = state.legal_codes()
    if len(codes) == 1:
        return codes[0]
    if explore > 0 and rng.random() < explore:
        return codes[rng.randrange(len(codes))]
    total_after = state.layout.total_after_code
    best = codes[0]
    best_key = -1
    for c in codes:
        total = total_after(c)
        key = (total * 16 if total > 0 and total % 5 == 0 else 0) + TILE_PIPS[c & 31]
        if key > best_key:
            best, best_key = c, key
    return best


def play_out(state: GameState, rng: random.Random, explore: float, plies: int | None) -> None:
    """Play ``state`` (a copy) with the rollout policy for ``plies`` placements, or to the round's end."""
    left = -1 if plies is None else plies
    turn = Phase.TURN
    while state.phase is turn and left != 0:
        state.play_code(greedy_code(state, rng, explore), False)
        left -= 1


def search_deals(
    view: SeatView, moves: list[Move], deals: MaskDeals, rng: random.Random, iterations: int | None,
    start: float, deadline: float | None, explore: float, horizon: int | None, pip_weight: float,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[list[float], int]:
    """Each move's summed rollout value over the sampled deals, and how many deals were searched.

    Every move is tried on the same deals (their differences are measured with little
    noise); sampling stops after ``iterations`` deals or when another deal would likely
    end after ``deadline`` (monotonic clock).
    """
    totals = [0.0] * len(moves)
    codes = [code_of(m) for m in moves]
    side = Side(view, pip_weight)
    n = 0
    while iterations is None or n < iterations:
        root = deals.state(rng)
        seed = rng.getrandbits(32)
        last = len(moves) - 1
        for i, code in enumerate(codes):
            state = root if i == last else root.copy()  # the last candidate may use the root itself
            state.play_code(code, False)
            # Without exploration the rollout draws nothing: skip seeding a generator per candidate.
            play_out(state, random.Random(seed) if explore else rng, explore, horizon)
            totals[i] += side.value(state)
        n += 1
        if out_of_time(clock, start, deadline, n):
            break
    return totals, n


class Side:
    """How a rollout's end looks to the seat's side: what :func:`evaluate` computes, with the view read once.

    A search scores thousands of rollouts per decision against the same starting
    scores; reading them (and the ruleset) from the view for each one cost a tenth
    of the search's time.
    """

    def __init__(self, view: SeatView, pip_weight: float) -> None:
        self.mine = view.team
        before = view.scores
        self.before_mine = before[self.mine]
        self.before_total = sum(before)
        self.teams = len(before)
        self.partnerships = view.ruleset.partnerships
        self.pip_weight = pip_weight

    def value(self, state: GameState) -> float:
        """Points the side gained minus its opponents' (their mean in fives), pips held, the match result."""
        mine = self.mine
        after = state.scores
        others = self.teams - 1
        gain = after[mine] - self.before_mine
        value = gain - (sum(after) - self.before_total - gain) / others
        phase = state.phase
        if phase is Phase.TURN:
            masks = state.hand_masks
            total = 0
            own = 0
            if self.partnerships:
                for seat in range(len(masks)):
                    pips = mask_pips(masks[seat])
                    total += pips
                    if seat & 1 == mine:
                        own += pips
            else:
                for seat in range(len(masks)):
                    pips = mask_pips(masks[seat])
                    total += pips
                    if seat == mine:
                        own += pips
            value -= self.pip_weight * (own - (total - own) / others)
        elif phase is Phase.MATCH_OVER and state.winner is not None:
            value += MATCH_BONUS if state.winner == mine else -MATCH_BONUS
        return value


def evaluate(view: SeatView, state: GameState, pip_weight: float) -> float:
    """Points the seat's side gained in the rollout minus its opponents', with the match result."""
    return Side(view, pip_weight).value(state)
