"""The ISMCTS bot's tree: single-observer information-set Monte Carlo tree search.

After Cowling, Powley and Whitehouse, "Information Set Monte Carlo Tree Search"
(IEEE TCIAIG 4(2), 2012), the SO-ISMCTS variant. The tree belongs to the searching
seat: a node is the sequence of placements since its decision (every placement is
public in Seven Rocks and fives, so the sequence is what the seat would see), not a
game state. Each iteration

1. deals the hidden tiles afresh (:class:`~.deals.MaskDeals`: consistent with every
   pass, draw and hand size, weighed by the awards the other seats passed up);
2. walks down the tree on that deal, choosing among the moves legal *in that deal*
   by UCB1 with availability counts (a child's exploration term counts the
   iterations in which it was available, not its parent's visits);
3. adds one node, plays on with the search bot's greedy rollout until ``plies``
   placements after the decision, and scores the end for the searching side
   (:class:`~.rollout.Side`: points gained minus the opponents', pips still held,
   the match result);
4. backs the value up: each node keeps it from the point of view of the side that
   chose it (the searching side's value, negated for an opponent's move).

Why a tree and not only determinized rollouts (:mod:`.search`): determinized search
answers each candidate with the same greedy replies on every deal, as if every seat
knew every hand (strategy fusion); here the replies are chosen by statistics pooled
over all deals, by what each seat could play, and partners choose for the partnership.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable

from sevenrocks.sdk.rules import GameState, Phase

from .deals import MaskDeals, out_of_time
from .rollout import Side, play_out


def key_of(code: int, seat: int) -> int:
    """A child's key: the move number and the seat that played it (``key >> 3`` is the move).

    Who placed a tile is public, and so is every pass in between: the same tiles
    placed by an opponent or, after the opponent passed, by a partner are different
    information sets, and their values belong to different sides.
    """
    return code << 3 | seat


class Node:
    """One information set of the searching seat: the placements (and who made them) since the decision."""

    __slots__ = ("children", "visits", "total", "avail")

    def __init__(self) -> None:
        #: Child per move number and seat (:func:`key_of`).
        self.children: dict[int, Node] = {}
        #: Iterations through this node, and their summed value for the side that chose it.
        self.visits = 0
        self.total = 0.0
        #: Iterations in which this node's move was legal at its parent (UCB's "parent visits").
        self.avail = 0

    def mean(self) -> float:
        return self.total / self.visits if self.visits else 0.0


def search_tree(
    deals: MaskDeals, side: Side, team_of: Callable[[int], int], rng: random.Random,
    iterations: int | None, start: float, deadline: float | None, plies: int, explore: float,
    clock: Callable[[], float] = time.monotonic, paired: bool = False,
) -> tuple[Node, int]:
    """Grow the tree of the decision ``deals`` describes; the root and how many iterations (deals) ran.

    With ``paired`` every deal runs one iteration below each of the seat's moves (as
    the search bot tries every move on the same deal, so their difference is measured
    with little noise); without, one iteration per deal, UCB choosing at the root too.
    Stops after ``iterations`` deals or when one more would likely end after
    ``deadline`` (monotonic clock, read once per deal).
    """
    root = Node()
    mine = side.mine
    n = 0
    while iterations is None or n < iterations:
        state = deals.state(rng)
        if paired:
            codes = state.legal_codes()
            last = len(codes) - 1
            for i, code in enumerate(codes):
                key = key_of(code, state.turn)
                child = root.children.get(key)
                if child is None:
                    child = root.children[key] = Node()
                child.avail += 1
                s = state if i == last else state.copy()
                s.play_code(code, False)
                iterate(s, child, [(child, True)], 1, side, team_of, mine, rng, plies, explore)
                root.visits += 1
        else:
            iterate(state, root, [], 0, side, team_of, mine, rng, plies, explore)
            root.visits += 1
        n += 1
        if out_of_time(clock, start, deadline, n):
            break
    return root, n


def iterate(
    state: GameState, node: Node, path: list[tuple[Node, bool]], depth: int, side: Side,
    team_of: Callable[[int], int], mine: int, rng: random.Random, plies: int, explore: float,
) -> None:
    """One ISMCTS iteration from ``node`` on the deal ``state``: select, expand one node, roll out, back up."""
    turn = Phase.TURN
    sqrt = math.sqrt
    log = math.log
    while state.phase is turn and depth < plies:
        mover = state.turn
        keys = [key_of(c, mover) for c in state.legal_codes()]
        children = node.children
        own = team_of(mover) == mine
        untried = [k for k in keys if k not in children]
        for k in keys:
            child = children.get(k)
            if child is not None:
                child.avail += 1
        if untried:
            key = untried[rng.randrange(len(untried))] if len(untried) > 1 else untried[0]
            child = children[key] = Node()
            child.avail = 1
            state.play_code(key >> 3, False)
            path.append((child, own))
            depth += 1
            break
        best = keys[0]
        best_score = -math.inf
        for k in keys:
            child = children[k]
            score = child.total / child.visits + explore * sqrt(log(child.avail) / child.visits)
            if score > best_score:
                best, best_score = k, score
        node = children[best]
        state.play_code(best >> 3, False)
        path.append((node, own))
        depth += 1
    if depth < plies:
        play_out(state, rng, 0.0, plies - depth)
    value = side.value(state)
    for child, own in path:
        child.visits += 1
        child.total += value if own else -value
