"""The figures README.md and docs/tournament.md quote about the default event, reproduced.

    python bench/ranking/claims.py                  # ~1-3 minutes from the cached pool (bench/ranking/data/)
    python bench/ranking/claims.py --events 1000    # tighter intervals

It plays the default event (whatever ``default_config()`` is today: its budget,
duplicates, round size, until-settled) many times from the pool of real
reference-bot matches, through the project's own adaptive planner, fit and verdict
(``bench/common/pool.py`` holds the pool and the dealer; ``bench/ranking/ranking.py`` compares every design), and prints:

- P(full order): how often the default event orders search > defensive > greedy >
  random, with its 95% Wilson interval (README: "orders the four reference bots
  right in about N% of events"), and how often it says settled and is right;
- the round-size comparison of docs/tournament.md (16, 32 and 48 head-to-head deals a
  round at the default budget): P(full order) of each;
- the defaults the README names, as the code has them (``tests/test_readme_claims.py``
  fails when the README and the code disagree).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for src in ("proto", "sdk", "server", "bots"):
    if str(ROOT / src) not in sys.path:
        sys.path.insert(0, str(ROOT / src))
sys.path.insert(0, str(ROOT))  # bench.common, the shared helpers

from bench.common.pool import POOL, TRUTH, Dealer, Event, adaptive_event, load_pool  # noqa: E402

from sevenrocks.server.events.config import EventConfig, default_config  # noqa: E402
from sevenrocks.server.sandbox.sandbox import SandboxSettings  # noqa: E402
from sevenrocks.server.stats.intervals import wilson  # noqa: E402


def events(cfg: EventConfig, n: int, rng: random.Random, pool: dict) -> list[Event]:  # type: ignore[type-arg]
    return [adaptive_event(cfg, Dealer(pool, rng)) for _ in range(n)]


def summary(label: str, evs: list[Event]) -> str:
    n = len(evs)
    full = sum(e.order == TRUTH for e in evs)
    lo, hi = wilson(full, n)
    settled = [e for e in evs if e.settled]
    right = sum(e.order == TRUTH for e in settled)
    return (f"| {label} | {statistics.fmean(e.matches for e in evs):.0f} | {full / n:.3f} ({lo:.2f}–{hi:.2f}) | "
            f"{len(settled) / n:.3f} | " + (f"{right / len(settled):.3f} ({right}/{len(settled)})" if settled else "–")
            + " |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--events", type=int, default=300, help="bootstrapped events per row")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    pool = load_pool(POOL)
    cfg = default_config()
    s = cfg.schedule
    search = cfg.entrant("search")
    print("The defaults the README names, as the code has them:")
    print(f"- entrants: {', '.join(e.name for e in cfg.entrants)}; format {cfg.format}"
          f"{' + head to head' if cfg.head_to_head else ''}")
    print(f"- schedule: {s.mode}, budget {s.budget} matches, rounds of {s.round_deals} deals, "
          f"until settled: {s.until_settled}")
    print(f"- duplicate deals: {cfg.duplicate}; per move {cfg.time.per_move_ms} ms; "
          f"search entrant env {dict(search.env)}")
    print(f"- sandbox: {SandboxSettings().mode}")
    print()
    start = time.monotonic()
    rng = random.Random(args.seed)
    print("| event | matches | P(full order) (95% CI) | P(says settled) | right when settled |")
    print("|---|---:|---:|---:|---:|")
    print(summary(f"the default event (budget {s.budget}, rounds of {s.round_deals})",
                  events(cfg, args.events, rng, pool)), flush=True)
    for deals in (16, 32, 48):
        variant = replace(cfg, schedule=replace(s, round_deals=deals))
        print(summary(f"rounds of {deals} deals (budget {s.budget})", events(variant, args.events, rng, pool)),
              flush=True)
    print(f"\n{args.events} events per row, seed {args.seed}, {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
