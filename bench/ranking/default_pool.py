"""The default event's pool: real matches of its own bots, and what the default concludes from them.

``sevenrocks tournament`` with no arguments seats the bots of ``default_config()`` at
their own settings. This script answers "how often does that event order them right,
and how often does it settle every neighbour pair?" from matches those same bots
played, not from a model of them:

``build``  plays fixed events of the default's field through the real command
           (``sevenrocks tournament CONFIG``: the embedded gRPC referee, the bots as
           subprocesses in the default sandbox, each entrant's own ``env``), pairings plus
           head to head, every deal played twice with the seats exchanged (a duplicate
           group), and stores every match as a row of ``bench/ranking/data/default_pool.csv``.
           Resumable: it continues the event in ``--work`` and rewrites the CSV.
``bench``  bootstraps default events from that pool through the product's own adaptive
           planner, order-free fit and verdict (``bench/common/pool.py``'s dealer), at the
           default's budget, rounds and duplicates, and prints P(order right) and
           P(every neighbour pair settled) with 95% intervals. The truth is the pool's own
           order: the fit of every pool match.

    python bench/ranking/default_pool.py build --deals 40      # 24 matches a deal for four bots
    python bench/ranking/default_pool.py bench --events 400     # (or no subcommand: the bench)
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for src in ("proto", "sdk", "server", "bots"):
    if str(ROOT / src) not in sys.path:
        sys.path.insert(0, str(ROOT / src))
sys.path.insert(0, str(ROOT))  # bench.common, the shared helpers

from bench.common.pool import DEFAULT_POOL, LEVEL, Dealer, default_event, load_pool, summary, truth  # noqa: E402
from sevenrocks.server.events.config import EventConfig, default_config  # noqa: E402

POOL = DEFAULT_POOL
FIELDS = ["unit", "group", "seating", "seats", "score0", "score1", "winner", "reason", "rounds"]


def pool_toml(cfg: EventConfig, deals: int, seed: int) -> str:
    """A fixed event of the default's entrants, format and clock, with duplicate deals (the pool's groups)."""
    lines = ["[event]", 'name = "default-pool"', f'format = "{cfg.format}"',
             f"head_to_head = {str(cfg.head_to_head).lower()}", "duplicate = true", f"deals = {deals}",
             f"seed = {seed}", f"concurrency = {cfg.concurrency}", "", "[schedule]", 'mode = "fixed"', "",
             "[time]", f"per_move_ms = {cfg.time.per_move_ms}", "",
             # One process per bot for the whole pool, as the default event runs them (no duplicates there,
             # so its processes carry over): the reference bots keep nothing from one match to the next.
             "[bots]", 'fresh_process = "never"', ""]
    for e in cfg.entrants:
        assert e.bot is not None, f"{e.name}: the default seats registered bots only"
        lines += ["[[entrants]]", f'name = "{e.name}"', f'bot = "{e.bot}"']
        if e.env:
            lines.append("env = {" + ", ".join(f'{k} = "{v}"' for k, v in e.env) + "}")
        lines.append("")
    return "\n".join(lines)


def unit_of(group: str) -> tuple[str, int]:
    """(pool unit, deal) of a schedule group name such as ``d3-greedy.random~alphabeta.defensive-o1``."""
    deal, _, rest = group.partition("-")
    sides, _, order = rest.rpartition("-")
    p, q = sides.split("~")
    a, b = p.split("."), q.split(".")
    if a[0] == a[1] and b[0] == b[1]:
        return f"h2h:{a[0]}~{b[0]}", int(deal[1:])
    return f"pairings:{p}~{q}:{order}", int(deal[1:])


def export(db: Path, out: Path) -> int:
    """Every finished match of the pool event as a pool row (seating 0/1: the group's two matches in order)."""
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT grp, idx, seats, scores, winner, reason, rounds FROM matches "
                           "WHERE status = 'done' ORDER BY idx").fetchall()
    seen: dict[str, int] = {}
    table = []
    for grp, _idx, seats, scores, winner, reason, rounds in rows:
        unit, deal = unit_of(grp)
        n = seen[grp] = seen.get(grp, -1) + 1
        s = json.loads(scores)
        table.append({"unit": unit, "group": deal, "seating": n, "seats": ".".join(json.loads(seats)),
                      "score0": s[0], "score1": s[1], "winner": "" if winner is None else winner,
                      "reason": reason, "rounds": rounds})
    table.sort(key=lambda r: (r["unit"], r["group"], r["seating"]))
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="") as f:
        w = csv.DictWriter(f, FIELDS)
        w.writeheader()
        w.writerows(table)
    return len(table)


def build(args: argparse.Namespace) -> int:
    cfg = default_config()
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    (work / "pool.toml").write_text(pool_toml(cfg, args.deals, args.seed), encoding="utf-8")
    cmd = [sys.executable, "-m", "sevenrocks.server.cli", "tournament", str(work / "pool.toml"),
           "--db", str(work / "pool.db"), "--out", str(work / "out")]
    start, cpu0 = time.monotonic(), _children_cpu()
    status = subprocess.call(cmd, stdout=subprocess.DEVNULL)
    wall = time.monotonic() - start
    n = export(work / "pool.db", args.out)
    print(f"{n} matches in {args.out} ({args.deals} deals x {len(cfg.entrants)} bots' matchups, both seatings); "
          f"this run {wall:.0f} s wall, harness CPU {_children_cpu() - cpu0:.0f} s; exit {status}")
    return status


def _children_cpu() -> float:
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def bench(args: argparse.Namespace) -> int:
    pool = load_pool(args.pool)
    order = truth(pool)
    cfg = default_config()
    assert set(order) == {e.name for e in cfg.entrants}, "the pool is of another field: build it again"
    s = cfg.schedule
    groups = sum(len(v) for v in pool.values())
    print(f"pool {args.pool.name}: {2 * groups} real matches ({groups} duplicate groups, {len(pool)} matchups); "
          f"its own order (fit of every match): {' > '.join(order)}")
    rng = random.Random(args.seed)
    start = time.monotonic()
    print("| event | matches | P(order right) (95% CI) | P(every neighbour pair settled) (95% CI) | "
          "settled pairs per event | right when settled |")
    print("|---|---:|---:|---:|---:|---:|")
    budgets = [s.budget] + [b for b in args.budgets if b != s.budget]
    for budget in budgets:
        variant = replace(cfg, schedule=replace(s, budget=budget))
        label = f"budget {budget}" + (" (the default event)" if budget == s.budget else "")
        evs = [default_event(variant, Dealer(pool, rng), order) for _ in range(args.events)]
        print(summary(label, evs, order), flush=True)
    print(f"\n{args.events} events per row, seed {args.seed}, rounds of {s.round_deals} deals, "
          f"duplicates {cfg.duplicate}, level {LEVEL}; {time.monotonic() - start:.0f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="play real matches of the default's bots into the pool CSV")
    b.add_argument("--deals", type=int, default=40, help="deals per matchup (each played twice)")
    b.add_argument("--seed", type=int, default=4301)
    b.add_argument("--work", type=Path, default=Path("default-pool-work"),
                   help="the pool event's database and output (run again to resume)")
    b.add_argument("--out", type=Path, default=POOL)
    r = sub.add_parser("bench", help="P(order right) and P(settled) of the default event from the pool")
    r.add_argument("--events", type=int, default=400)
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--pool", type=Path, default=POOL)
    r.add_argument("--budgets", type=lambda t: [int(x) for x in t.split(",")], default=[],
                   help="other budgets to compare, e.g. 60,120")
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in ("build", "bench", "-h", "--help"):
        argv.insert(0, "bench")  # plain `python bench/run.py default_pool` runs the bench, never a rebuild
    args = ap.parse_args(argv)
    return build(args) if args.cmd == "build" else bench(args)


if __name__ == "__main__":
    raise SystemExit(main())
