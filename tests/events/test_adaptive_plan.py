"""The adaptive planner on synthetic results (fast: no match is played).

test_adaptive.py plays real events; these pin the planner's choices: round 0 is one
deal of every matchup, later rounds go to the neighbour pairs that are not settled
(least settled first), each to the matchup that measures the pair most directly, the
budget is never passed, and ``until_settled`` stops once every pair is settled.
"""

from __future__ import annotations

from typing import Any

from sevenrocks.server.events.adaptive import AdaptivePlan, separation
from sevenrocks.server.events.config import EventConfig, parse_config
from sevenrocks.server.stats.fit import Result


def config(fmt: str = "self", **schedule: Any) -> EventConfig:
    return parse_config({"event": {"name": "plan", "format": fmt, "head_to_head": fmt == "pairings", "seed": 3,
                                   "duplicate": False},
                         "schedule": {"mode": "adaptive", "round_deals": 4, "budget": 200, **schedule},
                         "entrants": [{"name": n, "bot": "greedy"} for n in ("a", "b", "c", "d")]}, "<plan>")


def h2h(winner: str, loser: str, deals: int, tag: str) -> list[Result]:
    return [Result((winner, loser, winner, loser), (0, 1), f"{tag}{i}") for i in range(deals)]


def test_separation() -> None:
    assert separation((("a", "a"), ("b", "b")), "a", "b") == 4
    assert separation((("a", "c"), ("b", "d")), "a", "b") == 2
    assert separation((("a", "b"), ("c", "d")), "a", "b") == 0
    assert separation((("c", "c"), ("a", "a")), "a", "b") == 2
    assert separation((("c", "c"), ("d", "d")), "a", "b") == 0  # a matchup without either says nothing


def test_round_zero_is_one_deal_of_every_matchup() -> None:
    plan = AdaptivePlan(config())
    first = plan.first_round()
    assert len(plan.matchups) == 6 and len(first) == 6 and plan.rounds == 1
    assert all(n == 1 for n in plan.deals.values())
    assert {frozenset(t.seats) for t in first} == {frozenset(m[0] + m[1]) for m in plan.matchups}
    small = AdaptivePlan(config(budget=4))
    assert len(small.first_round()) == 4 and small.tasks and sum(small.deals.values()) == 4


def test_later_rounds_go_to_the_unsettled_pair_head_to_head() -> None:
    plan = AdaptivePlan(config())
    plan.first_round()
    # a > b > c clearly; c and d never decided.
    results = h2h("a", "b", 30, "ab") + h2h("b", "c", 30, "bc") + h2h("a", "c", 30, "ac") \
        + [Result(("c", "d", "c", "d"), (0, 1), "cd0"), Result(("d", "c", "d", "c"), (0, 1), "cd1")]
    rnd = plan.next_round(results)
    assert plan.last is not None and not plan.last.settled
    unsettled = {frozenset((n.upper, n.lower)) for n in plan.last.neighbours if not n.settled}
    assert unsettled == {frozenset({"c", "d"})}, plan.last
    assert len(rnd) == 4 and all(set(t.seats) == {"c", "d"} for t in rnd)
    assert plan.rounds == 2 and len(plan.tasks) == 10


def test_the_least_settled_pair_comes_first_and_pairs_take_turns() -> None:
    plan = AdaptivePlan(config(round_deals=3))
    plan.first_round()
    results = h2h("a", "b", 2, "ab") + h2h("b", "a", 1, "ba") + h2h("c", "d", 3, "cd") + h2h("b", "c", 1, "bc")
    rnd = plan.next_round(results)
    v = plan.last
    assert v is not None
    targets = sorted((n for n in v.neighbours if not n.settled), key=lambda n: (n.p_ahead, n.upper))
    assert len(targets) >= 2
    pairs = [frozenset(t.seats) for t in rnd]
    expect = [frozenset({targets[i % len(targets)].upper, targets[i % len(targets)].lower}) for i in range(3)]
    assert pairs == expect


def test_when_every_pair_is_settled() -> None:
    clear = h2h("a", "b", 40, "ab") + h2h("b", "c", 40, "bc") + h2h("c", "d", 40, "cd")
    stop = AdaptivePlan(config(until_settled=True))
    stop.first_round()
    assert stop.next_round(clear) == [] and stop.last is not None and stop.last.settled and stop.rounds == 1
    # Without until_settled the budget is spent anyway, on the least sure pairs.
    go = AdaptivePlan(config())
    go.first_round()
    assert len(go.next_round(clear)) == 4


def test_the_budget_is_never_passed_and_the_fewest_dealt_matchup_goes_first() -> None:
    plan = AdaptivePlan(config("pairings", budget=17))
    first = plan.first_round()
    assert len(first) == 3 * 2 + 6  # three pairings matchups (both cyclic orders), six head-to-head matches
    results = [Result(t.seats, (0, 1), t.group) for t in first]
    rnd = plan.next_round(results)
    assert len(plan.tasks) <= 17 and len(rnd) == 4
    results += [Result(t.seats, (0, 1), t.group) for t in rnd]
    last = plan.next_round(results)  # 16 played: room for one more match, and no more
    assert len(last) == 1 and len(plan.tasks) == 17
    assert plan.next_round(results + [Result(t.seats, (0, 1), t.group) for t in last]) == []
    # The head-to-head matchup (separation 4) is chosen for a pair, not a pairings one (2).
    assert all(t.seats[0] == t.seats[2] for t in rnd)
