"""The alpha-beta bot: its pruning gives plain minimax's values, and it searches only deals its seat can see.

Legal play over whole matches, the entry point and seeded repeatability are checked
with the other reference bots (test_reference_bots.py); its clock with the other
search bots' (test_time_budget.py); the bot as its own program against a real referee
in test_bots_over_grpc.py.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import sevenrocks.bots.alphabeta as alphabeta_module
from sevenrocks.bots.alphabeta import AlphaBetaBot
from sevenrocks.bots.deals import MaskDeals
from sevenrocks.bots.minimax import INFINITY, TO_THE_END, alphabeta, search_minimax, tiles_left
from sevenrocks.bots.rollout import Side
from sevenrocks.sdk.rules import GameState, Phase
from sevenrocks.sdk.view import SeatView

from .test_ismcts import Recording
from .test_sampling import CONFIGS, check_deal
from .test_sampling import position as match_position


def position(ruleset: str, players: int, seed: int, decision: int) -> tuple[GameState, SeatView]:
    """test_sampling's position, its game dealing no next round: a search ends where the bot's deals end it."""
    game, view = match_position(ruleset, players, seed, decision)
    game.auto_deal = False  # the bot searches states from view.state_with, which never deal
    return game, view


def minimax(state: GameState, side: Side, team_of: object, depth: int) -> float:
    """Every line searched, no pruning, no move order: what alpha-beta must equal."""
    assert callable(team_of)
    if depth <= 0 or state.phase is not Phase.TURN:
        return side.value(state)
    values = []
    for code in state.legal_codes():
        child = state.copy()
        child.play_code(code, False)
        values.append(minimax(child, side, team_of, depth - 1))
    return max(values) if team_of(state.turn) == side.mine else min(values)


@settings(max_examples=30, deadline=None)
@given(config=st.sampled_from(CONFIGS), seed=st.integers(0, 10_000), decision=st.integers(8, 120),
       depth=st.sampled_from([1, 2, 3, TO_THE_END]))
def test_alphabeta_gives_the_value_of_plain_minimax(config: tuple[str, int], seed: int, decision: int,
                                                     depth: int) -> None:
    """On the true deal, for every move of the seat: the pruned, ordered search returns the exact minimax value."""
    game, view = position(*config, seed, decision)
    if game.phase is not Phase.TURN:
        return
    if depth == TO_THE_END and tiles_left(game) > 8:
        depth = 3  # the unpruned search to the end of a young round takes minutes
    side = Side(view, 0.4)
    team_of = view.ruleset.team_of
    for code in game.legal_codes():
        child = game.copy()
        child.play_code(code, False)
        expected = minimax(child.copy(), side, team_of, depth)
        assert alphabeta(child, side, depth, -INFINITY, INFINITY) == pytest.approx(expected)


def test_alphabeta_gives_the_value_of_plain_minimax_on_a_fixed_grid() -> None:
    """Every ruleset, 15 matches, three points of each, depths 2 and 3: no cut-off may change a value.

    A cut-off that prunes a little early (``alpha >= beta - 10``) changes about 3 of these
    ~960 values, and the random examples above rarely meet one; this grid does.
    """
    for config in CONFIGS:
        for seed in range(15):
            for decision in (8, 14, 20):
                game, view = position(*config, seed, decision)
                if game.phase is not Phase.TURN:
                    continue
                side = Side(view, 0.4)
                for code in game.legal_codes():
                    child = game.copy()
                    child.play_code(code, False)
                    for depth in (2, 3):
                        expected = minimax(child.copy(), side, view.ruleset.team_of, depth)
                        assert alphabeta(child.copy(), side, depth, -INFINITY, INFINITY) == pytest.approx(expected), \
                            (config, seed, decision, depth)


def test_a_round_searched_to_its_end_is_valued_with_its_settlement() -> None:
    """To the end, every leaf is a finished round (or match): no pip charge, the settlement is in the scores."""
    checked = 0
    for seed in range(8):
        game, view = position("seven-rocks", 4, seed, 20)  # 8 tiles left unless a seat passed
        if game.phase is not Phase.TURN or tiles_left(game) > 8:
            continue
        side = Side(view, 0.4)
        no_charge = Side(view, 0.0)
        for code in game.legal_codes():
            child = game.copy()
            child.play_code(code, False)
            deep = alphabeta(child.copy(), side, TO_THE_END, -INFINITY, INFINITY)
            assert deep == alphabeta(child, no_charge, TO_THE_END, -INFINITY, INFINITY)
            assert deep == int(deep)  # whole points: settlements and awards, never a fraction of a pip
        checked += 1
    assert checked >= 5


def test_the_bot_searches_sampled_deals_not_the_true_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """At real decisions, every deal the bot searched fits its view, and the deals are not just the true one."""
    monkeypatch.setattr(alphabeta_module, "MaskDeals", Recording)
    checked = 0
    for config in CONFIGS:
        for seed in range(3):
            game, view = position(*config, seed, 6 + seed)
            if game.phase is not Phase.TURN or len(view.legal_moves()) < 2:
                continue
            Recording.seen = []
            move = AlphaBetaBot(seed, iterations=8, time_ms=None, depth=2).choose_move(view)
            assert move in view.legal_moves()
            assert len(Recording.seen) >= 8
            for hands, boneyard in Recording.seen:
                check_deal(view, hands, boneyard)
            assert any(hands != game.hands for hands, _ in Recording.seen), "it searched only the true deal"
            checked += 1
    assert checked >= 6


@pytest.mark.parametrize("config, left, solve, depth", [
    (("seven-rocks", 4), 9, 9, TO_THE_END),
    (("seven-rocks", 4), 10, 9, 1),
    # Fives with a boneyard: the hands alone are under ``solve``, but every drawn tile is
    # played too; to the end would be a search of the whole boneyard.
    (("fives", 2), 24, 13, 1),
])
def test_the_bot_searches_to_the_rounds_end_once_few_tiles_are_left(
    monkeypatch: pytest.MonkeyPatch, config: tuple[str, int], left: int, solve: int, depth: int
) -> None:
    """``solve`` or fewer tiles to play (hands and boneyard): each deal to the round's end; more: ``depth`` placements."""
    for seed in range(100):
        game, view = position(*config, seed, 28 - left)
        if game.phase is Phase.TURN and tiles_left(game) == left and len(view.legal_moves()) > 1:
            break
    else:
        pytest.fail(f"no decision with {left} tiles left")
    assert sum(view.hand_sizes) <= solve or config[0] != "fives"
    depths: list[int] = []

    def spy(*args: object, **kwargs: object) -> tuple[list[float], int]:
        depths.append(args[7])  # type: ignore[arg-type]
        return search_minimax(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(alphabeta_module, "search_minimax", spy)
    AlphaBetaBot(1, iterations=1, time_ms=None, depth=1, solve=solve).choose_move(view)
    assert depths == [depth]


def test_every_move_is_searched_on_the_same_deals() -> None:
    """The summed values are over the same deals for every move: the true deal alone gives each move's exact value."""
    game, view = position("seven-rocks", 4, 5, 12)
    assert game.phase is Phase.TURN and len(view.legal_moves()) > 1

    class TrueDeal(MaskDeals):
        def state(self, rng: random.Random) -> GameState:
            return game.copy()

    side = Side(view, 0.4)
    totals, n = search_minimax(view, view.legal_moves(), TrueDeal(view), random.Random(1), 3, 0.0, None, 2, 0.4)
    assert n == 3
    for move, total in zip(view.legal_moves(), totals):
        child = game.copy()
        child.play(move)
        assert total == pytest.approx(3 * minimax(child, side, view.ruleset.team_of, 2))


def test_depth_cannot_be_negative() -> None:
    with pytest.raises(ValueError):
        AlphaBetaBot(1, depth=-1)
