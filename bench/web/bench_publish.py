"""Publishing the event site of a large event, against a baseline measured in the same run.

The event: N stored matches (default 10,000) of a seven-rocks pairings event, each a
real match played by the engine (greedy and random bots in process). To keep the
setup short, D distinct matches (default 400) are played and stored N/D times each
under their own match ids (each stored record is a valid record of its id).

With --entrants N (more than four), the stored matches seat N synthetic entrants at
random tables of four (seeded; a record's own seat names are those of the match it was
copied from, which only the replay pages show).

Measured, median of --runs:
- baseline: export every stored record to its own file (the least any site must do);
- the leaderboard alone (`build_leaderboard` and every format written: the fit, the
  verdict, the partnerships' fit, the tables);
- the whole site (`publish_site`: leaderboard in every format, match list, one replay
  page and one record file per match, bot pages; replay pages from one process per core).
Target: the 10,000-match site in under a minute, and the site's time linear in the matches
(compare --matches 10000 with --matches 100000).

Usage: python bench/web/bench_publish.py [--matches 10000] [--distinct 400] [--entrants 4] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from sevenrocks.sdk.local import play_local
from sevenrocks.sdk.registry import load_bot
from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.server.events.config import Entrant, EventConfig
from sevenrocks.server.events.outcome import MatchOutcome, final_ranks
from sevenrocks.server.events.schedule import MatchTask, RulesetSpec, fingerprint
from sevenrocks.server.events.store import Store
from sevenrocks.server.publish.leaderboard import build_leaderboard
from sevenrocks.server.publish.render import write_all
from sevenrocks.server.publish.site import publish_site

BOTS = ["greedy", "random", "defensive", "random2"]


def build_event(db: Path, matches: int, distinct: int, entrants: int = 4) -> None:
    """Store ``matches`` real matches (``distinct`` of them played) as one event in ``db``."""
    rs = make_ruleset()
    spec = RulesetSpec(rs.name, rs.players, rs.target, rs.round_cap)
    played = []
    for k in range(distinct):
        seats = [BOTS[(k + i) % 4] for i in range(4)]
        bots = [load_bot(name.rstrip("2"))(seed=k * 4 + i) for i, name in enumerate(seats)]
        m = play_local(bots, rs, 1000 + k, match_id="x", names=seats)
        played.append((seats, m))
    names = BOTS if entrants <= 4 else [f"bot-{i:03d}" for i in range(entrants)]
    config = EventConfig(name="bench", entrants=tuple(Entrant(n, bot="random" if n not in BOTS else n.rstrip("2"))
                                                      for n in names))
    rng = random.Random(7)
    tables = [tuple(played[i % distinct][0]) if entrants <= 4 else tuple(rng.sample(names, 4))
              for i in range(0, matches, 2)]
    # Two matches a group: the second with the partnerships' seats exchanged, as a duplicate deal.
    tasks = [MatchTask("bench", f"bench-{i:06d}", spec, 1000 + i % distinct,
                       tables[i // 2] if i % 2 == 0 or entrants <= 4 else
                       (tables[i // 2][1], tables[i // 2][0], tables[i // 2][3], tables[i // 2][2]),
                       i, i // 2, f"g{i // 2}") for i in range(matches)]
    outcomes = []
    for t in tasks:
        seats, m = played[t.index % distinct]
        end = m.end
        lines = list(m.record_lines())
        head = json.loads(lines[0])
        head["match_id"] = t.match_id
        lines[0] = json.dumps(head)
        fault = None
        outcomes.append(MatchOutcome(t, end.reason.value, end.winner, tuple(end.scores),
                                     final_ranks(rs, tuple(end.scores), end.winner, fault), end.rounds, fault,
                                     {s: [1.0 + s, 2.5, 4.0] for s in range(4)}, tuple(lines), 0.1))
    with Store(db) as store:
        store.open_event(config, fingerprint(tasks), len(tasks))
        store.record_matches(outcomes)


def export_records(store: Store, out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    for match_id, lines in store.iter_records():
        (out / f"{match_id}.jsonl").write_text(lines, encoding="utf-8")
        n += 1
    return n


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (the replay workers)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn: object, *args: object) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one call."""
    started, cpu = time.perf_counter(), cpu_seconds()
    fn(*args)  # type: ignore[operator]
    return time.perf_counter() - started, cpu_seconds() - cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--matches", type=int, default=10_000)
    ap.add_argument("--distinct", type=int, default=400)
    ap.add_argument("--entrants", type=int, default=4)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        db = root / "bench.db"
        t0 = time.perf_counter()
        build_event(db, args.matches, args.distinct, args.entrants)
        print(f"setup: {args.matches} stored matches of {max(args.entrants, 4)} entrants "
              f"({args.distinct} played by the engine) in "
              f"{time.perf_counter() - t0:.1f}s", flush=True)
        rows: dict[str, list[tuple[float, float]]] = {"export records (baseline)": [], "leaderboard (all formats)": [],
                                                      "whole site": []}
        with Store(db) as store:
            for run in range(args.runs):
                for name, fn in (("export records (baseline)", export_records),
                                 ("leaderboard (all formats)", lambda s, o: write_all(build_leaderboard(s), o)),
                                 ("whole site", lambda s, o: publish_site(s, o))):
                    out = root / f"out-{run}-{len(rows[name])}"
                    rows[name].append(timed(fn, store, out))
                    shutil.rmtree(out)
        files = 2 * args.matches
        base = statistics.median(t for t, _ in rows["export records (baseline)"])
        load = os.getloadavg()[0]
        print(f"\n{args.matches} matches, {max(args.entrants, 4)} entrants; median of {args.runs} runs; load average {load:.1f} on "
              f"{os.cpu_count()} cores (a shared machine: wall times stretch with the load, CPU times less)\n")
        print(f"| {'step':<28} | {'wall s':>8} | {'CPU s':>7} | {'wall per match ms':>17} | {'vs baseline':>11} |")
        print(f"|{'-' * 30}|{'-' * 10}|{'-' * 9}|{'-' * 19}|{'-' * 13}|")
        for name, times in rows.items():
            med = statistics.median(t for t, _ in times)
            cpu = statistics.median(c for _, c in times)
            print(f"| {name:<28} | {med:>8.2f} | {cpu:>7.2f} | {1000 * med / args.matches:>17.3f} | {med / base:>10.1f}x |")
        whole = statistics.median(t for t, _ in rows["whole site"])
        verdict = "meets" if whole < 60 else "MISSES"
        print(f"\nwhole site: {whole:.1f}s for {args.matches} matches (>= {files} files): {verdict} the 60 s target")


if __name__ == "__main__":
    main()
