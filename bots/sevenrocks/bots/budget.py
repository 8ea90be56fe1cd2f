"""The think-time rule the search bots share: a clock budget, a count, or both, never more than a third of the limit."""

from __future__ import annotations

from collections.abc import Callable

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.rules import Move
from sevenrocks.sdk.view import SeatView


class Budgeted(Bot):
    """A bot that searches until ``iterations`` or ``time_ms``, whichever comes first.

    The referee's remaining time per decision (``view.time_left_ms``) caps the budget
    at a third of it, so a slow machine or a tight event limit never makes the bot
    forfeit on time.
    """

    def __init__(self, seed: int | None, time_ms: float | None, iterations: int | None) -> None:
        super().__init__(seed)
        if time_ms is None and iterations is None:
            raise ValueError("give the search a time budget (time_ms), a number of iterations, or both")
        if iterations is not None and iterations < 1:
            raise ValueError(f"iterations must be at least 1, got {iterations}")
        #: Think time per decision in milliseconds (None: no clock, only ``iterations``).
        self.time_ms = time_ms
        #: Deals (search) or tree iterations (ismcts) per decision (None: as many as the time allows).
        self.iterations = iterations
        #: Deals or iterations searched at the last decision (for tests and benchmarks).
        self.last_iterations = 0

    def budget_s(self, view: SeatView) -> float | None:
        """Seconds to think now: the configured budget, capped by a third of the referee's limit."""
        budget = self.time_ms
        if view.time_left_ms is not None:
            cap = view.time_left_ms / 3
            budget = cap if budget is None else min(budget, cap)
        return None if budget is None else budget / 1000

    def deadline(self, view: SeatView, start: float) -> float | None:
        """The monotonic time to stop searching by, for a decision that began at ``start`` (None: no clock)."""
        budget = self.budget_s(view)
        return None if budget is None else start + budget

    def begin(self, view: SeatView, clock: Callable[[], float]) -> tuple[list[Move], float, float | None]:
        """A decision's opening: the legal moves, its start on ``clock`` and the deadline to stop by.

        ``clock`` is the calling bot's own ``time.monotonic``, read at call time, so a test that
        steps one bot module's clock steps this reading too."""
        start = clock()
        self.last_iterations = 0
        return view.legal_moves(), start, self.deadline(view, start)
