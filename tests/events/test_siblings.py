"""Siblings apart: the planner never seats two entrants of one group (a league author's) at one table.

Once, one author held 9 ranked entrants and all four seats of 75 of 221 matches; bots
see ``seat_names``, so siblings can recognise each other and one can throw its matches to
lift another. Outcomes here are drawn from the fit's own model (test_planner.py's), with
one sibling that hands the match to its sibling's side whenever they meet.
"""

from __future__ import annotations

import random

import pytest

from sevenrocks.server.events.config import EventConfig
from sevenrocks.server.events.planner import plan_round
from sevenrocks.server.events.schedule import MatchTask
from sevenrocks.server.stats.fit import Result, fit

from .test_planner import field_config, outcome

FORMATS = [("pairings", "seven-rocks", 4, {}), ("pairings", "seven-rocks", 4, {"head_to_head": True}),
           ("self", "seven-rocks", 4, {}), ("seatings", "fives", 3, {}), ("seatings", "fives", 2, {})]


def thrown(task: MatchTask, theta: dict[str, float], rng: random.Random, partnerships: bool,
           thrower: str | None, sibling: str) -> Result:
    """The model's outcome, except that ``thrower`` loses to ``sibling`` whenever they share a table."""
    honest = outcome(task, theta, rng, partnerships)
    s = task.seats
    if thrower is None or thrower not in s or sibling not in s:
        return honest
    if partnerships:  # seats 0 and 2 against 1 and 3: the sibling's side wins (a partner thrower: no gain)
        side = s.index(sibling) % 2
        if s.index(thrower) % 2 == side:
            return honest
        return Result(s, (0, 1) if side == 0 else (1, 0), task.group)
    ranks = [r + 1 for r in honest.ranks]
    ranks[s.index(sibling)] = 0
    ranks[s.index(thrower)] = len(s)
    return Result(s, tuple(ranks), task.group)


def season(cfg: EventConfig, groups: dict[str, str] | None, thrower: str | None,
           rounds: int = 8, size: int = 24) -> tuple[list[Result], list[MatchTask]]:
    names = [e.name for e in cfg.entrants]
    theta = {n: 0.5 * (i % 4) for i, n in enumerate(names)}
    rng = random.Random(3)
    results: list[Result] = []
    tasks: list[MatchTask] = []
    partnerships = cfg.make_ruleset().partnerships
    for r in range(rounds):
        planned = plan_round(cfg, names, results, r, size, groups=groups)
        tasks += planned
        results += [thrown(t, theta, rng, partnerships, thrower, "e000") for t in planned]
    return results, tasks


@pytest.mark.parametrize("fmt, ruleset, players, extra", FORMATS,
                         ids=["pairings", "pairings-h2h", "self", "fives-3", "fives-2"])
def test_no_table_seats_two_entrants_of_one_author(fmt: str, ruleset: str, players: int, extra: dict[str, bool]) -> None:
    cfg = field_config(10, fmt, ruleset, players, **extra)
    groups = {"e000": "mallory", "e001": "mallory", "e002": "mallory", "e003": "trent", "e004": "trent"}
    results, tasks = season(cfg, groups, None)
    assert tasks
    for t in tasks:
        mine = [groups[s] for s in dict.fromkeys(t.seats) if s in groups]
        assert len(mine) == len(set(mine)), t.seats
    played = {s for t in tasks for s in t.seats}
    assert {"e000", "e001", "e002", "e003", "e004"} <= played  # every sibling still plays


def test_a_sibling_that_throws_its_matches_cannot_lift_the_other() -> None:
    """Mallory's e001 hands every match it shares with e000 to e000's side. Apart (the default), they
    never share one, so e000's rating is exactly what it is when e001 plays honestly; seated together
    (the organiser's ``siblings_at_one_table = true``), the throw lifts it."""
    cfg = field_config(8)
    groups = {"e000": "mallory", "e001": "mallory"}

    def rating(groups: dict[str, str] | None, thrower: str | None) -> float:
        results, _ = season(cfg, groups, thrower)
        f = fit(results, True, [e.name for e in cfg.entrants])
        return f.theta[f.index("e000")]

    assert rating(groups, "e001") == rating(groups, None)
    assert rating(None, "e001") > rating(None, None) + 0.2  # the harm the rule prevents
