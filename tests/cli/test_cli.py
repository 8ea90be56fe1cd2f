"""``sevenrocks simulate`` and ``sevenrocks verify`` as users run them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sevenrocks.server.cli import cli

GOLDEN = Path(__file__).parent.parent / "data" / "golden"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize("extra", [
    ["--policies", "greedy,random"],
    ["--ruleset", "fives", "--players", "2", "--policies", "greedy,random"],
    ["--ruleset", "fives", "--players", "3", "--policies", "random"],
    ["--ruleset", "fives", "--players", "4", "--policies", "greedy,random,random,greedy"],
])
def test_simulate_writes_identical_records_that_verify(tmp_path: Path, extra: list[str]) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        code, output = run("simulate", "--matches", "4", "--seed", "5", "--records", str(out), "-q", *extra)
        assert code == 0, output
        assert "win rate" in output
    files = sorted(p.name for p in a.iterdir())
    assert len(files) == 4
    for name in files:
        assert (a / name).read_bytes() == (b / name).read_bytes()
    code, output = run("verify", str(a))
    assert code == 0 and "4 clean, 0 with" in output


def test_simulate_matches_the_golden_records(tmp_path: Path) -> None:
    """Pins the record format and the dealing procedure: regenerate only on purpose."""
    run("simulate", "--matches", "1", "--seed", "1", "--policies", "greedy,random", "--records", str(tmp_path / "s"), "-q")
    run("simulate", "--ruleset", "fives", "--players", "3", "--matches", "1", "--seed", "1",
        "--policies", "greedy,random,random", "--records", str(tmp_path / "f"), "-q")
    assert (tmp_path / "s" / "sim-1-00000.jsonl").read_bytes() == (GOLDEN / "seven-rocks-sim-1-00000.jsonl").read_bytes()
    assert (tmp_path / "f" / "sim-1-00000.jsonl").read_bytes() == (GOLDEN / "fives3-sim-1-00000.jsonl").read_bytes()


def test_simulate_summary_counts_every_match() -> None:
    code, output = run("simulate", "--matches", "6", "--seed", "2", "--policies", "greedy,random", "-q")
    assert code == 0
    rows = [line for line in output.splitlines() if "greedy+greedy" in line or "random+random" in line]
    wins = [int(r.split("│")[3]) for r in rows]
    assert sum(wins) == 6


def test_simulate_rejects_unknown_policy() -> None:
    code, output = run("simulate", "--policies", "greedy,nosuchbot")
    assert code == 2 and "no bot named 'nosuchbot'" in output


def test_simulate_rejects_wrong_policy_count() -> None:
    code, output = run("simulate", "--policies", "greedy,random,random")
    assert code == 2 and "takes 1, 2 (one per partnership) or 4" in output


def test_verify_reports_file_line_and_exits_1(tmp_path: Path) -> None:
    shutil.copy(GOLDEN / "seven-rocks-sim-1-00000.jsonl", tmp_path / "good.jsonl")
    lines = (GOLDEN / "seven-rocks-sim-1-00000.jsonl").read_text().splitlines()
    obj = json.loads(lines[2])
    obj["ends"] += 1
    lines[2] = json.dumps(obj)
    (tmp_path / "bad.jsonl").write_text("\n".join(lines) + "\n")
    proc = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "verify", str(tmp_path)],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    out = proc.stdout.splitlines()
    assert out[0].startswith(f"{tmp_path / 'bad.jsonl'}:3: ends is ")
    assert out[-1] == "verified 2 record(s): 1 clean, 1 with 1 discrepancy"


def test_verify_clean_exits_0(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "verify", str(GOLDEN)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.strip().endswith("2 clean, 0 with 0 discrepancies")
