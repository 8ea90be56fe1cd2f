"""The tournament's own costs, each against a baseline measured in the same run.

1. Per match, beyond playing it: scheduling, storing (one SQLite transaction with the
   record and the ratings), rating, as :func:`run_event` does them, fed with matches
   already played, against the cost of playing a match (in process, and over gRPC).
2. Rebuilding ratings from N stored results (default 100,000; SQLite read, JSON
   decode, TrueSkill updates for bots and partnerships) against the bare
   ``trueskill.rate`` calls for the same results held in memory. Target: <= 1.2x.

Usage: python bench/events/bench_tournament.py [--results 100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

import trueskill

from sevenrocks.server.events.config import EventConfig, parse_config
from sevenrocks.server.events.executor import InProcessExecutor, LocalExecutor, OnResult
from sevenrocks.server.events.outcome import MatchOutcome
from sevenrocks.server.stats.ratings import pair_name, rebuild
from sevenrocks.server.events.schedule import MatchTask, RulesetSpec, build_schedule, fingerprint
from sevenrocks.server.events.store import Store
from sevenrocks.server.events.tournament import run_event

BOTS = ["greedy", "random", "defensive", "greedy2"]


def event_config(deals: int, name: str = "bench") -> EventConfig:
    entrants = [{"name": n, "bot": n.rstrip("2")} for n in BOTS]
    return parse_config({"event": {"name": name, "deals": deals, "concurrency": 2},
                         "entrants": entrants, "time": {"per_move_ms": 10000}}, "<bench>")


class Replay:
    """An executor that hands back matches played earlier: what is left is the event's own work."""

    def __init__(self, outcomes: Sequence[MatchOutcome]) -> None:
        self.by_id = {o.task.match_id: o for o in outcomes}

    async def run(self, tasks: Sequence[MatchTask], on_result: OnResult) -> None:
        for t in tasks:
            on_result(self.by_id[t.match_id])


def played(config: EventConfig) -> tuple[list[MatchOutcome], float]:
    """Play the event in process; return the outcomes and the median seconds per match."""
    out: list[MatchOutcome] = []
    asyncio.run(InProcessExecutor(config).run(build_schedule(config), out.append))
    return out, statistics.median(o.duration_s for o in out)


def grpc_per_match(config: EventConfig, tmp: Path) -> float:
    """Seconds per match of a small event over gRPC with subprocess bots (wall time / matches)."""
    started = time.perf_counter()
    with Store(tmp / "grpc.db") as store:
        plan = asyncio.run(run_event(config, store, LocalExecutor(config, tmp / "logs", config.concurrency)))
    return (time.perf_counter() - started) / plan.total


def overhead(config: EventConfig, outcomes: list[MatchOutcome], tmp: Path, run: int) -> dict[str, float]:
    """Seconds per match of each step of the event's own work."""
    n = len(outcomes)
    t0 = time.perf_counter()
    for _ in range(20):
        build_schedule(config)
    schedule = (time.perf_counter() - t0) / 20 / n
    t0 = time.perf_counter()
    with Store(tmp / f"own-{run}.db") as store:
        asyncio.run(run_event(config, store, Replay(outcomes)))
    total = (time.perf_counter() - t0) / n
    # Storing alone: the same transactions without ratings.
    tasks = [o.task for o in outcomes]
    with Store(tmp / f"store-{run}.db") as store:
        store.open_event(config, fingerprint(tasks), n)
        t0 = time.perf_counter()
        for o in outcomes:
            store.record_match(o)
        store_only = (time.perf_counter() - t0) / n
    return {"schedule": schedule, "store": store_only, "total": total}


# ---------------------------------------------------------------------- rebuild

def synthetic(n: int, seed: int = 1) -> list[MatchOutcome]:
    """``n`` Seven Rocks results among 8 bots: random seatings, the stronger side usually wins."""
    rng = random.Random(seed)
    names = [f"bot{i}" for i in range(8)]
    spec = RulesetSpec("seven-rocks", 4, 250, 200)
    out = []
    for i in range(n):
        seats = tuple(rng.sample(names, 4))
        strength = [int(s[3:]) for s in seats]
        win0 = rng.random() < (0.5 + 0.04 * ((strength[0] + strength[2]) - (strength[1] + strength[3])))
        ranks = (0, 1) if win0 else (1, 0)
        task = MatchTask("league", f"league-{i:06d}", spec, i, seats, i, i // 12, f"g{i // 2}")
        out.append(MatchOutcome(task, "target", 0 if win0 else 1, (250, 100) if win0 else (100, 250),
                                ranks, 5, None, {}, ("{}",), 0.0))
    return out


def bare_rate_calls(results: Sequence[tuple[Sequence[str], Sequence[int]]]) -> float:
    """The TrueSkill work alone: the same rate() calls on ratings held in dicts."""
    env = trueskill.TrueSkill(tau=0.0, draw_probability=0.01)
    names = {s for seats, _ in results for s in seats}
    bots = {n: env.create_rating() for n in names}
    pairs = {pair_name(a, b): env.create_rating() for a in names for b in names}
    # Partnership names precomputed too: only the rate() calls and dict updates are timed.
    games = [(a, b, c, d, pair_name(a, b), pair_name(c, d), ranks) for (a, c, b, d), ranks in results]
    rate = env.rate
    t0 = time.perf_counter()
    for a, b, c, d, p, q, ranks in games:
        (bots[a], bots[b]), (bots[c], bots[d]) = rate([(bots[a], bots[b]), (bots[c], bots[d])], ranks)
        (pairs[p],), (pairs[q],) = rate([(pairs[p],), (pairs[q],)], ranks)
    return time.perf_counter() - t0


def rebuild_from_db(db: Path) -> float:
    t0 = time.perf_counter()
    with Store(db) as store:
        rebuild(store.results(), partnerships=True)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--results", type=int, default=100_000, help="stored results to rebuild ratings from")
    ap.add_argument("--runs", type=int, default=5, help="repetitions of the per-match measurement")
    ap.add_argument("--rebuild-runs", type=int, default=3, help="repetitions of the rebuild and its baseline")
    ap.add_argument("--deals", type=int, default=8, help="deals of the 4-bot event (12 matches per deal)")
    ap.add_argument("--no-grpc", action="store_true", help="skip the gRPC baseline")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        config = event_config(args.deals)
        outcomes, play_local_s = played(config)
        runs = [overhead(config, outcomes, tmp, r) for r in range(args.runs)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        grpc_s = None if args.no_grpc else grpc_per_match(event_config(1, "grpc"), tmp)
        rating = max(med["total"] - med["store"] - med["schedule"], 0.0)

        print(f"event's own cost per match: 4-bot pairings event, {len(outcomes)} matches, "
              f"median of {args.runs} runs\n")
        print("| step | µs per match | vs playing in process | vs playing over gRPC |")
        print("|---|---:|---:|---:|")

        def row(name: str, s: float) -> None:
            g = "–" if grpc_s is None else f"{s / grpc_s:.4f}x"
            print(f"| {name} | {s * 1e6:,.0f} | {s / play_local_s:.3f}x | {g} |")

        row("scheduling", med["schedule"])
        row("storing (match + record, one transaction)", med["store"])
        row("rating in order, storing ratings, bookkeeping (by difference)", rating)
        row("**all of the event's own work** (run_event on played matches)", med["total"])
        row("baseline: playing a match in process (median)", play_local_s)
        if grpc_s is not None:
            row("baseline: playing a match over gRPC, subprocess bots (wall / matches)", grpc_s)

        results = synthetic(args.results)
        db = tmp / "league.db"
        with Store(db) as store:
            cfg = event_config(1, "league")
            store.open_event(cfg, "synthetic", len(results))
            store.record_matches(results)
        in_memory = [(o.task.seats, o.ranks) for o in results]
        # Alternate the two so that load from elsewhere on the machine hits both alike.
        bares, rebuilds = [], []
        for _ in range(args.rebuild_runs):
            bares.append(bare_rate_calls(in_memory))
            rebuilds.append(rebuild_from_db(db))
        bare, rebuilt = statistics.median(bares), statistics.median(rebuilds)
        print(f"\nratings rebuilt from {args.results:,} stored 2-vs-2 results (bots and partnerships: "
              f"{2 * args.results:,} rate() calls), median of {args.rebuild_runs} alternating runs\n")
        print("| what | seconds | results/s | vs bare rate() calls |")
        print("|---|---:|---:|---:|")
        print(f"| baseline: bare trueskill.rate() calls, results in memory | {bare:.1f} | "
              f"{args.results / bare:,.0f} | 1.00x |")
        verdict = "meets" if rebuilt / bare <= 1.2 else "misses"
        print(f"| rebuild from SQLite (read, decode, rate) | {rebuilt:.1f} | {args.results / rebuilt:,.0f} | "
              f"{rebuilt / bare:.2f}x ({verdict} the 1.2x target) |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
