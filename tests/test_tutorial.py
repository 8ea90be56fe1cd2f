"""docs/tutorial.md, run as a new bot author would: every code block, in order, in an empty folder.

Python blocks are saved (or added) to the files the text names and run where it says
so; the TOML block is saved where it says; every ``sevenrocks`` line of a shell block
runs verbatim from that folder in the reader's environment, so in the default sandbox
(bubblewrap here; a missing one fails under CI): ``match`` and ``tournament`` play
over real gRPC with the tutorial's bot as sandboxed subprocesses, the event keeps its
database and ``sevenrocks-out/`` beside the bot. Then the bot is edited and the event
run again, which must refuse, naming the changed file.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from sevenrocks.sdk.rules.replay import verify_file
from sevenrocks.server.events.store import Store

from .user_paths import (expect_success, inline_commands, require_default_sandbox, run_documented, sh_commands,
                         user_env)

DOC = Path(__file__).parent.parent / "docs" / "tutorial.md"
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)


def run_python(script: str, cwd: Path) -> str:
    out = subprocess.run([sys.executable, *script.split()], cwd=cwd, env=user_env(), capture_output=True, text=True,
                         timeout=180)
    assert out.returncode == 0, f"python {script} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}"
    return out.stdout


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    require_default_sandbox()
    os.chmod(tmp_path, 0o755)  # a folder of the author's, as the sandboxed bot's uid may read it
    text = DOC.read_text(encoding="utf-8")
    ran = {"python": 0, "sh": 0, "toml": 0}
    for m in BLOCK.finditer(text):
        lang, code = m.group(1), m.group(2)
        before = text[max(0, m.start() - 400):m.start()]
        saved = re.findall(r"[Ss]ave this as `([\w.]+\.(?:py|toml))`", before)
        if lang == "python":
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
                output = run_python(re.findall(r"run `python ([\w.]+\.py)`", before)[-1], tmp_path)
                assert "seven-rocks:" in output and "fives:" in output
            ran["python"] += 1
        elif lang == "sh":
            for line in sh_commands(f"```sh\n{code}```"):
                expect_success(line, tmp_path)
            ran["sh"] += 1
        elif lang == "toml":
            assert saved, f"a toml block with no file to save it to:\n{code[:200]}"
            (tmp_path / saved[-1]).write_text(code, encoding="utf-8")
            ran["toml"] += 1
    assert ran == {"python": 3, "sh": 3, "toml": 1}, ran
    help_text = run_python("first_bot.py --help", tmp_path)
    assert "--referee" in help_text

    # §5: one match over gRPC, both classes of first_bot.py seated (the file, and first_bot:Scorer).
    records = sorted((tmp_path / "records").glob("*.jsonl"))
    assert len(records) == 1 and verify_file(records[0]) == []
    header = json.loads(records[0].read_text(encoding="utf-8").splitlines()[0])
    assert [s["player"] for s in header["seats"]] == ["first_bot-0", "greedy-1", "Scorer-2", "greedy-3"]

    # §5's advice before an event: the conformance check, in the sandbox the event will use.
    advised = [c for c in inline_commands(text) if c.startswith("sevenrocks check")]
    assert advised == ["sevenrocks check -- python first_bot.py"], advised
    report = expect_success(advised[0], tmp_path)
    assert "PASS: 11 phases" in report

    # §6: the event beside the bot, default output folder, every match clean.
    with Store(tmp_path / "sevenrocks.db") as store:
        matches = store.matches()
    assert len(matches) == 8 and all(m.fault is None for m in matches), [m.fault for m in matches]
    assert {"scorer", "first"} <= {s for m in matches for s in m.seats}
    assert (tmp_path / "sevenrocks-out" / "leaderboard.txt").exists()
    assert "sandbox: bwrap" in (tmp_path / "sevenrocks-out" / "logs" / "sandbox.txt").read_text()

    # "Edit first_bot.py and run the same command again": refused, naming the file each entrant runs.
    with (tmp_path / "first_bot.py").open("a", encoding="utf-8") as f:
        f.write("\n# a second version\n")
    again = run_documented(sh_commands(text)[-1], tmp_path)
    assert again.returncode == 2, again.stdout + again.stderr
    assert "scorer: content.file first_bot.py" in again.stderr and "first: content.file first_bot.py" in again.stderr
