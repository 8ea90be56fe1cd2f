"""What a whole command cost: its CPU from a cpuacct control group, and the run's own account of its time.

``bench/run.py table`` (the main job's split) and ``bench/events/bench_startcost.py`` (the cost
of one more bot) start ``sevenrocks tournament`` in a group of their own: every process it
starts, the bots in bubblewrap included (the sandbox places bots in groups of the cpu, memory
and pids controllers, never cpuacct), stays in it, so its ``cpuacct.usage`` is the command's CPU.
"""

from __future__ import annotations

import json
import shlex
import re
import sqlite3
from pathlib import Path
from typing import Any


def run_split(db: Path, lines: list[tuple[float, str]]) -> dict[str, Any]:
    """The run's own account of where its time went: decisions per bot, bot start-ups, the closing phase."""
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT seats, decisions FROM matches WHERE status = 'done'").fetchall()
    per_bot: dict[str, float] = {}
    count = 0
    for seats, decisions in rows:
        names = json.loads(seats)
        for seat, times in json.loads(decisions).items():
            per_bot[names[int(seat)]] = per_bot.get(names[int(seat)], 0.0) + sum(times) / 1000
            count += len(times)
    starts = re.search(r"bot processes: (\d+) started \(median start-up (\d+) ms, ([0-9.]+) s in all\)",
                       "".join(line for _, line in lines))
    progress = [t for t, line in lines if re.match(r"\S+: \d+/\d+ matches", line)]
    return {"matches": len(rows), "decisions": count, "thinking": sum(per_bot.values()),
            "per_bot": ", ".join(f"{k} {v:.1f}" for k, v in sorted(per_bot.items(), key=lambda kv: -kv[1])),
            "starts": float(starts.group(3)) if starts else float("nan"),
            "started": f"{starts.group(1)} starts, median {starts.group(2)} ms" if starts else "not reported",
            "publish": lines[-1][0] - progress[-1] if progress else float("nan")}


class CpuGroup:
    """A cpuacct control group a command is started in: every process it starts stays in it (or below it)."""

    def __init__(self, path: Path, v2: bool) -> None:
        self.path, self.v2 = path, v2

    def wrap(self, cmd: list[str]) -> list[str]:
        """``cmd`` started inside this group: a shell writes its own pid into the group, then execs ``cmd``
        (no Python runs between fork and exec, which a preexec_fn would do beside gRPC's threads)."""
        procs = shlex.quote(str(self.path / "cgroup.procs"))
        return ["/bin/sh", "-c", f'echo $$ > {procs} && exec "$@"', "sh", *cmd]

    def usage(self) -> float:
        if self.v2:
            stat = dict(line.split() for line in (self.path / "cpu.stat").read_text().splitlines())
            return int(stat["usage_usec"]) / 1e6
        return int((self.path / "cpuacct.usage").read_text()) / 1e9

    def remove(self) -> None:
        for child in sorted(self.path.glob("**/"), key=lambda p: -len(p.parts)):
            try:
                child.rmdir()
            except OSError:
                pass


def cpu_group(name: str) -> CpuGroup | None:
    """A fresh cpuacct group under this process's own (v1: the cpuacct hierarchy; v2: the unified one), or None."""
    root = Path("/sys/fs/cgroup")
    try:
        own = dict((c, p) for _, cs, p in (l.split(":", 2) for l in Path("/proc/self/cgroup").read_text().splitlines())
                   for c in (cs.split(",") if cs else [""]))
        v2 = (root / "cgroup.controllers").exists()
        base = root / own[""].lstrip("/") if v2 else root / "cpuacct" / own.get("cpuacct", "/").lstrip("/")
        path = base / name
        path.mkdir()
    except (OSError, KeyError):
        return None
    return CpuGroup(path, v2)


