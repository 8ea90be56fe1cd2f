"""A real ``sevenrocks tournament`` with a large field of launched bots finishes and publishes.

The command runs as a user would run it (a subprocess, real bot processes over gRPC,
SQLite, the sandbox the machine has); the field is past the matrix limit, so the
published pages list partners and opponents per bot instead of an n×n matrix.
Both are in the slow set (`tox -e slow`, which CI runs): 64 entrants is the large-field target,
16 the smallest field past the matrix limit.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sevenrocks.server.cli.tournament import TERMINAL_PAIRS
from sevenrocks.server.publish.leaderboard import MATRIX_LIMIT

from ..fresh_env import fresh_env


def field_config(path: Path, entrants: int, budget: int, max_alive: int | None = None) -> Path:
    lines = ["[event]", 'name = "field"', "concurrency = 2", "seed = 4",
             "[schedule]", 'mode = "adaptive"', f"budget = {budget}",
             "[time]", "per_move_ms = 10000", "connect_timeout_s = 120"]
    if max_alive is not None:
        lines += ["[bots]", f"max_alive = {max_alive}"]
    for i in range(entrants):
        lines += ["[[entrants]]", f'name = "bot-{i:02d}"', f'bot = "{"greedy" if i % 2 else "random"}"']
    path.write_text("\n".join(lines) + "\n")
    return path


def run_field(tmp_path: Path, entrants: int, budget: int, max_alive: int | None = None,
              quiet: bool = True) -> dict[str, object]:
    cfg = field_config(tmp_path / "field.toml", entrants, budget, max_alive)
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "tournament", str(cfg), "--db",
                           str(tmp_path / "field.db"), "--out", str(out), *(["--quiet"] if quiet else [])],
                          env=fresh_env(), capture_output=True, text=True, timeout=3600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    board = json.loads((out / "leaderboard.json").read_text())
    if not quiet:
        # The terminal shows the first partnerships and says where the rest are; the file has them all.
        pairs = [p["name"] for p in board["pairs"]]
        assert len(pairs) > TERMINAL_PAIRS, len(pairs)
        assert f"(the first {TERMINAL_PAIRS} of {len(pairs):,} partnerships" in proc.stdout, proc.stdout[-3000:]
        assert pairs[-1] not in proc.stdout.split("Partnership pairings")[1].split("Duplicate deals")[0]
        text = (out / "leaderboard.txt").read_text()
        assert all(f" {name} " in text for name in pairs)
    assert board["matches"] == budget
    played = [b for b in board["bots"] if b["matches"]]
    assert played and all(b["name"].startswith("bot-") for b in played)
    assert sum(b["matches"] for b in played) >= budget  # four seats a match, a bot counted once per match
    # The site: a page per bot with its partners and opponents, and no unreadable matrix.
    site = out / "site"
    index = (site / "index.html").read_text()
    big = len(board["pairs"]) > MATRIX_LIMIT
    assert ('id="no-matrix"' in index) == big and ('id="matrix"' in index) == (not big)
    for b in played:
        page = (site / "bots" / f"{b['name']}.html").read_text()
        assert 'id="by-partner"' in page and 'id="by-opponent"' in page
    return board


@pytest.mark.slow
def test_a_tournament_of_16_launched_entrants_finishes_and_publishes(tmp_path: Path) -> None:
    board = run_field(tmp_path, 16, 80, quiet=False)  # as a user runs it: the tables on the terminal
    assert len(board["bots"]) >= 4


@pytest.mark.slow
def test_a_tournament_of_64_launched_entrants_finishes_and_publishes(tmp_path: Path) -> None:
    board = run_field(tmp_path, 64, 1280)
    counts = [b["matches"] for b in board["bots"]]
    print(f"64 entrants: {len(counts)} played; matches per entrant min {min(counts)}, "
          f"max {max(counts)}, mean {sum(counts) / len(counts):.1f}")
    # Equal exposure: every entrant within 0.5-2x the mean, whatever it is called.
    mean = sum(counts) / len(counts)
    assert len(counts) == 64 and all(0.5 * mean <= c <= 2 * mean for c in counts), sorted(counts)
