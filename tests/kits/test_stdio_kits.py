"""The stdio kits (examples/bots/stdio-python, examples/bots/stdio-js), run as their READMEs say.

Every command of each README runs verbatim from a copy of the kit folder, in a shell,
under the default sandbox (``SEVENROCKS_SANDBOX`` unset: ``auto`` picks bubblewrap,
which CI installs; under CI a missing bubblewrap fails instead of skipping):
``sevenrocks check`` must PASS, ``sevenrocks match`` must finish without a forfeit,
``sevenrocks tournament event.toml`` (``protocol = "stdio"``) must play its event
and publish it, and the by-hand ``echo ... |`` example must print what the README says.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..fresh_env import fresh_env
from ..sandbox.helpers import require_bwrap
from .test_kits import need

ROOT = Path(__file__).resolve().parents[2]
KITS = {"stdio-python": "python3", "stdio-js": "node"}
SH_BLOCK = re.compile(r"```sh\n(.*?)```", re.S)


def user_env() -> dict[str, str]:
    """A user's shell: this Python's scripts first on PATH, the default sandbox, no referee."""
    env = fresh_env(drop=("SEVENROCKS_SANDBOX", "PYTHONPATH"))
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def readme_commands(kit: str) -> list[str]:
    text = (ROOT / "examples" / "bots" / kit / "README.md").read_text(encoding="utf-8")
    lines = [line.strip() for block in SH_BLOCK.findall(text) for line in block.splitlines() if line.strip()]
    # A submission needs a league: tests/kits/test_kit_submit.py runs that line against one.
    return [line for line in lines if not line.startswith("sevenrocks submit ")]


@pytest.fixture(params=sorted(KITS))
def kit_copy(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, Path]:
    kit: str = request.param
    need(KITS[kit], f"the {kit} kit")
    require_bwrap()
    folder = tmp_path / kit
    shutil.copytree(ROOT / "examples" / "bots" / kit, folder)
    for p in [tmp_path, folder, *folder.iterdir()]:  # as a user's folder is: others may read it
        p.chmod(0o755 if p.is_dir() else 0o644)
    return kit, folder


def run(line: str, cwd: Path) -> tuple[int, str, float]:
    start = time.monotonic()
    done = subprocess.run(["bash", "-c", line], cwd=cwd, env=user_env(), capture_output=True, text=True,
                          timeout=900)
    took = time.monotonic() - start
    print(f"[{cwd.name}] exit {done.returncode} in {took:.1f} s: {line}")
    return done.returncode, done.stdout + done.stderr, took


def test_every_readme_command_runs_in_the_default_sandbox(kit_copy: tuple[str, Path]) -> None:
    kit, folder = kit_copy
    commands = readme_commands(kit)
    kinds = [next((k for k in ("check", "match", "tournament", "echo") if f" {k} " in f" {c} "), "?") for c in commands]
    assert kinds == ["check", "match", "tournament", "echo"], commands
    text = (ROOT / "examples" / "bots" / kit / "README.md").read_text(encoding="utf-8")
    for line, kind in zip(commands, kinds):
        code, out, _ = run(line, folder)
        assert code == 0, f"{line}\n{out}"
        if kind in ("match", "tournament"):
            assert "sandbox: bwrap" in out, out  # the default sandbox held the bots
        if kind == "check":
            assert out.rstrip().splitlines()[-1].startswith("PASS: 11 phases"), out
        elif kind == "match":
            assert "forfeit" not in out and ("target after" in out or "round_cap after" in out), out
        elif kind == "tournament":
            assert (folder / "sevenrocks-out" / "site" / "index.html").exists(), out
            with sqlite3.connect(folder / "sevenrocks.db") as db:
                played = db.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
            assert played > 0, out
            assert "heaviest" in out, out
        else:
            shown = re.search(r"prints `([^`]+)`", text)
            assert shown is not None and out.strip() == shown.group(1), out
