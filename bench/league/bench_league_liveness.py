"""Soak: a real `sevenrocks league` whose field keeps changing; prints matches stored per minute.

Launched bots in the default sandbox. On a schedule (scaled to --minutes) an entrant
joins, a bot file is broken (its new version is withdrawn after its crashes), entrants
are retired, a fixed file comes back as a new version, and the field drops below a
table and recovers. Every 5 s the database is read; at the end a table gives, per
minute, the matches stored, the league's state (``league_status``) and what changed.
A minute with no stored match while a table could be seated is marked STALL.

    python bench/league/bench_league_liveness.py --minutes 10
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BOT = """import sys
print("running {mark}", file=sys.stderr, flush=True)
{extra}
from sevenrocks.sdk.client import run
from sevenrocks.bots.{module} import {cls}

if __name__ == "__main__":
    run({cls}())
"""
BROKEN = "raise SystemExit('broken at start')"


def write_bot(path: Path, mark: str, broken: bool = False, kind: str = "greedy") -> None:
    module, cls = {"greedy": ("greedy", "GreedyBot"), "random": ("random", "RandomBot")}[kind]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(BOT.format(mark=mark, extra=BROKEN if broken else "", module=module, cls=cls))


def write_config(path: Path, entrants: list[str]) -> None:
    lines = ['[event]', 'name = "soak"', 'concurrency = 2', '[time]', 'per_move_ms = 5000', 'connect_timeout_s = 60',
             '[bots]', 'restart_backoff_s = 0.5', '[league]', 'round_matches = 4', 'poll_s = 1.0', 'idle_s = 2.0']
    for name in entrants:
        lines += ["[[entrants]]", f'name = "{name}"',
                  f'command = [{json.dumps(sys.executable)}, "{name}/{name}.py"]' if name in ("alpha", "beta")
                  else f'bot = "{name}"']
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text("\n".join(lines) + "\n")
    if before:
        os.utime(path, ns=(max(before + 10**9, time.time_ns()),) * 2)


def read(db: Path) -> tuple[int, str]:
    if not db.exists():
        return 0, "-"
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        n = con.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
        try:
            row = con.execute("SELECT state, detail FROM league_status").fetchone()
        except sqlite3.OperationalError:
            row = None
        return int(n), (f"{row[0]}" + (f" ({row[1][:60]})" if row[0] == "waiting" else "")) if row else "-"
    except sqlite3.OperationalError:
        return 0, "-"
    finally:
        con.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=10.0)
    args = ap.parse_args()
    span = args.minutes * 60
    work = Path(tempfile.mkdtemp(prefix="sevenrocks-soak-"))
    os.chmod(work, 0o755)
    cfg, db = work / "league.toml", work / "league.db"
    write_bot(work / "alpha" / "alpha.py", "alpha 1")
    write_bot(work / "beta" / "beta.py", "beta 1", kind="random")
    field = ["alpha", "greedy", "random", "defensive"]
    write_config(cfg, field)

    def join_beta() -> None:
        field.append("beta")
        write_config(cfg, field)

    def retire(*names: str) -> None:
        for n in names:
            field.remove(n)
        write_config(cfg, field)

    def rejoin(name: str) -> None:
        field.append(name)
        write_config(cfg, field)

    # (fraction of the run, what happens, how)
    plan = [
        (0.10, "beta joins", join_beta),
        (0.25, "alpha broken (new version exits at start)", lambda: write_bot(work / "alpha" / "alpha.py", "a2", True)),
        (0.40, "random retired", lambda: retire("random")),
        (0.50, "alpha fixed (a new version)", lambda: write_bot(work / "alpha" / "alpha.py", "alpha 3")),
        (0.62, "greedy and defensive retired (2 left)", lambda: retire("greedy", "defensive")),
        (0.72, "beta broken: 1 left, no table", lambda: write_bot(work / "beta" / "beta.py", "b2", True, "random")),
        (0.82, "random rejoins", lambda: rejoin("random")),
    ]
    env = dict(os.environ)
    env.pop("SEVENROCKS_SANDBOX", None)
    log = (work / "league.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "sevenrocks.server.cli", "league", str(cfg), "--db", str(db),
                             "--out", str(work / "out"), "--quiet"], cwd=work, stdout=log, stderr=log, env=env)
    start = time.monotonic()
    samples: list[tuple[float, int, str]] = []
    happened: list[tuple[float, str]] = []
    try:
        while (now := time.monotonic() - start) < span:
            while plan and now >= plan[0][0] * span:
                _, what, act = plan.pop(0)
                act()
                happened.append((now, what))
            n, state = read(db)
            samples.append((now, n, state))
            if proc.poll() is not None:
                raise SystemExit(f"the league exited ({proc.returncode}); see {work / 'league.log'}")
            time.sleep(5)
    finally:
        proc.terminate()
        proc.wait(120)
        log.close()
    print(f"soak: {args.minutes:g} min, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"files in {work}")
    print(f"{'minute':>6} {'stored':>7} {'+matches':>8}  state at the minute's end / what changed")
    last = 0
    for minute in range(int(span // 60) + (1 if span % 60 else 0)):
        inside = [s for s in samples if minute * 60 <= s[0] < (minute + 1) * 60]
        if not inside:
            continue
        n, state = inside[-1][1], inside[-1][2]
        changes = "; ".join(w for t, w in happened if minute * 60 <= t < (minute + 1) * 60)
        stall = " STALL" if n == last and not any(s[2].startswith("waiting") for s in inside) else ""
        print(f"{minute + 1:>6} {n:>7} {n - last:>8}  {state}{stall}" + (f"  <- {changes}" if changes else ""))
        last = n


if __name__ == "__main__":
    main()
