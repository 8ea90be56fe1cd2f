"""The rows of the speed table (docs/scale.md), handed from each benchmark process to ``bench/run.py table``.

A benchmark calls :func:`headline` with its row's name and value; when ``bench/run.py``
started it (``SEVENROCKS_BENCH_HEADLINES`` names a file), the row is appended there as
one JSON line, and ``run.py`` prints every row together at the end. Run alone, a
benchmark only prints its own table.
"""

from __future__ import annotations

import json
import os


def headline(row: str, value: str, goal: str, detail: str = "") -> None:
    """Record ``value`` for ``row`` of the table (with the goal it is measured against)."""
    path = os.environ.get("SEVENROCKS_BENCH_HEADLINES")
    if not path:
        return
    from sevenrocks.sdk.rules import engine_build

    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps({"row": row, "value": value, "goal": goal, "detail": detail,
                            "build": engine_build()}) + "\n")
