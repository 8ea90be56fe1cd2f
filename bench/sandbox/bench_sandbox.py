"""What containing the bots costs, and what it buys against a CPU hog and a socket flood,
each with a same-run baseline.

1. **Per-match wall time** of the default event's kind of match (Seven Rocks to 250,
   pairings, the reference bots greedy/random/defensive/greedy; the search bot is
   left out so that a run takes minutes) under ``--sandbox off`` (the baseline),
   ``rlimits`` and ``bwrap``. Both the median match (``duration_s``, the referee's
   view) and the whole event's wall time per match (bot start-up included) are
   shown, and the median decision time at the referee. Goal: bwrap at most 1.10x off.
2. **CPU fairness** (``fairness``): the innocent bots' timeouts (strike policy, so a
   timeout is counted and play goes on) and their decision time's 95th percentile in
   the 12 matches among four innocent bots, without and with a fifth entrant next to
   them that answers every turn at once (it stays within its clock) while its child
   processes burn every core (twice as many spinners as cores), at ``per_move_ms`` 20
   and 1000 (``--clocks``). Under ``off`` the spinner competes freely; under ``bwrap``
   it is held to its cgroup CPU quota (``cpu_cores``, default 1).
   Goal: with the sandbox, the same timeouts and p95 within noise.
3. **Socket flood** (``flood``): a fifth entrant whose 80 children connect to its
   referee socket as often as they can and hold every connection, at ``per_move_ms``
   100, in bwrap with each bot's own capped socket (sandbox/gates.py, the default)
   and with every bot on the referee's one socket (``connections_per_bot = 0``, as
   before the gates). Shown: the harness's peak open files, the event's wall time
   against the same socket layout without the flood, the innocent bots' timeouts and
   decision p95.

4. **Oversized messages** (``big``): a fifth entrant that, from its first decision,
   opens new streams on its own referee socket and sends a 60 MB first message on
   each, one after another until it is stopped (tests/sandbox/bots/big_message.py), at
   ``per_move_ms`` 20 in bwrap. Three configurations: no attacker (calm), the attacker
   with the message cap switched off in this process (the gate relays every byte and
   gRPC accepts 64 MiB, as before the cap: "before"), and with the cap (the gate cuts
   a connection at the length prefix, gRPC accepts 256 KiB: "after"). Shown: the
   innocent bots' timeouts and decision p99, and the harness's peak memory.

Runs alternate the configurations so that machine load drifts over all of them
alike; medians of ``--repeats`` runs are quoted.

Usage: python bench/sandbox/bench_sandbox.py [--repeats 3] [--deals 1] [--clocks 20,1000] [--parts cost,fairness,flood,big]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from sevenrocks.server.events.config import EventConfig, parse_config
from sevenrocks.server.events.executor import LocalExecutor
from sevenrocks.server.events.outcome import MatchOutcome
from sevenrocks.server.events.schedule import build_schedule

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the checkout: bench.common, the shared helpers
from bench.common.paths import ROOT, SPINBOT  # noqa: E402

INNOCENT = [("greedy", "greedy"), ("random", "random"), ("defensive", "defensive"), ("greedy2", "greedy")]
#: The flooding bot of the containment tests (80 children, each holding every connection it gets).
FLOODER = ROOT / "tests" / "sandbox" / "bots" / "socket_flood.py"
#: The oversized-message sender of the containment tests.
BIG_SENDER = ROOT / "tests" / "sandbox" / "bots" / "big_message.py"


def config(mode: str, deals: int, fmt: str, per_move_ms: int, spinner: bool, name: str, target: int = 250,
           flooder: bool = False, big: bool = False) -> EventConfig:
    # The attacker comes first, so that its matches (and its flood) start with the event's.
    entrants: list[dict[str, Any]] = []
    if spinner:
        entrants.append({"name": "spinner", "command": [sys.executable, str(SPINBOT)],
                         "env": {"SPIN_PROCS": str(2 * (os.cpu_count() or 1))}})
    if flooder:
        entrants.append({"name": "flooder", "command": [sys.executable, str(FLOODER)],
                         "env": {"FLOOD_PROCS": "80", "FLOOD_S": "3600"}})
    if big:
        entrants.append({"name": "big", "command": [sys.executable, str(BIG_SENDER)],
                         "env": {"BIG_MB": "60", "BIG_COUNT": "0"}})
    entrants += [{"name": n, "bot": b} for n, b in INNOCENT]
    strike = {"policy": "strike", "max_strikes": 1000}
    sandbox: dict[str, Any] = {"mode": mode}
    if flooder:
        sandbox["max_processes"] = 512  # room for the flood's 80 children (the default 128 would kill it)
    return parse_config({
        "event": {"name": name, "format": fmt, "deals": deals, "concurrency": 2, "target": target},
        "entrants": entrants, "time": {"per_move_ms": per_move_ms, "connect_timeout_s": 60},
        "faults": strike if per_move_ms < 1000 or spinner or flooder or big else {}, "sandbox": sandbox,
        "bots": {"fresh_process": "never"} if flooder else {},  # one flood for the whole event
    }, "<bench>")


class FileCount(threading.Thread):
    """The peak number of this process's open file descriptors, sampled every 50 ms."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                self.peak = max(self.peak, len(os.listdir("/proc/self/fd")))
            except OSError:
                pass
            self.stop.wait(0.05)


#: One event loop for every run: gRPC's asyncio poller keeps the first loop it served, and a
#: second asyncio.run() left it calling a closed loop ("Event loop is closed", then a segfault).
LOOP = asyncio.new_event_loop()


def play(cfg: EventConfig, tmp: Path, count_files: bool = False) -> tuple[list[MatchOutcome], float, int, str]:
    """Play every match of ``cfg`` (no store: only the outcomes); return them, the wall time, the
    peak open files (with ``count_files``) and the error that stopped the event ('' if none)."""
    out: list[MatchOutcome] = []
    ex = LocalExecutor(cfg, tmp / f"logs-{cfg.name}", cfg.concurrency)
    files = FileCount()
    if count_files:
        files.start()
    started = time.perf_counter()
    error = ""
    try:
        LOOP.run_until_complete(ex.run(build_schedule(cfg), out.append))
    except (Exception, asyncio.CancelledError) as e:  # noqa: BLE001 (a flood may stop the event: a result)
        error = f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:120]}".rstrip(": ")
    files.stop.set()
    return [o for o in out if isinstance(o, MatchOutcome)], time.perf_counter() - started, files.peak, error


def innocent_timeouts(outcomes: list[MatchOutcome], attacker: str = "spinner") -> tuple[int, int]:
    """(timeouts, decisions) of innocent seats in matches without the attacker."""
    timeouts = decisions = 0
    for o in outcomes:
        if attacker in o.task.seats:
            continue
        decisions += sum(len(v) for v in o.decision_ms.values())
        for line in o.record_lines:
            ev = json.loads(line)
            if ev.get("auto") == "strike" and ev.get("fault", {}).get("cause") == "timeout":
                timeouts += 1
    return timeouts, decisions


def innocent_p95(outcomes: list[MatchOutcome], attacker: str = "spinner", q: float = 0.95) -> float:
    """The ``q`` quantile (default the 95th percentile) of the innocent seats' decision times (ms),
    in matches without the attacker."""
    times = sorted(x for o in outcomes if attacker not in o.task.seats for v in o.decision_ms.values() for x in v)
    return times[int(q * (len(times) - 1))] if times else float("nan")


class PeakMemory(FileCount):
    """How far this process's resident memory rose over a run (MB): the kernel's high-water mark,
    reset at the start, less the resident memory then (memory an earlier run kept is not counted)."""

    def run(self) -> None:
        with contextlib.suppress(OSError):
            Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current VmRSS
        self.start_mb = self._read("VmRSS")
        self.stop.wait()

    @staticmethod
    def _read(field: str) -> float:
        return int(Path("/proc/self/status").read_text().split(f"{field}:")[1].split()[0]) / 1024

    def mb(self) -> float:
        return self._read("VmHWM") - self.start_mb


@contextlib.contextmanager
def message_cap(on: bool) -> Iterator[None]:
    """The oversized-message cap as it is (``on``) or switched off in this process, as before it
    existed: the gate passes every byte on and gRPC accepts messages up to 64 MiB."""
    from sevenrocks.server.referee import server
    from sevenrocks.server.sandbox import framing

    feed, factor = framing.MessageSizes.feed, server.GRPC_RECEIVE_FACTOR
    if not on:
        framing.MessageSizes.feed = lambda self, data: None  # type: ignore[method-assign]
        server.GRPC_RECEIVE_FACTOR = 1024
    try:
        yield
    finally:
        framing.MessageSizes.feed, server.GRPC_RECEIVE_FACTOR = feed, factor  # type: ignore[method-assign]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--deals", type=int, default=1)
    ap.add_argument("--clocks", default="20,1000", help="per_move_ms of the fairness runs, comma-separated")
    ap.add_argument("--target", type=int, default=100, help="match target of the fairness and flood runs")
    ap.add_argument("--parts", default="cost,fairness,flood", help="comma-separated: cost, fairness, flood, big")
    args = ap.parse_args(argv)
    parts = set(args.parts.split(","))
    clocks = [int(c) for c in args.clocks.split(",")]
    modes = ["off", "rlimits", "bwrap"]
    per_match: dict[str, list[float]] = {m: [] for m in modes}
    per_event: dict[str, list[float]] = {m: [] for m in modes}
    decision: dict[str, list[float]] = {m: [] for m in modes}
    fair: dict[tuple[int, str, bool], list[tuple[int, int, float, float]]] = {
        (c, m, s): [] for c in clocks for m in ("off", "bwrap") for s in (False, True)}
    flood: dict[tuple[int, bool], list[tuple[int, float, int, int, float, str]]] = {
        (g, f): [] for g in (0, 4) for f in (False, True)}
    big: dict[str, list[tuple[int, int, float, float]]] = {k: [] for k in BIG_RUNS}
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as t:
        tmp = Path(t)
        os.chmod(tmp, 0o755)  # bots' logs only; the bots' own uid needs nothing here
        for r in range(args.repeats):
            for mode in modes if "cost" in parts else ():
                outcomes, wall, _, _ = play(config(mode, args.deals, "pairings", 10_000, False, f"cost-{mode}-{r}"),
                                            tmp)
                per_match[mode].append(statistics.median(o.duration_s for o in outcomes))
                per_event[mode].append(wall / len(outcomes))
                decision[mode].append(statistics.median(x for o in outcomes for v in o.decision_ms.values() for x in v))
                print(f"  run {r + 1} cost {mode:<8} median match {per_match[mode][-1] * 1000:7.1f} ms, "
                      f"event {per_event[mode][-1] * 1000:7.1f} ms/match", flush=True)
            for clock in clocks if "fairness" in parts else ():
                for mode in ("off", "bwrap"):
                    for spin in (False, True):
                        name = f"fair-{clock}-{mode}-{'spin' if spin else 'calm'}-{r}"
                        cfg = config(mode, args.deals, "self", clock, spin, name, args.target)
                        outcomes, _, _, _ = play(cfg, tmp)
                        fair[(clock, mode, spin)].append((*innocent_timeouts(outcomes), innocent_p95(outcomes),
                                                          innocent_p95(outcomes, q=0.99)))
                        x = fair[(clock, mode, spin)][-1]
                        print(f"  run {r + 1} fairness {clock:>5} ms {mode:<6} spinner={spin!s:<5} innocent "
                              f"timeouts {x[0]} of {x[1]} decisions, p95 {x[2]:.1f} ms, p99 {x[3]:.1f} ms", flush=True)
            for gate in (0, 4) if "flood" in parts else ():
                for flooding in (False, True):
                    name = f"flood-{gate}-{'on' if flooding else 'off'}-{r}"
                    cfg = config("bwrap", args.deals, "self", 100, False, name, args.target, flooder=flooding)
                    cfg = dataclasses.replace(cfg, sandbox=dataclasses.replace(cfg.sandbox, connections_per_bot=gate))
                    outcomes, wall, peak, error = play(cfg, tmp, count_files=True)
                    tmo, dec = innocent_timeouts(outcomes, "flooder")
                    flood[(gate, flooding)].append((peak, wall, tmo, dec, innocent_p95(outcomes, "flooder"), error))
                    print(f"  run {r + 1} flood gate={gate} flood={flooding!s:<5} peak files {peak}, "
                          f"{wall:.1f} s, innocent timeouts {tmo} of {dec}, p95 "
                          f"{flood[(gate, flooding)][-1][4]:.1f} ms {error}", flush=True)
            for kind in BIG_RUNS if "big" in parts else ():
                cfg = config("bwrap", args.deals, "self", 20, False, f"big-{kind}-{r}", args.target, big=kind != "calm")
                memory = PeakMemory()
                memory.start()
                with message_cap(kind != "before"):
                    outcomes, wall, _, error = play(cfg, tmp)
                memory.stop.set()
                tmo, dec = innocent_timeouts(outcomes, "big")
                big[kind].append((tmo, dec, innocent_p95(outcomes, "big", 0.99), memory.mb()))
                x = big[kind][-1]
                print(f"  run {r + 1} big {kind:<7} innocent timeouts {tmo} of {dec}, p99 {x[2]:.1f} ms, "
                      f"memory +{x[3]:.0f} MB at peak, {wall:.1f} s {error}", flush=True)

    if "cost" in parts:
        cost_table(args, modes, per_match, per_event, decision)
    if "fairness" in parts:
        fairness_table(args, clocks, fair)
    if "flood" in parts:
        flood_table(args, flood)
    if "big" in parts:
        big_table(args, big)
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


def fairness_table(args: argparse.Namespace, clocks: list[int],
                   fair: dict[tuple[int, str, bool], list[tuple[int, int, float, float]]]) -> None:
    print(f"\nCPU fairness: the innocent bots' timeouts and decision p95 in the 12 matches among 4 innocent "
          f"bots (target {args.target}, strike policy), without and with a spinner entrant burning "
          f"{2 * (os.cpu_count() or 1)} processes; median of {args.repeats} runs")
    print(f"{'clock':>7} {'sandbox':<8}{'timeouts':>10}{'+spinner':>10}{'p95 ms':>9}{'+spinner':>10}{'ratio':>8}"
          f"{'p99 ms':>9}{'+spinner':>10}   runs (timeouts/decisions, p99)")
    for clock in clocks:
        for mode in ("off", "bwrap"):
            calm, spin = fair[(clock, mode, False)], fair[(clock, mode, True)]
            t0, t1 = statistics.median(x[0] for x in calm), statistics.median(x[0] for x in spin)
            p0, p1 = statistics.median(x[2] for x in calm), statistics.median(x[2] for x in spin)
            q0, q1 = statistics.median(x[3] for x in calm), statistics.median(x[3] for x in spin)
            runs = " ".join(f"{a[0]}/{a[1]},{a[3]:.0f}->{b[0]}/{b[1]},{b[3]:.0f}" for a, b in zip(calm, spin))
            print(f"{clock:>5}ms {mode:<8}{t0:>10g}{t1:>10g}{p0:>9.1f}{p1:>10.1f}{p1 / p0:>7.2f}x{q0:>9.1f}{q1:>10.1f}"
                  f"   {runs}")


def flood_table(args: argparse.Namespace,
                flood: dict[tuple[int, bool], list[tuple[int, float, int, int, float, str]]]) -> None:
    print(f"\nSocket flood in bwrap at per_move_ms=100: a fifth entrant's 80 children hold every connection "
          f"they get to its referee socket; the 4 innocent bots' 12 matches (target {args.target}); "
          f"median of {args.repeats} runs")
    print("(event s, timeouts and p95: the runs whose event finished; a stopped event is counted at the right)")
    print(f"{'sockets':<26}{'flood':>6}{'peak files':>12}{'event s':>9}{'slowdown':>10}{'timeouts':>10}"
          f"{'p95 ms':>8}  event stopped in")
    for gate in (0, 4):
        label = "one shared (before)" if gate == 0 else f"own, cap {gate} (after)"
        base = statistics.median(x[1] for x in flood[(gate, False)])
        for flooding in (False, True):
            runs = flood[(gate, flooding)]
            peak = statistics.median(x[0] for x in runs)
            done = [x for x in runs if not x[5]] or [(0, float("nan"), 0, 0, float("nan"), "")]
            wall = statistics.median(x[1] for x in done)  # events that finished only
            tmo = statistics.median(x[2] for x in done)
            p95 = statistics.median(x[4] for x in done)
            stopped = [x[5] for x in runs if x[5]]
            errors = f"{len(stopped)} of {len(runs)} runs: {'; '.join(sorted(set(stopped)))}" if stopped else "-"
            print(f"{label:<26}{'yes' if flooding else 'no':>6}{peak:>12g}{wall:>9.1f}{wall / base:>9.2f}x"
                  f"{tmo:>10g}{p95:>8.1f}  {errors}")


#: The oversized-message runs: no attacker, the attacker without the cap, with it.
BIG_RUNS = ("calm", "before", "after")


def big_table(args: argparse.Namespace, big: dict[str, list[tuple[int, int, float, float]]]) -> None:
    print(f"\nOversized messages in bwrap at per_move_ms=20: a fifth entrant sends 60 MB first messages on new "
          f"streams of its own socket, one after another; the 4 innocent bots' 12 matches (target {args.target}, "
          f"strike policy); median of {args.repeats} runs")
    print(f"{'attacker':<34}{'timeouts':>10}{'p99 ms':>9}{'ratio':>8}{'+MB peak':>9}   runs (timeouts/decisions, p99)")
    base = statistics.median(x[2] for x in big["calm"])
    labels = {"calm": "none (calm)", "before": "60 MB messages, no cap (before)", "after": "60 MB messages, cap (after)"}
    for kind in BIG_RUNS:
        runs = big[kind]
        t = statistics.median(x[0] for x in runs)
        p = statistics.median(x[2] for x in runs)
        m = statistics.median(x[3] for x in runs)
        each = " ".join(f"{x[0]}/{x[1]},{x[2]:.0f}" for x in runs)
        print(f"{labels[kind]:<34}{t:>10g}{p:>9.1f}{p / base:>7.2f}x{m:>9.0f}   {each}")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
