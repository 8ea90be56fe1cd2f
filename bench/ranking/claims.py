"""The figures README.md and docs/tournament.md quote about the default event, reproduced.

    python bench/ranking/claims.py                  # a few minutes from the cached pool (bench/ranking/data/default_pool.csv)
    python bench/ranking/claims.py --events 1000    # tighter intervals

It prints the defaults the README names, as the code has them, then plays the default
event (whatever ``default_config()`` is today: its field, budget, rounds, until-settled)
many times from the pool of real matches of its own bots (``bench/ranking/default_pool.py``
builds the pool; ``bench/common/pool.py`` plays the events) through the project's own adaptive planner and verdict:
P(order right) and P(every neighbour pair settled), each with its 95% Wilson interval
(README: "it orders them right in N% of events ..., settles every neighbour pair in M%"),
and the same at rounds of 4, 8 and 16 deals. ``tests/test_readme_claims.py`` fails when
the README, the docs and the code disagree.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for src in ("proto", "sdk", "server", "bots"):
    if str(ROOT / src) not in sys.path:
        sys.path.insert(0, str(ROOT / src))
sys.path.insert(0, str(ROOT))  # bench.common, the shared helpers

from bench.common.pool import DEFAULT_POOL as POOL  # noqa: E402
from bench.common.pool import Dealer, default_event, load_pool, summary, truth  # noqa: E402

from sevenrocks.server.events.config import default_config  # noqa: E402
from sevenrocks.server.sandbox.sandbox import SandboxSettings  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--events", type=int, default=300, help="bootstrapped events per row")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    pool = load_pool(POOL)
    order = truth(pool)
    cfg = default_config()
    s = cfg.schedule
    print("The defaults the README names, as the code has them:")
    print(f"- entrants: {', '.join(e.name for e in cfg.entrants)}; format {cfg.format}"
          f"{' + head to head' if cfg.head_to_head else ''}")
    print(f"- schedule: {s.mode}, budget {s.budget} matches, rounds of {s.round_deals} deals, "
          f"until settled: {s.until_settled}")
    print(f"- duplicate deals: {cfg.duplicate}; per move {cfg.time.per_move_ms} ms")
    print(f"- sandbox: {SandboxSettings().mode}")
    print(f"- the pool's own order: {' > '.join(order)}")
    print()
    start = time.monotonic()
    rng = random.Random(args.seed)
    print("| event | matches | P(order right) (95% CI) | P(every neighbour pair settled) (95% CI) | "
          "settled pairs per event | right when settled |")
    print("|---|---:|---:|---:|---:|---:|")
    for deals in dict.fromkeys((s.round_deals, 4, 8, 16)):
        variant = replace(cfg, schedule=replace(s, round_deals=deals))
        label = f"rounds of {deals} deals (budget {s.budget})" + (" (the default event)" if deals == s.round_deals
                                                                  else "")
        print(summary(label, [default_event(variant, Dealer(pool, rng), order) for _ in range(args.events)],
                      order), flush=True)
    print(f"\n{args.events} events per row, seed {args.seed}, {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
