"""Scale: an event locally and on a Dask LocalCluster; one referee at 10, 100 and 1,000 concurrent matches.

Table 1, matches/s for the same event (three deterministic bots, head to head)
played by the embedded referee (LocalExecutor) and by a LocalCluster of 2
worker processes (ClusterExecutor, `--cluster local:2`), each run into a fresh
database, alternating, median of the repetitions. "wall" counts everything
(the cluster's start-up included); "steady" counts from the first stored result
to the last.

Table 2, one referee holding C matches at once (the load driver: four SDK bot
processes, each playing its seats of every match over one stream, results
through the tournament store). Decision latency is measured at the referee from
handing the TurnRequest to the stream to receiving the Move. The baseline, at
the same concurrency and in the same run just before: a bare grpc.aio
bidirectional echo of a TurnRequest-sized message with C messages in flight over
four streams to four client processes (bench/common/echo.py), the round
trip timed at the server. "us/decision" is wall time per decision (the
referee's, the engine's, the store's and the bots' work on 2 shared cores), set
against wall time per echo.

    python bench/scale/bench_scale.py [--reps 3] [--levels 10,100,1000] [--skip-cluster]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sevenrocks.server.cluster.executor import ClusterExecutor
from sevenrocks.server.events.config import EventConfig, parse_config
from sevenrocks.server.events.executor import Executor, LocalExecutor
from sevenrocks.server.events.loadtest import LoadSpec, run_load
from sevenrocks.server.events.outcome import MatchOutcome
from sevenrocks.server.events.store import Store
from sevenrocks.server.events.tournament import Progress, run_event

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.common, the shared helpers
from bench.common.echo import echo_run  # noqa: E402
from bench.common.headline import headline  # noqa: E402


def event(deals: int) -> EventConfig:
    entrants = [{"name": "greedy", "bot": "greedy"}, {"name": "defensive", "bot": "defensive"},
                {"name": "greedy-b", "bot": "greedy"}]
    return parse_config({"event": {"name": "bench", "format": "self", "deals": deals, "seed": 3,
                                   "target": 150, "concurrency": 2},
                         "entrants": entrants}, "<bench>")


def timed_event(config: EventConfig, executor: Executor, db: Path) -> tuple[float, float, int]:
    """(wall s, steady s from first to last stored result, matches)."""
    stamps: list[float] = []

    def observe(p: Progress) -> None:
        if p.outcome is not None:
            stamps.append(time.perf_counter())

    t0 = time.perf_counter()
    with Store(db) as store:
        asyncio.run(run_event(config, store, executor, observe))
    wall = time.perf_counter() - t0
    return wall, (stamps[-1] - stamps[0]) if len(stamps) > 1 else wall, len(stamps)


def cluster_table(reps: int, deals: int) -> None:
    config = event(deals)
    runs: dict[str, list[tuple[float, float, int]]] = collections.defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(reps):
            for name in ("local, 1 referee x 2", "local, 1 referee x 4", "LocalCluster 2 workers x 2"):
                out = Path(tmp) / f"{rep}-{len(runs[name])}-{name.split()[0]}{name[-1]}"
                ex: Executor
                if name.startswith("LocalCluster"):
                    ex = ClusterExecutor(config, "local:2", out / "logs", concurrency=2)
                else:
                    ex = LocalExecutor(config, out / "logs", int(name[-1]))
                runs[name].append(timed_event(config, ex, out.with_suffix(".db")))
    base = statistics.median(n / w for w, _, n in runs["local, 1 referee x 2"])
    n = runs["local, 1 referee x 2"][0][2]
    print(f"### Table 1: the same event ({n} matches, greedy/defensive/greedy, target 150), median of {reps}\n")
    print("| executor | wall s | matches/s (wall) | matches/s (steady) | vs local x 2 |")
    print("|---|---:|---:|---:|---:|")
    for name, rs in runs.items():
        wall = statistics.median(w for w, _, _ in rs)
        mps = statistics.median(n / w for w, _, n in rs)
        steady = statistics.median((n - 1) / s for _, s, n in rs)
        print(f"| {name} | {wall:.1f} | {mps:.2f} | {steady:.2f} | {mps / base:.2f}x |")
    print()


def load_table(levels: list[int]) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for c in levels:
            matches = max(120, c if c >= 1000 else 2 * c)
            e = asyncio.run(echo_run(c, total=max(8000, 20 * c)))
            r = asyncio.run(run_load(LoadSpec(matches=matches, concurrency=c), Path(tmp) / f"{c}.db",
                                     Path(tmp) / f"logs{c}"))
            if not r.ok:
                print(f"load run at {c} FAILED: {r.faults[:3]} {r.bad_records[:3]} {r.health_failures[:3]}")
            rows.append((c, r, e))
    print("### Table 2: one referee, C matches at once (random bots, target 50; four bot streams)\n")
    print("| C | matches | decisions | p50 ms | p99 ms | matches/s | decisions/s | peak RSS MB | kB/match "
          "| health max ms | echo p50 ms | echo p99 ms | echoes/s | p50 vs echo | us/decision | us/echo | cost vs echo |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c, r, e in rows:
        eps = e["n"] / e["wall"]
        us_dec = 1e6 / r.decisions_per_s
        us_echo = 1e6 / eps
        print(f"| {c} | {r.stored} | {r.decisions} | {r.p50_ms:.2f} | {r.p99_ms:.2f} | {r.matches_per_s:.1f} "
              f"| {r.decisions_per_s:.0f} | {r.rss_peak_mb:.1f} | {r.kb_per_match:.1f} | {r.health_max_ms:.0f} "
              f"| {e['p50']:.2f} | {e['p99']:.2f} | {eps:.0f} | {r.p50_ms / e['p50']:.2f}x "
              f"| {us_dec:.0f} | {us_echo:.0f} | {us_dec / us_echo:.2f}x |")
        if c >= 1000:
            headline(f"{c:,} concurrent matches, decision p99", f"{r.p99_ms:.0f} ms", "<= 250 ms",
                     f"p50 {r.p50_ms:.1f} ms; echo p99 {e['p99']:.1f} ms at the same level")
    print("\nkB/match: the referee process's RSS growth (idle referee with bots connected -> peak) "
          "over the matches in play at the peak. Health: grpc.health.v1 Check every 100 ms during the run; "
          "every run verifies all its records.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--deals", type=int, default=6, help="deals of the table-1 event (12 matches per 3 deals)")
    ap.add_argument("--levels", default="10,100,1000")
    ap.add_argument("--skip-cluster", action="store_true")
    args = ap.parse_args()
    if not args.skip_cluster:
        cluster_table(args.reps, args.deals)
    load_table([int(x) for x in args.levels.split(",")])


if __name__ == "__main__":
    main()
