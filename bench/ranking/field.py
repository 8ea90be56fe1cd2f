"""Fields of 16, 64 and 256 entrants: the field planner against uniform random tables, in one run.

Synthetic and in process: every entrant has a known strength θ (a prize group of
nine, 3 rating points apart, above a crowd spread like the fit's prior: the
expected order statistics of N(0, (25/3)²)), and a match is drawn from
the fit's own model (TrueSkill's: side 0 wins with probability Φ(Σθ / 2β)), so
thousands of matches take milliseconds and no dominoes are played. Each field
holds two exact twins (the crowd's median twice) and one close pair (53/47 head
to head, lower in the crowd).

Random tables play until twice the planner's median number of matches to decide
the top 8 (at least the planner's budget), so "decided later than that" reads
"needs more than twice the matches". Both designs play the same format (pairings plus head to head, no duplicates, as
the default event), the same round sizes (3n matches in round 0, then max(32, 2n):
``round_deals = 2n``, fewer fits than the event's default of n) and the same budget, are judged by the
same fit and verdict (level 0.95, ``top_k = 8``), and are read after every round:

- **planner**: :func:`sevenrocks.server.events.planner.plan_round`;
- **random**: every round, tables drawn uniformly at random (half partnership
  tables of four, half head to head), the baseline with no planning at all.

Per field and design it prints: P(top-8 order right) and Kendall's τ of the whole
order at the budget; exposure (min and max matches over the mean); how often the
twins are called settled, and the close pair settled the wrong way round, at the
final look (a fixed budget), at the look where ``--until-settled`` would stop (the
top 8 decided), and at any look at all; matches per entrant until the top 8 is
decided (median; ">" when some events never got there); median planning and fit
CPU time per round (process time: on a shared machine wall time measures the
neighbours); the peak memory of one round's plan and fit (tracemalloc).

    python bench/ranking/field.py                      # a few minutes of CPU (more wall time on a loaded machine)
    python bench/ranking/field.py --events 40          # tighter rates
    python bench/ranking/field.py --fields 16,64 --events 100
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import time
import tracemalloc
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

# One BLAS thread: on a loaded 2-core machine threaded BLAS made each fit 4x slower (measured).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[2]
for src in ("proto", "sdk", "server", "bots"):
    if str(ROOT / src) not in sys.path:
        sys.path.insert(0, str(ROOT / src))

from scipy import stats  # noqa: E402

from sevenrocks.server.events.config import EventConfig, parse_config  # noqa: E402
from sevenrocks.server.events.planner import judge_field, plan_round, tasks_of, Table  # noqa: E402
from sevenrocks.server.events.schedule import MatchTask  # noqa: E402
from sevenrocks.server.stats.fit import BETA, SIGMA0, Phi, Result  # noqa: E402
from sevenrocks.server.stats.verdict import Verdict  # noqa: E402

TOP = 8
#: The prize group: the strongest at PRIZE, each next one GAP below (Φ(3/β) = 76% head to head).
PRIZE, GAP = 20.0, 3.0
CLOSE = BETA * float(stats.norm.ppf(0.53))  # θ gap of a 53/47 head-to-head pair
Planner = Callable[[EventConfig, list[str], list[Result], int, int, Verdict | None], list[MatchTask]]


def field_of(n: int) -> dict[str, float]:
    """Known strengths: a prize group of nine, 3 points apart (76/24 head to head), above a crowd
    spread like the fit's prior (normal order statistics, sd 25/3) with the crowd's median twice
    and a 53/47 pair lower down."""
    top = {f"b{i:03d}": PRIZE - GAP * i for i in range(TOP + 1)}
    crowd = [SIGMA0 * float(stats.norm.ppf((n - i - 0.5) / n)) for i in range(TOP + 1, n)]
    shift = crowd[0] - (PRIZE - GAP * (TOP + 1))
    theta = {**top, **{f"b{i:03d}": q - shift for i, q in zip(range(TOP + 1, n), crowd)}}
    mid, quart = special(n)
    theta[f"b{mid + 1:03d}"] = theta[f"b{mid:03d}"]
    theta[f"b{quart + 1:03d}"] = theta[f"b{quart:03d}"] - CLOSE
    return theta


def special(n: int) -> tuple[int, int]:
    """Where the twins and the close pair sit: the crowd's median and the middle of its lower half."""
    mid = (TOP + 1 + n) // 2
    return mid, mid + (n - mid) // 2


def config_of(n: int, seed: int, budget: int) -> EventConfig:
    return parse_config({"event": {"name": "field", "format": "pairings", "head_to_head": True,
                                   "duplicate": False, "seed": seed},
                         "schedule": {"mode": "adaptive", "budget": budget, "top_k": TOP},
                         "entrants": [{"name": f"b{i:03d}", "command": "true"} for i in range(n)]}, "<bench>")


def planner(cfg: EventConfig, names: list[str], results: list[Result], r: int, size: int,
            judged: Verdict | None) -> list[MatchTask]:
    return plan_round(cfg, names, results, r, size, judged=judged)


def uniform(cfg: EventConfig, names: list[str], results: list[Result], r: int, size: int,
            judged: Verdict | None) -> list[MatchTask]:
    """Tables drawn uniformly at random: half partnership tables of four, half head to head."""
    rng = random.Random(cfg.seed * 1_000_003 + r)
    tables: list[Table] = []
    planned = 0
    while planned + 2 <= size:
        if rng.random() < 0.5:
            a, b, c, d = rng.sample(names, 4)
            tables.append(Table("pairs", ((a, b), (c, d))))
        else:
            a, b = rng.sample(names, 2)
            tables.append(Table("h2h", ((a, a), (b, b))))
        planned += 2
    return tasks_of(cfg, tables, r, len(results))


def play(task: MatchTask, theta: dict[str, float], rng: random.Random) -> Result:
    s = task.seats
    won = rng.random() < Phi((theta[s[0]] + theta[s[2]] - theta[s[1]] - theta[s[3]]) / (2 * BETA))
    return Result(s, (0, 1) if won else (1, 0), task.group)


def wrong(v: Verdict, a: str, b: str, truth: dict[str, float]) -> bool:
    """A settled claim between ``a`` and ``b`` that the truth contradicts (for twins: any claim)."""
    for nb in v.neighbours:
        if {nb.upper, nb.lower} == {a, b} and nb.settled:
            return not truth[nb.upper] > truth[nb.lower]
    return False


@dataclass
class Event:
    top_right: bool = False
    tau: float = math.nan
    exposure: tuple[float, float] = (1.0, 1.0)
    #: (final look, the look --until-settled stops at, any look) for the twins and the close pair.
    twins: list[bool] = field(default_factory=lambda: [False, False, False])
    close: list[bool] = field(default_factory=lambda: [False, False, False])
    settle_per_entrant: float = math.inf
    plan_s: list[float] = field(default_factory=list)
    fit_s: list[float] = field(default_factory=list)


def run_event(n: int, seed: int, budget: int, size: int, design: Planner) -> Event:
    theta = field_of(n)
    names = sorted(theta)
    m, q = special(n)
    twins, close = (f"b{m:03d}", f"b{m + 1:03d}"), (f"b{q:03d}", f"b{q + 1:03d}")
    cfg = config_of(n, seed, budget)
    rng = random.Random(seed)
    results: list[Result] = []
    ev = Event()
    judged: Verdict | None = None
    r = 0
    while len(results) < budget:
        # CPU time of this process: on a shared machine wall time measures the neighbours.
        t0 = time.process_time()
        tasks = design(cfg, names, results, r, size if r else 3 * n, judged)[:budget - len(results)]
        ev.plan_s.append(time.process_time() - t0)
        results += [play(t, theta, rng) for t in tasks]
        t0 = time.process_time()
        _, judged = judge_field(cfg, names, results)
        ev.fit_s.append(time.process_time() - t0)
        for flags, (a, b) in ((ev.twins, twins), (ev.close, close)):
            flags[2] = flags[2] or wrong(judged, a, b, theta)
        if judged.decided and math.isinf(ev.settle_per_entrant):
            ev.settle_per_entrant = len(results) / n
            ev.twins[1], ev.close[1] = wrong(judged, *twins, theta), wrong(judged, *close, theta)
        r += 1
    assert judged is not None
    ev.twins[0], ev.close[0] = wrong(judged, *twins, theta), wrong(judged, *close, theta)
    if math.isinf(ev.settle_per_entrant):  # never decided: --until-settled ran to the budget
        ev.twins[1], ev.close[1] = ev.twins[0], ev.close[0]
    truth = sorted(names, key=lambda x: -theta[x])
    ev.top_right = list(judged.order[:TOP]) == truth[:TOP]
    rank = {x: i for i, x in enumerate(judged.order)}
    ev.tau = float(stats.kendalltau([theta[x] for x in names], [-rank[x] for x in names]).statistic)
    count = Counter(x for res in results for x in set(res.seats))
    mean = sum(count[x] for x in names) / n
    ev.exposure = (min(count[x] for x in names) / mean, max(count[x] for x in names) / mean)
    return ev


def peak_mib(n: int, budget: int, size: int, design: Planner) -> float:
    """Peak traced memory of planning and fitting one round late in an event (results from a quick run)."""
    theta = field_of(n)
    names = sorted(theta)
    cfg = config_of(n, 99, budget)
    rng = random.Random(99)
    results: list[Result] = []
    r, judged = 0, None
    while len(results) < budget // 2:
        results += [play(t, theta, rng) for t in design(cfg, names, results, r, size if r else 3 * n, judged)]
        _, judged = judge_field(cfg, names, results)
        r += 1
    tracemalloc.start()
    design(cfg, names, results, r, size, judged)
    judge_field(cfg, names, results)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def rate(flags: Sequence[bool]) -> str:
    return f"{sum(flags)}/{len(flags)}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--events", type=int, default=0,
                    help="events per field and design (default: 10 for 16 entrants, 2 for 64, 1 for 256)")
    ap.add_argument("--fields", default="16,64,256")
    ap.add_argument("--per-entrant", type=int, default=0,
                    help="the planner's budget in matches per entrant (default: 40 for 16 and 64, 8 for 256); "
                         "random tables get twice the planner's median to decide the top 8")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    start = time.monotonic()
    rows = []
    for n in (int(x) for x in args.fields.split(",")):
        per = args.per_entrant or {16: 40, 64: 40, 256: 8}.get(n, 40)
        size = max(32, 2 * n)
        events = args.events or {16: 10, 64: 2, 256: 1}.get(n, 3)
        # Random tables get twice the planner's median matches to decide the top 8 (at least the
        # planner's budget): deciding later than that means they need more than twice as many.
        median = math.inf
        for label, design in (("planner", planner), ("random tables", uniform)):
            if design is uniform:
                per = max(per, min(2 * per, math.ceil(2 * median))) if not math.isinf(median) else 2 * per
            budget = per * n
            evs = [run_event(n, args.seed * 10_000 + e, budget, size, design) for e in range(events)]
            settle = sorted(e.settle_per_entrant for e in evs)
            median = statistics.median(settle)
            never = sum(math.isinf(x) for x in settle)
            rows.append([
                f"{n}", label, f"{budget} ({per}/entrant)", f"{events}",
                f"{sum(e.top_right for e in evs) / events:.2f}",
                f"{statistics.median(e.tau for e in evs):.3f}",
                f"{min(e.exposure[0] for e in evs):.2f}–{max(e.exposure[1] for e in evs):.2f}",
                " / ".join(rate([e.twins[i] for e in evs]) for i in range(3)),
                " / ".join(rate([e.close[i] for e in evs]) for i in range(3)),
                (f"> {per}" if math.isinf(median) else f"{median:.1f}") + (f" ({never} never)" if never else ""),
                f"{1000 * statistics.median(s for e in evs for s in e.plan_s[1:]):.0f}",
                f"{1000 * statistics.median(s for e in evs for s in e.fit_s):.0f}",
                f"{peak_mib(n, min(budget, 16 * n), size, design):.1f}",
            ])
            print(f"  {n} {label}: {time.monotonic() - start:.0f} s: | " + " | ".join(rows[-1]) + " |",
                  file=sys.stderr, flush=True)
    headers = ["field", "design", "budget (matches)", "events", "P(top-8 order right)", "Kendall τ (median)",
               "exposure min–max / mean", "twins settled: final / at stop / any look",
               "53/47 pair settled wrong: final / at stop / any look", "matches per entrant to decide the top 8 (median)",
               "plan ms / round (CPU)", "fit ms / round (CPU)", "peak MiB (plan + fit)"]
    print(f"seed {args.seed}; {time.monotonic() - start:.0f} s on this machine; level 0.95, top_k {TOP}; "
          f"rounds of max(32, 2n) matches after a round 0 of 3n")
    print("| " + " | ".join(headers) + " |")
    print("|" + "|".join("---" if i < 2 else "---:" for i in range(len(headers))) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
