"""`sevenrocks verify` against an independent pure-Python verifier on the same records, same run.

The records: ``--records`` simulated matches (default 4,800: a quarter each of
seven-rocks and fives with 2, 3 and 4 players, greedy against random), written by
`sevenrocks simulate` into a temporary folder. Ours: the whole `sevenrocks verify
FOLDER` process. The baseline: the whole `python bench/engine/baseline_verify.py FOLDER`
process, a verifier written from the rules alone with the standard library's json
(see its docstring). Both are timed in CPU seconds (the child's user + system) and
must agree that every record is clean. Runs alternate; medians are quoted. The JSON
rows time parsing alone, in process, over every line of the same records.

    python bench/engine/bench_verify.py [--reps 3] [--records 4800]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.common, the shared helpers
from bench.common.headline import headline  # noqa: E402


HERE = Path(__file__).resolve().parent
CONFIGS = [
    ["--policies", "greedy,random"],
    ["--ruleset", "fives", "--players", "2", "--policies", "greedy,random"],
    ["--ruleset", "fives", "--players", "3", "--policies", "greedy,random,random"],
    ["--ruleset", "fives", "--players", "4", "--policies", "greedy,random,random,greedy"],
]


def cpu_of(cmd: list[str]) -> tuple[float, str]:
    before = os.times()
    out = subprocess.run(cmd, capture_output=True, text=True)
    after = os.times()
    if out.returncode not in (0, 1):
        raise SystemExit(f"{cmd} failed: {out.stderr[-2000:]}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return cpu, out.stdout.strip().splitlines()[-1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--records", type=int, default=4800)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "records"
        per = max(1, args.records // len(CONFIGS))
        for i, extra in enumerate(CONFIGS):
            subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "simulate", "--matches", str(per),
                            "--seed", str(100 + i), "--records", str(folder / str(i)), "-q", *extra],
                           check=True, stdout=subprocess.DEVNULL)
        files = sorted(folder.rglob("*.jsonl"))
        lines = [x for p in files for x in p.read_text(encoding="utf-8").splitlines()]
        ours_cmd = [sys.executable, "-m", "sevenrocks.server.cli", "verify", str(folder)]
        base_cmd = [sys.executable, str(HERE / "baseline_verify.py"), str(folder)]
        ours: list[float] = []
        base: list[float] = []
        for _ in range(args.reps):
            cpu, verdict = cpu_of(ours_cmd)
            ours.append(cpu)
            if f"{len(files)} clean" not in verdict:
                raise SystemExit(f"sevenrocks verify did not find every record clean: {verdict}")
            cpu, verdict = cpu_of(base_cmd)
            base.append(cpu)
            if f"{len(files)} clean" not in verdict:
                raise SystemExit(f"the baseline verifier did not find every record clean: {verdict}")
        from sevenrocks.sdk.rules.records import loads

        parse: dict[str, list[float]] = {"json.loads": [], "records.loads (msgspec)": []}
        for _ in range(args.reps):
            for name, fn in (("json.loads", json.loads), ("records.loads (msgspec)", loads)):
                t0 = time.process_time()
                for x in lines:
                    fn(x)
                parse[name].append(time.process_time() - t0)
    o, b = statistics.median(ours), statistics.median(base)
    print(f"{len(files):,} records ({len(lines):,} lines), median of {args.reps} whole processes, CPU seconds\n")
    print("| verifier | CPU s | records/CPU s | speed vs baseline |")
    print("|---|---:|---:|---:|")
    print(f"| independent pure-Python verifier, bench/engine/baseline_verify.py (baseline) | {b:.2f} | {len(files) / b:,.0f} | 1.00x |")
    print(f"| `sevenrocks verify` | {o:.2f} | {len(files) / o:,.0f} | {b / o:.2f}x |")
    headline("`verify` vs the independent verifier", f"{b / o:.2f}x", ">= 3x",
             f"{o:.2f} vs {b:.2f} CPU s on {len(files):,} records, median of {args.reps}")
    print("\n| JSON parsing alone, in process | CPU s | vs json.loads |")
    print("|---|---:|---:|")
    j = statistics.median(parse["json.loads"])
    for name, ts in parse.items():
        m = statistics.median(ts)
        print(f"| {name} | {m:.2f} | {j / m:.2f}x |")


if __name__ == "__main__":
    main()
