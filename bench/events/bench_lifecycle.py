"""What fresh bot processes cost: ``[bots].fresh_process`` against one process per entrant.

The same event (four registered bots, pairings, real subprocesses over gRPC) is
played with ``fresh_process = "never"`` (the baseline: one process per entrant for
the event), ``"duplicates"`` (fresh processes between the matches of a duplicate
group: two recycles per deal) and ``"always"`` (fresh processes for every match),
the modes taking turns in each run so that a loaded machine hits them alike.
Prints seconds per match (median over runs) and the ratio to the baseline.

Usage: python bench/events/bench_lifecycle.py [--deals 2] [--runs 3] [--target 250]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from sevenrocks.server.events.config import EventConfig, parse_config
from sevenrocks.server.events.executor import LocalExecutor
from sevenrocks.server.events.store import Store
from sevenrocks.server.events.tournament import run_event

MODES = ("never", "duplicates", "always")


def config(mode: str, deals: int, target: int) -> EventConfig:
    entrants = [{"name": n, "bot": n.rstrip("2")} for n in ("greedy", "random", "defensive", "greedy2")]
    return parse_config({"event": {"name": f"fresh-{mode}", "deals": deals, "concurrency": 2, "target": target},
                         "time": {"per_move_ms": 10000, "connect_timeout_s": 60},
                         "bots": {"fresh_process": mode}, "entrants": entrants}, "<bench>")


def per_match(cfg: EventConfig, tmp: Path) -> float:
    started = time.perf_counter()
    with Store(tmp / f"{cfg.name}.db") as store:
        plan = asyncio.run(run_event(cfg, store, LocalExecutor(cfg, tmp / "logs", cfg.concurrency)))
    return (time.perf_counter() - started) / plan.total


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--target", type=int, default=250)
    args = ap.parse_args(argv)
    times: dict[str, list[float]] = {m: [] for m in MODES}
    for run in range(args.runs):
        for mode in MODES:
            with tempfile.TemporaryDirectory() as tmp:
                times[mode].append(per_match(config(mode, args.deals, args.target), Path(tmp)))
        print(f"run {run + 1}: " + ", ".join(f"{m} {times[m][-1]:.3f}s" for m in MODES), flush=True)
    base = statistics.median(times["never"])
    matches = config("never", args.deals, args.target)
    print(f"\n{args.deals} deal(s) of pairings, 4 bots, target {matches.target}, concurrency 2, "
          f"{args.runs} runs (machine shared and loaded: medians)\n")
    print(f"| fresh_process | s/match (median) | vs never | extra s/match |")
    print(f"|---|---|---|---|")
    for mode in MODES:
        med = statistics.median(times[mode])
        print(f"| {mode} | {med:.3f} | {med / base:.2f}x | {med - base:+.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
