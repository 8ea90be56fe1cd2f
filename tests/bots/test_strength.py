"""The fast strength check: the search bot beats greedy on fixed duplicate deals by a margin
that cannot be luck (the full ladder, bench/engine/ladder.py and test_ladder_strength.py, is slow).

Each deal is played twice with the partnerships' seats exchanged, so both sides hold
both hands. A deal counts for search when it won both matches, for greedy when greedy
did, and not at all when they split. Under "no better than greedy" each counted deal
is a fair coin, so the one-sided sign-test p-value of what we see must be tiny. The
deals and bots are seeded: the result is the same on every run and machine.
"""

from __future__ import annotations

import math

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.local import play_local

from sevenrocks.bots.greedy import GreedyBot
from sevenrocks.bots.search import SearchBot

DEALS = range(1, 21)
#: Deals per move: a fixed count (reproducible), a quarter of the ladder's 40 to keep the check fast
#: (about 13 s of CPU); even so search wins 13 of the 20 deals both ways and loses none.
SEARCH_DEALS = 10


def sign_test_p(wins: int, losses: int) -> float:
    """One-sided P(at least ``wins`` of ``wins + losses`` fair coin flips come up heads)."""
    n = wins + losses
    return sum(math.comb(n, k) for k in range(wins, n + 1)) / 2 ** n


def test_sign_test() -> None:
    assert sign_test_p(10, 0) == 2 ** -10 and sign_test_p(0, 3) == 1.0
    assert abs(sign_test_p(9, 3) - 299 / 4096) < 1e-12


def test_search_beats_greedy_on_fixed_duplicate_deals() -> None:
    won = lost = split = 0
    for deal in DEALS:
        search_won = 0
        for search_team in (0, 1):  # the same deal with the partnerships' seats exchanged
            bots: list[Bot] = [SearchBot(deal * 4 + s, iterations=SEARCH_DEALS, time_ms=None) if s % 2 == search_team
                               else GreedyBot(s) for s in range(4)]
            search_won += play_local(bots, "seven-rocks", deal).winner == search_team
        won += search_won == 2
        lost += search_won == 0
        split += search_won == 1
    p = sign_test_p(won, lost)
    print(f"search won {won} deals, greedy {lost}, split {split}: sign test p = {p:.2g}")
    assert p < 0.001, (won, lost, split, p)
