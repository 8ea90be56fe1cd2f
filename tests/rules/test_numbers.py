"""The engine's number API (rules/bits.py) plays exactly the public API's game."""

from __future__ import annotations

import random

import pytest

from sevenrocks.sdk.rules import GameState, IllegalMoveError, Move, Port, make_ruleset
from sevenrocks.sdk.rules.bits import ALL_MASK, mask_pips, mask_tiles, tiles_mask
from sevenrocks.sdk.rules.layout import code_of, move_of


@pytest.mark.parametrize("ruleset,players", [("seven-rocks", None), ("fives", 2), ("fives", 3), ("fives", 4)])
def test_play_code_without_events_leaves_the_state_play_leaves(ruleset: str, players: int | None) -> None:
    rs = make_ruleset(ruleset, players=players)
    for seed in range(12):
        by_move, by_code = GameState(rs, seed=seed), GameState(rs, seed=seed)
        by_move.start()
        by_code.start()
        rng = random.Random(seed)
        while not by_move.over:
            moves, codes = by_move.legal_moves(), by_code.legal_codes()
            assert moves == [move_of(c) for c in codes]  # same moves, same order
            assert [code_of(m) for m in moves] == codes
            i = rng.randrange(len(moves))
            assert by_code.layout.total_after_code(codes[i]) == by_move.layout.total_after(moves[i])
            events = by_move.play(moves[i])
            quiet = by_code.play_code(codes[i], False)
            assert all(type(e).__name__ not in ("Play", "Pass", "Draw") for e in quiet)
            assert [type(e) for e in quiet] == [type(e) for e in events if type(e).__name__ not in ("Play", "Pass", "Draw")]
            for attr in ("hands", "boneyard", "scores", "turn", "phase", "round", "passes", "winner"):
                assert getattr(by_code, attr) == getattr(by_move, attr), attr
            assert by_code.layout.open_ports() == by_move.layout.open_ports()
            assert by_code.layout.tiles == by_move.layout.tiles
            assert by_code.layout.total == by_move.layout.total


def test_an_illegal_move_number_is_refused_with_the_reason() -> None:
    g = GameState(make_ruleset(), seed=1)
    g.start()
    opening = g.legal_codes()[0]
    elsewhere = [m for m in range(28) if not g.hand_masks[g.turn] >> m & 1][0]
    with pytest.raises(IllegalMoveError, match="does not hold"):
        g.play_code(code_of(Move(mask_tiles(1 << elsewhere)[0], None)))
    with pytest.raises(IllegalMoveError, match="not a move number"):
        g.play_code(-5)
    g.play_code(opening)
    with pytest.raises(IllegalMoveError, match="already open"):
        g.play(Move(g.hands[g.turn][0], None))
    with pytest.raises(IllegalMoveError, match="not an open port|not in the layout|does not have"):
        g.play(Move(g.hands[g.turn][0], Port((6, 6), "line_b")))


def test_hands_read_and_write_as_tiles_over_the_masks() -> None:
    g = GameState(make_ruleset("fives", players=3), seed=4)
    g.start()
    hands = g.hands
    assert all(h == sorted(h) for h in hands)
    assert [tiles_mask(h) for h in hands] == g.hand_masks
    assert [mask_pips(m) for m in g.hand_masks] == [sum(a + b for a, b in h) for h in hands]
    g.hands = [hands[1], hands[0], hands[2]]
    assert g.hands[0] == hands[1]
    assert mask_pips(ALL_MASK) == 168
    assert len(g.boneyard) == 28 - 3 * 5 and not set(g.boneyard) & {t for h in hands for t in h}
    before = g.boneyard
    g.boneyard = before[::-1]  # the drawing order is kept, not sorted
    assert g.boneyard == before[::-1]
