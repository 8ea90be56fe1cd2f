"""Upload to first ranked match: how long an author waits, per kind of bot, in a real league.

Each run starts ``sevenrocks league --web`` (the default sandbox, bubblewrap), registers
three authors and submits, one after another with ``sevenrocks submit``, a Python SDK
bot, the stdio example and a bot with a build step; for each it measures the time from
the upload to ``active`` (unpack, build, snapshot, ``sevenrocks check``) and to its
first stored match. Baseline in the same run: the organiser adds the same SDK bot as an
``[[entrants]]`` block of the config (no check), from the edit to its first match.
Medians of RUNS runs.

    python bench/league/bench_submit.py [RUNS]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.submissions import bundles  # noqa: E402
from tests.submissions.league_run import LeagueRun, submit  # noqa: E402

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 3
KINDS = (("python SDK bot", bundles.sdk_bot), ("stdio bot", bundles.stdio_bot), ("bot with a build step", bundles.built_bot))


def one_run(tmp: Path) -> dict[str, tuple[float, float]]:
    run = LeagueRun(tmp / "league")
    tokens = [run.add_author(f"author{i}") for i in range(len(KINDS))]
    run.start()
    out: dict[str, tuple[float, float]] = {}
    try:
        for i, (kind, make) in enumerate(KINDS):
            started = time.monotonic()
            done = submit(run.url, tokens[i], make(tmp / f"bot{i}"))
            assert done.returncode == 0, done.stdout + done.stderr
            active = time.monotonic() - started
            run.wait_for(kind, lambda: run.matches_of(f"author{i}") > 0, timeout=300)
            out[kind] = (active, time.monotonic() - started)
        bundles.sdk_bot(tmp / "config-bot")
        started = time.monotonic()
        with run.config.open("a") as f:
            f.write(f'\n[[entrants]]\nname = "configbot"\ncommand = ["{sys.executable}", '
                    f'"{tmp / "config-bot" / "bot.py"}"]\n')
        run.wait_for("configbot", lambda: run.matches_of("configbot") > 0, timeout=300)
        out["baseline: config edit"] = (float("nan"), time.monotonic() - started)
    finally:
        run.stop()
    return out


def main() -> None:
    results: dict[str, list[tuple[float, float]]] = {}
    for n in range(RUNS):
        with tempfile.TemporaryDirectory(prefix="bench-submit-") as tmp:
            for kind, times in one_run(Path(tmp)).items():
                results.setdefault(kind, []).append(times)
        print(f"run {n + 1}/{RUNS} done", file=sys.stderr)
    base = statistics.median(t[1] for t in results["baseline: config edit"])
    print(f"{'kind':<24} {'to active s':>12} {'to 1st match s':>15} {'vs config edit':>15}   (medians of {RUNS})")
    for kind, times in results.items():
        active = statistics.median(t[0] for t in times)
        first = statistics.median(t[1] for t in times)
        shown = "-" if active != active else f"{active:.1f}"
        print(f"{kind:<24} {shown:>12} {first:>15.1f} {first / base:>14.2f}x")


if __name__ == "__main__":
    main()
