"""Round and match rules of Seven Rocks and fives (docs/rules.md), on crafted positions.

Positions are set up by starting a real round and then giving the seats the few
tiles the rule needs, so each test exercises the engine's own state machine.
"""

from __future__ import annotations

import random

import pytest

from sevenrocks.sdk.rules import (
    ALL_TILES, Draw, GameState, LeaderBy, MatchEnd, Move, Pass, Phase, Play, Port, RoundEnd,
    RoundStart, Side, draw_deal, make_ruleset,
)


def crafted(ruleset_name: str = "seven-rocks", players: int | None = None, *, hands: list[list[tuple[int, int]]],
            boneyard: list[tuple[int, int]] = (), leader: int = 0, seed: int = 1, scores: list[int] | None = None,
            target: int = 250) -> GameState:
    rs = make_ruleset(ruleset_name, players=players, target=target)
    g = GameState(rs, seed=seed)
    deal, bone, _ = draw_deal(random.Random(0), rs, False)
    g.start_round(deal, bone, leader, LeaderBy.LOT)
    g.hands = [sorted(h) for h in hands]
    g.boneyard = list(boneyard)
    if scores:
        g.scores = list(scores)
    return g


def test_deal_uses_all_28_tiles_in_seven_rocks() -> None:
    g = GameState(make_ruleset(), seed=3)
    start = g.start()[0]
    assert isinstance(start, RoundStart)
    assert [len(h) for h in start.hands] == [7, 7, 7, 7] and start.boneyard == ()
    assert sorted(t for h in start.hands for t in h) == list(ALL_TILES)
    assert start.leader_by is LeaderBy.LOT


def test_same_seed_same_deals_and_lots() -> None:
    a, b = GameState(make_ruleset(), seed=99), GameState(make_ruleset(), seed=99)
    assert a.start() == b.start()
    assert GameState(make_ruleset(), seed=100).start() != GameState(make_ruleset(), seed=99).start()


def test_must_play_a_legal_move() -> None:
    g = crafted(hands=[[(5, 5), (0, 1)], [(2, 5), (3, 3)], [(1, 1)], [(2, 2)]])
    g.play(Move((5, 5), None))
    assert g.turn == 1
    assert g.legal_moves() == [Move((2, 5), Port((5, 5), Side.LINE_A)), Move((2, 5), Port((5, 5), Side.LINE_B))]
    with pytest.raises(ValueError, match="does not match"):
        g.play(Move((3, 3), Port((5, 5), Side.LINE_A)))


def test_players_without_a_move_pass_and_four_passes_block_the_round() -> None:
    g = crafted(hands=[[(6, 6), (0, 0)], [(0, 1)], [(1, 1)], [(0, 2)]], seed=5)
    events = g.play(Move((6, 6), None))
    kinds = [type(e).__name__ for e in events]
    assert kinds[:6] == ["Play", "Pass", "Pass", "Pass", "Pass", "RoundEnd"]
    end = events[5]
    assert isinstance(end, RoundEnd) and end.reason.value == "blocked" and end.by is None
    # Settlement: each hand rounded separately and debited from its partnership.
    assert [(s.seat, s.pips, s.points) for s in end.settlement] == [(0, 0, 0), (1, 1, 0), (2, 2, 0), (3, 2, 0)]


def test_after_a_blocked_round_a_new_lot_chooses_the_leader() -> None:
    g = crafted(hands=[[(6, 6), (0, 0)], [(0, 1)], [(1, 1)], [(0, 2)]], seed=5)
    rng = random.Random()
    rng.setstate(g.rng.getstate())  # type: ignore[union-attr]
    _, _, lot = draw_deal(rng, g.ruleset, True)
    events = g.play(Move((6, 6), None))
    start = events[6]
    assert isinstance(start, RoundStart)
    assert start.leader_by is LeaderBy.LOT and start.leader == lot and start.round == 2


def test_domino_ends_the_round_and_the_dominoer_leads() -> None:
    g = crafted(hands=[[(4, 4)], [(0, 1)], [(2, 2), (2, 5)], [(1, 1)]], leader=2)
    g.play(Move((2, 2), None))                       # seat 2 opens; 3, 0 and 1 cannot follow
    assert g.turn == 2
    events = g.play(Move((2, 5), Port((2, 2), Side.LINE_A)))
    end = next(e for e in events if isinstance(e, RoundEnd))
    assert end.reason.value == "domino" and end.by == 2
    start = next(e for e in events if isinstance(e, RoundStart))
    assert start.leader == 2 and start.leader_by is LeaderBy.DOMINO


def test_partners_hands_are_rounded_separately() -> None:
    # Seat 0 dominoes with [0|0]; partners 1 and 3 hold 3 pips each: two debits of 5.
    g = crafted(hands=[[(0, 0)], [(0, 3)], [(2, 2)], [(1, 2)]])
    events = g.play(Move((0, 0), None))
    end = next(e for e in events if isinstance(e, RoundEnd))
    assert [(s.seat, s.pips, s.points) for s in end.settlement] == [(0, 0, 0), (1, 3, -5), (2, 4, -5), (3, 3, -5)]
    assert end.scores == (-5, -10)


def test_scores_may_go_below_zero() -> None:
    g = crafted(hands=[[(0, 0)], [(6, 6)], [(5, 6)], [(4, 6)]])
    events = g.play(Move((0, 0), None))
    assert next(e for e in events if isinstance(e, RoundEnd)).scores == (-10, -20)


def test_reaching_the_target_wins_at_once_without_settlement() -> None:
    g = crafted(hands=[[(0, 5)], [(6, 6)], [(5, 6)], [(4, 6)]], scores=[245, 0])
    events = g.play(Move((0, 5), None))
    assert [type(e) for e in events] == [Play, MatchEnd]
    end = events[1]
    assert isinstance(end, MatchEnd)
    assert end.reason.value == "target" and end.winner == 0 and end.scores == (250, 0) and end.rounds == 1
    assert g.phase is Phase.MATCH_OVER


def test_round_cap_adjudicates_by_score() -> None:
    # A target nobody can reach in one round, and a cap of one round: the cap must decide.
    for seed in range(20):
        g = GameState(make_ruleset(round_cap=1, target=1000), seed=seed)
        events = g.start()
        rng = random.Random(seed)
        while not g.over:
            events += g.play(rng.choice(g.legal_moves()))
        end = events[-1]
        assert isinstance(end, MatchEnd)
        assert end.reason.value == "round_cap" and end.rounds == 1
        assert isinstance(events[-2], RoundEnd) and end.scores == events[-2].scores
        a, b = end.scores
        assert end.winner == (None if a == b else (0 if a > b else 1))


def test_forfeit_seven_rocks_other_partnership_wins() -> None:
    g = GameState(make_ruleset(), seed=2)
    g.start()
    end = g.forfeit(1, "timeout", "no answer in 1000 ms")[0]  # type: ignore[arg-type]
    assert isinstance(end, MatchEnd) and end.reason.value == "forfeit" and end.winner == 0
    assert end.offender is not None and end.offender.seat == 1 and end.offender.cause.value == "timeout"


# --- fives ------------------------------------------------------------------------

@pytest.mark.parametrize("players, size, bone", [(2, 7, 14), (3, 5, 13), (4, 5, 8)])
def test_fives_deal_sizes(players: int, size: int, bone: int) -> None:
    start = GameState(make_ruleset("fives", players=players), seed=1).start()[0]
    assert isinstance(start, RoundStart)
    assert [len(h) for h in start.hands] == [size] * players and len(start.boneyard) == bone


def test_fives_draws_until_a_playable_tile_then_plays_it() -> None:
    g = crafted("fives", 2, hands=[[(6, 6), (1, 2)], [(0, 1), (0, 2)]], boneyard=[(0, 3), (3, 6), (4, 4)])
    events = g.play(Move((6, 6), None))
    assert events[1:] == [Draw(1, 1, (0, 3)), Draw(1, 1, (3, 6))]
    assert g.turn == 1 and g.legal_moves() == [Move((3, 6), Port((6, 6), Side.LINE_A)), Move((3, 6), Port((6, 6), Side.LINE_B))]
    assert g.boneyard == [(4, 4)]


def test_fives_with_an_empty_boneyard_the_player_passes() -> None:
    g = crafted("fives", 2, hands=[[(6, 6), (1, 2)], [(0, 1), (0, 2)]], boneyard=[])
    events = g.play(Move((6, 6), None))
    assert isinstance(events[1], Pass) and events[1].seat == 1


def test_fives_domino_bonus_is_opponents_pips_rounded() -> None:
    # Seat 0 dominoes; opponents hold 21 and 23 pips... summed: 44 -> 45.
    g = crafted("fives", 3, hands=[[(0, 0)], [(5, 6), (4, 6)], [(6, 6), (5, 5), (0, 3)]], boneyard=[])
    events = g.play(Move((0, 0), None))
    end = next(e for e in events if isinstance(e, RoundEnd))
    assert end.reason.value == "domino" and end.by == 0
    assert end.bonus is not None and (end.bonus.seat, end.bonus.points) == (0, 45)
    assert end.scores == (45, 0, 0) and end.settlement == ()


def test_fives_blocked_round_lowest_pips_wins_the_bonus() -> None:
    g = crafted("fives", 3, hands=[[(6, 6), (0, 1)], [(0, 2)], [(1, 4), (2, 4)]], boneyard=[])
    events = g.play(Move((6, 6), None))
    end = next(e for e in events if isinstance(e, RoundEnd))
    assert end.reason.value == "blocked"
    # pips: seat0 1, seat1 2, seat2 11 -> seat 0 wins 2 + 11 = 13 -> 15
    assert end.bonus is not None and (end.bonus.seat, end.bonus.points) == (0, 15)


def test_fives_blocked_round_tie_for_lowest_gives_no_bonus() -> None:
    g = crafted("fives", 3, hands=[[(6, 6), (0, 2)], [(1, 1)], [(1, 4), (2, 4)]], boneyard=[])
    events = g.play(Move((6, 6), None))
    end = next(e for e in events if isinstance(e, RoundEnd))
    assert end.reason.value == "blocked" and end.bonus is None
    assert end.to_json()["bonus"] is None


def test_fives_lead_rotates_clockwise() -> None:
    g = crafted("fives", 3, hands=[[(0, 0)], [(5, 6)], [(6, 6)]], boneyard=[], leader=2)
    events = g.play(Move((6, 6), None))
    start = next(e for e in events if isinstance(e, RoundStart))
    assert start.leader == 0 and start.leader_by is LeaderBy.ROTATION


def test_fives_bonus_reaching_the_target_ends_the_match_after_round_end() -> None:
    g = crafted("fives", 2, hands=[[(0, 0)], [(5, 6), (4, 6)]], boneyard=[], scores=[80, 0], target=100)
    events = g.play(Move((0, 0), None))
    assert [type(e) for e in events] == [Play, RoundEnd, MatchEnd]
    assert events[2].winner == 0 and events[2].scores == (100, 0)  # type: ignore[union-attr]


def test_fives_configurable_target() -> None:
    g = crafted("fives", 2, hands=[[(0, 5), (1, 1)], [(6, 6)]], boneyard=[], scores=[95, 0], target=100)
    events = g.play(Move((0, 5), None))
    assert [type(e) for e in events] == [Play, MatchEnd]


def test_fives_forfeit_best_other_seat_wins_first_clockwise_on_tie() -> None:
    g = GameState(make_ruleset("fives", players=4), seed=2)
    g.start()
    g.scores = [30, 10, 30, 30]
    end = g.forfeit(1, "crash", "exit status 1")[0]  # type: ignore[arg-type]
    assert isinstance(end, MatchEnd) and end.winner == 2   # seats 2, 3, 0 tie at 30: 2 is first clockwise
    assert g.final_ranks() == [1, 2, 0, 1]
