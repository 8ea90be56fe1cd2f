"""``verify`` accepts correct records (ours and other writers') and rejects each kind of corruption."""

from __future__ import annotations

import json
import random
from typing import Any, Callable

import pytest

from sevenrocks.sdk.rules.replay import verify_lines

from .helpers import random_match

Lines = list[dict[str, Any]]


def match_lines(seed: int, ruleset: str = "seven-rocks", players: int | None = None) -> Lines:
    _, _, lines = random_match(ruleset, players, seed)
    return [json.loads(x) for x in lines]


def problems(lines: Lines) -> list[str]:
    return [f"{d.line}: {d.message}" for d in verify_lines(json.dumps(x) for x in lines)]


def first(lines: Lines, pred: Callable[[dict[str, Any]], bool]) -> int:
    return next(i for i, x in enumerate(lines) if pred(x))


@pytest.mark.parametrize("ruleset, players", [("seven-rocks", None), ("fives", 2), ("fives", 3), ("fives", 4)])
def test_engine_records_verify_clean(ruleset: str, players: int | None) -> None:
    for seed in range(5):
        assert problems(match_lines(seed, ruleset, players)) == []


def test_a_record_from_another_writer_verifies_clean() -> None:
    """No deal procedure, hands in another order, extra keys, other key order: still clean."""
    lines = match_lines(3)
    for x in lines:
        x.pop("deal", None)
        x.pop("round_cap", None)
        x["decision_ms"] = 12.5
        if "hands" in x:
            x["hands"] = [list(reversed(h)) for h in x["hands"]]
    rewritten = [dict(reversed(list(x.items()))) for x in lines]
    assert problems(rewritten) == []


def test_wrong_ends() -> None:
    lines = match_lines(1)
    i = first(lines, lambda x: x["event"] == "play" and x["ends"] > 0)
    lines[i]["ends"] += 1
    assert any(f"{i + 1}: ends is" in p for p in problems(lines))


def test_wrong_award() -> None:
    lines = match_lines(1)
    i = first(lines, lambda x: x["event"] == "play" and x["award"] == 0 and x["ends"] > 0)
    lines[i]["award"] = lines[i]["ends"]
    assert any(f"{i + 1}: award is" in p for p in problems(lines))


def test_wrong_scores() -> None:
    lines = match_lines(1)
    i = first(lines, lambda x: x["event"] == "play" and x["round"] == 2)
    lines[i]["scores"][0] += 5
    found = problems(lines)
    assert any(f"{i + 1}: play: scores is" in p for p in found)
    assert len(found) == 1  # the next line agrees with the engine again


def test_illegal_port() -> None:
    lines = match_lines(1)
    i = first(lines, lambda x: x["event"] == "play" and x["port"] is not None)
    lines[i]["port"]["tile"] = [6, 6] if lines[i]["port"]["tile"] != [6, 6] else [5, 5]
    assert any(p.startswith(f"{i + 1}: ") and "port" in p for p in problems(lines))


def test_tile_not_in_hand() -> None:
    lines = match_lines(1)
    start = lines[1]
    i = first(lines, lambda x: x["event"] == "play" and x["port"] is None)
    seat = lines[i]["seat"]
    other = start["hands"][(seat + 1) % 4][0]
    lines[i]["tile"] = other
    assert any(f"{i + 1}: seat {seat} does not hold" in p for p in problems(lines))


def test_pass_while_holding_a_playable_tile() -> None:
    lines = match_lines(1)
    i = first(lines, lambda x: x["event"] == "play" and x["port"] is not None)
    lines[i] = {"event": "pass", "round": lines[i]["round"], "seat": lines[i]["seat"]}
    assert any(f"{i + 1}: seat" in p and "passed while holding a playable tile" in p for p in problems(lines))


def test_hands_combined_before_rounding() -> None:
    for seed in range(200):
        lines = match_lines(seed)
        for i, x in enumerate(lines):
            if x["event"] != "round_end":
                continue
            pips = [s["pips"] for s in x["settlement"]]
            for a, b in ((0, 2), (1, 3)):
                combined = -5 * ((pips[a] + pips[b] + 2) // 5)
                separate = x["settlement"][a]["points"] + x["settlement"][b]["points"]
                if combined != separate:
                    x["settlement"][a]["points"] = combined
                    x["settlement"][b]["points"] = 0
                    assert any(f"{i + 1}: settlement" in p and "separately" in p for p in problems(lines))
                    return
    pytest.fail("no round where combining hands changes the debit in 200 matches")


def test_play_after_the_target_was_reached() -> None:
    lines = match_lines(1)
    assert lines[-1]["reason"] == "target"
    extra = dict(lines[-2])
    assert extra["event"] == "play"
    lines.insert(len(lines) - 1, {**extra, "seat": (extra["seat"] + 1) % 4, "tile": [0, 0]})
    found = problems(lines)
    assert any(f"{len(lines) - 1}: play after the target was reached" in p for p in found), found


def test_branch_before_both_line_sides() -> None:
    for seed in range(50):
        lines = match_lines(seed)
        for i, x in enumerate(lines):
            if x["event"] == "play" and x["port"] and x["port"]["side"] == "line_a" and x["port"]["tile"][0] == x["port"]["tile"][1]:
                # the first line side of a spinner taken: make it a branch instead
                x["port"]["side"] = "branch_a"
                found = problems(lines)
                if any("branches open only after both line sides" in p for p in found):
                    assert any(p.startswith(f"{i + 1}: ") for p in found)
                    return
                lines = match_lines(seed)
    pytest.fail("no spinner line play found")


def test_second_double_treated_as_a_spinner() -> None:
    for seed in range(100):
        lines = match_lines(seed)
        spinner = None
        for i, x in enumerate(lines):
            if x["event"] == "round_start":
                spinner = None
            if x["event"] == "play" and x["tile"][0] == x["tile"][1]:
                if spinner is None:
                    spinner = x["tile"]
                    continue
            if (x["event"] == "play" and x["port"] and x["port"]["tile"][0] == x["port"]["tile"][1]
                    and x["port"]["tile"] != spinner and spinner is not None):
                x["port"]["side"] = "branch_b"
                found = problems(lines)
                assert any(p.startswith(f"{i + 1}: ") and "not the spinner" in p for p in found), found
                return
    pytest.fail("no play on a second double found")


def test_wrong_turn_order() -> None:
    lines = match_lines(1)
    i = first(lines, lambda x: x["event"] == "play" and x["port"] is not None)
    lines[i]["seat"] = (lines[i]["seat"] + 1) % 4
    assert any(f"{i + 1}: wrong turn order" in p for p in problems(lines))


def test_wrong_leader_after_a_domino() -> None:
    for seed in range(50):
        lines = match_lines(seed)
        for i, x in enumerate(lines):
            if x["event"] == "round_start" and x["leader_by"] == "domino":
                x["leader"] = (x["leader"] + 1) % 4
                assert any(f"{i + 1}: leader is seat" in p and "dominoer" in p for p in problems(lines))
                return
    pytest.fail("no round led by a dominoer")


def test_tampered_deal() -> None:
    lines = match_lines(1)
    hands = lines[1]["hands"]
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]
    assert any("2: the deal differs" in p for p in problems(lines))


def test_tampered_deal_from_another_writer_duplicate_tile() -> None:
    lines = match_lines(1)
    for x in lines:
        x.pop("deal", None)
    lines[1]["hands"][0][0] = lines[1]["hands"][1][0]
    assert any("not the 28 tiles once each" in p for p in problems(lines))


def test_truncated_record() -> None:
    lines = match_lines(1)[:-3]
    assert any("ends" in p and ("early" in p or "before the match ended" in p) for p in problems(lines))


def test_not_json() -> None:
    found = verify_lines(['{"event": "match_start"', ""])
    assert found and "not JSON" in found[0].message


def test_random_single_field_corruptions_are_caught() -> None:
    """Any change to a number in a play line is a discrepancy (hypothesis-free fuzz over seeds)."""
    rng = random.Random(7)
    for seed in range(30):
        lines = match_lines(seed)
        plays = [i for i, x in enumerate(lines) if x["event"] == "play"]
        i = rng.choice(plays)
        key = rng.choice(["ends", "award", "scores"])
        if key == "scores":
            lines[i]["scores"][rng.randrange(2)] += 5
        else:
            lines[i][key] += 5
        assert problems(lines), (seed, i, key)
