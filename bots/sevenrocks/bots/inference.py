"""Reading the other seats' plays: a seat that left points on the table probably could not score.

The deal sampler only knows hard facts (hand sizes, voids). Most players take an award
when they can, so each earlier placement that scored less than some unseen tile would
have scored at that moment is soft evidence that the seat did not hold that tile. A
search weighs its sampled deals by that evidence (accepting a deal with chance
``miss_weight ** misses``), which moves its guesses towards what actually happened.
"""

from __future__ import annotations

from dataclasses import dataclass

from sevenrocks.sdk.rules import Layout, Move, Tile
from sevenrocks.sdk.view import PublicDraw, PublicPlay, SeatView

from .awards import award_on


@dataclass(frozen=True, slots=True)
class Missed:
    """At history index ``index`` seat ``seat`` scored less than any tile of ``better`` would have."""

    index: int
    seat: int
    better: frozenset[Tile]


def missed_awards(view: SeatView) -> list[Missed]:
    """Every earlier placement this round by another seat that some still-unseen tile would have beaten.

    In fives a seat that drew later may hold tiles it did not hold then, so its earlier
    placements say nothing about its hand now and are left out.
    """
    unseen = view.unseen()
    last_draw: dict[int, int] = {}
    for i, ev in enumerate(view.history):
        if isinstance(ev, PublicDraw):
            last_draw[ev.seat] = i
    layout = Layout()
    out: list[Missed] = []
    for i, ev in enumerate(view.history):
        if not isinstance(ev, PublicPlay):
            continue
        if ev.seat != view.seat and last_draw.get(ev.seat, -1) < i:
            better = frozenset(
                t for t in unseen
                if any(award_on(layout, m) > ev.award for m in layout.moves_for([t]))
            )
            if better:
                out.append(Missed(i, ev.seat, better))
        layout.place(Move(ev.tile, ev.port))
    return out


def count_misses(missed: list[Missed], hands: list[list[Tile]]) -> int:
    """How many of the ``missed`` awards the deal ``hands`` would make a seat have passed up."""
    return sum(1 for m in missed if not m.better.isdisjoint(hands[m.seat]))
