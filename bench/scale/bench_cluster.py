"""Matches per minute of one event on 1, 2 and 3 `dask worker` processes, in one run.

Usage:
    python bench/scale/bench_cluster.py [--deals 20] [--threads 2] [--repeat 1]

Each size gets a fresh `dask scheduler` and N `dask worker --nthreads THREADS` processes on
loopback (the harness's own test helpers, tests/cluster/dask_procs.py), then the coordinator
(`sevenrocks tournament --cluster`, greedy, defensive and greedy-b, bubblewrap when the machine
has it) plays the same event into a fresh database. The table gives each size's wall time from
the coordinator's start to its exit (worker admission and bot start-up included) and its ratio to
1 worker measured in the same run, with the load average: on a shared machine, more workers than
cores measure the machine, not the cluster.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.cluster.dask_procs import DaskCluster, coordinator, event_toml, stored  # noqa: E402


def one(workers: int, deals: int, threads: int, root: Path) -> tuple[int, float]:
    folder = Path(tempfile.mkdtemp(prefix=f"w{workers}-", dir=root))
    cluster = DaskCluster(folder)
    try:
        cluster.start_scheduler()
        for _ in range(workers):
            cluster.start_worker(nthreads=threads)
        config = event_toml(folder / "e.toml", deals)
        time.sleep(3)  # the workers register before the clock starts
        start = time.monotonic()
        run = coordinator(config, folder / "e.db", folder / "out", cluster.address)
        text, _ = run.communicate(timeout=3600)
        took = time.monotonic() - start
        if run.returncode != 0:
            raise SystemExit(f"{workers} worker(s): the event failed:\n{text[-2000:]}")
        return len(stored(folder / "e.db")), took
    finally:
        cluster.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--deals", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1, help="runs per size, interleaved; the table gives medians")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="sevenrocks-bench-cluster-"))
    load = os.getloadavg()[0]
    times: dict[int, list[float]] = {1: [], 2: [], 3: []}
    matches = 0
    for _ in range(args.repeat):
        for n in times:
            matches, took = one(n, args.deals, args.threads, root)
            times[n].append(took)
    base = statistics.median(times[1])
    print(f"{matches} matches ({args.deals} deals), {args.threads} threads per worker, "
          f"load average {load:.1f} -> {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores")
    print(f"{'workers':>7}  {'wall s':>7}  {'matches/min':>11}  {'vs 1 worker':>11}")
    for n, ts in times.items():
        wall = statistics.median(ts)
        print(f"{n:>7}  {wall:>7.1f}  {60 * matches / wall:>11.1f}  {base / wall:>10.2f}x")


if __name__ == "__main__":
    main()
