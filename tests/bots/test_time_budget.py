"""The search bot honours its think time, and the referee's limit when the view carries one."""

from __future__ import annotations

import time

import pytest

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.local import play_local
from sevenrocks.sdk.rules import Move, make_ruleset
from sevenrocks.sdk.view import SeatView

from sevenrocks.bots.defensive import DefensiveBot
from sevenrocks.bots.greedy import GreedyBot
from sevenrocks.bots.search import SearchBot

#: Slack for a loaded CI machine: the budget bounds the search, not the scheduler.
MARGIN_S = 0.25


class Clocked(Bot):
    """Times every decision of ``inner``; optionally tells it the referee's limit through the view."""

    def __init__(self, inner: Bot, time_left_ms: int | None = None) -> None:
        super().__init__(0)
        self.inner = inner
        self.time_left_ms = time_left_ms
        self.times: list[float] = []

    def choose_move(self, view: SeatView) -> Move:
        view.time_left_ms = self.time_left_ms
        start = time.monotonic()
        move = self.inner.choose_move(view)
        self.times.append(time.monotonic() - start)
        return move


@pytest.mark.parametrize("config", [("seven-rocks", 4), ("fives", 4)], ids=lambda c: f"{c[0]}-{c[1]}")
def test_search_stops_at_its_time_budget(config: tuple[str, int]) -> None:
    rs = make_ruleset(config[0], players=config[1], target=100)
    search = SearchBot(1, time_ms=20)
    clocked = Clocked(search)
    bots: list[Bot] = [clocked] + [GreedyBot(s) for s in range(1, rs.players)]
    play_local(bots, rs, seed=4)
    assert len(clocked.times) >= 5
    assert max(clocked.times) < 0.020 + MARGIN_S


def test_search_takes_a_third_of_the_referees_limit() -> None:
    rs = make_ruleset(target=60)
    search = SearchBot(1, time_ms=1000)  # a generous budget of its own: the referee's limit decides
    clocked = Clocked(search, time_left_ms=60)
    play_local([clocked, DefensiveBot(1), GreedyBot(2), DefensiveBot(3)], rs, seed=8)
    assert max(clocked.times) < 0.020 + MARGIN_S


def test_search_needs_a_budget_or_a_count() -> None:
    with pytest.raises(ValueError):
        SearchBot(1, time_ms=None, iterations=None)


def test_iterations_bound_the_search() -> None:
    rs = make_ruleset(target=60)
    search = SearchBot(2, time_ms=None, iterations=4)
    counts: list[int] = []

    class Counting(Bot):
        def choose_move(self, view: SeatView) -> Move:
            move = search.choose_move(view)
            counts.append(search.last_iterations)
            return move

    play_local([Counting(), GreedyBot(1), GreedyBot(2), GreedyBot(3)], rs, seed=2)
    assert set(counts) <= {0, 4} and 4 in counts  # 0: a forced move needs no search
