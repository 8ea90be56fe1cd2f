"""Bot process starts in the default event, before and after keeping processes across rounds.

The default event (``sevenrocks tournament`` with no config: adaptive, 200 matches,
rounds of 32 deals) is played over real gRPC with real bot processes, its entrants'
bots swapped for cheap ones (random, greedy) so that it takes a minute, not five: the
starts depend on the rounds, not on how long a bot thinks. Printed:

- after (this code): processes started, counted by the supervisor, and their median
  start-up time (spawn to connected to the referee);
- before (the code this replaced: every adaptive round started every bot, and
  ``fresh_process = "duplicates"`` recycled every bot between consecutive deals of
  a round): computed on the very rounds this run played, batch by batch as the old
  executor split them.

Usage: python bench/events/bench_starts.py
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from sevenrocks.server.events.config import default_config, parse_config
from sevenrocks.server.events.executor import LocalExecutor
from sevenrocks.server.events.schedule import MatchTask
from sevenrocks.server.events.store import Store
from sevenrocks.server.events.tournament import run_event


@dataclasses.dataclass
class Recording(LocalExecutor):
    """A LocalExecutor that keeps each round's tasks."""

    rounds: list[list[MatchTask]] = dataclasses.field(default_factory=list)

    async def run(self, tasks: Any, on_result: Any) -> None:
        tasks = list(tasks)
        self.rounds.append(tasks)
        await super().run(tasks, on_result)


def old_batches(tasks: list[MatchTask]) -> int:
    """How many batches the old executor split a round into (per deal number, then position in the group)."""
    n = 0
    for _deal, deal_tasks in itertools.groupby(tasks, key=lambda t: t.deal):
        seen: dict[str, int] = {}
        for t in deal_tasks:
            seen[t.group] = seen.get(t.group, 0) + 1
        n += max(seen.values())
    return n


def main() -> None:
    base = default_config()
    cheap = {"search": "greedy", "defensive": "greedy"}
    data = {"event": {"name": "starts", "format": base.format, "seed": base.seed, "concurrency": base.concurrency,
                      "duplicate": base.duplicate, "head_to_head": base.head_to_head},
            "schedule": {"mode": "adaptive", "budget": base.schedule.budget, "round_deals": base.schedule.round_deals},
            "time": {"per_move_ms": 10000, "connect_timeout_s": 120},
            "entrants": [{"name": e.name, "bot": cheap.get(e.bot or "", e.bot)} for e in base.entrants]}
    cfg = parse_config(data, "<bench>")
    with tempfile.TemporaryDirectory() as tmp:
        executor = Recording(cfg, Path(tmp) / "logs", cfg.concurrency)
        started = time.perf_counter()
        with Store(Path(tmp) / "starts.db") as store:
            asyncio.run(run_event(cfg, store, executor))
            played = len(store.matches())
        wall = time.perf_counter() - started
    sup = executor.supervisor
    launched = len(sup.slots)
    before = sum(launched * old_batches(r) for r in executor.rounds)
    after = len(sup.start_times)
    print(f"default event ({played} matches, {len(executor.rounds)} rounds, {launched} launched entrants, "
          f"fresh_process = {cfg.bots.fresh_process!r}, duplicate = {cfg.duplicate}) in {wall:.0f} s; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    ups_before = sum(old_batches(r) for r in executor.rounds)  # a start per round plus a recycle between batches
    ups_after = -(-after // launched)
    print("| | bot process starts | start-ups (every entrant at once, one after another) | per round |")
    print("|---|---:|---:|---:|")
    print(f"| before (computed on these rounds) | {before} | {ups_before} | {before / len(executor.rounds):.1f} |")
    print(f"| after (counted) | {after} | {ups_after} | {after / len(executor.rounds):.1f} |")
    times = sup.start_times
    print(f"\nstart-up (spawn to connected), {len(times)} starts: median {1000 * statistics.median(times):.0f} ms, "
          f"max {1000 * max(times):.0f} ms (the entrants of a start or a recycle start together)")

if __name__ == "__main__":
    main()
