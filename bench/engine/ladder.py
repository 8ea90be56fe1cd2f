"""The reference-bot ladder, measured with duplicate deals.

For each pair ``A:B`` the script plays ``--deals`` match seeds twice: once with A in
seats 0 and 2 (partnership 0) and B in seats 1 and 3, once with the seats exchanged
(same seed, so the same first deal and lot). It prints, per pair, A's win rate with
a 95% Wilson interval (a drawn match counts half), A's mean final score margin, and
each bot's think time per move (median and p95, over every decision it was asked).

    python bench/engine/ladder.py --deals 200 --pairs greedy:random,defensive:greedy,search:defensive,search:greedy

Runs in at most two processes (``--processes``), as the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from multiprocessing import Pool
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # bench.common, the shared helpers

# Puts the checkout's sources on sys.path when the package is not installed (an installed
# compiled wheel, or PYTHONPATH, decides which engine build the ladder measures).
from bench.common.refbots import make_bot  # noqa: E402
from sevenrocks.sdk.bot import Bot  # noqa: E402
from sevenrocks.sdk.local import play_local  # noqa: E402
from sevenrocks.sdk.rules import Move, make_ruleset  # noqa: E402
from sevenrocks.sdk.view import SeatView  # noqa: E402
from sevenrocks.server.stats.intervals import wilson  # noqa: E402


class Timed(Bot):
    """Wraps a bot and records how long each of its decisions took (monotonic clock)."""

    def __init__(self, inner: Bot, times: list[float]) -> None:
        super().__init__(0)
        self.inner = inner
        self.times = times

    def choose_move(self, view: SeatView) -> Move:
        start = time.perf_counter()
        move = self.inner.choose_move(view)
        self.times.append(time.perf_counter() - start)
        return move


@dataclass(slots=True)
class Game:
    """One match of a pair: ``a_won`` is 1, 0.5 (draw) or 0; margin is A's score minus B's."""

    pair: str
    a_won: float
    margin: int
    times: dict[str, list[float]]
    seed: int = 0


def play_one(job: tuple[str, str, str, int | None, bool, int, dict[str, Any]]) -> Game:
    """Play seed ``seed`` with A in the even seats, or in the odd seats when ``swapped``."""
    a, b, ruleset, players, swapped, seed, options = job
    rs = make_ruleset(ruleset, players=players)
    names = [(b if (s % 2 == 0) == swapped else a) for s in range(rs.players)]
    times: dict[str, list[float]] = {a: [], b: []}
    bots = [Timed(make_bot(n, seed * 10 + s, options), times[n]) for s, n in enumerate(names)]
    match = play_local(bots, rs, seed, match_id=f"ladder-{seed}", names=names)
    a_team = 1 if swapped else 0
    scores = match.end.scores
    margin = scores[a_team] - scores[1 - a_team]
    winner = match.winner
    a_won = 0.5 if winner is None else float(winner == a_team)
    return Game(f"{a}:{b}", a_won, margin, times, seed)


@dataclass(slots=True)
class PairResult:
    pair: str
    games: list[Game] = field(default_factory=list)

    def row(self) -> str:
        a, b = self.pair.split(":")
        n = len(self.games)
        if n == 0:
            return f"| {a} | {b} | 0 | – | – | – | – | – |"
        wins = sum(g.a_won for g in self.games)
        lo, hi = wilson(wins, n)
        margin = statistics.fmean(g.margin for g in self.games)
        ta = [t for g in self.games for t in g.times[a]]
        tb = [t for g in self.games for t in g.times[b]]
        return (
            f"| {a} | {b} | {n} | {wins / n:.1%} | {lo:.1%} – {hi:.1%} | {margin:+.1f} "
            f"| {ms(ta)} | {ms(tb)} |"
        )


def ms(times: list[float]) -> str:
    """Median / p95 think time in milliseconds."""
    if not times:
        return "–"
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"{statistics.median(ordered) * 1000:.2f} / {p95 * 1000:.2f}"


HEADER = (
    "| A | B | matches | A wins | 95% Wilson | A margin "
    "| A ms/move (median / p95) | B ms/move (median / p95) |\n"
    "|---|---|---:|---:|---|---:|---:|---:|"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--deals", type=int, default=50, help="match seeds per pair (each played twice)")
    parser.add_argument(
        "--pairs", default="greedy:random,defensive:greedy,search:defensive,search:greedy",
        help="comma-separated A:B pairs, A the presumed stronger",
    )
    parser.add_argument("--ruleset", default="seven-rocks")
    parser.add_argument("--players", type=int, default=None, help="fives only: 2 (A and B alternate seats)")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--processes", type=int, default=2, choices=(1, 2))
    parser.add_argument("--minutes", type=float, default=None,
                        help="stop after this much wall time; only deals played in both seatings count")
    parser.add_argument("--progress", action="store_true", help="print each pair's running tally to stderr")
    parser.add_argument("--search-iterations", type=int, default=40,
                        help="determinizations per decision for the search bot (fixed, reproducible)")
    parser.add_argument("--search-opt", action="append", default=[], metavar="KEY=JSON",
                        help="another SearchBot keyword, e.g. horizon=7 or explore=0.2 (repeatable)")
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=BOT:JSON",
                        help='a bot with other keywords under its own name, for pairs: '
                             "'search150=search:{\"time_ms\": 150, \"iterations\": null}' (repeatable)")
    args = parser.parse_args(argv)
    search: dict[str, Any] = {"iterations": args.search_iterations, "time_ms": None}
    for opt in args.search_opt:
        key, _, value = opt.partition("=")
        search[key] = json.loads(value)
    options: dict[str, Any] = {"search": search}
    for spec in args.variant:
        name, _, rest = spec.partition("=")
        base, _, kwargs = rest.partition(":")
        options[name] = {"bot": base, **(json.loads(kwargs) if kwargs else {})}
    players = args.players if args.ruleset != "seven-rocks" else None
    if args.ruleset != "seven-rocks" and players != 2:
        parser.error("pairs are partnerships: use seven-rocks, or fives with --players 2")
    pairs = [p.strip() for p in args.pairs.split(",") if p.strip()]
    jobs = [
        (a, b, args.ruleset, players, swapped, seed, options)
        for a, b in (p.split(":") for p in pairs)
        for seed in range(args.first_seed, args.first_seed + args.deals)
        for swapped in (False, True)
    ]
    results = {p: PairResult(p) for p in pairs}
    start = time.monotonic()
    stop = None if args.minutes is None else start + 60 * args.minutes
    with Pool(args.processes) as pool:
        games = map(play_one, jobs) if args.processes == 1 else pool.imap_unordered(play_one, jobs, chunksize=2)
        for g in games:
            results[g.pair].games.append(g)
            if args.progress:
                print(f"{time.monotonic() - start:.0f} s: " + results[g.pair].row(), file=sys.stderr, flush=True)
            if stop is not None and time.monotonic() > stop:
                break  # leaving the with-block terminates the matches still running
    elapsed = time.monotonic() - start
    if stop is not None:
        for r in results.values():  # a deal counts only with both seatings played (duplicate)
            seatings: dict[int, int] = {}
            for g in r.games:
                seatings[g.seed] = seatings.get(g.seed, 0) + 1
            r.games = [g for g in r.games if seatings[g.seed] == 2]
    from sevenrocks.sdk.rules import engine_build

    print(f"ruleset {args.ruleset}, {args.deals} deals x 2 seatings per pair, {engine_build()} engine, "
          f"search {search}, {args.processes} processes, "
          f"{elapsed:.0f} s wall" + ("" if stop is None else f" (stopped at {args.minutes:g} minutes; "
                                     f"complete deals only)"))
    print(HEADER)
    for p in pairs:
        print(results[p].row())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
