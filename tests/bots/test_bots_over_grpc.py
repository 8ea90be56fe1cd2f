"""Each reference bot runs as its own program (``python -m sevenrocks.bots.NAME``) against a real referee.

The referee's default limit is 1000 ms per decision; the search bots' default budget
is 150 ms, so a match must end normally, with no seat forfeiting, and verify clean.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sevenrocks.sdk.rules.replay import verify_file


@pytest.mark.parametrize(
    ("ruleset", "seats"),
    [
        ("seven-rocks", ["search", "defensive", "search", "defensive"]),
        ("fives", ["search", "defensive", "greedy", "random"]),
        ("seven-rocks", ["ismcts", "search", "ismcts", "search"]),
        ("seven-rocks", ["alphabeta", "search", "alphabeta", "search"]),
    ],
)
def test_bot_programs_play_a_match_within_the_default_limit(tmp_path: Path, ruleset: str, seats: list[str]) -> None:
    command = [sys.executable, "-m", "sevenrocks.server.cli", "match", "--ruleset", ruleset,
               "--target", "60", "--seed", "3", "--records", str(tmp_path)]
    for name in seats:
        command += ["--seat", f"{sys.executable} -m sevenrocks.bots.{name}"]
    out = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    lines = (tmp_path / "match-3.jsonl").read_text().splitlines()
    assert verify_file(tmp_path / "match-3.jsonl") == []
    end = json.loads(lines[-1])
    assert end["event"] == "match_end" and end["reason"] == "target", end
