"""What "A is ahead of B" costs: head-to-head matches until the verdict settles a close pair, against a one-look test.

One pair, two entrants, the product's own verdict: :func:`judge_field` of a
two-entrant ``self`` event (A+A against B+B; the fit's always-valid confidence
sequence averaged with the pair's head-to-head record, weight ``FIT_WEIGHT`` on
the fit). The pair plays tables of two matches (both seat orders, separate
deals); A wins each match with probability p, whatever the seat. The verdict is
read after every look of ``--look`` matches (8: an adaptive round's deals, as the
planner plays them) and the looks are kept as the planner keeps them, so the first
look that says "A ahead" is when the pair settled.

The baseline is the one-look test of the same claim at the same level: the
verdict's interval is two-sided (a 95% interval that lies above 0, with "B ahead"
just as claimable), so the matching test is the two-sided binomial test at α 0.05
(normal approximation), with the n that gives it 80% power at p; the one-sided n
is printed beside it. ``ratio`` is the median matches to settle over that n.

``--field-events`` also runs the pair inside the default event's design (four
entrants, pairings plus head to head, the adaptive planner with ``until_settled``;
the middle two 53/47 head to head, 76/24 gaps to the outer two, results from the
fit's own model) and prints what share of the event's matches were the close
pair's head-to-head matches when the event settled.

Knobs (``--rho``, ``--fit-weight``, ``--look``) replace the product's values in this
process only, to see which one moves the cost; the defaults are the product's. Every
pair and event has its own seeded stream of results, so two runs with different knobs
judge the same matches (a paired comparison). What a knob costs elsewhere:
``--default-events`` bootstraps the default event (three reference bots, lopsided
pairs) from the pool of their real matches, and ``--league`` judges league-like fields
of nine (partnership tables, every pair in the family) and prints how wide the places are.

    python bench/ranking/settle_cost.py --events 100              # docs/tournament.md's table, ~5 CPU minutes
    python bench/ranking/settle_cost.py --events 100 --rho 2      # the same pairs under another ρ
    python bench/ranking/settle_cost.py --events 0 --default-events 400 --league 100 --rho 2
    python bench/ranking/settle_cost.py --events 0 --field-events 20     # the close pair's share of an event
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Sequence

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[2]
for src in ("proto", "sdk", "server", "bots"):
    if str(ROOT / src) not in sys.path:
        sys.path.insert(0, str(ROOT / src))
sys.path.insert(0, str(ROOT))  # bench.common, the shared helpers


from bench.common.pool import DEFAULT_POOL, Dealer, default_event, load_pool, truth  # noqa: E402
from bench.common.settle import LEVEL, fixed_n, pair_rng, row  # noqa: E402

from sevenrocks.server.events.adaptive import AdaptivePlan  # noqa: E402
from sevenrocks.server.events.config import default_config, parse_config  # noqa: E402
from sevenrocks.server.stats import verdict as verdict_module  # noqa: E402
from sevenrocks.server.stats.fit import BETA, Phi, Result, fit  # noqa: E402
from sevenrocks.server.stats.verdict import margin_of_win_rate, verdict  # noqa: E402



def field_event(p: float, rng: random.Random, seed: int, budget: int) -> tuple[int, int, bool]:
    """One default-design event of four with the middle pair at ``p``, planned until settled:
    (matches, of them the close pair's head to head, settled within ``budget``)."""
    gap = margin_of_win_rate(p)
    theta = {"top": 3.0 + gap, "mid1": gap, "mid2": 0.0, "low": -3.0}
    base = default_config()
    c = parse_config({"event": {"name": "settle", "format": "pairings", "head_to_head": True, "duplicate": False,
                                "seed": seed},
                      "entrants": [{"name": n, "command": "true"} for n in theta]}, "<bench>")
    c = replace(c, schedule=replace(base.schedule, budget=budget, until_settled=True))
    plan = AdaptivePlan(c)
    results: list[Result] = []
    tasks = plan.first_round()
    while tasks:
        for t in tasks:
            s = t.seats
            won = rng.random() < Phi((theta[s[0]] + theta[s[2]] - theta[s[1]] - theta[s[3]]) / (2 * BETA))
            results.append(Result(s, (0, 1) if won else (1, 0), t.group))
        tasks = plan.next_round(results)
    pair = sum(1 for r in results if r.seats[0] == r.seats[2] and {r.seats[0], r.seats[1]} == {"mid1", "mid2"})
    settled = plan.last is not None and plan.last.decided
    return len(results), pair, settled


def default_cost(events: int, seed: int) -> tuple[float, float]:
    """What a different knob costs the default event (``sevenrocks tournament``, three reference bots
    whose pairs are lopsided): its mean matches and P(every neighbour pair settled), bootstrapped from
    the pool of their real matches as ``bench/ranking/default_pool.py bench`` does (its first row)."""
    pool = load_pool(DEFAULT_POOL)
    order = truth(pool)
    rng = random.Random(seed)
    evs = [default_event(default_config(), Dealer(pool, rng), order) for _ in range(events)]
    return statistics.fmean(e.matches for e in evs), sum(e.settled for e in evs) / events


def league_places(events: int, seed: int, matches: int = 735, n: int = 9, gap: float = 3.0) -> tuple[float, float]:
    """What a different knob costs a league's places: nine entrants 3 rating points apart (76/24 head to
    head between neighbours) at random tables of four, 735 matches from the fit's model, judged once with
    every pair in the family. (Mean width of a place interval, P(every true place inside its interval))."""
    names = [f"b{i}" for i in range(n)]
    theta = {x: gap * (n - 1 - i) for i, x in enumerate(names)}
    widths, inside = [], 0
    for k in range(events):
        rng = pair_rng(seed, "league", k)
        res = []
        for g in range(matches):
            a, b, c, d = rng.sample(names, 4)
            won = rng.random() < Phi((theta[a] + theta[c] - theta[b] - theta[d]) / (2 * BETA))
            res.append(Result((a, b, c, d), (0, 1) if won else (1, 0), f"g{g}"))
        v = verdict(fit(res, True, names), LEVEL)  # in the fit's order, as the leaderboard ranks them
        widths.append(statistics.fmean(w - b + 1 for b, w in v.places))
        inside += all(b <= names.index(x) + 1 <= w for x, (b, w) in zip(v.order, v.places))
    return statistics.fmean(widths), inside / events


def knobs(rho: float | None, fit_weight: float | None) -> str:
    """Set the verdict's ρ and fit weight in this process (None: the product's); what they are now."""
    if rho is not None:
        verdict_module.RHO = rho
        verdict_module.half_width.__defaults__ = (LEVEL, rho)
    if fit_weight is not None:
        verdict_module.FIT_WEIGHT = fit_weight
    return f"RHO {verdict_module.RHO:g}, FIT_WEIGHT {verdict_module.FIT_WEIGHT:g}"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--events", type=int, default=40, help="simulated pairs per p")
    ap.add_argument("--p", type=float, nargs="+", default=[0.53, 0.56, 0.60, 0.70],
                    help="A's true win rate against B (close pairs and lopsided: the cost curve)")
    ap.add_argument("--look", type=int, default=8, help="matches between looks (even: whole tables)")
    ap.add_argument("--cap", type=float, default=3.0, help="stop a pair at cap x the one-look n")
    ap.add_argument("--rho", type=float, default=None, help="the verdict's RHO (default: the product's)")
    ap.add_argument("--fit-weight", type=float, default=None, help="the verdict's FIT_WEIGHT (default: the product's)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--field-events", type=int, default=0, help="default-design events of four (53/47 middle pair)")
    ap.add_argument("--field-budget", type=int, default=8000, help="matches an event of four may play")
    ap.add_argument("--default-events", type=int, default=0,
                    help="default events bootstrapped from the pool of real matches (what the knob costs it)")
    ap.add_argument("--league", type=int, default=0, help="league-like fields of nine (what the knob costs places)")
    ap.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = ap.parse_args(argv)
    if args.fit_weight is not None and not 0 < args.fit_weight < 1:
        ap.error(f"--fit-weight is the fit's share of an average with the record, in (0, 1); got {args.fit_weight}")
    if args.look < 2 or args.look % 2:
        ap.error(f"--look counts whole tables of two matches: an even number >= 2, got {args.look}")
    setting = knobs(args.rho, args.fit_weight)
    load = os.getloadavg()[0]
    t0, w0 = time.process_time(), time.monotonic()
    rows = [row(p, args.events, args.look, args.cap, args.seed) for p in args.p] if args.events else []
    print(f"{setting}, a look every {args.look} matches, level {LEVEL}, {args.events} pairs per p (cap {args.cap:g} n); "
          f"{time.process_time() - t0:.0f} s CPU, {time.monotonic() - w0:.0f} s wall, "
          f"load {load:.1f} -> {os.getloadavg()[0]:.1f} (shared 2-core machine)")
    if rows:  # (--events 0: the field events alone)
        print("| p | one-look n (two-sided; one-sided) | median to settle | P(settled by n) | P(settled by 1.5n) "
              "| never (cap) | ratio median / n | CPU s |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            med = "–" if r["median"] is None else f"{r['median']:.0f}"
            ratio = "> cap" if r["ratio"] is None else f"{r['ratio']:.2f}"
            print(f"| {r['p']:.2f} | {r['n_two_sided']} ({r['n_one_sided']}) | {med} | {r['by_n']:.2f} | "
                  f"{r['by_1_5n']:.2f} | {r['never']} ({r['limit']}) | {ratio} | {r['cpu_s']:.0f} |")
        print("n: a one-look two-sided binomial test at 0.05 with 80% power at p (exact power at n: "
              + ", ".join(f"{r['exact_power']:.2f}" for r in rows) + "). Matches are the pair's head-to-head matches.")
    field = []
    if args.field_events:
        t1 = time.process_time()
        field = [field_event(0.53, pair_rng(args.seed, "event", i), args.seed + i, args.field_budget)
                 for i in range(args.field_events)]
        done = [(m, k) for m, k, ok in field if ok]
        share = sum(k for _, k in done) / max(1, sum(m for m, _ in done))
        shares = sorted(k / m for m, k in done)
        # An event still open at the budget counts as later than every settled one (as the pair rows do).
        ranked = sorted(m for m, _ in done) + [math.inf] * (len(field) - len(done))
        median = statistics.median(ranked) if ranked else math.inf
        n = fixed_n(0.53)
        print(f"\nDefault design, four entrants, middle pair 53/47, until settled (budget {args.field_budget}), "
              f"{args.field_events} events, {time.process_time() - t1:.0f} s CPU: settled {len(done)}; "
              f"(matches, the pair's head to head, settled) per event: {field}")
        if shares:
            print(f"The pair's share of the settled events' matches: {share:.0%} pooled, per event median "
                  f"{statistics.median(shares):.0%} (range {shares[0]:.0%}–{shares[-1]:.0%}); of all events' matches "
                  f"{sum(k for _, k, _ in field) / sum(m for m, _, _ in field):.0%}")
        print("Event matches to settle: median " + ("> budget" if math.isinf(median) else
              f"{median:.0f} = {median / n:.2f} x the pair's one-look n ({n})"))
        pair_ranked = sorted(k for _, k in done) + [math.inf] * (len(field) - len(done))
        pair_median = statistics.median(pair_ranked) if pair_ranked else math.inf
        if not math.isinf(pair_median):
            print(f"The pair's own head-to-head matches when its event settled: median {pair_median:.0f} "
                  f"= {pair_median / n:.2f} x n")
    default = league = None
    if args.default_events:
        t1 = time.process_time()
        default = default_cost(args.default_events, args.seed)
        print(f"\nThe default event (its three reference bots, from the pool of their real matches), "
              f"{args.default_events} events, seed {args.seed}, {time.process_time() - t1:.0f} s CPU: "
              f"{default[0]:.1f} matches on average, every neighbour pair settled in {default[1]:.3f}")
    if args.league:
        t1 = time.process_time()
        league = league_places(args.league, args.seed)
        print(f"\nLeague-like field (nine entrants 3 points apart, 735 matches at random tables of four), "
              f"{args.league} fields, {time.process_time() - t1:.0f} s CPU: a place interval is "
              f"{league[0]:.2f} places wide on average; every true place inside in {league[1]:.3f}")
    if args.json is not None:
        args.json.write_text(json.dumps({"setting": setting, "look": args.look, "rows": rows,
                                         "field": field, "default": default, "league": league}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
