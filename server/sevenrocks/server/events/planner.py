"""The field planner (provisional): which tables a league plays next.

A stand-in with the agreed entry point :func:`plan_round` until the field planner
replaces this file: balanced random tables drawn with a seeded generator over the
active field. Within a round every entrant sits at as many tables as the others
(the fewest so far first); an entrant with fewer than :data:`PLACEMENT` stored
matches is seated first, so a newcomer plays at once against a random spread of the
field. Pure and deterministic: the same arguments give the same tables.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence

from .config import EventConfig
from .schedule import MatchTask, deal_seed, ruleset_spec
from ..stats.fit import Result

#: Below this many stored matches an entrant is "being placed" and seated first.
PLACEMENT = 8


def plan_round(config: EventConfig, entrants: Sequence[str], results: Sequence[Result],
               round_no: int, matches: int) -> list[MatchTask]:
    """About ``matches`` matches over ``entrants`` (whole duplicate groups); ids unique per round and table."""
    rs = config.make_ruleset()
    names = sorted(set(entrants))
    seats_per_table = rs.players
    if len(names) < (2 if rs.partnerships else seats_per_table):
        return []
    rng = random.Random(f"{config.seed}/{round_no}")
    played = Counter(n for r in results for n in set(r.seats))
    spec = ruleset_spec(config)
    tasks: list[MatchTask] = []
    seated: Counter[str] = Counter()
    table = 0
    while len(tasks) < matches:
        distinct = min(len(names), 4 if rs.partnerships else seats_per_table)
        order = sorted(names, key=lambda n: (played[n] >= PLACEMENT, seated[n], rng.random()))
        chosen = order[:distinct]
        seated.update(chosen)
        rng.shuffle(chosen)
        if rs.partnerships:
            if distinct == 4:
                a, b, c, d = chosen
            elif distinct == 3:
                a, c, d = chosen  # one entrant partnered with itself against a pair
                b = a
            else:
                a, c = chosen
                b, d = a, c
            seating: tuple[str, ...] = (a, c, b, d)
        else:
            seating = tuple(chosen)
        group = f"r{round_no}-t{table}"
        seed = deal_seed(config.seed, round_no, group)
        n = len(seating)
        for k in range(2 if config.duplicate else 1):
            seats = seating if k == 0 else tuple(seating[(i - 1) % n] for i in range(n))
            match_id = f"{config.name}-r{round_no:05d}-t{table:02d}-{k}"
            tasks.append(MatchTask(config.name, match_id, spec, seed, seats, len(tasks), round_no, group))
        table += 1
    return tasks
