"""Properties over many seeded random matches of both rulesets (hypothesis)."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from sevenrocks.sdk.rules import (
    ALL_TILES, Draw, GameState, Layout, MatchEnd, Move, Pass, Play, RoundEnd, RoundStart, make_ruleset,
)
from sevenrocks.sdk.rules.randomness import choice, shuffle
from sevenrocks.sdk.rules.replay import verify_lines

from .helpers import random_match

rulesets = st.sampled_from([("seven-rocks", None), ("fives", 2), ("fives", 3), ("fives", 4)])
seeds = st.integers(min_value=0, max_value=2**63 - 1)


@settings(max_examples=60, deadline=None)
@given(rulesets, seeds)
def test_tiles_are_conserved_at_every_step(rs_players: tuple[str, int | None], seed: int) -> None:
    name, players = rs_players
    g = GameState(make_ruleset(name, players=players), seed=seed)
    rng = random.Random(seed)
    g.start()
    while not g.over:
        everything = [t for h in g.hands for t in h] + g.boneyard + g.layout.tiles
        assert sorted(everything) == list(ALL_TILES)
        g.play(rng.choice(g.legal_moves()))


@settings(max_examples=60, deadline=None)
@given(rulesets, seeds)
def test_scores_are_the_sum_of_awards_and_settlements(rs_players: tuple[str, int | None], seed: int) -> None:
    name, players = rs_players
    g, events, _ = random_match(name, players, seed)
    rs = g.ruleset
    totals = [0] * rs.teams
    for ev in events:
        if isinstance(ev, Play):
            assert ev.ends <= 36
            assert ev.award == (ev.ends if ev.ends > 0 and ev.ends % 5 == 0 else 0)
            totals[rs.team_of(ev.seat)] += ev.award
            assert tuple(totals) == ev.scores
        elif isinstance(ev, RoundEnd):
            for s in ev.settlement:
                assert s.points == -5 * ((s.pips + 2) // 5) and s.pips == sum(a + b for a, b in ev.hands[s.seat])
                totals[rs.team_of(s.seat)] += s.points
            if ev.bonus is not None:
                totals[ev.bonus.seat] += ev.bonus.points
            assert tuple(totals) == ev.scores
        elif isinstance(ev, MatchEnd):
            assert tuple(totals) == ev.scores


@settings(max_examples=60, deadline=None)
@given(rulesets, seeds)
def test_must_play_passes_and_draws_only_without_a_playable_tile(rs_players: tuple[str, int | None], seed: int) -> None:
    """Track each hand from the events alone and check every pass and draw against it."""
    name, players = rs_players
    _, events, _ = random_match(name, players, seed)
    hands: list[list[tuple[int, int]]] = []
    layout = Layout()
    for ev in events:
        if isinstance(ev, RoundStart):
            hands = [list(h) for h in ev.hands]
            layout = Layout()
        elif isinstance(ev, Play):
            hands[ev.seat].remove(ev.tile)
            layout.place(Move(ev.tile, ev.port))
        elif isinstance(ev, (Pass, Draw)):
            values = set(layout.open_ports().values())
            assert not any(a in values or b in values for a, b in hands[ev.seat])
            if isinstance(ev, Draw):
                hands[ev.seat].append(ev.tile)
        elif isinstance(ev, RoundEnd):
            assert [sorted(h) for h in hands] == [sorted(h) for h in ev.hands]


@settings(max_examples=40, deadline=None)
@given(rulesets, seeds)
def test_every_record_verifies_clean(rs_players: tuple[str, int | None], seed: int) -> None:
    name, players = rs_players
    _, _, lines = random_match(name, players, seed)
    assert verify_lines(lines) == []


@settings(max_examples=60, deadline=None)
@given(rulesets, seeds, st.randoms(use_true_random=False))
def test_every_corrupted_play_is_rejected(rs_players: tuple[str, int | None], seed: int, rnd: random.Random) -> None:
    name, players = rs_players
    _, _, lines = random_match(name, players, seed)
    objs = [json.loads(x) for x in lines]
    plays = [i for i, x in enumerate(objs) if x["event"] == "play"]
    i = rnd.choice(plays)
    kind = rnd.choice(["ends", "award", "scores", "seat", "tile"])
    x = objs[i]
    if kind == "scores":
        x["scores"][rnd.randrange(len(x["scores"]))] += rnd.choice([-5, 5, 10])
    elif kind == "seat":
        x["seat"] = (x["seat"] + rnd.randrange(1, len(objs[0]["seats"]))) % len(objs[0]["seats"])
    elif kind == "tile":
        x["tile"] = rnd.choice([list(t) for t in ALL_TILES if list(t) != x["tile"]])
    else:
        x[kind] += rnd.choice([-5, 1, 5])
    assert verify_lines(json.dumps(o) for o in objs), (kind, i)


@settings(max_examples=60, deadline=None)
@given(rulesets, seeds)
def test_total_after_is_the_total_that_place_leaves(rs_players: tuple[str, int | None], seed: int) -> None:
    """Layout.total_after (the searches' arithmetic) agrees with placing each legal move on a copy."""
    name, players = rs_players
    g = GameState(make_ruleset(name, players=players), seed=seed)
    rng = random.Random(seed)
    g.start()
    checked = 0
    while not g.over and checked < 400:
        for move in g.legal_moves():
            before = g.layout.total
            assert g.layout.total_after(move) == g.layout.copy().place(move)
            assert g.layout.total == before
            checked += 1
        g.play(rng.choice(g.legal_moves()))


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=2**63 - 1), st.integers(min_value=0, max_value=40))
def test_the_engines_shuffle_draws_exactly_what_random_shuffle_draws(seed: int, n: int) -> None:
    """Deals stay the deals of their seed: randomness.shuffle is random.Random.shuffle re-stated."""
    ours, theirs = random.Random(seed), random.Random(seed)
    a, b = list(range(n)), list(range(n))
    shuffle(ours, a)
    theirs.shuffle(b)
    assert a == b
    assert ours.getstate() == theirs.getstate()


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=2**63 - 1), st.integers(min_value=1, max_value=300))
def test_the_engines_choice_draws_exactly_what_random_choice_draws(seed: int, n: int) -> None:
    """The random bot's moves stay the moves of its seed: randomness.choice is random.Random.choice re-stated."""
    ours, theirs = random.Random(seed), random.Random(seed)
    items = list(range(n))
    for _ in range(5):
        assert choice(ours, items) == theirs.choice(items)
    assert ours.getstate() == theirs.getstate()
