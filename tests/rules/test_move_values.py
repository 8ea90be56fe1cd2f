"""Moves built by hand with plain values (string sides, tuple ports) behave like the engine's own."""

from __future__ import annotations

import json

import pytest

from sevenrocks.sdk.rules import GameState, Layout, Move, Port, Side, make_ruleset
from sevenrocks.sdk.rules.records import header_for, record_lines
from sevenrocks.sdk.rules.replay import verify_lines


def test_a_plain_string_side_becomes_the_side_it_names() -> None:
    port = Port((5, 5), "line_a")
    assert port.side is Side.LINE_A
    assert Move((0, 5), ((5, 5), "line_b")).port == Port((5, 5), Side.LINE_B)
    assert type(Move((0, 5), ((5, 5), "line_b")).port) is Port
    with pytest.raises(ValueError, match="line_c"):
        Port((5, 5), "line_c")


def test_the_5_5_walk_through_with_string_sides_closes_the_spinner() -> None:
    """The seed's opening-[5|5] example, every port given as plain strings: 10, 10, 2, 5."""
    lay = Layout()
    totals = []
    for move in (Move((5, 5), None), Move((0, 5), Port((5, 5), "line_a")),
                 Move((2, 5), Port((5, 5), "line_b")), Move((3, 5), Port((5, 5), "branch_a"))):
        lay.check(move)
        totals.append(lay.place(move))
    assert totals == [10, 10, 2, 5]


def test_a_match_played_with_string_sides_writes_a_record_that_verifies() -> None:
    rs = make_ruleset()
    g = GameState(rs, seed=3)
    events = g.start()
    while not g.over:
        m = g.legal_moves()[-1]
        plain = Move(m.tile, None if m.port is None else (m.port.tile, str(m.port.side.value)))
        events += g.play(plain)
    lines = record_lines(header_for("plain", rs, 3, ["a", "b", "c", "d"]), events)
    assert all(json.loads(x) for x in lines)
    assert verify_lines(lines) == []
