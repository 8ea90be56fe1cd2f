"""Run every benchmark in this folder (``bench_*.py``), one after another, each in its own process.

Usage: python bench/run.py [NAME ...]   e.g. python bench/run.py engine referee
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def main(argv: list[str]) -> int:
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


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
