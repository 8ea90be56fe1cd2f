"""The gauntlet and duel formats, head_to_head, the new config keys and the matrix's "cannot meet"."""

from __future__ import annotations

from pathlib import Path

import pytest

from sevenrocks.server.events.config import ConfigError, parse_config
from sevenrocks.server.events.schedule import build_schedule, partnership_matchups
from sevenrocks.server.publish.leaderboard import build_leaderboard
from sevenrocks.server.publish.render import render_html

from .conftest import bots, config_of, play_in_process


def test_gauntlet_puts_a_candidate_in_every_matchup_both_in_pairings_and_head_to_head() -> None:
    cfg = config_of(bots("cand", "a", "b", "c", "d"), format="gauntlet", candidates=["cand"], deals=1)
    matchups = partnership_matchups(cfg)
    assert all("cand" in {*p, *q} for p, q in matchups)
    h2h = [(p, q) for p, q in matchups if p[0] == p[1]]
    assert sorted(q[0] if p[0] == "cand" else p[0] for p, q in h2h) == ["a", "b", "c", "d"]
    assert len(matchups) - len(h2h) == 12  # cand with one of 4, against a pair of the other 3
    assert len({t.match_id for t in build_schedule(cfg)}) == len(build_schedule(cfg))


def test_duel_and_head_to_head() -> None:
    duel = config_of(bots("a", "b"), format="duel", deals=3)
    assert partnership_matchups(duel) == [(("a", "a"), ("b", "b"))]
    assert len(build_schedule(duel)) == 6  # 3 deals, each twice with the seats exchanged
    mixed = config_of(bots("a", "b", "c", "d"), head_to_head=True, deals=1)
    assert len(partnership_matchups(mixed)) == 3 + 6


@pytest.mark.parametrize("event,extra,message", [
    ({"format": "gauntlet"}, {}, "candidates"),
    ({"format": "gauntlet", "candidates": ["nobody"]}, {}, "not an entrant"),
    ({"format": "self", "head_to_head": True}, {}, "head_to_head"),
    ({"format": "duel"}, {}, "two entrants"),
    ({}, {"schedule": {"mode": "sometimes"}}, "mode"),
    ({}, {"schedule": {"budget": 10}}, "adaptive"),
    ({}, {"schedule": {"mode": "adaptive", "budget": 0}}, "budget"),
    ({}, {"ratings": {"level": 1.5}}, "level"),
    ({}, {"schedule": {"mode": "adaptive", "tie_within": "45%"}}, "win rate"),
    ({}, {"schedule": {"mode": "adaptive", "tie_within": -1}}, "tie_within"),
    ({}, {"schedule": {"mode": "adaptive", "top_k": 4}}, "top_k"),
    ({}, {"schedule": {"top_k": 2}}, "adaptive"),
])
def test_new_keys_are_checked(event: dict[str, object], extra: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({"event": {"name": "t", **event}, "entrants": bots("a", "b", "c", "d"), **extra}, "<test>")


def test_the_matrix_tells_cannot_meet_from_not_played(tmp_path: Path) -> None:
    cfg = config_of([{"name": "defensive", "bot": "defensive"}, {"name": "greedy", "bot": "greedy"},
                     {"name": "random1", "bot": "random"}, {"name": "random2", "bot": "random"}], deals=1)
    store = play_in_process(cfg, tmp_path / "m.db")
    lb = build_leaderboard(store)
    store.close()
    assert not lb.meets("defensive+greedy", "defensive+random1")  # they share defensive
    assert lb.meets("defensive+greedy", "random1+random2")
    assert ("defensive+greedy", "defensive+random1") in lb.cannot_meet
    html = render_html(lb)
    assert "share a bot, so they never meet" in html and "gap to next" in html
