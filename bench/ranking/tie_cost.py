"""What a "tied within δ" claim costs: head-to-head matches between exact twins before the verdict says tied.

The product's own verdict (:func:`judge_field` of a two-entrant ``self`` event with
``tie_within``: the fit, the head-to-head record test and Holm's family of two claims),
looked at every 20 matches (both seat orders of ten tables); and a record split
exactly 50/50 (the first seat always wins, so every table is split), looked at every 10.

    python bench/ranking/tie_cost.py            # 16 events per δ, about 30 s of CPU
    python bench/ranking/tie_cost.py 40
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for src in ("proto", "sdk", "server", "bots"):
    if str(ROOT / src) not in sys.path:
        sys.path.insert(0, str(ROOT / src))

from sevenrocks.server.events.config import EventConfig, parse_config  # noqa: E402
from sevenrocks.server.events.planner import judge_field  # noqa: E402
from sevenrocks.server.stats.fit import Result  # noqa: E402


def cfg(rate: str) -> EventConfig:
    return parse_config({"event": {"name": "t", "format": "self"},
                         "schedule": {"mode": "adaptive", "tie_within": rate},
                         "entrants": [{"name": n, "command": "true"} for n in ("a", "b")]}, "<bench>")


def first_tie(c: EventConfig, rng: random.Random, step: int, limit: int, even: bool = False) -> int | None:
    """Matches at the first look that says "tied" (None: not within ``limit``)."""
    res: list[Result] = []
    t = 0
    while len(res) < limit:
        for _ in range(step // 2):
            for k, seats in enumerate((("a", "b", "a", "b"), ("b", "a", "b", "a"))):
                first = True if even else rng.random() < 0.5
                res.append(Result(seats, (0, 1) if first else (1, 0), f"r{t}t0o{k}"))
            t += 1
        if judge_field(c, ["a", "b"], res)[1].neighbours[0].tied:
            return len(res)
    return None


def main() -> int:
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    for rate in ("55%", "60%"):
        c = cfg(rate)
        t0 = time.process_time()
        even = first_tie(c, random.Random(0), 10, 6000, even=True)
        rng = random.Random(1)
        got = sorted(n for n in (first_tie(c, rng, 20, 6000) for _ in range(events)) if n is not None)
        p90 = statistics.quantiles(got, n=10)[8] if len(got) > 1 else float("nan")
        print(f"δ = {rate}: a 50/50 record tied after {even}; twins ({events} events): median "
              f"{statistics.median(got):.0f}, p90 {p90:.0f}, fewest {got[0]}, never within 6000: {events - len(got)}; "
              f"{time.process_time() - t0:.0f} s CPU", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
