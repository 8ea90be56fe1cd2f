"""The bench's bot: its first legal move, so that a decision costs the protocol and nothing else.

Not a benchmark itself (bench/run.py runs nothing in bench/common): bench/referee/bench_referee.py
starts it as ``python -m sevenrocks.sdk.client --bot firstbot:First`` with this folder on PYTHONPATH
(``paths.helpers_pythonpath()``), and bench_decision_parts.py imports it.
"""

from __future__ import annotations

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.rules import Move
from sevenrocks.sdk.view import SeatView


class First(Bot):
    name = "first"

    def choose_move(self, view: SeatView) -> Move:
        return view.legal_moves()[0]
