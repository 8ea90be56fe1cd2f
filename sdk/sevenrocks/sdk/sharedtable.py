"""One public table for all the seats a client holds in one match.

The referee sends every public event (a deal's public part, each play, pass, draw,
round end) to each seat separately, so a client holding all four seats of a match
hears each play four times. Each seat's view kept a table of its own and placed
every tile four times; now the seats of one match share one
:class:`~sevenrocks.sdk.view.PublicTable`, as the in-process runner's seats already
do (:func:`~sevenrocks.sdk.view.observe_all`), and each public event is applied to it
once: by whichever of the seats hears it first. A seat's own part (its hand, the tile
it drew) is still applied to that seat alone.

Counting, not message order, decides which copy is applied: every seat hears the
same public events in the same order, so the n-th event a seat hears is the table's
n-th. A seat the referee stops writing to (its bot reported an error for it) just
falls behind and never applies anything again.
"""

from __future__ import annotations

from .rules import Ruleset
from .view import PublicTable


class SharedTable:
    """The public table of one match and how far each held seat has heard."""

    __slots__ = ("table", "applied", "heard")

    def __init__(self, ruleset: Ruleset) -> None:
        self.table = PublicTable(ruleset)
        #: Public events applied to the table.
        self.applied = 0
        #: Seat -> public events it has heard.
        self.heard: dict[int, int] = {}

    def join(self, seat: int) -> None:
        self.heard[seat] = 0

    def fresh(self, seat: int) -> bool:
        """``seat`` hears its next public event: True if the table has not had it yet (apply it now)."""
        n = self.heard[seat] + 1
        self.heard[seat] = n
        if n > self.applied:
            self.applied = n
            return True
        return False

    def leave(self, seat: int) -> bool:
        """``seat``'s match ended for it; True once no held seat is left."""
        self.heard.pop(seat, None)
        return not self.heard
