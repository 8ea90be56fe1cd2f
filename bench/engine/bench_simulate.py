"""`sevenrocks simulate` as a user runs it, against OpenSpiel's engine in process, in the same run.

Ours: the whole `sevenrocks simulate` process (interpreter start-up, imports, four
random policies each fed its own SeatView, the summary table, one record file per
match), timed in CPU seconds (user + system, from the child's rusage); a "play" is
a placement, counted from the records afterwards (outside the timing). The
baseline: OpenSpiel's ``python_team_dominoes`` (PyPI ``open-spiel``, the nearest
public peer) playing random playouts *in process*, with no views, no records and
no start-up, timed with ``time.process_time()``; a "play" is an ``apply_action`` on a
player node (placements: OpenSpiel has no pass action). Ours and the baseline
alternate so that machine noise hits both alike; the table quotes medians.

The records go where a user's would, into a folder under the current directory
(``--records-in`` to choose another place), not the system's temporary folder: after a
day of test suites deleting files there, creating a file under ``/tmp`` was measured at
0.55-0.74 ms of CPU against 0.015 ms under the checkout, on the same disk (an hour after
the deletions stopped, 0.026 ms in both). The cost follows recent deletions near the folder
(ext4 checks each candidate inode for one), not the folder's name: right after a run's
records were deleted, the checkout cost 0.09 ms a file too. Writing under the current
folder keeps other jobs' churn in ``/tmp`` out of the figure; the table prints both
folders' cost per new file, measured before the runs, so a reader sees which state the
run met.

``--baseline-python`` adds a same-run comparison against another build of the project:
the interpreter of a second environment with the baseline tree installed (for example
``git archive main`` unpacked and ``pip install``-ed into its own venv). Its
``simulate --records`` runs alternate with ours, and the table gives ours against it.

    python bench/engine/bench_simulate.py [--reps 5] [--matches 300] [--records-in DIR] [--baseline-python /tmp/base/bin/python]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.common, the shared helpers
from bench.common.headline import headline  # noqa: E402



def simulate(matches: int, records: Path | None, policies: str = "random",
             python: str = sys.executable) -> tuple[int, float]:
    """(plays, CPU seconds) of one `sevenrocks simulate` process (run by ``python``)."""
    cmd = [python, "-m", "sevenrocks.server.cli", "simulate", "--matches", str(matches), "--seed", "1",
           "--policies", policies, "-q"]
    if records is not None:
        cmd += ["--records", str(records)]
    before = os.times()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    plays = 0
    if records is not None:
        for p in records.glob("*.jsonl"):
            plays += p.read_bytes().count(b'{"event": "play"')
    return plays, cpu


def openspiel(seconds: float) -> tuple[int, float] | None:
    """(plays, CPU seconds) of random OpenSpiel playouts for about ``seconds`` of CPU."""
    try:
        import pyspiel
        from open_spiel.python.games import team_dominoes  # noqa: F401  (registers the game)
    except ImportError:
        return None
    game = pyspiel.load_game("python_team_dominoes")
    rng = random.Random(0)
    plays = 0
    start = time.process_time()
    while time.process_time() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice(state.chance_outcomes())[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                plays += 1
    return plays, time.process_time() - start


def create_cost(folder: Path, files: int = 300) -> float:
    """CPU µs to create one empty file in a new folder under ``folder`` (median of three batches).

    ext4 checks each candidate inode for a recent deletion, so a folder whose part of the
    disk saw many files deleted lately (a temporary folder under test suites) can cost tens
    of times more per new file than a quiet one; this row shows which state a run met.
    """
    costs = []
    for _ in range(3):
        with tempfile.TemporaryDirectory(prefix=".bench-create-", dir=folder) as tmp:
            c0 = time.process_time()
            for i in range(files):
                os.close(os.open(os.path.join(tmp, f"f{i}"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666))
            costs.append((time.process_time() - c0) / files * 1e6)
    return statistics.median(costs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--matches", type=int, default=300, help="matches per simulate process (about 110,000 plays)")
    ap.add_argument("--baseline-python", default=None,
                    help="the Python of another environment with the baseline tree installed: "
                         "its simulate --records runs alternate with ours")
    ap.add_argument("--records-in", type=Path, default=Path("."),
                    help="the folder under which each run's records are written (default: the current one)")
    args = ap.parse_args()
    rows: dict[str, list[tuple[int, float]]] = {"records": [], "no records": [], "greedy": [], "openspiel": [],
                                                "baseline": [], "start-up": []}
    plays_per_match = 0.0
    create_here, create_tmp = create_cost(args.records_in), create_cost(Path(tempfile.gettempdir()))
    with tempfile.TemporaryDirectory(prefix=".bench-simulate-", dir=args.records_in) as tmp:
        for rep in range(args.reps):
            out = Path(tmp) / f"r{rep}"
            plays, cpu = simulate(args.matches, out)
            rows["records"].append((plays, cpu))
            plays_per_match = plays / args.matches
            _, cpu = simulate(args.matches, None)
            rows["no records"].append((plays, cpu))  # the same seed plays the same matches
            rows["start-up"].append(simulate(1, Path(tmp) / f"s{rep}"))
            gout = Path(tmp) / f"g{rep}"
            rows["greedy"].append(simulate(args.matches, gout, "greedy"))
            if args.baseline_python:
                bout = Path(tmp) / f"b{rep}"
                rows["baseline"].append(simulate(args.matches, bout, "random", args.baseline_python))
                if rep == 0:
                    same = sorted((p.name, p.read_bytes()) for p in out.glob("*.jsonl")) == \
                        sorted((p.name, p.read_bytes()) for p in bout.glob("*.jsonl"))
                    print(f"records of this tree and the baseline tree byte-identical: {'yes' if same else 'NO'}")
            base = openspiel(cpu)
            if base is not None:
                rows["openspiel"].append(base)

    def rate(key: str) -> float:
        return statistics.median(p / c for p, c in rows[key]) if rows[key] else float("nan")

    base = rate("openspiel")
    print(f"`sevenrocks simulate --matches {args.matches}` processes ({plays_per_match:.0f} plays a match), "
          f"median of {args.reps}; OpenSpiel random playouts in process for as many CPU seconds\n")
    print("| what | plays | CPU s | plays per CPU s | vs OpenSpiel |")
    print("|---|---:|---:|---:|---:|")
    labels = {
        "records": "simulate, four random policies, --records (whole process)",
        "no records": "simulate, four random policies, no records (whole process)",
        "greedy": "simulate, four greedy policies, --records (whole process)",
        "openspiel": "OpenSpiel python_team_dominoes, random, in process (baseline)",
    }
    if args.baseline_python:
        labels["baseline"] = f"baseline tree ({args.baseline_python}), four random policies, --records"
    for key, label in labels.items():
        if not rows[key]:
            print(f"| {label} | n/a | n/a | n/a | n/a (open-spiel not installed) |")
            continue
        plays = statistics.median(p for p, _ in rows[key])
        cpu = statistics.median(c for _, c in rows[key])
        ratio = f"{rate(key) / base:.2f}x" if rows["openspiel"] else "n/a"
        print(f"| {label} | {plays:,.0f} | {cpu:.2f} | {rate(key):,.0f} | {ratio} |")
    print(f"\ncreating a file before the runs (kernel and Python, CPU): {create_here:.0f} µs under "
          f"{args.records_in.resolve()} (where the records went), {create_tmp:.0f} µs under {tempfile.gettempdir()}")
    # The cost curve: a fixed start-up (interpreter, imports, one match) plus a cost per match.
    startup = statistics.median(c for _, c in rows["start-up"])
    per_match = (statistics.median(c for _, c in rows["records"]) - startup) / max(1, args.matches - 1)
    print(f"\nstart-up, `simulate --matches 1 --records` (whole process): {startup * 1000:.0f} ms CPU, "
          f"{startup / statistics.median(c for _, c in rows['records']):.0%} of the {args.matches}-match run; "
          f"then {per_match * 1000:.3f} ms CPU per match with its record")
    if rows["openspiel"] and per_match > 0:
        marginal = plays_per_match / per_match
        print(f"past start-up: {marginal:,.0f} plays per CPU s, {marginal / base:.2f}x OpenSpiel")
        for n in (300, 1000, 3000, 10000):
            whole = plays_per_match * n / (startup + per_match * (n - 1))
            print(f"  a {n:,}-match process, from this curve: {whole / base:.2f}x OpenSpiel")
    if rows["baseline"]:
        print(f"\nsimulate --records, this tree vs the baseline tree: {rate('records') / rate('baseline'):.2f}x "
              f"the plays per CPU s (median of {args.reps} alternating runs each)")
    if rows["openspiel"]:
        headline("`simulate`, plays per CPU s vs OpenSpiel in process", f"{rate('records') / base:.2f}x", ">= 8x",
                 f"{rate('records'):,.0f} vs {base:,.0f} plays/CPU s, median of {args.reps}")


if __name__ == "__main__":
    main()
