"""Bots' decision latency while spectators and authors load the live site: main's design against this one.

Before: the live site rendered its pages on the referee's event loop,
so an author reloading a page, or the site rebuilding its leaderboard after a stored
match (a TrueSkill replay of the league), delayed the referee's reading of every bot's
move, on the bot's clock. This measures that, as a user runs it:

* a league database is seeded once with ``--seed-matches`` matches (in process);
* each measured run copies it and runs ``sevenrocks league ... --web`` (the real
  command: launched bots over gRPC, the referee, the live site) for ``--matches``
  more matches, while ``--clients`` threads of this process load, each at most
  ``--rate`` pages a second (the same work for both designs; main's serves fewer when
  it cannot keep up, and the table says how many each served)
  - ``idle``: nothing;
  - ``author``: one author's page (``/author/?token=...``), again and again;
  - ``site``: the index, match list and bot list, again and again; every request after
    a match is stored rebuilds the pages (the leaderboard of the whole league);
  - ``archive``: the author page's download (``/author/archive.zip``), every launched
    entrant's in turn (one download per token at a time: the clients start at
    different entrants; a 429 counts as an HTTP error), each the records of some
    thousand matches; main has no such route (its 404s are errors);
* the latency is each decision's time as the referee measured it, read from the
  matches stored during the run (``matches.decisions``): p50, p95, p99.

A second table (``--part gil``) is why the pages are built in a process and not on
the web thread: an event loop standing for the referee's sleeps 1 ms again and
again, and its lateness is measured while the site's pages (the leaderboard of the
seeded league) are rebuilt without pause in a thread of the same process, or in
the page process the live site uses, or not at all.

``main`` is main's code checked out into a temporary folder (``git archive main``) and
run from there, in the same run and on the same seeded database; ``this`` is the
working tree. Medians of ``--runs`` runs. Bots run with ``SEVENROCKS_SANDBOX=off`` (the
sandbox is not what is measured; it would add the same start-up to both).

    python bench/web/bench_webloop.py                       # 3 runs, 2,000 seeded matches, 48 measured
    python bench/web/bench_webloop.py --runs 1 --seed-matches 500 --matches 24
    python bench/web/bench_webloop.py --part gil          # the second table alone
    python bench/web/bench_webloop.py --part league --loads idle,archive --main-ref 1784e6f  # the archive on the web thread
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FIELD = [("a", "greedy"), ("b", "random"), ("c", "greedy"), ("d", "defensive"), ("e", "random")]
LOADS = ("idle", "author", "site", "archive")


def config_text(stop_after: int) -> str:
    head = ('[event]\nname = "bench"\nduplicate = true\nconcurrency = 2\n[league]\nround_matches = 8\n'
            f'poll_s = 3600\nstop_after = {stop_after}\n[time]\nper_move_ms = 1000\n')
    return head + "".join(f'[[entrants]]\nname = "{n}"\nbot = "{b}"\n' for n, b in FIELD)


def seed(tmp: Path, matches: int) -> Path:
    """A league database holding ``matches`` stored matches of this field (played in process)."""
    from sevenrocks.server.events.executor import InProcessExecutor
    from sevenrocks.server.league.runner import League, load_league, run_league
    from sevenrocks.server.events.store import Store

    cfg_path, db = tmp / "seed.toml", tmp / "seed.db"
    cfg_path.write_text(config_text(matches))
    config, settings = load_league(cfg_path)
    store = Store(db, writer=True)
    with store:
        game = League(cfg_path, config, settings, store, InProcessExecutor(config), lambda text: None)

        async def update(entrants: Any) -> None:
            import dataclasses

            game.executor = InProcessExecutor(dataclasses.replace(game.config, entrants=tuple(entrants)))

        game.update_executor = update
        asyncio.run(run_league(game))
    return db


def main_checkout(tmp: Path, ref: str = "main") -> Path:
    """main's source (or ``ref``'s), as it is now, in a folder of its own."""
    dest = tmp / "main"
    dest.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def source_path(tree: Path) -> str:
    # The generated protobuf modules are not in git: both trees use this checkout's.
    return os.pathsep.join(str(tree / d) for d in ("sdk", "server", "bots")) + os.pathsep + str(ROOT / "proto")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Load:
    """``clients`` threads each fetching ``urls`` in turn, at most ``rate`` a second, until stopped."""

    def __init__(self, urls: list[str], clients: int, rate: float) -> None:
        self.urls, self.rate, self.stop = urls, rate, threading.Event()
        self.answers = self.errors = self.bytes = 0
        self.threads = [threading.Thread(target=self.run, daemon=True) for _ in range(clients if urls else 0)]

    def run(self) -> None:
        next_at = time.monotonic()
        k = self.threads.index(threading.current_thread()) % max(1, len(self.urls))
        while not self.stop.is_set():
            for url in self.urls[k:] + self.urls[:k]:
                next_at += 1 / self.rate
                try:
                    with urllib.request.urlopen(url, timeout=120) as r:
                        self.bytes += len(r.read())
                    self.answers += 1
                except urllib.error.HTTPError:
                    self.errors += 1  # an answer, but not the page
                except (urllib.error.URLError, OSError):
                    pass  # the site is not up yet, or has closed: the league is starting or done
                if self.stop.wait(max(0.0, next_at - time.monotonic())):
                    return

    def __enter__(self) -> Load:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(150)


def run_once(tree: Path, seeded: Path, tmp: Path, load: str, matches: int, clients: int, rate: float,
             seed_count: int) -> dict[str, Any]:
    work = tmp / f"run-{time.monotonic_ns()}"
    work.mkdir()
    db = work / "league.db"
    shutil.copy(seeded, db)
    cfg = work / "league.toml"
    cfg.write_text(config_text(seed_count + matches))
    port = free_port()
    env = {**os.environ, "PYTHONPATH": source_path(tree), "SEVENROCKS_SANDBOX": "off"}
    cmd = [sys.executable, "-m", "sevenrocks.server.cli", "league", str(cfg), "--db", str(db), "--out",
           str(work / "out"), "--web", f"127.0.0.1:{port}", "--quiet"]
    proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    tokens = work / "out" / "author-tokens.txt"
    deadline = time.monotonic() + 120
    words: list[str] = []
    while len(words) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
        words = tokens.read_text().split() if tokens.exists() else []  # (it may be half written)
    token = words[1] if len(words) >= 2 else ""
    while load == "archive" and len(words) < 2 * len(FIELD) and time.monotonic() < deadline:
        time.sleep(0.1)
        words = tokens.read_text().split()
    urls = {"idle": [], "author": [f"{base}/author/?token={token}"],
            "site": [f"{base}/index.html", f"{base}/matches.html", f"{base}/bots.html"],
            "archive": [f"{base}/author/archive.zip?token={t}" for t in words[1::2]]}[load]
    started = time.monotonic()
    with Load(urls, clients, rate) as fetched:
        out, _ = proc.communicate(timeout=3600)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"league failed ({tree.name}, {load}):\n{out[-3000:]}")
    con = sqlite3.connect(db)
    decisions: list[float] = []
    for (text,) in con.execute("SELECT decisions FROM matches WHERE event_id = 'bench' AND idx >= ?",
                               (seed_index(con, seed_count),)):
        for values in json.loads(text).values():
            decisions.extend(values)
    con.close()
    shutil.rmtree(work, ignore_errors=True)
    q = statistics.quantiles(decisions, n=100, method="inclusive")
    return {"p50": q[49], "p95": q[94], "p99": q[98], "n": len(decisions), "answers": fetched.answers, "mb": fetched.bytes / 2**20,
            "errors": fetched.errors, "wall": wall}


def seed_index(con: sqlite3.Connection, seed_count: int) -> int:
    """The schedule index of the first match played in the measured run (the seeded ones come first)."""
    rows = [r[0] for r in con.execute("SELECT idx FROM matches WHERE event_id = 'bench' ORDER BY idx")]
    return rows[seed_count] if len(rows) > seed_count else 1 << 62


def loop_lag(seeded: Path, builder: str, seconds: float) -> dict[str, float]:
    """Lateness (ms) of a 1 ms sleep on this thread's loop while pages are rebuilt by ``builder``."""
    from sevenrocks.server.events.store import Store
    from sevenrocks.server.publish.site import SitePages
    from sevenrocks.server.web.pageproc import PageProcess, Snapshot

    stop = threading.Event()
    builds = 0

    def in_thread() -> None:
        nonlocal builds
        store = Store.reader(seeded)
        while not stop.is_set():
            SitePages(store, "bench", None, live=True)
            builds += 1
        store.close()

    async def main() -> list[float]:
        nonlocal builds
        pages = PageProcess()
        snap = Snapshot(str(seeded), "bench", None, None)

        async def in_process() -> None:
            nonlocal builds
            while not stop.is_set():
                await pages.ask(builds, snap, "index")  # a new version each time: a rebuild
                builds += 1

        worker: Any = None
        if builder == "thread":
            worker = threading.Thread(target=in_thread, daemon=True)
            worker.start()
        elif builder == "process":
            await pages.ask(-1, snap, "standings")  # started, and its imports done, before measuring
            worker = asyncio.ensure_future(in_process())
        await asyncio.sleep(1.0)
        lags = []
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            t0 = time.perf_counter()
            await asyncio.sleep(0.001)
            lags.append((time.perf_counter() - t0 - 0.001) * 1000)
        stop.set()
        if builder == "process":
            await worker
        elif worker is not None:
            await asyncio.to_thread(worker.join)
        await asyncio.to_thread(pages.close)
        return lags

    lags = asyncio.run(main())
    q = statistics.quantiles(lags, n=100, method="inclusive")
    return {"p50": q[49], "p99": q[98], "max": max(lags), "builds": builds}


def gil_table(seeded: Path, runs: int, seconds: float) -> None:
    results: dict[str, list[dict[str, float]]] = {}
    for k in range(runs):
        for builder in ("none", "thread", "process"):
            r = loop_lag(seeded, builder, seconds)
            results.setdefault(builder, []).append(r)
            print(f"run {k + 1} pages built in {builder:7}: lag p50 {r['p50']:6.2f}  p99 {r['p99']:6.2f}  max "
                  f"{r['max']:7.1f} ms  ({r['builds']:.0f} builds, load {os.getloadavg()[0]:.1f})", flush=True)
    print(f"\nlateness of a 1 ms sleep on the referee's stand-in loop, ms, medians of {runs} runs of {seconds:g} s")
    print(f"{'pages built':12} {'p50':>7} {'p99':>7} {'max':>8} {'p99 / none':>11}")
    none = statistics.median(r["p99"] for r in results["none"])
    for builder, rs in results.items():
        med = {q: statistics.median(r[q] for r in rs) for q in ("p50", "p99", "max")}
        print(f"{builder:12} {med['p50']:7.2f} {med['p99']:7.2f} {med['max']:8.1f} {med['p99'] / none:10.1f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed-matches", type=int, default=2000)
    ap.add_argument("--matches", type=int, default=48, help="matches played in each measured run")
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--rate", type=float, default=5.0, help="pages a second each client asks for, at most")
    ap.add_argument("--loads", default=",".join(LOADS))
    ap.add_argument("--designs", default="main,this", help="main, this, or both (main,this)")
    ap.add_argument("--main-ref", default="main", help="what 'main' is: a branch or commit of this repository")
    ap.add_argument("--part", choices=("all", "league", "gil"), default="all")
    ap.add_argument("--gil-seconds", type=float, default=10.0)
    ap.add_argument("--seeded", type=Path, default=None,
                    help="a database an earlier run seeded (same --seed-matches), copied instead of seeding again")
    args = ap.parse_args()
    loads = args.loads.split(",")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        t0 = time.monotonic()
        if args.seeded is not None:
            seeded = tmp / "seed.db"
            shutil.copy(args.seeded, seeded)
        else:
            seeded = seed(tmp, args.seed_matches)
        print(f"seeded {args.seed_matches} matches in {time.monotonic() - t0:.0f} s; load "
              f"{os.getloadavg()[0]:.1f}", flush=True)
        if args.part in ("all", "gil"):
            gil_table(seeded, args.runs, args.gil_seconds)
        if args.part == "gil":
            return
        designs = args.designs.split(",")
        trees = {name: tree for name, tree in (("main", tmp), ("this", ROOT)) if name in designs}
        if "main" in trees:
            trees["main"] = main_checkout(tmp, args.main_ref)
        results: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for k in range(args.runs):
            for load in loads:
                for name, tree in trees.items():  # interleaved: the machine's load falls on both alike
                    r = run_once(tree, seeded, tmp, load, args.matches, args.clients, args.rate, args.seed_matches)
                    results.setdefault((name, load), []).append(r)
                    print(f"run {k + 1} {name:4} {load:6}: p50 {r['p50']:6.1f}  p95 {r['p95']:6.1f}  "
                          f"p99 {r['p99']:6.1f} ms  ({r['n']} decisions, {r['answers']} pages, "
                          f"{r['errors']} HTTP errors, {r['mb']:.0f} MiB, {r['wall']:.0f} s, load {os.getloadavg()[0]:.1f})", flush=True)
    print(f"\ndecision latency at the referee, ms, medians of {args.runs} runs; {args.seed_matches} matches "
          f"seeded, {args.matches} measured per run, {args.clients} clients at most {args.rate:g} pages/s each")
    print(f"{'load':8} {'design':6} {'p50':>7} {'p95':>7} {'p99':>7} {'p99 / idle':>11} {'pages/s':>8}")
    for load in loads:
        for name in trees:
            rs = results[(name, load)]
            med = {q: statistics.median(r[q] for r in rs) for q in ("p50", "p95", "p99")}
            idle = statistics.median(r["p99"] for r in results[(name, "idle")]) if "idle" in loads else None
            rate = statistics.median(r["answers"] / r["wall"] for r in rs)
            ratio = f"{med['p99'] / idle:.2f}x" if idle else "-"
            print(f"{load:8} {name:6} {med['p50']:7.1f} {med['p95']:7.1f} {med['p99']:7.1f} {ratio:>11} {rate:8.2f}")


if __name__ == "__main__":
    main()
