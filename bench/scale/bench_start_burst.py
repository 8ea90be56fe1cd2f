"""Does smoothing the start of 1,000 concurrent matches shorten the decision tail?

The load driver (``sevenrocks loadtest``: one referee, four SDK bot processes, the
tournament's store) starts all its matches at once: a thousand deals and seat
assignments reach the bots in the same moment. This benchmark plays the same load
twice per repetition, alternating: as the driver does, and with the matches'
starts spread evenly over ``--ramp`` seconds (the ``k``-th match to start waits until
``ramp * k / concurrency`` seconds after the first; the driver's own pool runs them, its
arena's ``play`` is wrapped for the run, nothing in the product changes). The referee runs in this process, so its garbage
collector's pauses are timed too (``gc.callbacks``). Decision latency is measured at the referee as
everywhere else; it is split into each seat's first three decisions of a match
(where a start burst would show) and the rest.

    python bench/scale/bench_start_burst.py [--reps 2] [--concurrency 1000] [--ramp 2]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import statistics
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import sevenrocks.server.events.loadtest as loadtest
from sevenrocks.server.events.outcome import MatchOutcome
from sevenrocks.server.events.schedule import MatchTask
from sevenrocks.server.stats.intervals import percentile

EARLY = 3  # a seat's first decisions of a match, where a start burst would show


def one_run(matches: int, concurrency: int, ramp_s: float) -> dict[str, float]:
    early: list[float] = []
    late: list[float] = []
    original_run = loadtest.PoolExecutor.run

    async def run(self: loadtest.PoolExecutor, tasks: Iterable[MatchTask], on_result: Any) -> None:
        observe = self.observe
        if ramp_s > 0:
            play = self.arena.play
            t0, order = time.monotonic(), itertools.count()

            async def spread(task: MatchTask) -> MatchOutcome:
                k = next(order)  # the k-th match to start waits for its place on the ramp
                await asyncio.sleep(max(0.0, t0 + ramp_s * k / max(1, concurrency) - time.monotonic()))
                return await play(task)

            self.arena.play = spread  # type: ignore[method-assign]

        def split(o: MatchOutcome) -> None:
            for ds in o.decision_ms.values():
                early.extend(ds[:EARLY])
                late.extend(ds[EARLY:])
            if observe is not None:
                observe(o)

        self.observe = split
        await original_run(self, tasks, on_result)

    pauses: list[float] = []
    started: list[float] = []

    def gc_timer(phase: str, _info: dict[str, Any]) -> None:  # the referee runs in this process
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            pauses.append((time.perf_counter() - started.pop()) * 1000)

    gc.callbacks.append(gc_timer)
    loadtest.PoolExecutor.run = run  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            report = asyncio.run(loadtest.run_load(loadtest.LoadSpec(matches=matches, concurrency=concurrency),
                                                   Path(tmp) / "load.db", Path(tmp) / "logs"))
            wall = time.perf_counter() - t0
    finally:
        gc.callbacks.remove(gc_timer)
        loadtest.PoolExecutor.run = original_run  # type: ignore[method-assign]
    if not report.ok:
        raise SystemExit(f"the load run lost, doubled or faulted something: {report.rows()}")
    return {"wall s": wall, "p50 ms": report.p50_ms, "p99 ms": report.p99_ms,
            "early p99 ms": percentile(early, 99), "late p99 ms": percentile(late, 99),
            "peak in play": float(report.peak_matches), "referee's longest gc ms": max(pauses, default=0.0)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--matches", type=int, default=1008)
    ap.add_argument("--concurrency", type=int, default=1000)
    ap.add_argument("--ramp", type=float, default=2.0, help="seconds over which the ramped run starts its matches")
    args = ap.parse_args()
    runs: dict[str, list[dict[str, float]]] = {"all at once (baseline)": [], f"spread over {args.ramp:g} s": []}
    for _ in range(args.reps):
        for name, ramp in zip(runs, (0.0, args.ramp)):
            runs[name].append(one_run(args.matches, args.concurrency, ramp))
    keys = list(next(iter(runs.values()))[0])
    print(f"\n{args.matches} matches, {args.concurrency} at once, medians of {args.reps} runs each (alternating)\n")
    print("| start | " + " | ".join(keys) + " |")
    print("|---|" + "---:|" * len(keys))
    for name, rs in runs.items():
        print(f"| {name} | " + " | ".join(f"{statistics.median(r[k] for r in rs):,.0f}" for k in keys) + " |")
    print(f"\nearly: each seat's first {EARLY} decisions of a match; late: the rest")


if __name__ == "__main__":
    main()
