"""The search bot's determinizations per decision at its default clock (150 ms a move), in process.

The search thinks for a fixed time, so a faster engine shows up as more deals
searched per decision at the same clock (and, through them, strength: see
``bench/ladder.py``). This plays ``--matches`` Seven Rocks matches of the search bot
(its defaults) in seats 0 and 2 against the defensive bot, and prints, over every
decision with more than one legal move, the median deals searched and the deals per
second of thinking. Run it with two builds (or the main branch's install) to compare.

    python bench/bench_search.py [--matches 2] [--time-ms 150]
"""

from __future__ import annotations

import argparse
import statistics
import time

from headline import headline
from sevenrocks.bots.defensive import DefensiveBot
from sevenrocks.bots.search import SearchBot
from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.local import play_local
from sevenrocks.sdk.rules import Move, engine_build
from sevenrocks.sdk.view import SeatView


class Counted(Bot):
    """A SearchBot that notes the deals and the seconds of each decision it searched."""

    def __init__(self, inner: SearchBot, log: list[tuple[int, float]]) -> None:
        super().__init__(0)
        self.inner = inner
        self.log = log

    def choose_move(self, view: SeatView) -> Move:
        start = time.perf_counter()
        move = self.inner.choose_move(view)
        if self.inner.last_iterations:
            self.log.append((self.inner.last_iterations, time.perf_counter() - start))
        return move


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--matches", "--reps", type=int, default=2)
    ap.add_argument("--time-ms", type=float, default=150.0)
    args = ap.parse_args()
    log: list[tuple[int, float]] = []
    for seed in range(1, args.matches + 1):
        bots: list[Bot] = [Counted(SearchBot(seed * 10 + s, time_ms=args.time_ms), log) if s % 2 == 0
                           else DefensiveBot(seed * 10 + s) for s in range(4)]
        play_local(bots, "seven-rocks", seed)
    deals = statistics.median(n for n, _ in log)
    rate = sum(n for n, _ in log) / sum(t for _, t in log)
    print(f"search at {args.time_ms:.0f} ms a move, {engine_build()} build, {args.matches} matches against "
          f"defensive, {len(log)} searched decisions\n")
    print("| deals per decision (median) | deals per second of thinking |")
    print("|---:|---:|")
    print(f"| {deals:,.0f} | {rate:,.0f} |")
    headline(f"search bot, deals per decision at {args.time_ms:.0f} ms", f"{deals:,.0f}", "more than main",
             f"{rate:,.0f} deals/s of thinking, {len(log)} decisions")


if __name__ == "__main__":
    main()
