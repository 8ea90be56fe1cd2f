"""What containing the bots costs, and what it buys against a CPU hog, each with a same-run baseline.

1. **Per-match wall time** of the default event's kind of match (Seven Rocks to 250,
   pairings, the reference bots greedy/random/defensive/greedy; the search bot is
   left out so that a run takes minutes) under ``--sandbox off`` (the baseline),
   ``rlimits`` and ``bwrap``. Both the median match (``duration_s``, the referee's
   view) and the whole event's wall time per match (bot start-up included) are
   shown, and the median decision time at the referee. Goal: bwrap at most 1.10x off.
2. **CPU fairness**: the innocent bots' timeouts (strike policy, so a timeout is
   counted and play goes on) at a tight ``per_move_ms`` in the 12 matches among
   four innocent bots, without and with a fifth entrant next to them whose two
   child processes burn every core. Under ``off`` the spinner competes freely;
   under ``bwrap`` it is held to its cgroup CPU quota (``cpu_cores``, default 1).
   Goal: with the sandbox, the same timeouts within noise.

Runs alternate the configurations so that machine load drifts over all of them
alike; medians of ``--repeats`` runs are quoted.

Usage: python bench/bench_sandbox.py [--repeats 3] [--deals 1] [--per-move-ms 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sevenrocks.server.events.config import EventConfig, parse_config
from sevenrocks.server.events.executor import LocalExecutor
from sevenrocks.server.events.outcome import MatchOutcome
from sevenrocks.server.events.schedule import build_schedule

HERE = Path(__file__).parent
INNOCENT = [("greedy", "greedy"), ("random", "random"), ("defensive", "defensive"), ("greedy2", "greedy")]


def config(mode: str, deals: int, fmt: str, per_move_ms: int, spinner: bool, name: str) -> EventConfig:
    entrants: list[dict[str, Any]] = [{"name": n, "bot": b} for n, b in INNOCENT]
    if spinner:
        entrants.append({"name": "spinner", "command": [sys.executable, str(HERE / "spinbot.py")],
                         "env": {"SPIN_PROCS": "2"}})
    strike = {"policy": "strike", "max_strikes": 1000}
    return parse_config({
        "event": {"name": name, "format": fmt, "deals": deals, "concurrency": 2},
        "entrants": entrants, "time": {"per_move_ms": per_move_ms, "connect_timeout_s": 60},
        "faults": strike if per_move_ms < 1000 else {}, "sandbox": {"mode": mode},
    }, "<bench>")


def play(cfg: EventConfig, tmp: Path) -> tuple[list[MatchOutcome], float]:
    """Play every match of ``cfg`` (no store: only the outcomes); return them and the wall time."""
    out: list[MatchOutcome] = []
    ex = LocalExecutor(cfg, tmp / f"logs-{cfg.name}", cfg.concurrency)
    started = time.perf_counter()
    asyncio.run(ex.run(build_schedule(cfg), out.append))
    return out, time.perf_counter() - started


def innocent_timeouts(outcomes: list[MatchOutcome]) -> tuple[int, int]:
    """(timeouts, decisions) of innocent seats in matches without the spinner."""
    timeouts = decisions = 0
    for o in outcomes:
        if "spinner" in o.task.seats:
            continue
        decisions += sum(len(v) for v in o.decision_ms.values())
        for line in o.record_lines:
            ev = json.loads(line)
            if ev.get("auto") == "strike" and ev.get("fault", {}).get("cause") == "timeout":
                timeouts += 1
    return timeouts, decisions


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--deals", type=int, default=1)
    ap.add_argument("--per-move-ms", type=int, default=20)
    ap.add_argument("--parts", default="cost,fairness", help="comma-separated: cost, fairness")
    args = ap.parse_args(argv)
    parts = set(args.parts.split(","))
    modes = ["off", "rlimits", "bwrap"]
    per_match: dict[str, list[float]] = {m: [] for m in modes}
    per_event: dict[str, list[float]] = {m: [] for m in modes}
    decision: dict[str, list[float]] = {m: [] for m in modes}
    fair: dict[tuple[str, bool], list[tuple[int, int]]] = {(m, s): [] for m in ("off", "bwrap") for s in (False, True)}
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as t:
        tmp = Path(t)
        for r in range(args.repeats):
            for mode in modes if "cost" in parts else ():
                outcomes, wall = play(config(mode, args.deals, "pairings", 10_000, False, f"cost-{mode}-{r}"), tmp)
                per_match[mode].append(statistics.median(o.duration_s for o in outcomes))
                per_event[mode].append(wall / len(outcomes))
                decision[mode].append(statistics.median(x for o in outcomes for v in o.decision_ms.values() for x in v))
                print(f"  run {r + 1} cost {mode:<8} median match {per_match[mode][-1] * 1000:7.1f} ms, "
                      f"event {per_event[mode][-1] * 1000:7.1f} ms/match", flush=True)
            for mode in ("off", "bwrap") if "fairness" in parts else ():
                for spin in (False, True):
                    name = f"fair-{mode}-{'spin' if spin else 'calm'}-{r}"
                    outcomes, _ = play(config(mode, args.deals, "self", args.per_move_ms, spin, name), tmp)
                    fair[(mode, spin)].append(innocent_timeouts(outcomes))
                    print(f"  run {r + 1} fairness {mode:<6} spinner={spin!s:<5} innocent timeouts "
                          f"{fair[(mode, spin)][-1][0]} of {fair[(mode, spin)][-1][1]} decisions", flush=True)

    if "cost" in parts:
        cost_table(args, modes, per_match, per_event, decision)
    if "fairness" in parts:
        fairness_table(args, fair)
    return 0


def cost_table(args: argparse.Namespace, modes: list[str], per_match: dict[str, list[float]],
               per_event: dict[str, list[float]], decision: dict[str, list[float]]) -> None:
    base_m, base_e = statistics.median(per_match["off"]), statistics.median(per_event["off"])
    print(f"\nPer-match wall time, Seven Rocks to 250, pairings of 4 reference bots, {args.deals} deal(s) "
          f"({12 * args.deals} matches a run), median of {args.repeats} runs")
    base_d = statistics.median(decision["off"])
    print(f"{'sandbox':<10}{'median match ms':>17}{'ratio':>8}{'event ms/match':>17}{'ratio':>8}"
          f"{'median decision ms':>20}{'ratio':>8}")
    for mode in modes:
        m, e = statistics.median(per_match[mode]), statistics.median(per_event[mode])
        d = statistics.median(decision[mode])
        print(f"{mode:<10}{m * 1000:>17.1f}{m / base_m:>7.2f}x{e * 1000:>17.1f}{e / base_e:>7.2f}x"
              f"{d:>20.2f}{d / base_d:>7.2f}x")


def fairness_table(args: argparse.Namespace, fair: dict[tuple[str, bool], list[tuple[int, int]]]) -> None:
    print(f"\nInnocent bots' timeouts at per_move_ms={args.per_move_ms} (strike policy), the {12 * args.deals} "
          f"matches among the 4 innocent bots, median of {args.repeats} runs (each run: timeouts / decisions)")
    print(f"{'sandbox':<10}{'no spinner':>14}{'spinner (2 procs)':>20}{'ratio':>8}   runs (timeouts/decisions)")
    for mode in ("off", "bwrap"):
        calm = statistics.median(x[0] for x in fair[(mode, False)])
        spin = statistics.median(x[0] for x in fair[(mode, True)])
        runs = " ".join(f"{a[0]}/{a[1]}->{b[0]}/{b[1]}" for a, b in zip(fair[(mode, False)], fair[(mode, True)]))
        ratio = f"{spin / calm:.2f}x" if calm else ("1.00x" if spin == calm else "inf")
        print(f"{mode:<10}{calm:>14g}{spin:>20g}{ratio:>8}   {runs}")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
