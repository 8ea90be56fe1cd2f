"""What a play-off costs as the field grows: 16 to 256 entrants, the same close prize group on top.

Each field has the close prize group of ``bench/ranking/verdict.py`` (top-8 neighbours
56–65% head to head) above a crowd spread like the fit's prior; the event is the
default format (pairings plus head to head, no duplicates), ``top_k = 8``, a main
stage of ``--per-entrant`` matches per entrant, then a play-off of at most
``--playoff`` matches. Matches are drawn from the fit's own model. Per field size it
prints: whether the top 8 settled, the play-off's matches and rounds, the price its
statement gave, and the CPU time of one play-off round (plan and fit) against one
main-stage round, measured in the same run. A play-off round is as large as a
main-stage round (one match per entrant at least), so a large field's play-off
moves in coarse steps; the table shows what that costs.

    python bench/ranking/playoff_scale.py                      # 16, 64, 128 and 256 entrants, one event each
    python bench/ranking/playoff_scale.py --sizes 16,64 --events 3
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[2]
for src in ("proto", "sdk", "server", "bots"):
    if str(ROOT / src) not in sys.path:
        sys.path.insert(0, str(ROOT / src))
sys.path.insert(0, str(ROOT))  # bench.common, the shared helpers

from bench.common.fields import close_field  # noqa: E402

from sevenrocks.server.events.adaptive import AdaptivePlan  # noqa: E402
from sevenrocks.server.events.config import default_config, parse_config  # noqa: E402
from sevenrocks.server.stats.fit import BETA, Phi, Result  # noqa: E402


def event(n: int, per_entrant: int, playoff: int, seed: int) -> dict[str, float]:
    theta, names = close_field(n)
    cfg = parse_config({"event": {"name": "scale", "format": "pairings", "head_to_head": True, "duplicate": False,
                                  "seed": seed},
                        "entrants": [{"name": x, "command": "true"} for x in names]}, "<bench>")
    cfg = replace(cfg, schedule=replace(default_config().schedule, budget=n * per_entrant, top_k=8,
                                        until_settled=False, playoff=playoff, round_deals=n))
    rng = random.Random(seed)
    plan = AdaptivePlan(cfg)
    results: list[Result] = []
    main_cpu: list[float] = []
    po_cpu: list[float] = []
    tasks = plan.first_round()
    while tasks:
        for t in tasks:
            s = t.seats
            won = rng.random() < Phi((theta[s[0]] + theta[s[2]] - theta[s[1]] - theta[s[3]]) / (2 * BETA))
            results.append(Result(s, (0, 1) if won else (1, 0), t.group))
        before, t0 = plan.playoff, time.process_time()
        tasks = plan.next_round(results)
        (po_cpu if before is not None else main_cpu).append(time.process_time() - t0)
    said = plan.playoff
    played = 0 if said is None else len(results) - said.main
    return {"settled": float(plan.last is not None and plan.last.top_settled), "played": played,
            "rounds": len(po_cpu), "likely": 0 if said is None else said.likely,
            "contenders": 0 if said is None else len(said.contenders),
            "main_ms": 1000 * statistics.median(main_cpu), "po_ms": 1000 * statistics.median(po_cpu) if po_cpu else 0.0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--sizes", default="16,64,128,256")
    ap.add_argument("--per-entrant", type=int, default=80, help="main-stage matches per entrant")
    ap.add_argument("--playoff", type=int, default=20000)
    ap.add_argument("--events", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    start = time.process_time()
    print(f"seed {args.seed}; {args.events} event(s) per size, {args.per_entrant} main-stage matches per entrant, "
          f"play-off at most {args.playoff}; medians over events")
    print("| entrants | top 8 settled | contenders | play-off matches | play-off rounds | stated likely | "
          "main-stage round: plan+fit ms (CPU) | play-off round: plan+fit ms (CPU) | ratio |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in (int(x) for x in args.sizes.split(",")):
        got = [event(n, args.per_entrant, args.playoff, args.seed + i) for i in range(args.events)]

        def med(k: str) -> float:
            return statistics.median(g[k] for g in got)

        print(f"| {n} | {sum(g['settled'] for g in got):.0f}/{len(got)} | {med('contenders'):.0f} | "
              f"{med('played'):.0f} | {med('rounds'):.0f} | {med('likely'):.0f} | {med('main_ms'):.0f} | "
              f"{med('po_ms'):.0f} | {med('po_ms') / med('main_ms'):.2f} |", flush=True)
    print(f"{time.process_time() - start:.0f} s CPU (shared 2-core machine)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
