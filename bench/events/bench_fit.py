"""The order-free fit and the settled verdict at scale, against the old pure-Python fit in the same run.

Synthetic fields of n bots with known strengths (seeded), random tables of four,
outcomes drawn from the fit's own model, two matches per duplicate group. For each
field size and match count, medians over --runs of:

- ``fit``: the bots' model with the cluster-robust covariance (what the verdict reads);
- ``verdict``: P(ahead) for every pair of leaderboard neighbours from that fit;
- ``fit_pairs``: the partnerships' model (a parameter per bot and per partnership);
- the same two fits by the old pure-Python code (bench/events/baseline_fit.py) where it can
  finish in reasonable time (marked – where it cannot: its cost grows as the fourth
  power of the parameters), with the largest difference in any number between the two.

Usage: python bench/events/bench_fit.py [--sizes 8,16,64,256] [--matches 1000,10000,100000] [--runs 3]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

import baseline_fit  # noqa: E402

from sevenrocks.server.stats.fit import BETA, Phi, Result, fit, fit_pairs  # noqa: E402
from sevenrocks.server.stats.verdict import verdict  # noqa: E402

#: The old code is timed only up to these sizes (parameters of the model, matches).
OLD_FIT_BOTS = 64
OLD_FIT_MATCHES = 10_000
OLD_PAIRS_PARAMETERS = 60


def field(n: int, matches: int, seed: int) -> list[Result]:
    rng = random.Random(seed)
    names = [f"bot-{i:03d}" for i in range(n)]
    truth = {b: rng.gauss(0, 4) for b in names}
    out = []
    for k in range(matches):
        s = rng.sample(names, 4)
        p = Phi((truth[s[0]] + truth[s[2]] - truth[s[1]] - truth[s[3]]) / (2 * BETA))
        out.append(Result(tuple(s), (0, 1) if rng.random() < p else (1, 0), f"g{k // 2}"))
    return out


def timed(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(runs):
        started = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), out


def cell(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="8,16,64,256")
    ap.add_argument("--matches", default="1000,10000,100000")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    counts = [int(x) for x in args.matches.split(",")]
    print(f"medians of {args.runs} runs; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    print("| bots | matches | partnerships | fit s | verdict s | fit_pairs s | old fit s | old fit_pairs s "
          "| old/new fit | old/new pairs | max |Δ| |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in sizes:
        for m in counts:
            results = field(n, m, seed=n * 7919 + m)
            t_fit, f = timed(lambda: fit(results, True), args.runs)
            t_verdict, _ = timed(lambda: verdict(f), args.runs)
            t_pairs, pairs = timed(lambda: fit_pairs(results), args.runs)
            old_fit = old_pairs = None
            diff = 0.0
            if n <= OLD_FIT_BOTS and m <= OLD_FIT_MATCHES:
                old_fit, of = timed(lambda: baseline_fit.fit(results, True), 1)
                diff = max(diff, max(abs(a - b) for a, b in zip(of.theta, f.theta)),
                           max(abs(a - b) for ra, rb in zip(of.robust, f.robust) for a, b in zip(ra, rb)))
            if n + len(pairs) <= OLD_PAIRS_PARAMETERS:
                old_pairs, op = timed(lambda: baseline_fit.fit_pairs(results), 1)
                diff = max(diff, max(max(abs(op[k].mu - pairs[k].mu), abs(op[k].sigma - pairs[k].sigma)) for k in op))
            ratio_fit = f"{old_fit / t_fit:.1f}x" if old_fit else "–"
            ratio_pairs = f"{old_pairs / t_pairs:.1f}x" if old_pairs else "–"
            shown_diff = f"{diff:.1e}" if (old_fit or old_pairs) else "–"
            print(f"| {n} | {m} | {len(pairs)} | {cell(t_fit)} | {cell(t_verdict)} | {cell(t_pairs)} | "
                  f"{cell(old_fit)} | {cell(old_pairs)} | {ratio_fit} | {ratio_pairs} | {shown_diff} |", flush=True)
    print("\nold fit: bench/events/baseline_fit.py, the pure-Python code this replaced (timed once; – where it "
          f"cannot finish: more than {OLD_FIT_BOTS} bots or {OLD_FIT_MATCHES} matches for the bots' model, more "
          f"than {OLD_PAIRS_PARAMETERS} parameters for the partnerships' model).")


if __name__ == "__main__":
    main()
