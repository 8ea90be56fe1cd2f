"""The search bot's determinizations per decision at its default clock (150 ms a move), in process.

The search thinks for a fixed time, so a faster engine shows up as more deals
searched per decision at the same clock (and, through them, strength: see
``bench/engine/ladder.py``). This plays ``--matches`` Seven Rocks matches of the search bot
(its defaults) in seats 0 and 2 against the defensive bot, and prints, over every
decision with more than one legal move, the median deals searched and the deals per
second of thinking.

With ``--baseline DIR`` (a checkout of the baseline, e.g. ``git worktree add
/tmp/base main``) it measures both source trees in the same run: ``--reps`` times,
alternating, each in a fresh process with that tree's sources first on the path,
and prints the medians over the runs with this checkout's ratio to the baseline.

    python bench/engine/bench_search.py [--matches 2] [--time-ms 150]
    python bench/engine/bench_search.py --baseline /tmp/base --reps 3 --matches 1
    python bench/engine/bench_search.py --ismcts --matches 1     # the ismcts bot's deals too
    python bench/engine/bench_search.py --alphabeta --matches 1  # the alphabeta bot's deals too
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from sevenrocks.bots.defensive import DefensiveBot
from sevenrocks.bots.search import SearchBot
from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.local import play_local
from sevenrocks.sdk.rules import Move, engine_build
from sevenrocks.sdk.view import SeatView

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.common, the shared helpers
from bench.common.headline import headline  # noqa: E402

if TYPE_CHECKING:  # the baseline's sources (--baseline) may predate this module
    from sevenrocks.bots.budget import Budgeted


class Counted(Bot):
    """A SearchBot that notes the deals, the seconds and the CPU seconds of each decision it searched."""

    def __init__(self, inner: Budgeted, log: list[tuple[int, float, float]]) -> None:
        super().__init__(0)
        self.inner = inner
        self.log = log

    def choose_move(self, view: SeatView) -> Move:
        start = time.perf_counter()
        cpu = time.thread_time()
        move = self.inner.choose_move(view)
        if self.inner.last_iterations:
            self.log.append((self.inner.last_iterations, time.perf_counter() - start, time.thread_time() - cpu))
        return move


ROOT = Path(__file__).resolve().parents[2]


def measure(matches: int, time_ms: float, bot: Callable[..., Budgeted] = SearchBot) -> tuple[float, float, float, int]:
    """Median deals per searched decision, deals per second and per CPU second of thinking, decisions counted.

    On a loaded machine a search at a fixed clock gets a share of a core, so its deals
    per decision swing with the load; deals per CPU second do not, and times 0.15 they
    are the deals per decision at 150 ms on a core of its own.
    """
    log: list[tuple[int, float, float]] = []
    for seed in range(1, matches + 1):
        bots: list[Bot] = [Counted(bot(seed * 10 + s, time_ms=time_ms), log) if s % 2 == 0
                           else DefensiveBot(seed * 10 + s) for s in range(4)]
        play_local(bots, "seven-rocks", seed)
    deals = statistics.median(n for n, _, _ in log)
    rate = sum(n for n, _, _ in log) / sum(t for _, t, _ in log)
    cpu_rate = sum(n for n, _, _ in log) / sum(c for _, _, c in log)
    return deals, rate, cpu_rate, len(log)


def run_tree(tree: Path, matches: int, time_ms: float) -> tuple[float, float, float, int]:
    """:func:`measure` in a fresh process whose ``sevenrocks`` packages come from ``tree`` first."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(str(tree / d) for d in ("proto", "sdk", "server", "bots"))
    env.pop("SEVENROCKS_BENCH_HEADLINES", None)
    out = subprocess.run(
        [sys.executable, __file__, "--child", "--matches", str(matches), "--time-ms", str(time_ms)],
        env=env, check=True, capture_output=True, text=True,
    ).stdout
    got = json.loads(out.strip().splitlines()[-1])
    if not got["search"].startswith(str(tree)):
        raise SystemExit(f"the run meant for {tree} imported the search bot from {got['search']}")
    return got["deals"], got["rate"], got["cpu_rate"], got["decisions"]


def compare(baseline: Path, reps: int, matches: int, time_ms: float) -> None:
    """Both trees, alternating, ``reps`` runs each; medians and this checkout's ratio to the baseline."""
    runs: dict[str, list[tuple[float, float, float, int]]] = {"baseline": [], "this checkout": []}
    for _ in range(reps):
        runs["baseline"].append(run_tree(baseline.resolve(), matches, time_ms))
        runs["this checkout"].append(run_tree(ROOT, matches, time_ms))
    med = {k: (statistics.median(r[0] for r in v), statistics.median(r[1] for r in v),
               statistics.median(r[2] for r in v), sum(r[3] for r in v)) for k, v in runs.items()}
    print(f"search at {time_ms:.0f} ms a move, {engine_build()} build, {reps} alternating runs per tree of "
          f"{matches} match(es) against defensive; medians over the runs; load average "
          f"{os.getloadavg()[0]:.1f}\n")
    print("| sources | deals per decision (median) | deals per second of thinking | deals per CPU second "
          "| decisions | ratio (deals per CPU second) |")
    print("|---|---:|---:|---:|---:|---:|")
    base_cpu = med["baseline"][2]
    for k, (deals, rate, cpu_rate, n) in med.items():
        print(f"| {k} | {deals:,.0f} | {rate:,.0f} | {cpu_rate:,.0f} | {n} | {cpu_rate / base_cpu:.2f}x |")
    per_run = ", ".join(f"{a[2]:.0f}/{b[2]:.0f}" for a, b in zip(runs["baseline"], runs["this checkout"]))
    print(f"\nper run, baseline/this checkout deals per CPU second: {per_run}")
    deals, rate, cpu_rate, n = med["this checkout"]
    headline(f"search bot, deals per CPU second at {time_ms:.0f} ms a move", f"{cpu_rate:,.0f}", "more than main",
             f"{cpu_rate / base_cpu:.2f}x the baseline's {base_cpu:,.0f}; {deals:,.0f} deals per decision")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--matches", type=int, default=2)
    ap.add_argument("--time-ms", type=float, default=150.0)
    ap.add_argument("--baseline", type=Path, default=None,
                    help="a checkout of the baseline sources, measured in the same run")
    ap.add_argument("--reps", type=int, default=3, help="alternating runs per tree with --baseline")
    ap.add_argument("--ismcts", action="store_true",
                    help="also measure the ismcts bot in the search bot's seats (deals = its deals per decision)")
    ap.add_argument("--alphabeta", action="store_true",
                    help="also measure the alphabeta bot in the search bot's seats (deals = its deals per decision)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.baseline is not None:
        compare(args.baseline, args.reps, args.matches, args.time_ms)
        return
    deals, rate, cpu_rate, n = measure(args.matches, args.time_ms)
    if args.child:
        import sevenrocks.bots.search as search_module

        print(json.dumps({"deals": deals, "rate": rate, "cpu_rate": cpu_rate, "decisions": n,
                          "search": search_module.__file__}))
        return
    print(f"search at {args.time_ms:.0f} ms a move, {engine_build()} build, {args.matches} matches against "
          f"defensive, {n} searched decisions\n")
    print("| bot | deals per decision (median) | deals per second of thinking | deals per CPU second |")
    print("|---|---:|---:|---:|")
    print(f"| search | {deals:,.0f} | {rate:,.0f} | {cpu_rate:,.0f} |")
    if args.ismcts:
        from sevenrocks.bots.ismcts import ISMCTSBot

        i_deals, i_rate, i_cpu, _ = measure(args.matches, args.time_ms, ISMCTSBot)
        print(f"| ismcts | {i_deals:,.0f} | {i_rate:,.0f} | {i_cpu:,.0f} |")
    if args.alphabeta:
        from sevenrocks.bots.alphabeta import AlphaBetaBot

        a_deals, a_rate, a_cpu, _ = measure(args.matches, args.time_ms, AlphaBetaBot)
        print(f"| alphabeta | {a_deals:,.0f} | {a_rate:,.0f} | {a_cpu:,.0f} |")
    headline(f"search bot, deals per decision at {args.time_ms:.0f} ms", f"{deals:,.0f}", "more than main",
             f"{rate:,.0f} deals/s of thinking, {n} decisions")


if __name__ == "__main__":
    main()
