"""Build (or extend) the pool of real reference-bot matches that ``bench/ranking/ranking.py`` resamples.

The pool is a small CSV in ``bench/ranking/data/`` so the ranking bench runs in minutes from a
clean checkout. Each *group* is one deal played twice, the second time with every
player moved one seat clockwise (a duplicate pair); every group has a deal of its own,
as in an event. Units:

- ``h2h:A~B``: A partnered with itself against B partnered with itself (the ``self``
  format), for every pair of bots;
- ``pairings:A.B~C.D:oN``: a partnership matchup of the ``pairings`` format in cyclic
  order N (0: A C B D, 1: A D B C); partners swap places on odd groups, as the schedule does.

A match without duplicates is one match of a group, so the same pool answers "what do
duplicates buy". Search plays at a fixed number of deals per move (``--search-iterations``,
default 40), so the pool is reproducible and matches the default event's search entrant.
A match's engine seed is ``derive_seed("ranking-pool", unit, group)``, so any pool match can be
replayed. Matches are appended as they finish (``--out`` is resumable: run again to add what is
missing) and the file is rewritten sorted at the end.

    python bench/ranking/ranking_pool.py --h2h-groups 250 --pairings-groups 60
"""

from __future__ import annotations

import argparse
import csv
import itertools
import sys
import time
from multiprocessing import Pool
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # bench.common, the shared helpers

from bench.common.refbots import make_bot  # noqa: E402  (puts the source folders on sys.path)
from sevenrocks.sdk.local import play_local  # noqa: E402
from sevenrocks.sdk.rules import make_ruleset  # noqa: E402
from sevenrocks.server.stats.intervals import derive_seed  # noqa: E402

BOTS = ("search", "defensive", "greedy", "random")
FIELDS = ["unit", "group", "seating", "seats", "score0", "score1", "winner", "reason", "rounds"]
DEFAULT_OUT = Path(__file__).resolve().parent / "data" / "ranking_pool.csv"


def units(h2h_groups: int, pairings_groups: int, cheap_groups: int) -> list[tuple[str, tuple[str, ...], int]]:
    """(unit name, seating of seating 0 on even groups, number of groups) for every unit."""
    out: list[tuple[str, tuple[str, ...], int]] = []
    for a, b in itertools.combinations(BOTS, 2):
        n = h2h_groups if "search" in (a, b) else cheap_groups
        if "search" in (a, b) and b != "defensive":
            n = max(1, h2h_groups // 2)  # search vs greedy/random is never close
        out.append((f"h2h:{a}~{b}", (a, b, a, b), n))
    pairs = list(itertools.combinations(BOTS, 2))
    for p, q in itertools.combinations(pairs, 2):
        if set(p) & set(q):
            continue
        for o, order in enumerate(((p[0], q[0], p[1], q[1]), (p[0], q[1], p[1], q[0]))):
            out.append((f"pairings:{p[0]}.{p[1]}~{q[0]}.{q[1]}:o{o}", order, pairings_groups))
    return out


def seatings(base: tuple[str, ...], group: int) -> list[tuple[str, ...]]:
    """The two seatings of a group: the order (partners swapped on odd groups) and its rotation."""
    a, c, b, d = base
    order = (a, c, b, d) if group % 2 == 0 else (b, d, a, c)
    return [order, (order[3], order[0], order[1], order[2])]


def play(job: tuple[str, int, int, tuple[str, ...], dict[str, Any]]) -> dict[str, Any]:
    unit, group, n, seats, options = job
    seed = derive_seed("ranking-pool", unit, group)
    rs = make_ruleset("seven-rocks")
    bots = [make_bot(name, seed * 10 + s, options) for s, name in enumerate(seats)]
    m = play_local(bots, rs, seed, match_id=f"pool-{unit}-{group}-{n}", names=list(seats))
    end = m.end
    return {"unit": unit, "group": group, "seating": n, "seats": ".".join(seats),
            "score0": end.scores[0], "score1": end.scores[1],
            "winner": "" if end.winner is None else end.winner, "reason": end.reason.value, "rounds": end.rounds}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--h2h-groups", type=int, default=250, help="groups of search vs defensive head to head")
    ap.add_argument("--cheap-groups", type=int, default=250, help="groups of each head-to-head pair without search")
    ap.add_argument("--pairings-groups", type=int, default=60, help="groups per pairings matchup and cyclic order")
    ap.add_argument("--search-iterations", type=int, default=40)
    ap.add_argument("--processes", type=int, default=2, choices=(1, 2))
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    options = {"search": {"iterations": args.search_iterations, "time_ms": None}}
    have: set[tuple[str, int, int]] = set()
    if args.out.exists():
        with args.out.open(newline="") as f:
            have = {(r["unit"], int(r["group"]), int(r["seating"])) for r in csv.DictReader(f)}
    plan = units(args.h2h_groups, args.pairings_groups, args.cheap_groups)
    # Group-major across units, so a pool stopped early is still balanced.
    jobs = [(u, g, n, s, options)
            for g in range(max(k for _, _, k in plan))
            for u, base, k in plan if g < k
            for n, s in enumerate(seatings(base, g)) if (u, g, n) not in have]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    new = not args.out.exists()
    start = time.monotonic()
    with args.out.open("a", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        if new:
            w.writeheader()
        with Pool(args.processes) as pool:
            for i, row in enumerate(pool.imap(play, jobs, chunksize=1), start=1):
                w.writerow(row)
                f.flush()
                if i % 100 == 0:
                    print(f"{i}/{len(jobs)} matches, {time.monotonic() - start:.0f} s", flush=True)
    with args.out.open(newline="") as f:
        rows = list(csv.DictReader(f))
    rows.sort(key=lambda r: (r["unit"], int(r["group"]), int(r["seating"])))
    with args.out.open("w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        w.writerows(rows)
    print(f"{len(jobs)} matches played in {time.monotonic() - start:.0f} s; {len(rows)} in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
