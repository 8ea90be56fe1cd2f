"""``verify`` reads what docs/records.md allows: unknown keys at every level, any round cap,
forfeits at any point after ``match_start``. Each corruption is still caught."""

from __future__ import annotations

import json
import random
from typing import Any, Callable

import pytest

from sevenrocks.sdk.rules import Draw, FaultCause, GameState, Pass, Ruleset, make_ruleset
from sevenrocks.sdk.rules.events import Event
from sevenrocks.sdk.rules.records import header_for, record_lines
from sevenrocks.sdk.rules.replay import verify_lines

from .helpers import random_match

Lines = list[dict[str, Any]]


def as_dicts(lines: list[str]) -> Lines:
    return [json.loads(x) for x in lines]


def problems(lines: Lines) -> list[str]:
    return [f"{d.line}: {d.message}" for d in verify_lines(json.dumps(x) for x in lines)]


# --- unknown keys inside nested objects ------------------------------------------

def test_unknown_keys_inside_nested_objects_are_ignored() -> None:
    seven = as_dicts(random_match("seven-rocks", None, 2)[2])
    fives = as_dicts(random_match("fives", 3, 2)[2])
    touched = set()
    for x in seven + fives:
        if x["event"] == "play" and x["port"] is not None:
            x["port"]["glyph"] = "◧"
            touched.add("port")
        if x["event"] == "round_end" and "settlement" in x:
            for s in x["settlement"]:
                s["hand_ms"] = 3
            touched.add("settlement")
        if x["event"] == "round_end" and x.get("bonus") is not None:
            x["bonus"]["from"] = [0, 1]
            touched.add("bonus")
        x["writer"] = {"name": "other", "version": 2}
    assert touched == {"port", "settlement", "bonus"}
    assert problems(seven) == []
    assert problems(fives) == []


def test_a_wrong_value_inside_a_nested_object_is_still_caught() -> None:
    lines = as_dicts(random_match("seven-rocks", None, 2)[2])
    i = next(i for i, x in enumerate(lines) if x["event"] == "round_end")
    lines[i]["settlement"][1]["note"] = "extra"
    lines[i]["settlement"][1]["points"] -= 5
    assert any(p.startswith(f"{i + 1}: settlement") for p in problems(lines))
    j = next(i for i, x in enumerate(lines) if x["event"] == "play" and x["port"])
    lines = as_dicts(random_match("seven-rocks", None, 2)[2])
    del lines[j]["port"]["side"]
    assert any(p.startswith(f"{j + 1}: ") for p in problems(lines))


def forfeit_record(seed: int = 4) -> Lines:
    rs = make_ruleset()
    g = GameState(rs, seed=seed)
    events: list[Event] = g.start()
    for _ in range(5):
        events += g.play(g.legal_moves()[0])
    events += g.forfeit(1, FaultCause.DISCONNECT, "stream closed")
    return as_dicts(record_lines(header_for("ff", rs, seed, ["a", "b", "c", "d"]), events))


def test_unknown_keys_in_the_offender_are_ignored() -> None:
    lines = forfeit_record()
    lines[-1]["offender"]["exit_code"] = -9
    assert problems(lines) == []
    lines[-1]["offender"]["seat"] = 0   # team 0 offends, so team 1 should win: caught
    assert problems(lines) != []


# --- round_cap: optional, default 200, inferred from a round_cap ending -----------

def played(rs: Ruleset, seed: int, until: Callable[[GameState], bool]) -> tuple[GameState, list[Event]]:
    """A seeded random-policy match of ``rs``, played while ``until(state)`` is false."""
    g = GameState(rs, seed=seed)
    rng = random.Random(seed)
    events = g.start()
    while not until(g):
        events += g.play(rng.choice(g.legal_moves()))
    return g, events


def capped_record(round_cap: int, ruleset: str = "seven-rocks", players: int | None = None) -> Lines:
    rs = make_ruleset(ruleset, players=players, target=100_000, round_cap=round_cap)
    _, events = played(rs, 5, lambda g: g.over)
    return as_dicts(record_lines(header_for("cap", rs, 5, [f"p{i}" for i in range(rs.players)]), events))


def test_a_round_cap_ending_without_the_key_shows_the_cap() -> None:
    for ruleset, players in (("seven-rocks", None), ("fives", 3)):
        lines = capped_record(7, ruleset, players)
        assert lines[-1]["reason"] == "round_cap" and lines[-1]["rounds"] == 7
        assert problems(lines) == []                        # the key states 7
        del lines[0]["round_cap"]
        assert problems(lines) == []                        # no key: the ending shows 7
        lines[0]["round_cap"] = 9
        assert any("match_start states round_cap 9" in p for p in problems(lines))


def test_a_round_cap_ending_still_checks_the_winner() -> None:
    lines = capped_record(7)
    del lines[0]["round_cap"]
    scores = lines[-1]["scores"]
    lines[-1]["winner"] = None if scores[0] != scores[1] else 0
    assert any(p.startswith(f"{len(lines)}: match_end: winner") for p in problems(lines))


def test_without_the_key_the_default_cap_is_200() -> None:
    rs = make_ruleset(target=100_000, round_cap=1000)
    g, events = played(rs, 8, lambda g: g.round >= 203)
    events += g.forfeit(2, FaultCause.TIMEOUT, "no answer")
    lines = as_dicts(record_lines(header_for("long", rs, 8, ["a", "b", "c", "d"]), events))
    assert problems(lines) == []                            # the key states 1000
    del lines[0]["round_cap"]
    line_201 = next(i for i, x in enumerate(lines) if x["event"] == "round_start" and x["round"] == 201) + 1
    assert problems(lines) == [f"{line_201}: round 201 started, but match_start states no round_cap, "
                               "so the cap is the default 200"]


# --- a forfeit at any point: also while a seat is due a forced pass or draw -------

def forced_after_play(rs: Ruleset, kind: type, seed: int = 1) -> tuple[Lines, dict[str, Any]]:
    """Record lines up to a play followed by a forced ``kind`` (Pass or Draw), and that play."""
    g = GameState(rs, seed=seed)
    rng = random.Random(seed)
    events: list[Event] = g.start()
    while True:
        new = g.play(rng.choice(g.legal_moves()))
        events += new
        if len(new) > 1 and isinstance(new[1], kind):
            break
    upto = len(events) - len(new) + 2   # the play and the first forced event after it
    lines = as_dicts(record_lines(header_for("mid", rs, seed, [f"p{i}" for i in range(rs.players)]), events[:upto]))
    return lines, lines[-2]


def forfeit_line(seat: int, winner: int, play: dict[str, Any]) -> dict[str, Any]:
    return {"event": "match_end", "reason": "forfeit", "winner": winner, "scores": play["scores"],
            "rounds": play["round"], "offender": {"seat": seat, "cause": "disconnect", "detail": "gone"}}


def test_a_forfeit_where_a_forced_pass_was_due_verifies() -> None:
    lines, play = forced_after_play(make_ruleset(), Pass)
    passer = lines[-1]["seat"]
    lines.pop()                                             # the pass never happened
    assert problems(lines + [forfeit_line(passer, 1 - passer % 2, play)]) == []
    other = (passer + 1) % 4                                # any seat may be recorded as the offender
    assert problems(lines + [forfeit_line(other, 1 - other % 2, play)]) == []
    bad = forfeit_line(passer, passer % 2, play)            # the offender's own side cannot win
    assert any(p.startswith(f"{len(lines) + 1}: match_end: winner") for p in problems(lines + [bad]))


def test_a_forfeit_between_two_forced_draws_verifies() -> None:
    rs = make_ruleset("fives", players=3)
    lines, play = forced_after_play(rs, Draw)
    scores = play["scores"]
    drawer = lines[-1]["seat"]
    others = [(drawer + k) % 3 for k in (1, 2)]   # best other score, first clockwise on a tie
    winner = others[1] if scores[others[1]] > scores[others[0]] else others[0]
    assert problems(lines + [forfeit_line(drawer, winner, play)]) == []       # after the first draw
    assert problems(lines[:-1] + [forfeit_line(drawer, winner, play)]) == []  # before it


# --- extra keys never change a format key --------------------------------------

def test_an_extra_key_cannot_overwrite_a_format_key() -> None:
    rs = make_ruleset()
    with pytest.raises(ValueError, match="deal"):
        header_for("x", rs, 1, ["a", "b", "c", "d"], extra={"deal": 3}).to_json()


def test_a_tournament_record_keeps_the_deal_procedure_so_tampered_deals_are_caught() -> None:
    rs = make_ruleset()
    _, events = played(rs, 9, lambda g: g.over)
    lines = as_dicts(record_lines(header_for("t", rs, 9, ["a", "b", "c", "d"],
                                             extra={"event_id": "league", "deal_number": 3}), events))
    assert problems(lines) == []
    hands = lines[1]["hands"]
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]
    assert any("tampered deal" in p for p in problems(lines))
