"""One close pair head to head until the verdict says who is ahead, against a one-look test of the same claim.

Shared by ``bench/ranking/settle_cost.py`` (the cost curve, the knobs) and
``bench/ranking/verdict.py`` (its pair rows): the product's own verdict
(:func:`judge_field` of a two-entrant ``self`` event) read every ``look`` matches,
the looks kept as the planner keeps them, against the n of a one-look two-sided
binomial test at the same level with 80% power.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from typing import Any

from scipy import stats

from sevenrocks.server.events.config import EventConfig, parse_config
from sevenrocks.server.events.planner import judge_field
from sevenrocks.server.stats.fit import Result
from sevenrocks.server.stats.places import Looks

LEVEL = 0.95
POWER = 0.80


def pair_config() -> EventConfig:
    """Two entrants head to head, the product's defaults for everything else (level 0.95, no tie margin)."""
    return parse_config({"event": {"name": "settle", "format": "self"},
                         "entrants": [{"name": n, "command": "true"} for n in ("a", "b")]}, "<bench>")


def fixed_n(p: float, alpha: float = 1 - LEVEL, power: float = POWER, sided: int = 2) -> int:
    """Matches a one-look binomial test of "p = ½" at ``alpha`` needs for ``power`` at ``p`` (normal approximation)."""
    z_a = stats.norm.ppf(1 - alpha / sided)
    z_b = stats.norm.ppf(power)
    return math.ceil(((z_a * 0.5 + z_b * math.sqrt(p * (1 - p))) / (p - 0.5)) ** 2)


def exact_power(p: float, n: int, alpha: float = 1 - LEVEL) -> float:
    """The two-sided exact binomial test's power at n matches (a check on the normal approximation's n)."""
    hi = int(stats.binom.isf(alpha / 2, n, 0.5))  # reject when wins > hi (or as many losses)
    return float(stats.binom.sf(hi, n, p) + stats.binom.cdf(n - hi - 1, n, p))


def settle(c: EventConfig, p: float, rng: random.Random, look: int, limit: int) -> int | None:
    """Matches at the first look that says A is ahead (None: not within ``limit``)."""
    res: list[Result] = []
    looks: Looks | None = None
    table = 0
    while len(res) < limit:
        for _ in range(look // 2):  # a look's matches: whole tables, both seat orders
            for k, seats in enumerate((("a", "b", "a", "b"), ("b", "a", "b", "a"))):
                a_wins = rng.random() < p
                first_wins = a_wins if seats[0] == "a" else not a_wins
                res.append(Result(seats, (0, 1) if first_wins else (1, 0), f"r{table}t0o{k}"))
            table += 1
        v = judge_field(c, ["a", "b"], res, looks)[1]
        looks = v.looks
        if ("a", "b") in v.ahead:
            return len(res)
    return None


def pair_rng(seed: int, what: str, k: int) -> random.Random:
    """The k-th pair's (or event's) own results under ``seed``: the same whatever the knobs, and
    whatever else the run measures (a row is seeded by its p, not by its place in ``--p``)."""
    return random.Random(f"{seed}/{what}/{k}")


def row(p: float, events: int, look: int, cap: float, seed: int) -> dict[str, Any]:
    n = fixed_n(p)
    limit = math.ceil(cap * n)
    c = pair_config()
    t0 = time.process_time()
    # Each pair has its own stream of results (seeded by the run's seed, p and its index), so runs with
    # different knobs judge the very same matches: the comparison between them is paired.
    got = [settle(c, p, pair_rng(seed, f"pair {p:g}", k), look, limit) for k in range(events)]
    done = sorted(x for x in got if x is not None)
    # The median counts the pairs never settled within the cap as later than every settled one.
    ranked = done + [math.inf] * (events - len(done))
    median = statistics.median(ranked)
    return {"p": p, "events": events, "n_two_sided": n, "n_one_sided": fixed_n(p, sided=1),
            "exact_power": round(exact_power(p, n), 3), "median": None if math.isinf(median) else median,
            "by_n": sum(x <= n for x in done) / events, "by_1_5n": sum(x <= 1.5 * n for x in done) / events,
            "never": events - len(done), "limit": limit,
            "ratio": None if math.isinf(median) else round(median / n, 2),
            "cpu_s": round(time.process_time() - t0, 1), "settled_at": got}
