"""Every reference bot plays whole matches of both rulesets, and the records verify clean."""

from __future__ import annotations

import pytest

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.local import play_local
from sevenrocks.sdk.registry import bot_module, load_bot
from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.sdk.rules.replay import verify_lines

from sevenrocks.bots.defensive import DefensiveBot
from sevenrocks.bots.greedy import GreedyBot
from sevenrocks.bots.alphabeta import AlphaBetaBot
from sevenrocks.bots.ismcts import ISMCTSBot
from sevenrocks.bots.random import RandomBot
from sevenrocks.bots.search import SearchBot

CONFIGS = [("seven-rocks", 4), ("fives", 2), ("fives", 3), ("fives", 4)]
NAMES = {"random": RandomBot, "greedy": GreedyBot, "defensive": DefensiveBot, "search": SearchBot, "ismcts": ISMCTSBot,
         "alphabeta": AlphaBetaBot}


def make(name: str, seed: int) -> Bot:
    """A bot by name; the search bots with a few deals per move and no clock, so tests are fast and repeatable."""
    if name == "search":
        return SearchBot(seed, iterations=3, time_ms=None)
    if name == "ismcts":
        return ISMCTSBot(seed, iterations=12, time_ms=None)
    if name == "alphabeta":
        return AlphaBetaBot(seed, iterations=3, time_ms=None)
    return NAMES[name](seed)


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c[0]}-{c[1]}")
@pytest.mark.parametrize("name", sorted(NAMES))
def test_plays_whole_matches_that_verify(name: str, config: tuple[str, int]) -> None:
    ruleset, players = config
    # A lower target keeps the search bot's matches short; the other bots play the full 250.
    rs = make_ruleset(ruleset, players=players, target=100 if name in ("search", "ismcts", "alphabeta") else 250)
    # The bot under test in seat 0 (and its partner's seat), the next bot down elsewhere.
    other = {"random": "greedy", "greedy": "random", "defensive": "greedy", "search": "defensive", "ismcts": "search",
             "alphabeta": "search"}[name]
    bots = [make(name if s % 2 == 0 else other, s) for s in range(rs.players)]
    match = play_local(bots, rs, seed=11, match_id=f"test-{name}")
    assert match.state.over
    assert verify_lines(match.record_lines()) == []


@pytest.mark.parametrize("name", sorted(NAMES))
def test_registered_as_entry_point(name: str) -> None:
    assert load_bot(name) is NAMES[name]
    assert bot_module(name) == f"sevenrocks.bots.{name}"


@pytest.mark.parametrize("name", sorted(NAMES))
def test_a_seed_makes_a_bot_repeatable(name: str) -> None:
    rs = make_ruleset("fives", players=3, target=100)
    lines = [
        play_local([make(name, 5 + s) for s in range(3)], rs, seed=3).record_lines() for _ in range(2)
    ]
    assert lines[0] == lines[1]
