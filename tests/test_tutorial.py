"""docs/tutorial.md, run as a new bot author would: every code block, in order, in an empty folder.

Python blocks are saved (or added) to the files the text names and run where it says
so; each ``sevenrocks`` line of a shell block runs as a command (``match`` plays over
real gRPC with the tutorial's bot as subprocesses); the TOML block must parse as an
entrant of an event config.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

from sevenrocks.sdk.rules.replay import verify_file
from sevenrocks.server.events.config import parse_config

from .fresh_env import fresh_env

DOC = Path(__file__).parent.parent / "docs" / "tutorial.md"
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)


def env() -> dict[str, str]:
    """The author's shell: this Python's scripts first on PATH, no PYTHONPATH, no referee."""
    out = fresh_env(drop=("PYTHONPATH",))
    out["PATH"] = str(Path(sys.executable).parent) + os.pathsep + out.get("PATH", "")
    return out


def run(argv: list[str], cwd: Path, timeout: float = 180) -> str:
    out = subprocess.run(argv, cwd=cwd, env=env(), capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, f"{shlex.join(argv)} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}"
    return out.stdout


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    ran = {"python": 0, "sh": 0, "toml": 0}
    for m in BLOCK.finditer(text):
        lang, code = m.group(1), m.group(2)
        before = text[max(0, m.start() - 400):m.start()]
        if lang == "python":
            saved = re.findall(r"[Ss]ave this as `([\w.]+\.py)`", before)
            added = re.findall(r"[Aa]dd this to `([\w.]+\.py)`, above the `if __name__` line", before)
            if added:
                path = tmp_path / added[-1]
                head, sep, tail = path.read_text(encoding="utf-8").partition('if __name__ == "__main__":')
                assert sep, f"{path.name} has no main guard to add above"
                path.write_text(head + code + "\n\n" + sep + tail, encoding="utf-8")
            else:
                assert saved, f"a python block with no file to save it to:\n{code[:200]}"
                (tmp_path / saved[-1]).write_text(code, encoding="utf-8")
            if re.search(r"run `python ([\w.]+\.py)`", before):
                script = re.findall(r"run `python ([\w.]+\.py)`", before)[-1]
                output = run([sys.executable, script], tmp_path)
                assert "seven-rocks:" in output and "fives:" in output
            ran["python"] += 1
        elif lang == "sh":
            for line in code.splitlines():
                if line.startswith("sevenrocks "):
                    run(shlex.split(line), tmp_path)
            ran["sh"] += 1
        elif lang == "toml":
            entrant = tomllib.loads(code)["entrants"][0]
            others = [{"name": n, "bot": "random"} for n in ("r1", "r2", "r3")]
            cfg = parse_config({"entrants": [entrant, *others]}, "<tutorial>")
            assert cfg.entrant(entrant["name"]).command is not None
            ran["toml"] += 1
    assert ran == {"python": 3, "sh": 2, "toml": 1}, ran
    help_text = run([sys.executable, "first_bot.py", "--help"], tmp_path)
    assert "--referee" in help_text
    records = sorted((tmp_path / "records").glob("*.jsonl"))
    assert len(records) == 1 and verify_file(records[0]) == []
    header = json.loads(records[0].read_text(encoding="utf-8").splitlines()[0])
    assert [s["player"] for s in header["seats"]] == ["first_bot-0", "greedy-1", "Scorer-2", "greedy-3"]
