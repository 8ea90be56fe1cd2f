"""What a placement scores, from the engine's own layout arithmetic; shared by the reference bots.

The engine computes the new scoring-ends total (:meth:`Layout.total_after`, the arithmetic of
:meth:`Layout.place` without changing the layout); the engine's
:func:`award_of` turns a total into an award only when it is a positive multiple of 5.
"""

from __future__ import annotations

from sevenrocks.sdk.rules import Layout, Move, award_of

__all__ = ["award_of", "award_on"]


def award_on(layout: Layout, move: Move) -> int:
    """Points ``move`` would score on ``layout`` (which is left untouched)."""
    return award_of(layout.total_after(move))
