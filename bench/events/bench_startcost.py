"""What one more bot and one more round cost the whole ``sevenrocks tournament`` command.

Each point is the real command from an empty folder (``sevenrocks tournament CONFIG``:
imports, the embedded referee, the bots as processes in the default sandbox, the
planner, the fit, the leaderboard and the site), with a field of N copies of the
``random`` bot (cheap thinking, so what is measured is starting and running the
event, not search) playing head to head, scheduled adaptively for R rounds (round 0
is every pair once; each later round 8 deals). The CPU of the whole command (harness
and bots) is read from a cpuacct control group it starts in (``bench/common/cost.py``); the harness's own from ``wait4``; the bot start-ups (spawn to
connected, summed) from the supervisor's closing line.

A least-squares fit over every point, CPU = a + b*bots + c*matches, gives the fixed
cost (a), the cost of one more bot (b: its start, its process, its share of the
fit and pages) and of one more match (c); the same for wall time.

    python bench/events/bench_startcost.py                      # bots 2,3,4,6 at 1 round; 3 bots at 1,2,4 rounds
    python bench/events/bench_startcost.py --bots 2,4,8 --rounds 1,3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # bench.common, the shared helpers

from bench.common.cost import cpu_group, run_split  # noqa: E402

ROUND_DEALS = 8


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def event_toml(bots: int, rounds: int) -> tuple[str, int]:
    """The config of one point and its budget: round 0 (every pair once) plus ``rounds - 1`` rounds."""
    first = bots * (bots - 1) // 2
    budget = first + (rounds - 1) * max(ROUND_DEALS, bots)
    lines = ["[event]", 'name = "startcost"', 'format = "self"', "duplicate = false", "seed = 1",
             "concurrency = 2", "", "[schedule]", 'mode = "adaptive"', f"budget = {budget}",
             f"round_deals = {ROUND_DEALS}", ""]
    for i in range(bots):
        lines += ["[[entrants]]", f'name = "random{i}"', 'bot = "random"', ""]
    return "\n".join(lines), budget


def point(bots: int, rounds: int, tmp: Path) -> dict[str, float]:
    folder = tmp / f"b{bots}-r{rounds}"
    folder.mkdir()
    text, _ = event_toml(bots, rounds)
    (folder / "event.toml").write_text(text, encoding="utf-8")
    group = cpu_group(f"sevenrocks-startcost-{os.getpid()}-{bots}-{rounds}")
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "sevenrocks.server.cli", "tournament", "event.toml"]
    proc = subprocess.Popen(cmd if group is None else group.wrap(cmd), cwd=folder,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    lines = [(time.perf_counter() - t0, line) for line in proc.stdout]
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    total = group.usage() if group is not None else float("nan")
    if group is not None:
        group.remove()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{bots} bots, {rounds} rounds failed: {''.join(l for _, l in lines)[-800:]}")
    split = run_split(folder / "sevenrocks.db", lines)
    return {"bots": bots, "rounds": rounds, "matches": split["matches"], "wall": wall, "cpu": total,
            "harness": usage.ru_utime + usage.ru_stime, "starts": split["starts"], "publish": split["publish"]}


def fit_costs(points: list[dict[str, float]], key: str) -> tuple[float, float, float]:
    x = np.array([[1.0, p["bots"], p["matches"]] for p in points])
    y = np.array([p[key] for p in points])
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    return float(coef[0]), float(coef[1]), float(coef[2])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--bots", default="2,3,4,6", help="field sizes at --base-rounds")
    ap.add_argument("--rounds", default="1,2,4", help="rounds at --base-bots")
    ap.add_argument("--base-bots", type=int, default=3)
    ap.add_argument("--base-rounds", type=int, default=1)
    args = ap.parse_args(argv)
    plan = [(int(b), args.base_rounds) for b in args.bots.split(",")]
    plan += [(args.base_bots, int(r)) for r in args.rounds.split(",") if (args.base_bots, int(r)) not in plan]
    start_load = loadavg()
    points = []
    with tempfile.TemporaryDirectory() as tmpdir:
        print("| bots | rounds | matches | wall s | CPU s (all) | harness CPU s | bots CPU s | bot start-ups s "
              "(summed wall) | after the last match s |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for bots, rounds in plan:
            p = point(bots, rounds, Path(tmpdir))
            points.append(p)
            print(f"| {bots} | {rounds} | {p['matches']} | {p['wall']:.1f} | {p['cpu']:.1f} | {p['harness']:.1f} | "
                  f"{p['cpu'] - p['harness']:.1f} | {p['starts']:.1f} | {p['publish']:.1f} |", flush=True)
    for key, unit in (("cpu", "CPU s"), ("wall", "wall s")):
        a, b, c = fit_costs(points, key)
        print(f"\n{unit}: fixed {a:.2f} + {b:.2f} per bot + {c:.3f} per match (least squares over {len(points)} points)")
    print(f"\nload average {start_load} at the start, {loadavg()} at the end; {os.cpu_count()} CPUs; "
          f"each point the real command from an empty folder, bots in the default sandbox")
    print(json.dumps({"points": points}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
