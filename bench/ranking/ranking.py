"""How often does an event order the four reference bots right, and is its settled verdict true?

Bootstraps events from a pool of real reference-bot matches (``bench/ranking/data/ranking_pool.csv``,
built by ``bench/ranking/ranking_pool.py``; search at a fixed 40 deals per move; the pool and
the dealer are bench/common/pool.py) and rates each
event with the project's own code: the schedule's matchups, :class:`RatingBook` (TrueSkill
in schedule order), the order-free fit, the settled verdict and the adaptive planner.
An event's deal of a matchup is a pool group of that matchup drawn at random (with
replacement): two matches of one deal with the seats exchanged; without duplicates, the
same number of matches each from a group of its own.

The truth is search > defensive > greedy > random (the ladder, and the pool itself).
For every design and size it prints P(full order right), P(search above defensive),
how often the event says its order is settled and how often it is right when it does
(per event: every neighbour pair settled; per claim: each settled neighbour pair), and
the fewest matches at which P(full order) reaches 0.95.

    python bench/ranking/ranking.py                 # ~2-4 minutes from the cached pool
    python bench/ranking/ranking.py --events 1000   # tighter intervals
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Sequence

ROOT = Path(__file__).resolve().parents[2]
for src in ("proto", "sdk", "server", "bots"):
    if str(ROOT / src) not in sys.path:
        sys.path.insert(0, str(ROOT / src))
sys.path.insert(0, str(ROOT))  # bench.common, the shared helpers

from bench.common.pool import (  # noqa: E402
    LEVEL, POOL, TRUTH, Dealer, Event, Key, adaptive_event, config, judge_fit, load_pool)
from sevenrocks.server.events.config import ConfigError, EventConfig, default_config  # noqa: E402
from sevenrocks.server.stats.fit import Phi, Result  # noqa: E402
from sevenrocks.server.stats.ratings import RatingBook  # noqa: E402
from sevenrocks.server.events.schedule import build_schedule  # noqa: E402
from sevenrocks.server.stats.intervals import wilson  # noqa: E402

#: (budget, until_settled, duplicate, round_deals) of the four-bot default event these rows were measured for
#: (before December 2026; today's default is measured by bench/ranking/default_pool.py).
DEFAULT = (200, False, False, 32)


# ---------------------------------------------------------------------- designs

def fixed_results(cfg: EventConfig, deals: int, dealer: Dealer) -> list[Result]:
    """A fixed event in schedule order: deal by deal, every matchup of the format."""
    return dealer.play(build_schedule(replace(cfg, deals=deals)))


def default_design() -> tuple[int, bool, bool, int]:
    try:
        cfg = default_config()
    except ConfigError:  # the bots are not installed as entry points: nothing to compare with
        return DEFAULT
    return cfg.schedule.budget, cfg.schedule.until_settled, cfg.duplicate, cfg.schedule.round_deals


def judge_trueskill(results: Sequence[Result]) -> Event:
    """Today's leaderboard: TrueSkill in schedule order, ranked by mu - 3 sigma, P from mu and sigma."""
    book = RatingBook(True)
    for r in results:
        book.apply(r.seats, r.ranks)
    ratings = book.bots()
    order = tuple(sorted(ratings, key=lambda k: (-ratings[k].conservative, k)))
    claims = []
    for a, b in zip(order, order[1:]):
        ra, rb = ratings[a], ratings[b]
        p = Phi((ra.mu - rb.mu) / (ra.sigma ** 2 + rb.sigma ** 2) ** 0.5)
        claims.append((a, b, p >= LEVEL))
    return Event(len(results), order, tuple(claims))


def duplicate_effect(pool: dict[Key, list[list[tuple[tuple[str, ...], tuple[int, ...]]]]]) -> str:
    """What duplicates buy on the close pair: the variance of search's wins per duplicate pair
    against that of two matches on unrelated deals.

    The ratio is the design effect: with duplicates an event needs (ratio) times the
    matches of one without, for the same precision on search vs defensive.
    """
    groups = pool[(frozenset({("search", "search"), ("defensive", "defensive")}), 0)]
    wins = [[float(r[0 if s[0] == "search" else 1] == 0) for s, r in g] for g in groups]
    p = statistics.fmean(w for g in wins for w in g)
    paired = statistics.pvariance([sum(g) for g in wins])
    apart = 2 * p * (1 - p)
    return (f"What duplicates buy (search vs defensive head to head, {len(groups)} duplicate pairs, search wins "
            f"{p:.3f}): variance of search's wins per duplicate pair {paired:.3f}, against {apart:.3f} for two "
            f"matches on deals of their own (within-pair correlation {paired / apart - 1:+.3f}); duplicates need "
            f"{paired / apart:.2f}x the matches for the same precision ({apart / paired:.2f}x fewer).")


# ---------------------------------------------------------------------- the table

@dataclass(frozen=True, slots=True)
class Row:
    design: str
    size: str
    events: list[Event]

    def cells(self) -> list[str]:
        n = len(self.events)
        full = sum(e.order == TRUTH for e in self.events)
        close = sum(e.order.index("search") < e.order.index("defensive") for e in self.events)
        settled = [e for e in self.events if e.settled]
        right = sum(e.order == TRUTH for e in settled)
        claims = [(a, b) for e in self.events for a, b, s in e.claims if s]
        claims_right = sum(TRUTH.index(a) < TRUTH.index(b) for a, b in claims)
        lo, hi = wilson(full, n)
        return [self.design, self.size, f"{statistics.fmean(e.matches for e in self.events):.0f}",
                f"{full / n:.3f} ({lo:.2f}–{hi:.2f})", f"{close / n:.3f}", f"{len(settled) / n:.3f}",
                f"{right / len(settled):.3f} ({right}/{len(settled)})" if settled else "–",
                f"{claims_right / len(claims):.3f} ({claims_right}/{len(claims)})" if claims else "–"]


HEADERS = ["design", "size", "matches", "P(full order) (95% CI)", "P(search > defensive)", "P(says settled)",
           "right when settled", "settled pair claims right"]


def run(name: str, size: str, events: int, rng: random.Random, one: Callable[[random.Random], Event]) -> Row:
    return Row(name, size, [one(rng) for _ in range(events)])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--events", type=int, default=300, help="bootstrapped events per design and size")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pool", type=Path, default=POOL)
    ap.add_argument("--default-only", action="store_true",
                    help="only the default event's design (adaptive, no duplicates), with and without until-settled")
    args = ap.parse_args(argv)
    pool = load_pool(args.pool)
    start = time.monotonic()
    rng = random.Random(args.seed)
    E = args.events
    pairings, mixed, selfish = config("pairings"), config("pairings", True), config("self")
    # The four-bot pool's rows: ``DEFAULT`` is the design the default event had while it seated these bots
    # (budget 200, rounds of 32, no duplicates); today's default seats three other-sized steps and is
    # measured on its own pool (bench/ranking/default_pool.py).
    rows: list[Row] = []

    def fixed(cfg: EventConfig, deals: int, judge: Callable[[Sequence[Result]], Event]
              ) -> Callable[[random.Random], Event]:
        return lambda r: judge(fixed_results(cfg, deals, Dealer(pool, r)))

    def adaptive(cfg: EventConfig) -> Callable[[random.Random], Event]:
        return lambda r: adaptive_event(cfg, Dealer(pool, r))

    for deals in (4, 16) if not args.default_only else ():
        rows.append(run("pairings + TrueSkill in schedule order (today)", f"{deals} deals", E, rng,
                        fixed(pairings, deals, judge_trueskill)))
    for deals in (4, 16) if not args.default_only else ():
        rows.append(run("pairings + order-free fit", f"{deals} deals", E, rng, fixed(pairings, deals, judge_fit)))
    for deals in (4, 8) if not args.default_only else ():
        rows.append(run("pairings + head-to-head, fit", f"{deals} deals", E, rng, fixed(mixed, deals, judge_fit)))
    if not args.default_only:
        rows.append(run("head-to-head only (self), fit", "16 deals", E, rng, fixed(selfish, 16, judge_fit)))
    # Duplicates or not, at the same number of matches per round (32): a deal of a
    # head-to-head matchup is 2 matches with duplicates and 1 without.
    for dup in (True, False) if not args.default_only else (False,):
        for until in (False, True):
            for budget in (100, 150, 200) if not args.default_only else (200,):
                if until and budget == 100:
                    continue
                cfg = config("pairings", True, dup, mode="adaptive", budget=budget, until_settled=until,
                             round_deals=16 if dup else 32)
                label = ("adaptive pairings + head-to-head" + (", until settled" if until else "")
                         + ("" if dup else ", no duplicates"))
                size = f"budget {budget}" + (" (the four-bot default)" if (budget, until, dup, cfg.schedule.round_deals)
                                             == DEFAULT else "")
                rows.append(run(label, size, E, rng, adaptive(cfg)))
    elapsed = time.monotonic() - start
    units = ", ".join(f"{len(v)}" for v in pool.values())
    print(f"pool {args.pool.name}: groups per unit {units}; {E} events per row; seed {args.seed}; "
          f"{elapsed:.0f} s (machine shared, 2 cores)")
    print("| " + " | ".join(HEADERS) + " |")
    print("|" + "|".join("---" if i < 2 else "---:" for i in range(len(HEADERS))) + "|")
    for row in rows:
        print("| " + " | ".join(row.cells()) + " |")
    print("\nFewest matches with P(full order) >= 0.95, per design:")
    best: dict[str, str] = {}
    for row in rows:
        n = len(row.events)
        if row.design not in best and sum(e.order == TRUTH for e in row.events) / n >= 0.95:
            best[row.design] = f"{statistics.fmean(e.matches for e in row.events):.0f} ({row.size})"
    for design in dict.fromkeys(r.design for r in rows):
        print(f"- {design}: {best.get(design, 'not reached in this grid')}")
    print()
    print(duplicate_effect(pool))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
