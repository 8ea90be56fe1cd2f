"""Placement: how many matches a new league entrant needs before it stands within one place of its true rank.

A league of seven entrants with known strengths plays ``--warmup`` matches; then a
newcomer joins whose true rank is the top, the middle or the bottom of the field. The
league's own field planner (:func:`sevenrocks.server.events.planner.plan_round`)
chooses every table; results are drawn from the strengths (a logistic model on the
partnerships' summed strengths, so no bot is played and only the planning and the
fit are measured). After every round the order-free fit (the one the leaderboard
uses) ranks the field; the newcomer is *placed* once it stands within one place of
its true rank and stays there for the next three rounds. The table gives, per true
rank, the median and 90th percentile of the newcomer's matches at placement over
``--trials`` leagues (different seeds), and how many were never placed within
``--max`` matches.

    python bench/league/bench_league_placement.py                   # 12 trials per rank
    python bench/league/bench_league_placement.py --trials 4 --max 120
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
from collections import Counter

from sevenrocks.server.events.config import parse_config
from sevenrocks.server.events.planner import plan_round
from sevenrocks.server.stats.fit import Result, fit

#: Strength gap between true neighbours (logistic scale: 0.35 makes a lone +0.35 win ~59%).
GAP = 0.35
ROUND = 8


def outcome(rng: random.Random, strength: dict[str, float], seats: tuple[str, ...]) -> tuple[int, int]:
    a = strength[seats[0]] + strength[seats[2]]
    b = strength[seats[1]] + strength[seats[3]]
    return (0, 1) if rng.random() < 1 / (1 + math.exp(-(a - b))) else (1, 0)


def trial(seed: int, newcomer_rank: int, warmup: int, limit: int) -> int | None:
    """Matches the newcomer played when placed (None: not within ``limit``)."""
    names = [f"e{i}" for i in range(7)]
    strength = {n: -GAP * i for i, n in enumerate(names)}  # e0 strongest
    new = "new"
    # Insert the newcomer at true rank ``newcomer_rank`` (0 = the top): between the neighbours there.
    above = strength[names[newcomer_rank - 1]] if newcomer_rank > 0 else strength[names[0]] + GAP
    below = strength[names[newcomer_rank]] if newcomer_rank < len(names) else above - 2 * GAP
    strength[new] = (above + below) / 2
    truth = sorted(strength, key=lambda n: -strength[n])
    config = parse_config({"event": {"name": "p", "seed": seed, "duplicate": False},
                           "entrants": [{"name": n, "bot": "random"} for n in names]}, "<bench>")
    rng = random.Random(seed)
    results: list[Result] = []
    round_no = 0
    while len(results) < warmup:
        for t in plan_round(config, names, results, round_no, ROUND):
            results.append(Result(t.seats, outcome(rng, strength, t.seats), t.group))
        round_no += 1
    field = [*names, new]
    streak, placed_at = 0, None
    played = 0
    while played < limit:
        for t in plan_round(config, field, results, round_no, ROUND):
            results.append(Result(t.seats, outcome(rng, strength, t.seats), t.group))
            played += new in t.seats
        round_no += 1
        f = fit(results, True, field)
        order = sorted(field, key=lambda n: (-f.rating(n).mu, n))
        if abs(order.index(new) - truth.index(new)) <= 1:
            if streak == 0:
                placed_at = played
            streak += 1
            if streak > 3:
                return placed_at
        else:
            streak = 0
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=12)
    ap.add_argument("--warmup", type=int, default=160, help="matches the field plays before the newcomer joins")
    ap.add_argument("--max", type=int, default=200, help="give up after the newcomer played this many")
    args = ap.parse_args()
    print(f"placement of a newcomer in a league of 7 (+1), {args.warmup} warm-up matches, rounds of {ROUND}, "
          f"{args.trials} trials per rank, planner: sevenrocks.server.events.planner")
    print()
    print("| newcomer's true rank (of 8) | median matches to place (within 1) | p90 | not placed in --max |")
    print("|---|---:|---:|---:|")
    for rank, label in ((0, "1 (top)"), (3, "4 (middle)"), (7, "8 (bottom)")):
        got = [trial(1000 + s, rank, args.warmup, args.max) for s in range(args.trials)]
        placed = sorted(x for x in got if x is not None)
        missing = Counter(x is None for x in got)[True]
        med = statistics.median(placed) if placed else float("nan")
        p90 = placed[min(len(placed) - 1, int(0.9 * len(placed)))] if placed else float("nan")
        print(f"| {label} | {med:.0f} | {p90:.0f} | {missing} |")


if __name__ == "__main__":
    main()
