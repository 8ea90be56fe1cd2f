"""What a placement scores, from the engine's own layout arithmetic; shared by the reference bots.

The engine computes the new scoring-ends total (:meth:`Layout.place`); RULES.md turns a
total into an award only when it is a positive multiple of 5.
"""

from __future__ import annotations

from sevenrocks.sdk.rules import Layout, Move


def award_of(total: int) -> int:
    """Points for leaving ``total`` on the ends: the total if a positive multiple of 5, else 0."""
    return total if total > 0 and total % 5 == 0 else 0


def award_on(layout: Layout, move: Move) -> int:
    """Points ``move`` would score on ``layout`` (which is left untouched)."""
    return award_of(layout.copy().place(move))
