"""The search bots (search, ismcts, alphabeta) honour their think time, and the referee's limit when the view carries one.

The claims are about how much of a budget the search spends, so the search reads a
stepping clock here: every reading advances 1 ms, one reading per sampled deal. A
bot that stops at its budget then has sampled about as many deals as its budget has
milliseconds, whatever the machine's load; one that used the referee's whole limit
would sample three times as many. How fast real moves are is measured in bench/.
"""

from __future__ import annotations

import types

import pytest

import sevenrocks.bots.alphabeta as alphabeta_module
import sevenrocks.bots.ismcts as ismcts_module
import sevenrocks.bots.search as search_module
from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.local import play_local
from sevenrocks.sdk.rules import Move, make_ruleset
from sevenrocks.sdk.view import SeatView

from sevenrocks.bots.alphabeta import AlphaBetaBot
from sevenrocks.bots.budget import Budgeted
from sevenrocks.bots.defensive import DefensiveBot
from sevenrocks.bots.greedy import GreedyBot
from sevenrocks.bots.ismcts import ISMCTSBot
from sevenrocks.bots.search import SearchBot

#: Each search bot with the module whose ``time`` its decisions read.
BOTS: dict[str, tuple[types.ModuleType, type[Budgeted]]] = {
    "search": (search_module, SearchBot), "ismcts": (ismcts_module, ISMCTSBot),
    "alphabeta": (alphabeta_module, AlphaBetaBot),
}


class SteppingClock(types.SimpleNamespace):
    """A stand-in for the ``time`` module whose ``monotonic()`` advances 1 ms per reading."""

    def __init__(self) -> None:
        super().__init__(now=1000.0)

    def monotonic(self) -> float:
        self.now += 0.001
        return self.now


class Counted(Bot):
    """Records how many deals (or iterations) ``inner`` searched for every decision that needed a search."""

    def __init__(self, inner: Budgeted, time_left_ms: int | None = None) -> None:
        super().__init__(0)
        self.inner = inner
        self.time_left_ms = time_left_ms
        self.deals: list[int] = []
        self.budgets: list[float | None] = []

    def choose_move(self, view: SeatView) -> Move:
        view.time_left_ms = self.time_left_ms
        move = self.inner.choose_move(view)
        if len(view.legal_moves()) > 1:
            self.deals.append(self.inner.last_iterations)
            self.budgets.append(self.inner.budget_s(view))
        return move


@pytest.fixture(params=sorted(BOTS))
def searcher(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> type[Budgeted]:
    """A search bot's class, its module reading a stepping clock."""
    module, cls = BOTS[request.param]
    monkeypatch.setattr(module, "time", SteppingClock())
    return cls


@pytest.mark.parametrize("config", [("seven-rocks", 4), ("fives", 4)], ids=lambda c: f"{c[0]}-{c[1]}")
def test_search_stops_at_its_time_budget(config: tuple[str, int], searcher: type[Budgeted]) -> None:
    rs = make_ruleset(config[0], players=config[1], target=100)
    counted = Counted(searcher(1, time_ms=20))  # type: ignore[call-arg]
    bots: list[Bot] = [counted] + [GreedyBot(s) for s in range(1, rs.players)]
    play_local(bots, rs, seed=4)
    assert len(counted.deals) >= 5
    # 20 readings of 1 ms: it stops when one more deal would pass the budget (at 19 or 20 deals).
    assert set(counted.deals) <= {19, 20}, counted.deals
    assert set(counted.budgets) == {0.020}


def test_search_takes_a_third_of_the_referees_limit(searcher: type[Budgeted]) -> None:
    rs = make_ruleset(target=60)
    counted = Counted(searcher(1, time_ms=1000), time_left_ms=60)  # type: ignore[call-arg]  # its own budget is generous: the limit decides
    play_local([counted, DefensiveBot(1), GreedyBot(2), DefensiveBot(3)], rs, seed=8)
    assert len(counted.deals) >= 5
    # A third of 60 ms is 20 ms: 19 or 20 deals. The whole limit would give about 59.
    assert set(counted.deals) <= {19, 20}, counted.deals
    assert set(counted.budgets) == {0.020}
    # Without a limit from the referee its own budget holds.
    unlimited = Counted(searcher(1, time_ms=30))  # type: ignore[call-arg]
    play_local([unlimited, DefensiveBot(1), GreedyBot(2), DefensiveBot(3)], rs, seed=8)
    assert set(unlimited.deals) <= {29, 30} and set(unlimited.budgets) == {0.030}


@pytest.mark.parametrize("name", sorted(BOTS))
def test_search_needs_a_budget_or_a_count(name: str) -> None:
    with pytest.raises(ValueError):
        BOTS[name][1](1, time_ms=None, iterations=None)


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
