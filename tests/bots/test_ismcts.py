"""The ISMCTS bot: its deals never use a hidden tile, and its tree adds up.

Legal play over whole matches, the entry point and seeded repeatability are checked
with the other reference bots (test_reference_bots.py); its clock with the search
bot's (test_time_budget.py); the bot as its own program against a real referee in
test_bots_over_grpc.py.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sevenrocks.bots.ismcts as ismcts_module
from sevenrocks.sdk.rules import ALL_TILES, GameState, Phase
from sevenrocks.sdk.rules.bits import mask_tiles
from sevenrocks.sdk.rules.layout import code_of

from sevenrocks.bots.deals import MaskDeals
from sevenrocks.bots.infoset import key_of, search_tree
from sevenrocks.bots.inference import missed_awards
from sevenrocks.bots.ismcts import ISMCTSBot
from sevenrocks.bots.rollout import Side

from .test_sampling import CONFIGS, check_deal, position


def deal_of(state: GameState) -> tuple[list[list[tuple[int, int]]], list[tuple[int, int]]]:
    return [mask_tiles(m) for m in state.hand_masks], [ALL_TILES[i] for i in state.bones]


@settings(max_examples=40, deadline=None)
@given(config=st.sampled_from(CONFIGS), seed=st.integers(0, 10_000), decision=st.integers(0, 120),
       rng_seed=st.integers(0, 2**32 - 1))
def test_every_searched_deal_agrees_with_the_seats_view(
    config: tuple[str, int], seed: int, decision: int, rng_seed: int
) -> None:
    """The states the tree searches hold the seat's own hand and only unseen tiles elsewhere, voids respected."""
    game, view = position(*config, seed, decision)
    if game.phase is not Phase.TURN:
        return
    deals = MaskDeals(view, missed_awards(view), 0.3, 10)
    rng = random.Random(rng_seed)
    for _ in range(6):
        state = deals.state(rng)
        check_deal(view, *deal_of(state))
        assert state.turn == view.seat and state.legal_moves() == view.legal_moves()
        assert state.scores == view.scores and state.layout.tiles == view.layout.tiles


class Recording(MaskDeals):
    """MaskDeals that keeps every state it hands out (before the search plays on it)."""

    seen: list[tuple[list[list[tuple[int, int]]], list[tuple[int, int]]]] = []

    def state(self, rng: random.Random) -> GameState:
        s = super().state(rng)
        Recording.seen.append(deal_of(s))
        return s


def test_the_bot_searches_sampled_deals_not_the_true_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """At real decisions, every deal the bot searched fits its view, and the deals are not just the true one."""
    monkeypatch.setattr(ismcts_module, "MaskDeals", Recording)
    checked = 0
    for config in CONFIGS:
        for seed in range(3):
            game, view = position(*config, seed, 6 + seed)
            if game.phase is not Phase.TURN or len(view.legal_moves()) < 2:
                continue
            Recording.seen = []
            move = ISMCTSBot(seed, iterations=30, time_ms=None).choose_move(view)
            assert move in view.legal_moves()
            assert len(Recording.seen) >= 30
            for hands, boneyard in Recording.seen:
                check_deal(view, hands, boneyard)
            assert any(hands != game.hands for hands, _ in Recording.seen), "it searched only the true deal"
            checked += 1
    assert checked >= 6


def test_the_tree_counts_every_iteration_once() -> None:
    """Root visits equal the iterations; each child's visits never exceed the times it was available."""
    game, view = position("seven-rocks", 4, 3, 9)
    assert game.phase is Phase.TURN and len(view.legal_moves()) > 1
    deals = MaskDeals(view, missed_awards(view), 0.3, 10)
    root, n = search_tree(deals, Side(view, 0.4), view.ruleset.team_of, random.Random(2), 200, 0.0, None, 4, 10.0)
    assert n == 200 and root.visits == 200
    assert sum(c.visits for c in root.children.values()) == 200
    assert set(root.children) == {key_of(code_of(m), view.seat) for m in view.legal_moves()}

    def walk(node: object, depth: int) -> int:
        assert isinstance(node, type(root))
        deepest = depth
        for child in node.children.values():
            assert 1 <= child.visits <= child.avail
            assert sum(c.visits for c in child.children.values()) <= child.visits
            deepest = max(deepest, walk(child, depth + 1))
        return deepest

    assert 2 <= walk(root, 0) <= 4  # the tree grew past the root move, never past ``plies``


def test_paired_deals_try_every_move_of_the_seat_on_each_deal() -> None:
    game, view = position("seven-rocks", 4, 3, 9)
    k = len(view.legal_moves())
    deals = MaskDeals(view, missed_awards(view), 0.3, 10)
    root, n = search_tree(deals, Side(view, 0.4), view.ruleset.team_of, random.Random(2), 50, 0.0, None, 4, 10.0,
                          paired=True)
    assert n == 50 and root.visits == 50 * k
    assert [c.visits for c in root.children.values()] == [50] * k
    assert all(c.avail == 50 for c in root.children.values())


def test_an_opponents_reply_keeps_the_value_for_the_opponent() -> None:
    """Two plies: each reply keeps the value for its own side (an opponent's negated, a partner's as it is)."""
    game, view = position("seven-rocks", 4, 3, 9)
    deals = MaskDeals(view, missed_awards(view), 0.3, 10)
    root, _ = search_tree(deals, Side(view, 0.4), view.ruleset.team_of, random.Random(2), 60, 0.0, None, 2, 10.0,
                          paired=True)
    checked = 0
    for move in root.children.values():
        replies = move.children.values()
        if replies and sum(r.visits for r in replies) == move.visits:  # every iteration went on to a reply
            team = view.ruleset.team_of
            assert sum(r.total if team(key & 7) == view.team else -r.total
                       for key, r in move.children.items()) == pytest.approx(move.total)
            assert any(team(key & 7) != view.team and r.total for key, r in move.children.items())
            checked += 1
    assert checked


def test_ismcts_needs_at_least_its_own_move() -> None:
    with pytest.raises(ValueError):
        ISMCTSBot(1, plies=0)
