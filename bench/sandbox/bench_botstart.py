"""What starting one bot costs in each sandbox: launch to the bot's first line of output.

The bot is ``python -c "print('up')"``, started through the same jail and sandbox as
an event's bots (``Sandbox.prepare``), from a working folder laid out like an event's:
the bot's script beside the config, the database with its side files and the output
folder, with SIZE other files. ``bwrap`` rebuilds that folder entry by entry (the
database and the output folder are not in the view), so the folder's size is varied.
Baseline: ``off`` (the jail alone) in the same run. Medians of RUNS starts each.

    python bench/sandbox/bench_botstart.py [RUNS]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sevenrocks.server.sandbox.sandbox import Sandbox, SandboxSettings

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 15
#: Other files in the working folder, beside the bot's and the event's.
SIZES = (10, 40, 100, 200)


def event_folder(root: Path, size: int) -> tuple[Path, list[Path]]:
    ev = root / f"ev-{size}"
    (ev / "sevenrocks-out" / "logs").mkdir(parents=True)
    for name in ("bot.py", "ev.toml", "sevenrocks.db", "sevenrocks.db-wal", "sevenrocks.db-shm"):
        (ev / name).write_text("x")
    for i in range(size):
        (ev / f"data-{i:04d}.txt").write_text("x")
    for p in [root, *ev.rglob("*"), ev]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    db = ev / "sevenrocks.db"
    hidden = [ev / "sevenrocks-out", ev / "ev.toml", db, *(db.with_name(db.name + s) for s in ("-wal", "-shm"))]
    return ev, hidden


def start_once(sb: Sandbox) -> float:
    prep = sb.prepare([sys.executable, "-c", "print('up', flush=True)"], sb.environment(os.environ), "bench")
    try:
        t0 = time.perf_counter()
        proc = subprocess.Popen(prep.argv, env=prep.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        elapsed = time.perf_counter() - t0
        _, err = proc.communicate(timeout=60)
        assert line.strip() == "up", err
        return elapsed * 1000
    finally:
        sb.release(prep)


def main() -> None:
    rows: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-botstart-") as tmp:
        root = Path(tmp)
        folders = {n: event_folder(root, n) for n in SIZES}
        cases: list[tuple[str, str, int, bool]] = [("off", "off", 10, True), ("rlimits", "rlimits", 10, True),
                                                   ("bwrap, nothing hidden", "bwrap", 10, False)]
        cases += [(f"bwrap, folder of {n + 6} entries", "bwrap", n, True) for n in folders]
        boxes = [Sandbox(SandboxSettings(mode=mode), folders[size][1] if hide else [])  # type: ignore[arg-type]
                 for _, mode, size, hide in cases]
        times: list[list[float]] = [[] for _ in cases]
        try:
            # Round robin, so that the machine's load (shared, noisy) weighs on every case alike.
            for run in range(RUNS + 1):
                for i, (_, _, size, _) in enumerate(cases):
                    os.chdir(folders[size][0])
                    ms = start_once(boxes[i])
                    if run:  # the first round warms the page cache
                        times[i].append(ms)
        finally:
            os.chdir(root)
            for box in boxes:
                box.close()
        baseline = statistics.median(times[0])
        for (label, _, _, _), ts in zip(cases, times):
            rows.append((label, statistics.median(ts), statistics.median(ts) / baseline))
    print(f"bot start, launch to first output line, median of {RUNS} (load {os.getloadavg()[0]:.1f})")
    print(f"{'sandbox':<28} {'median ms':>10} {'vs off':>8}")
    for label, med, ratio in rows:
        print(f"{label:<28} {med:>10.1f} {ratio:>7.2f}x")


if __name__ == "__main__":
    main()
