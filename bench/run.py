"""Run every benchmark in this folder (``bench_*.py``), one after another, each in its own process.

Usage:
    python bench/run.py [NAME ...]     e.g. python bench/run.py engine referee
    python bench/run.py table [--builds compiled,pure] [--skip-main] [--skip-scale]

``table`` prints the speed table (docs/scale.md) in one run: the main job (the default
``sevenrocks tournament``, wall time), the bare engine vs OpenSpiel, ``simulate`` vs
OpenSpiel, the PettingZoo environment's decisions/s, the search bot's deals per
decision at its clock, ``verify`` vs the independent verifier, the SDK decision vs a bare grpc.aio echo, and the decision p99
of 1,000 concurrent matches, with the load average before and after. Rows where the
engine matters run once per build: *compiled* is the installed package when it is a
compiled wheel (``pip install .``, not ``-e``; ``tox -e bench``), *pure* the same
source imported as plain Python from this checkout (``PYTHONPATH``). Every benchmark
behind a row also prints its own full table, with its baseline from the same run.
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

HERE = Path(__file__).parent
ROOT = HERE.parent
SOURCES = [ROOT / d for d in ("sdk", "bots", "server", "proto")]


def main(argv: list[str]) -> int:
    if argv[:1] == ["table"]:
        return table(argv[1:])
    scripts = sorted(HERE.glob("bench_*.py"))
    if argv:
        scripts = [s for s in scripts if s.stem.removeprefix("bench_") in argv]
        if not scripts:
            print(f"no benchmark named {argv}; have: {[s.stem.removeprefix('bench_') for s in HERE.glob('bench_*.py')]}")
            return 2
    status = 0
    for script in scripts:
        print(f"\n## {script.stem}\n", flush=True)
        status |= subprocess.call([sys.executable, str(script)])
    return status


def build_env(build: str, headlines: Path) -> dict[str, str]:
    """The environment of a benchmark process (and of every process it starts) for ``build``."""
    env = dict(os.environ, SEVENROCKS_BENCH_HEADLINES=str(headlines))
    if build == "pure":
        env["PYTHONPATH"] = os.pathsep.join([*map(str, SOURCES), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def installed_build(env: dict[str, str]) -> str:
    out = subprocess.run([sys.executable, "-c", "from sevenrocks.sdk.rules import engine_build; print(engine_build())"],
                         env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main_job(env: dict[str, str], tmp: Path, build: str) -> None:
    """Wall time of the default ``sevenrocks tournament`` (fresh database), as a user runs it."""
    out = tmp / f"main-{build}"
    out.mkdir(parents=True)
    cmd = [sys.executable, "-m", "sevenrocks.server.cli", "tournament", "--db", str(out / "event.db"),
           "--out", str(out / "site")]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        print(f"the main job failed ({build}): {proc.stderr.strip()[-500:]}")
        return
    minutes, seconds = divmod(wall, 60)
    print(f"main job ({build}): {int(minutes)} m {seconds:.0f} s wall", flush=True)
    record(env, {"row": "`sevenrocks tournament` (the main job, defaults, 200 matches)",
                 "value": f"{int(minutes)} m {seconds:02.0f} s", "goal": "<= 2 min", "detail": "wall, fresh database",
                 "build": build})


def record(env: dict[str, str], row: dict[str, str]) -> None:
    with open(env["SEVENROCKS_BENCH_HEADLINES"], "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")


def table(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="bench/run.py table", description="the speed table (docs/scale.md), in one run")
    ap.add_argument("--builds", default="compiled,pure", help="comma-separated: compiled, pure")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each benchmark (medians are quoted)")
    ap.add_argument("--skip-main", action="store_true", help="leave out the main job (minutes per build)")
    ap.add_argument("--skip-scale", action="store_true", help="leave out the 1,000-match load run")
    args = ap.parse_args(argv)
    start_load = loadavg()
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        headlines = tmp / "headlines.jsonl"
        headlines.touch()
        builds = []
        for build in args.builds.split(","):
            env = build_env(build, headlines)
            have = installed_build(env)
            if have != build:
                print(f"skipping the {build} build: this interpreter imports the {have} engine "
                      "(compiled: pip install . without -e, or tox -e bench)")
                continue
            builds.append(build)
        for build in builds:
            env = build_env(build, headlines)
            print(f"\n## {build} build\n", flush=True)
            if not args.skip_main:
                main_job(env, tmp, build)
            for script, extra in (("bench_engine.py", []), ("bench_simulate.py", []), ("bench_env.py", []),
                                  ("bench_search.py", []), ("bench_verify.py", []),
                                  ("bench_referee.py", ["--decision-only"])):
                print(f"\n### {script} ({build})\n", flush=True)
                subprocess.call([sys.executable, str(HERE / script), "--reps", str(args.reps), *extra], env=env)
        if builds and not args.skip_scale:
            env = build_env(builds[0], headlines)
            print(f"\n### bench_scale.py --levels 1000 ({builds[0]})\n", flush=True)
            subprocess.call([sys.executable, str(HERE / "bench_scale.py"), "--skip-cluster", "--levels", "1000"],
                            env=env)
        rows = [json.loads(line) for line in headlines.read_text(encoding="utf-8").splitlines() if line]
    print(f"\n## The speed table (load average {start_load} at the start, {loadavg()} at the end; "
          f"{os.cpu_count()} CPUs)\n")
    print("| path | goal | " + " | ".join(builds) + " | detail |")
    print("|---|---:|" + "---:|" * len(builds) + "---|")
    names = list(dict.fromkeys(r["row"] for r in rows))
    for name in names:
        mine = [r for r in rows if r["row"] == name]
        values = [next((r["value"] for r in mine if r["build"] == b), "–") for b in builds]
        detail = "; ".join(f"{r['build']}: {r['detail']}" for r in mine if r["detail"])
        print(f"| {name} | {mine[0]['goal']} | " + " | ".join(values) + f" | {detail} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
