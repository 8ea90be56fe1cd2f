"""Run the benchmarks, each in a process of its own: every script in a folder of bench/ but common/.

Usage:
    python bench/run.py --list                     every benchmark with its group and what it measures
    python bench/run.py [NAME ...]                 e.g. python bench/run.py engine referee
    python bench/run.py --group GROUP [NAME ...]   every benchmark of a group, e.g. --group league
    python bench/run.py                            every benchmark (but the tools run by name only)
    python bench/run.py table [--builds compiled,pure] [--skip-main] [--skip-scale] [--main-only]

A benchmark is a script ``bench/<group>/<file>.py``; its NAME is the file's name without
``bench_`` (``bench/referee/bench_referee.py`` is ``referee``, ``bench/ranking/claims.py`` is
``claims``), and ``group/name`` works too. ``bench/common/`` holds what several benchmarks
share and is not run; a ``baseline_*.py`` beside a benchmark is that benchmark's baseline
and is not run on its own.

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
import ast
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # bench.common, the shared helpers

from bench.common.cost import cpu_group, run_split  # noqa: E402
SOURCES = [ROOT / d for d in ("sdk", "bots", "server", "proto")]
#: The folder of the helpers several benchmarks share (not benchmarks themselves).
HELPERS = "common"
#: What each folder's benchmarks measure (``--list`` prints it).
GROUPS = {
    "engine": "the game engine and the bots in process: no referee, no network",
    "referee": "one decision at the gRPC referee, against a bare grpc.aio echo",
    "scale": "many matches at once: one referee at 1,000 matches, a Dask cluster",
    "events": "an event's own costs: scheduling, storing, rating, the fit, bot processes",
    "ranking": "how often an event's order and verdict are right (the pool of real matches in data/)",
    "league": "a running league: placement, liveness, soak, an author's upload",
    "sandbox": "containment's costs: bot start-up, CPU fairness, floods, big messages",
    "web": "the published site and the web process beside a league",
}
#: Tools listed with the benchmarks but run only when named: what running them does.
BY_NAME_ONLY = {
    "ranking_pool": "rebuilds bench/ranking/data/ranking_pool.csv (real matches, about 17 minutes)",
}


@dataclass(frozen=True)
class Benchmark:
    group: str
    name: str
    path: Path

    @property
    def summary(self) -> str:
        """The first line of the script's docstring (read, not imported)."""
        doc = ast.get_docstring(ast.parse(self.path.read_text(encoding="utf-8"))) or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""


def benchmarks() -> list[Benchmark]:
    """Every benchmark: each ``*.py`` in a folder of bench/ but the helpers', ``__init__`` and baselines."""
    return [Benchmark(path.parent.name, path.stem.removeprefix("bench_"), path)
            for path in sorted(HERE.glob("*/*.py"))
            if path.parent.name != HELPERS and path.name != "__init__.py" and not path.stem.startswith("baseline_")]


def script(name: str) -> Path:
    """The path of the benchmark ``name`` (for the table)."""
    return next(b.path for b in benchmarks() if b.name == name)


def print_list(found: list[Benchmark]) -> None:
    for group in sorted({b.group for b in found}):
        print(f"{group}/  {GROUPS.get(group, '')}")
        for b in sorted((b for b in found if b.group == group), key=lambda b: b.name):
            note = f" [by name only: {BY_NAME_ONLY[b.name]}]" if b.name in BY_NAME_ONLY else ""
            print(f"  {b.group + '/' + b.name:<26} {str(b.path.relative_to(ROOT)):<40} {b.summary}{note}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["table"]:
        return table(argv[1:])
    ap = argparse.ArgumentParser(prog="bench/run.py", description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (name or group/name); default: all")
    ap.add_argument("--group", action="append", default=[], help="run every benchmark of this group (repeatable)")
    ap.add_argument("--list", action="store_true", help="print every benchmark with its group, run nothing")
    args = ap.parse_args(argv)
    found = benchmarks()
    if args.list:
        print_list(found)
        return 0
    unknown = [g for g in args.group if g not in {b.group for b in found}]
    unknown += [n for n in args.names if not any(n in (b.name, f"{b.group}/{b.name}") for b in found)]
    if unknown:
        print(f"no benchmark or group named {unknown}; `python bench/run.py --list` names them all")
        return 2
    if args.names or args.group:
        chosen = [b for b in found if b.group in args.group or b.name in args.names
                  or f"{b.group}/{b.name}" in args.names]
    else:
        chosen = [b for b in found if b.name not in BY_NAME_ONLY]
    status = 0
    for b in chosen:
        print(f"\n## {b.group}/{b.name}\n", flush=True)
        status |= subprocess.call([sys.executable, str(b.path)])
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
    """The default ``sevenrocks tournament`` from an empty folder, as a user runs it: wall, CPU and its split.

    The whole command's CPU (the harness and every bot process it starts, in or out of
    bubblewrap) is read from a cpuacct control group the command is started in (root
    on cgroup v1 or v2; without one only the harness's own CPU is known). The split
    comes from the run's own data: the harness process's CPU (``wait4``: the embedded
    referee, planner, fit and publishing), the wall time after the last match (fit and
    publish), the bots' decision times as the referee timed them (the ``decisions``
    column), and the supervisor's bot start-ups (its closing line).
    """
    out = tmp / f"main-{build}"
    out.mkdir(parents=True)
    cmd = [sys.executable, "-m", "sevenrocks.server.cli", "tournament"]
    group = cpu_group(f"sevenrocks-bench-{os.getpid()}-{build}")
    load = loadavg()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd if group is None else group.wrap(cmd), cwd=out, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    lines: list[tuple[float, str]] = [(time.perf_counter() - t0, line) for line in proc.stdout]
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    total = group.usage() if group is not None else None
    if group is not None:
        group.remove()
    if proc.returncode != 0:
        print(f"the main job failed ({build}): {''.join(l for _, l in lines)[-800:]}")
        return
    harness = usage.ru_utime + usage.ru_stime
    split = run_split(out / "sevenrocks.db", lines)
    minutes, seconds = divmod(wall, 60)
    cpu = f"{total:.0f} CPU s" if total is not None else f"harness {harness:.0f} CPU s (no cpuacct group)"
    print(f"main job ({build}), load {load} at the start: {int(minutes)} m {seconds:.0f} s wall, {cpu}; "
          f"{split['matches']} matches", flush=True)
    print(f"| part | seconds | how it is known |\n|---|---:|---|\n"
          f"| the whole command, wall | {wall:.1f} | from start to exit, an empty folder |\n"
          + (f"| the whole command, CPU | {total:.1f} | cpuacct group of the command (harness + bots) |\n"
             if total is not None else "")
          + f"| harness process CPU (referee, planner, fit, publish) | {harness:.1f} | wait4 of the command |\n"
          f"| fit and publish (wall after the last match) | {split['publish']:.1f} | the run's progress lines |\n"
          + (f"| bot processes CPU (start-up + thinking) | {total - harness:.1f} | the group less the harness |\n"
             if total is not None else "")
          + f"| bots thinking: decision round trips as the referee timed them (wall; waiting for a core included) | {split['thinking']:.1f} | "
          f"{split['decisions']} decisions: {split['per_bot']} |\n"
          f"| bot start-up (spawn to connected, summed) | {split['starts']:.1f} | {split['started']} |", flush=True)
    record(env, {"row": "`sevenrocks tournament` (the main job, defaults, from an empty folder)",
                 "value": f"{int(minutes)} m {seconds:02.0f} s", "goal": "<= 60 s",
                 "detail": (f"{total:.0f} CPU s; " if total is not None else "")
                 + f"harness {harness:.0f} CPU s, bots thinking {split['thinking']:.0f} s, "
                 f"bot start-up {split['starts']:.1f} s, fit and publish {split['publish']:.1f} s; "
                 f"{split['matches']} matches; load {load}", "build": build})


def record(env: dict[str, str], row: dict[str, str]) -> None:
    with open(env["SEVENROCKS_BENCH_HEADLINES"], "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")


def table(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="bench/run.py table", description="the speed table (docs/scale.md), in one run")
    ap.add_argument("--builds", default="compiled,pure", help="comma-separated: compiled, pure")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each benchmark (medians are quoted)")
    ap.add_argument("--skip-main", action="store_true", help="leave out the main job (minutes per build)")
    ap.add_argument("--skip-scale", action="store_true", help="leave out the 1,000-match load run")
    ap.add_argument("--main-only", action="store_true", help="only the main job (and its CPU split)")
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
            for name, extra in () if args.main_only else (("engine", []), ("simulate", []), ("env", []), ("search", []), ("verify", []),
                                ("referee", ["--decision-only"])):
                path = script(name)
                print(f"\n### {path.relative_to(ROOT)} ({build})\n", flush=True)
                subprocess.call([sys.executable, str(path), "--reps", str(args.reps), *extra], env=env)
        if builds and not args.skip_scale and not args.main_only:
            env = build_env(builds[0], headlines)
            print(f"\n### bench/scale/bench_scale.py --levels 1000 ({builds[0]})\n", flush=True)
            subprocess.call([sys.executable, str(script("scale")), "--skip-cluster", "--levels", "1000"], env=env)
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
