"""Can the verdict be trusted at every margin? Five truths, one run, the product's own planner and verdict.

Every event is run by :class:`AdaptivePlan` (the planner and the verdict the
tournament uses) and judged after every round by :func:`judge_field` (what
``--until-settled`` reads), so "at any look" means at any round boundary:

- **default event**: the four reference bots, matches drawn from the pool of real
  matches (``bench/ranking/data/ranking_pool.csv``, as ``bench/ranking/ranking.py``); truth search >
  defensive > greedy > random (greedy won all of the pool's head-to-head matches
  against random: the one-sided pair of the real field);
- **exact twins**: four entrants, the middle two of equal strength, matches drawn
  from the fit's own model with the first seat winning 5 points more often (a
  seat's edge the model does not know); any "ahead" between the twins is false;
- **53/47 pair**: the middle two 53/47 head to head; "ahead" the wrong way is false;
- **one-sided pair**: the middle two, the upper winning every head-to-head match;
- **64 entrants, close top places**: top-8 neighbours 56–65% head to head above a
  crowd, ``top_k = 8``; the claim is the top 8's order.

- **close pairs head to head** (a separate table): matches until a 53/47 and a 56/44
  pair settle, against the n of a one-look test at the same level with 80% power
  (``bench/common/settle.py``, as ``bench/ranking/settle_cost.py``);
- **the 64 field with a play-off** (a separate table): the same events with
  ``[schedule].playoff``: P(top 8 settled), the play-off's matches, and its stated price;
- **nine entrants, league-like** (a separate table): μ from 36.8 to 18.9 with two
  close pairs, 735 matches; the place intervals every pair's claims allow (their
  widths, and P(every true place inside its interval)), against neighbour pairs only.

Per truth: P(order right) at the budget (the whole order; the top 8 for the 64
field), P(says settled) at the budget (every pair that matters "ahead"), false
claims at any look (events with a wrong "ahead" at some round boundary), and
matches to settle (median of the first look that says settled, over the events
that got there; how many never did), and flickers: events in which a pair claimed at
one look was no longer claimed at a later one, with the looks kept as the product
keeps them, and (in brackets) had each look been judged afresh.

    python bench/ranking/verdict.py                     # ~5 minutes of CPU (far more wall time on a loaded machine)
    python bench/ranking/verdict.py --events 20 --field-events 2 --league-events 50    # the places and flickers docs/tournament.md quotes
    python bench/ranking/verdict.py --events 20 --field-events 20 --league-events 50 --field-per-entrant 160   # every
        # figure docs/tournament.md quotes from it, in one run: places, close pairs, the play-off, flickers
    python bench/ranking/verdict.py --events 400 --field-events 20 --long 600 --field-per-entrant 160
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Sequence

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[2]
for src in ("proto", "sdk", "server", "bots"):
    if str(ROOT / src) not in sys.path:
        sys.path.insert(0, str(ROOT / src))
sys.path.insert(0, str(ROOT))  # bench.common, the shared helpers

from bench.common.pool import POOL, TRUTH, Dealer, config as ranking_config, load_pool  # noqa: E402
from bench.common.fields import close_field  # noqa: E402
from bench.common.settle import row as settle_row  # noqa: E402

from sevenrocks.server.events.adaptive import AdaptivePlan  # noqa: E402
from sevenrocks.server.events.config import EventConfig, default_config, parse_config  # noqa: E402
from sevenrocks.server.events.planner import judge_field  # noqa: E402
from sevenrocks.server.events.schedule import MatchTask  # noqa: E402
from sevenrocks.server.stats.fit import BETA, Phi, Result  # noqa: E402
from sevenrocks.server.stats.intervals import wilson  # noqa: E402
from sevenrocks.server.stats.verdict import Verdict, margin_of_win_rate  # noqa: E402

#: The first seat's edge in the synthetic fields (P(first seat wins) − P(second) between equals = 0.10).
SEAT_EDGE = 0.05
Play = Callable[[Sequence[MatchTask]], list[Result]]


@dataclass(frozen=True, slots=True)
class Event:
    right: bool
    settled: bool
    false_claim: bool
    #: Matches at the first look that said settled (None: never within the budget).
    settled_at: int | None
    #: A claim made at one look was gone at a later one: as the product judges (looks kept), and afresh.
    flicker: bool = False
    flicker_fresh: bool = False
    #: The play-off (``[schedule].playoff``): matches it played, and what it said it would likely take (None: none).
    playoff_played: int | None = None
    playoff_likely: int | None = None
    playoff_capped: bool = False
    #: The main stage's matches, and the CPU seconds the event took to simulate.
    main: int = 0
    cpu: float = 0.0


def run(cfg: EventConfig, play: Play, truth: Sequence[str], top: int | None,
        twins: frozenset[str] = frozenset()) -> Event:
    """One adaptive event to its budget (and its play-off, if it has one), judged after every round."""
    cpu0 = time.process_time()
    plan = AdaptivePlan(cfg)
    names = plan.names
    results: list[Result] = []
    false_claim, settled_at = False, None
    v: Verdict | None = None
    claimed: set[tuple[str, str]] = set()
    fresh_claimed: set[tuple[str, str]] = set()
    flicker = flicker_fresh = False
    tasks = plan.first_round()
    while tasks:
        results.extend(play(tasks))
        plan.last = None
        tasks = plan.next_round(results)  # judges the results so far (unless the budget is spent)
        v = plan.last if plan.last is not None else judge_field(cfg, names, results, plan.looks)[1]
        false_claim = false_claim or wrong_claim(v, truth, twins)
        if settled_at is None and v.top_settled:
            settled_at = len(results)
        flicker = flicker or not claimed <= v.ahead
        claimed |= v.ahead
        if flickers_fresh:
            fresh = judge_field(cfg, names, results)[1].ahead
            flicker_fresh = flicker_fresh or not fresh_claimed <= fresh
            fresh_claimed |= fresh
    assert v is not None
    k = len(truth) if top is None else top
    said = plan.playoff
    main = len(results) if said is None else said.main
    return Event(list(v.order[:k]) == list(truth[:k]), v.top_settled, false_claim, settled_at, flicker, flicker_fresh,
                 None if said is None else len(results) - said.main, None if said is None else said.likely,
                 bool(said and said.capped), main, time.process_time() - cpu0)


#: Also judge every look afresh (no looks kept), to count the flickers the looks prevent (costs a verdict a look).
flickers_fresh = True


def wrong_claim(v: Verdict, truth: Sequence[str], twins: frozenset[str]) -> bool:
    """Some neighbour pair claimed "ahead" the wrong way, or at all between the exact ``twins``."""
    rank = {n: i for i, n in enumerate(truth)}
    return any(n.settled and (rank[n.upper] > rank[n.lower] or {n.upper, n.lower} == twins) for n in v.neighbours)


def synthetic_config(names: Sequence[str], budget: int, top_k: int = 0, seed: int = 1) -> EventConfig:
    """The default event's format (pairings plus head to head, no duplicates) for synthetic entrants."""
    base = default_config()
    cfg = parse_config({"event": {"name": "bench", "format": "pairings", "head_to_head": True, "duplicate": False,
                                  "seed": seed},
                        "entrants": [{"name": n, "command": "true"} for n in names]}, "<bench>")
    return replace(cfg, schedule=replace(base.schedule, budget=budget, top_k=top_k, until_settled=False))


def model_play(theta: dict[str, float], rng: random.Random, always: tuple[str, str] | None = None) -> Play:
    """Results from the fit's own model, the first seat SEAT_EDGE more likely to win between equals;
    ``always`` = (winner, loser): that pair's head-to-head matches are always won by the first."""
    def one(t: MatchTask) -> Result:
        s = t.seats
        d = theta[s[0]] + theta[s[2]] - theta[s[1]] - theta[s[3]]
        p = Phi(d / (2 * BETA))
        p = min(1.0, max(0.0, p + SEAT_EDGE * 4 * p * (1 - p)))
        if always is not None and s[0] == s[2] and s[1] == s[3] and {s[0], s[1]} == set(always):
            p = 1.0 if s[0] == always[0] else 0.0
        won = rng.random() < p
        return Result(s, (0, 1) if won else (1, 0), t.group)
    return lambda tasks: [one(t) for t in tasks]


def four(middle_gap: float) -> dict[str, float]:
    """A field of four: the middle pair ``middle_gap`` apart, 76/24 gaps to the outer two."""
    return {"top": 3.0 + middle_gap, "twin1": middle_gap, "twin2": 0.0, "low": -3.0}


def field64() -> tuple[dict[str, float], list[str]]:
    """64 entrants: top-8 neighbours 65%, 62%, 60%, 58%, 57%, 56%, 56%, 56% head to head, then a crowd."""
    return close_field(64)


def summary(name: str, size: str, events: list[Event]) -> list[str]:
    print(f"... {name}: done at {time.process_time():.0f} s CPU", file=sys.stderr, flush=True)
    n = len(events)
    if not n:  # a row not run (--field-events 0)
        return [name, size, "0"] + ["–"] * 5
    right = sum(e.right for e in events)
    settled = sum(e.settled for e in events)
    false = sum(e.false_claim for e in events)
    at = [e.settled_at for e in events if e.settled_at is not None]
    lo, hi = wilson(right, n)
    flo, fhi = wilson(false, n)
    median = f"{statistics.median(at):.0f}" if at else "–"
    flickers = f"{sum(e.flicker for e in events)} ({sum(e.flicker_fresh for e in events)} afresh)"
    return [name, size, str(n), f"{right / n:.3f} ({lo:.2f}–{hi:.2f})", f"{settled / n:.3f}",
            f"{false}/{n} = {false / n:.3f} (≤ {fhi:.3f})", f"{median} ({n - len(at)} never)", flickers]


HEADERS = ["truth", "event", "events", "P(order right) (95% CI)", "P(says settled)",
           "false claims at any look (95% upper)", "matches to settle: median (never)",
           "flickers (judged afresh)"]


def pair_table(rows: list[dict[str, Any]]) -> list[str]:
    """Head-to-head matches until the verdict settles a close pair, against the one-look test's n (as
    ``bench/ranking/settle_cost.py``, whose ``--events`` with the same seed gives the same pairs)."""
    out = [f"\nMatches to settle a close pair head to head (a look every 8 matches, {rows[0]['events']} pairs per p), "
           "against a one-look two-sided binomial test at 0.05 with 80% power:",
           "| p | one-look n | median to settle | ratio median / n | P(settled by n) | P(settled by 1.5n) | never (cap) |",
           "|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        med = "–" if r["median"] is None else f"{r['median']:.0f}"
        ratio = "–" if r["ratio"] is None else f"{r['ratio']:.2f}"
        out.append(f"| {r['p']:.2f} | {r['n_two_sided']} | {med} | {ratio} | {r['by_n']:.2f} | {r['by_1_5n']:.2f} | "
                   f"{r['never']} ({r['limit']}) |")
    return out


def playoff_table(field_rows: list[tuple[str, int, list[Event]]]) -> list[str]:
    """The 64 field's top 8 with and without a play-off: settled, right, and what the play-off cost and said."""
    out = ["\nThe 64 field's top 8, the same events without and with a play-off (its likely cost stated before it "
           "began, read off the fit's gaps):",
           "| design | events | P(top 8 settled) (95% CI) | P(top 8 right) | main-stage matches | play-off matches: "
           "median (max) | stated likely: median (capped) | played / stated (median) | CPU s per event |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for label, playoff, events in field_rows:
        n = len(events)
        k = sum(e.settled for e in events)
        lo, hi = wilson(k, n)
        played = [e.playoff_played or 0 for e in events] if playoff else []
        likely = [e.playoff_likely for e in events if e.playoff_likely is not None]
        ratio = [e.playoff_played / e.playoff_likely for e in events
                 if e.playoff_played is not None and e.playoff_likely]
        out.append(f"| {label} | {n} | {k / n:.2f} ({lo:.2f}–{hi:.2f}) | {sum(e.right for e in events) / n:.2f} | "
                   f"{statistics.median(e.main for e in events):.0f} | "
                   + (f"{statistics.median(played):.0f} ({max(played)}) | " if played else "– | ")
                   + (f"{statistics.median(likely):.0f} ({sum(e.playoff_capped for e in events)}) | " if likely else "– | ")
                   + (f"{statistics.median(ratio):.2f} | " if ratio else "– | ")
                   + f"{statistics.median(e.cpu for e in events):.0f} |")
    out.append("Play-off matches: every match after the main stage (its budget), among the contenders only. Events "
               "that settled in the main stage play none (counted as 0). Capped: the statement said the open pairs "
               "likely need more than the play-off's budget.")
    return out


#: The league-like field: nine entrants from μ 36.8 to 18.9 (the organiser's league's ends), two close pairs.
LEAGUE_MU = (36.8, 35.0, 31.5, 31.0, 27.0, 26.0, 23.0, 22.5, 18.9)


@dataclass(frozen=True, slots=True)
class Placed:
    """One league-like event's final places: by every pair (the product) and by neighbour pairs only."""

    inside: bool
    widths: tuple[int, ...]
    exact: int
    inside_neighbours: bool
    widths_neighbours: tuple[int, ...]
    flicker: bool


def league_event(seed: int, matches: int, rng: random.Random) -> Placed:
    """Nine entrants, ``matches`` matches planned as the league plans them, judged after every round."""
    names = [f"e{i}" for i in range(len(LEAGUE_MU))]
    theta = {n: mu - 25.0 for n, mu in zip(names, LEAGUE_MU)}
    cfg = synthetic_config(names, matches, seed=seed)
    plan = AdaptivePlan(cfg)
    play = model_play(theta, rng)
    results: list[Result] = []
    claimed: set[tuple[str, str]] = set()
    flicker = False
    tasks = plan.first_round()
    while tasks:
        results.extend(play(tasks))
        tasks = plan.next_round(results)
        if plan.last is not None:
            flicker = flicker or not claimed <= plan.last.ahead
            claimed |= plan.last.ahead
    v = judge_field(cfg, names, results, plan.looks)[1]  # the final look
    flicker = flicker or not claimed <= v.ahead
    truth = {n: i + 1 for i, n in enumerate(names)}  # names are listed strongest first

    def judged(places: Sequence[tuple[int, int]], order: Sequence[str]) -> tuple[bool, tuple[int, ...]]:
        inside = all(best <= truth[n] <= worst for n, (best, worst) in zip(order, places))
        return inside, tuple(worst - best for best, worst in places)

    inside, widths = judged(v.places, v.order)
    from sevenrocks.server.stats.verdict import verdict as judge_pairs
    f = judge_field(cfg, names, results)[0]
    alone = judge_pairs(f, cfg.ratings.level, v.order, every_pair=False)  # the old rule: neighbours only
    inside_n, widths_n = judged(alone.places, alone.order)
    return Placed(inside, widths, sum(w == 0 for w in widths), inside_n, widths_n, flicker)


def league_table(events: int, matches: int, rng: random.Random, seed: int) -> list[str]:
    """The place intervals of the league-like field, by every pair and by neighbour pairs only."""
    placed = [league_event(seed + i, matches, rng) for i in range(events)]
    print(f"... league-like field: done at {time.process_time():.0f} s CPU", file=sys.stderr, flush=True)
    out = [f"\nPlace intervals, nine entrants (μ {', '.join(f'{m:g}' for m in LEAGUE_MU)}), {matches} matches "
           f"planned as a league plans them, {events} events:",
           "| places from | P(every true place inside) (95% CI) | mean width | median width | "
           "places known exactly (of 9) | flickers |", "|---|---:|---:|---:|---:|---:|"]
    for label, inside, widths, flick in (
            ("every pair (one Holm family of 36)", [p.inside for p in placed], [p.widths for p in placed],
             str(sum(p.flicker for p in placed))),
            ("neighbour pairs only (the old rule)", [p.inside_neighbours for p in placed],
             [p.widths_neighbours for p in placed], "–")):
        k = sum(inside)
        lo, hi = wilson(k, len(placed))
        every = [w for ws in widths for w in ws]
        exact = statistics.mean(sum(w == 0 for w in ws) for ws in widths)
        out.append(f"| {label} | {k / len(placed):.3f} ({lo:.2f}–{hi:.2f}) | {statistics.mean(every):.2f} | "
                   f"{statistics.median(every):.0f} | {exact:.1f} | {flick} |")
    out.append("Width: worst − best place (0: the place is known). Flickers: events in which a pair claimed "
               "at one look was not claimed at a later one.")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--events", type=int, default=150, help="events per row of four entrants")
    ap.add_argument("--field-events", type=int, default=4, help="events of the 64-entrant field")
    ap.add_argument("--long", type=int, default=400, help="budget of the synthetic four-entrant events")
    ap.add_argument("--field-per-entrant", type=int, default=120, help="matches per entrant of the 64 field")
    ap.add_argument("--pairs", type=int, default=40, help="close pairs per row of the head-to-head cost table")
    ap.add_argument("--playoff", type=int, default=20000, help="play-off budget of the 64 field's second row")
    ap.add_argument("--league-events", type=int, default=200, help="events of the nine-entrant league-like field")
    ap.add_argument("--league-matches", type=int, default=735, help="matches of each league-like event")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    start = time.monotonic()
    rng = random.Random(args.seed)
    rows: list[list[str]] = []
    default = default_config()
    pool = load_pool(POOL)
    cfg = ranking_config("pairings", True, default.duplicate, **{
        k: getattr(default.schedule, k) for k in ("mode", "budget", "round_deals", "until_settled")})
    rows.append(summary("reference bots (pool)", f"default event, budget {default.schedule.budget}",
                        [run(cfg, Dealer(pool, rng).play, TRUTH, None) for _ in range(args.events)]))
    timings = [f"default {time.monotonic() - start:.0f} s"]
    names4 = ["top", "twin1", "twin2", "low"]
    for label, theta, always, twins in (
            ("exact twins (+ seat edge)", four(0.0), None, frozenset({"twin1", "twin2"})),
            ("53/47 pair", four(margin_of_win_rate(0.53)), None, frozenset()),
            ("one-sided pair (100% head to head)", four(margin_of_win_rate(0.53)), ("twin1", "twin2"), frozenset())):
        t0 = time.monotonic()
        c = synthetic_config(names4, args.long)
        rows.append(summary(label, f"default format, budget {args.long}",
                            [run(c, model_play(theta, rng, always), names4, None, twins) for _ in range(args.events)]))
        timings.append(f"{label.split(' (')[0]} {time.monotonic() - t0:.0f} s")
    t0 = time.monotonic()
    theta, truth = field64()
    c = synthetic_config(truth, 64 * args.field_per_entrant, top_k=8)
    c = replace(c, schedule=replace(c.schedule, round_deals=64))
    field_rows: list[tuple[str, int, list[Event]]] = []
    for playoff in (0, args.playoff) if args.field_events else ():
        cp = replace(c, schedule=replace(c.schedule, playoff=playoff))
        label = "64 entrants, top-8 neighbours 56–65%" + (f", play-off ≤ {playoff}" if playoff else "")
        events = [run(replace(cp, seed=args.seed + i), model_play(theta, random.Random(args.seed * 1000 + i)), truth, 8)
                  for i in range(args.field_events)]  # the same events with and without: paired
        rows.append(summary(label, f"top_k 8, {args.field_per_entrant}/entrant", events))
        field_rows.append((label, playoff, events))
    timings.append(f"64 field {time.monotonic() - t0:.0f} s")
    t0 = time.monotonic()
    pair_rows = [settle_row(p, args.pairs, 8, 3.0, args.seed) for p in (0.53, 0.56)] if args.pairs else []
    timings.append(f"close pairs {time.monotonic() - t0:.0f} s")
    t0 = time.monotonic()
    places = league_table(args.league_events, args.league_matches, rng, args.seed) if args.league_events else []
    timings.append(f"league-like {time.monotonic() - t0:.0f} s")
    print(f"seed {args.seed}; {args.events} events per four-entrant row, {args.field_events} of the 64 field, "
          f"{args.league_events} of the league-like field; "
          f"{time.monotonic() - start:.0f} s wall, {time.process_time():.0f} s CPU ({', '.join(timings)}; "
          "shared 2-core machine)")
    print("| " + " | ".join(HEADERS) + " |")
    print("|" + "|".join("---" if i < 2 else "---:" for i in range(len(HEADERS))) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print("\nTwins: any 'ahead' between them is false, and their order is a coin toss (P(order right) ~ 0.5);"
          " elsewhere 'ahead' the wrong way is false. The 64 field's order and 'settled' are its top 8 (top_k);"
          " matches to settle count the whole event's matches.")
    if field_rows:
        print("\n".join(playoff_table(field_rows)))
    if pair_rows:
        print("\n".join(pair_table(pair_rows)))
    print("\n".join(places))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
