"""What judging every pair costs as the field grows: the verdict with place intervals against the
neighbour-only family it replaced, measured in the same run.

The leaderboard, the league's final and every adaptive round call the verdict once per look, so its
cost per call bounds how large a field a look stays cheap for. Fields of n entrants (θ 1.5 rating
points apart), 40·n matches at random tables of four with the fit's own model; for each n the fit
once, then the verdict with ``every_pair`` and without it, each timed as the median of a few calls.

    python bench/ranking/bench_places.py                    # n = 9, 32, 64, 128, 256
    python bench/ranking/bench_places.py --sizes 9,64 --reps 3
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time

from sevenrocks.server.stats.fit import BETA, Phi, Result, fit
from sevenrocks.server.stats.verdict import verdict


def field(n: int, seed: int) -> list[Result]:
    """40·n matches of n entrants at random tables of four, won as the fit's model says."""
    rng = random.Random(seed)
    names = [f"b{i:03d}" for i in range(n)]
    theta = {x: 1.5 * (n - i) for i, x in enumerate(names)}
    out = []
    for m in range(40 * n):
        seats = tuple(rng.sample(names, 4))
        d = theta[seats[0]] + theta[seats[2]] - theta[seats[1]] - theta[seats[3]]
        first = rng.random() < Phi(d / (2 * BETA))
        out.append(Result(seats, (0, 1) if first else (1, 0), f"g{m}"))
    return out


def timed(call: object, reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.process_time()
        call()  # type: ignore[operator]
        times.append(time.process_time() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="9,32,64,128,256", help="field sizes (default: %(default)s)")
    ap.add_argument("--reps", type=int, default=5, help="calls per measurement, median kept (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    print("| entrants | matches | pairs judged | fit (CPU ms) | verdict, every pair (CPU ms) "
          "| verdict, neighbours only (CPU ms) | ratio | pairs settled |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in (int(x) for x in args.sizes.split(",")):
        results = field(n, args.seed)
        t0 = time.process_time()
        f = fit(results, True)
        fit_ms = 1000 * (time.process_time() - t0)
        every = timed(lambda: verdict(f), args.reps)
        neighbours = timed(lambda: verdict(f, every_pair=False), args.reps)
        v = verdict(f)
        print(f"| {n} | {len(results)} | {n * (n - 1) // 2} | {fit_ms:.0f} | {1000 * every:.1f} "
              f"| {1000 * neighbours:.1f} | {every / neighbours if neighbours else math.nan:.1f}x "
              f"| {len(v.ahead)} |", flush=True)


if __name__ == "__main__":
    main()
