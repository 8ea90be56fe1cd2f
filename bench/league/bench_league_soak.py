"""Soak a league: memory and database size per stored match over many matches.

A league runs for days, so what it holds must grow only with what it stores. This
plays one league of in-process bots (``InProcessExecutor``: no gRPC, so the loop,
the store and the planner are what is measured) for ``--matches`` matches through
the real loop (:func:`~sevenrocks.server.league.runner.run_league`), changing the
field twice on the way (a new entrant, a new version), and prints at every
checkpoint the process's resident memory, the database's bytes, and the median
milliseconds per match of the last stretch. The ratio column compares RSS with the
first checkpoint (the baseline, measured in the same run); the target is at
most 1.2x at 10,000 matches against 1,000.

    python bench/league/bench_league_soak.py                 # 10,000 matches (~10-20 min on a busy 2-core box)
    python bench/league/bench_league_soak.py --matches 2000 --every 500
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import gc
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from sevenrocks.server.events.executor import InProcessExecutor
from sevenrocks.server.league.runner import League, load_league, run_league
from sevenrocks.server.events.store import Store
from sevenrocks.server.events.tournament import Progress

FIELD = [("a", "greedy"), ("b", "random"), ("c", "greedy"), ("d", "random"), ("e", "random")]


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def db_bytes(db: Path) -> int:
    return sum(p.stat().st_size for p in (db, db.with_name(db.name + "-wal")) if p.exists())


def config_text(field: list[tuple[str, str]], matches: int) -> str:
    head = f'[event]\nname = "soak"\nduplicate = true\n[league]\nround_matches = 16\nstop_after = {matches}\n'
    return head + "".join(f'[[entrants]]\nname = "{n}"\nbot = "{b}"\n' for n, b in field)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--matches", type=int, default=10_000)
    ap.add_argument("--every", type=int, default=1000, help="checkpoint every this many matches")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path, db = Path(tmp) / "soak.toml", Path(tmp) / "soak.db"
        path.write_text(config_text(FIELD, args.matches))
        config, settings = load_league(path)
        executor = InProcessExecutor(config)

        async def update(entrants: Any) -> None:
            executor.config = dataclasses.replace(config, entrants=tuple(entrants))

        rows: list[tuple[int, int, int, float, float, float]] = []
        last = {"t": time.perf_counter(), "cpu": time.process_time()}
        stretch: list[float] = []
        overhead: list[float] = []

        def observe(p: Progress) -> None:
            if p.outcome is None:
                return
            now = time.perf_counter()
            stretch.append((now - last["t"]) * 1000)
            # The loop's own share: the time between two stored matches less the match itself.
            overhead.append((now - last["t"] - p.outcome.duration_s) * 1000)
            last["t"] = now
            if p.done == args.matches // 3:  # a newcomer joins
                path.write_text(config_text([*FIELD, ("f", "defensive")], args.matches))
            if p.done == 2 * args.matches // 3:  # b's author submits a new version
                path.write_text(config_text([*FIELD[:1], ("b", "defensive"), *FIELD[2:], ("f", "defensive")],
                                            args.matches))
            if p.done % args.every == 0:
                gc.collect()
                cpu = time.process_time()
                rows.append((p.done, rss_bytes(), db_bytes(db), statistics.median(stretch),
                             statistics.median(overhead), (cpu - last["cpu"]) * 1000 / len(stretch)))
                last["cpu"] = cpu
                stretch.clear()
                overhead.clear()

        with Store(db, writer=True) as store:
            game = League(path, config, settings, store, executor, lambda text: None, update_executor=update)
            asyncio.run(run_league(game, observe))
            versions = [e.name for e in store.league_entrants("soak")]
    base_rss = rows[0][1]
    print(f"league soak: {args.matches} matches, in-process bots, entrants over time: {', '.join(versions)}")
    print()
    print("| matches | RSS MiB | RSS / at first checkpoint | DB MiB | DB bytes per match "
          "| median wall ms per match | median loop ms per match (wall less the match) | CPU ms per match |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for done, rss, size, ms, loop_ms, cpu_ms in rows:
        print(f"| {done} | {rss / 2**20:.1f} | {rss / base_rss:.3f}x | {size / 2**20:.1f} | {size / done:.0f} "
              f"| {ms:.1f} | {loop_ms:.2f} | {cpu_ms:.1f} |")
    print()
    print(f"RSS after {rows[-1][0]} matches / after {rows[0][0]}: {rows[-1][1] / base_rss:.3f}x (the target: <= 1.2x); "
          f"load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (wall times include other work)")


if __name__ == "__main__":
    main()
