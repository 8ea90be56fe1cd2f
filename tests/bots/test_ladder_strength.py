"""The search bot's partnership beats greedy's on duplicate deals (slow: a statistical test)."""

from __future__ import annotations

import math

import pytest

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.local import play_local

from sevenrocks.bots.greedy import GreedyBot
from sevenrocks.bots.search import SearchBot


def wilson_low(wins: float, n: int, z: float = 1.96) -> float:
    """Lower end of the 95% Wilson interval for a win rate."""
    p = wins / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n)


@pytest.mark.slow
def test_search_beats_greedy_on_duplicate_deals() -> None:
    wins = 0.0
    n = 0
    for seed in range(1, 31):
        for search_team in (0, 1):  # the same deal with the partnerships' seats exchanged
            bots: list[Bot] = [
                SearchBot(seed * 4 + s, iterations=10, time_ms=None) if s % 2 == search_team else GreedyBot(s)
                for s in range(4)
            ]
            winner = play_local(bots, "seven-rocks", seed).winner
            wins += 0.5 if winner is None else float(winner == search_team)
            n += 1
    assert wilson_low(wins, n) > 0.5, f"search won {wins} of {n}"
