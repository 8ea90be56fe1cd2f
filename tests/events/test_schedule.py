"""The schedule: complete, balanced, deterministic, and every match named by what defines it."""

from __future__ import annotations

import itertools
from collections import Counter

from sevenrocks.sdk.rules import GameState
from sevenrocks.server.stats.ratings import pair_name
from sevenrocks.server.events.schedule import build_schedule

from .conftest import bots, config_of


def cyclic_order(seats: tuple[str, ...]) -> tuple[str, str]:
    """Who plays right after seat 0's player, from seat 0's partnership's point of view."""
    return (seats[0], seats[1])


def test_pairings_cover_every_disjoint_matchup_with_both_orders_and_duplicates() -> None:
    cfg = config_of(bots("a", "b", "c", "d", "e"), deals=2)
    tasks = build_schedule(cfg)
    matchups = Counter(frozenset((pair_name(t.seats[0], t.seats[2]), pair_name(t.seats[1], t.seats[3]))) for t in tasks)
    # 10 partnerships of 5 entrants; 15 disjoint matchups; 2 deals x 2 orders x 2 sides each.
    assert len(matchups) == 15 and set(matchups.values()) == {8}
    for deal in range(2):
        for key in matchups:
            ms = [t for t in tasks if t.deal == deal
                  and frozenset((pair_name(t.seats[0], t.seats[2]), pair_name(t.seats[1], t.seats[3]))) == key]
            # Both cyclic orders: each player is followed once by each opponent.
            p = sorted(key)[0].split("+")
            followers = Counter((s[i], s[(i + 1) % 4]) for s in (t.seats for t in ms) for i in range(4) if s[i] == p[0])
            assert len(followers) == 2 and set(followers.values()) == {2}
            # Each partnership sits on team 0 (the lot's seats are shared) as often as on team 1.
            assert Counter(pair_name(t.seats[0], t.seats[2]) for t in ms) == Counter({k: 2 for k in key})


def test_seats_are_balanced_and_ids_unique() -> None:
    tasks = build_schedule(config_of(bots("a", "b", "c", "d"), deals=4))
    assert len({t.match_id for t in tasks}) == len(tasks)
    assert [t.index for t in tasks] == list(range(len(tasks)))
    seat_counts = Counter((name, seat) for t in tasks for seat, name in enumerate(t.seats))
    assert len(set(seat_counts.values())) == 1 and len(seat_counts) == 16


def test_duplicate_deal_gives_each_side_the_others_hands() -> None:
    tasks = build_schedule(config_of(bots("a", "b", "c", "d"), deals=1))
    by_group: dict[str, list] = {}
    for t in tasks:
        by_group.setdefault(t.group, []).append(t)
    for first, second in by_group.values():
        assert first.seed == second.seed
        hands = GameState(first.ruleset.build(), seed=first.seed).start()[0].hands  # type: ignore[union-attr]
        held = {name: set() for name in first.seats}
        for t in (first, second):
            for seat, name in enumerate(t.seats):
                held[name].add(hands[seat])
        # Every player held two hands, one from each team's seats of the deal.
        for name in held:
            team_of_hand = {hands.index(h) % 2 for h in held[name]}
            assert team_of_hand == {0, 1}
        # The cyclic order is kept: the same player follows each player.
        follows = lambda s: {s[i]: s[(i + 1) % 4] for i in range(4)}  # noqa: E731
        assert follows(first.seats) == follows(second.seats)


def test_deterministic_and_seed_dependent() -> None:
    a = build_schedule(config_of(bots("a", "b", "c", "d"), seed=3))
    b = build_schedule(config_of(bots("a", "b", "c", "d"), seed=3))
    c = build_schedule(config_of(bots("a", "b", "c", "d"), seed=4))
    assert a == b
    assert [t.seed for t in a] != [t.seed for t in c]
    assert [t.match_id for t in a] == [t.match_id for t in c]


def test_self_and_teams_formats() -> None:
    tasks = build_schedule(config_of(bots("a", "b", "c"), format="self", deals=1))
    assert len(tasks) == 3 * 2  # 3 head-to-head matchups, each deal from both sides
    assert all(t.seats[0] == t.seats[2] and t.seats[1] == t.seats[3] for t in tasks)
    teams = build_schedule(config_of(bots("a", "b", "c", "d", "e", "f"), format="teams", deals=1,
                                     teams=[["a", "b"], ["c", "d"], ["e", "f"]]))
    assert {frozenset((pair_name(t.seats[0], t.seats[2]), pair_name(t.seats[1], t.seats[3]))) for t in teams} == {
        frozenset(x) for x in itertools.combinations(["a+b", "c+d", "e+f"], 2)}
    assert len(teams) == 3 * 4


def test_fives_plays_every_seating() -> None:
    tasks = build_schedule(config_of(bots("a", "b", "c", "d"), ruleset="fives", players=3,
                                     format="seatings", deals=1))
    groups = Counter(frozenset(t.seats) for t in tasks)
    assert len(groups) == 4 and set(groups.values()) == {6}  # 4 groups of 3, all 3! seatings
    assert len({t.seats for t in tasks}) == len(tasks)
    no_dup = build_schedule(config_of(bots("a", "b", "c"), ruleset="fives", players=3, format="seatings",
                                      deals=3, duplicate=False))
    assert Counter(t.seats[0] for t in no_dup) == Counter({"a": 2, "b": 2, "c": 2})


def test_no_two_duplicate_groups_share_a_deal() -> None:
    """A bot that remembers hands never meets a deal again outside its duplicate group."""
    for ruleset, names, duplicate in (("seven-rocks", ("a", "b", "c", "d", "e"), True),
                                      ("seven-rocks", ("a", "b", "c", "d"), False),
                                      ("fives", ("a", "b", "c"), True)):
        extra = {"ruleset": ruleset, "players": 3} if ruleset == "fives" else {}
        tasks = build_schedule(config_of(bots(*names), deals=3, duplicate=duplicate, **extra))
        seeds_of: dict[str, set[int]] = {}
        for t in tasks:
            seeds_of.setdefault(t.group, set()).add(t.seed)
        assert all(len(s) == 1 for s in seeds_of.values())
        assert len({next(iter(s)) for s in seeds_of.values()}) == len(seeds_of)
        if not duplicate:
            assert len(seeds_of) == len(tasks)


def test_the_schedule_is_generated_lazily_and_counted_without_building_it() -> None:
    import itertools as it
    import tracemalloc

    from sevenrocks.server.events.schedule import iter_schedule, schedule_fingerprint, schedule_size

    for cfg in (config_of(bots("a", "b", "c", "d", "e"), deals=3),
                config_of(bots("a", "b", "c", "d"), ruleset="fives", players=3, format="seatings", deals=3),
                config_of(bots("a", "b", "c"), format="self", deals=3, duplicate=False)):
        listed = build_schedule(cfg)
        assert schedule_size(cfg) == len(listed) and [t.index for t in listed] == list(range(len(listed)))
        assert list(iter_schedule(cfg)) == listed
    # A billion deals: counted, fingerprinted and started at once, in constant memory.
    huge = config_of(bots("a", "b", "c", "d"), deals=10**9)
    tracemalloc.start()
    assert schedule_size(huge) == 12 * 10**9
    assert schedule_fingerprint(huge) != schedule_fingerprint(config_of(bots("a", "b", "c", "d"), deals=10**9 - 1))
    first = list(it.islice(iter_schedule(huge), 5000))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert first[-1].index == 4999 and first[-1].deal == 4999 // 12
    assert peak < 20_000_000  # the 5000 tasks kept by this test, not 12e9
