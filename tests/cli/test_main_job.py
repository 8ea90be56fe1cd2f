"""The README's main job, run as its reader runs it.

The first command of the README is ``python3 -m pip install . && sevenrocks tournament``:
no config, from whatever folder the reader is in, bots in the default sandbox (``auto``,
bubblewrap here and under CI, where a sandbox that does not run fails this test instead
of skipping it). The command is taken from the README's first ``sh`` block, word for
word, and only ``--budget`` is added so the event stays short (4 matches instead of 200).
What is checked is what the reader gets: exit 0, the bots in bubblewrap, one verdict
line, the leaderboard in every format, the SQLite file next to where they stood with
every match and its record in it, and records the engine replays without a discrepancy.
"""

from __future__ import annotations

import json
import re
import shlex
import sqlite3
from pathlib import Path

from ..user_paths import SH_BLOCK, expect_success, require_default_sandbox, run_documented

ROOT = Path(__file__).resolve().parents[2]
BUDGET = 4
VERDICT = re.compile(r"^Order (SETTLED|NOT SETTLED) at 95%", re.M)


def readme_main_job() -> str:
    """The ``sevenrocks ...`` part of the README's first shell line (after ``pip install . &&``)."""
    first = SH_BLOCK.search((ROOT / "README.md").read_text(encoding="utf-8"))
    assert first, "README.md has no ```sh block"
    line = first.group(1).splitlines()[0]
    words = shlex.split(line, comments=True)
    assert "&&" in words, line
    job = words[words.index("&&") + 1:]
    assert job[0] == "sevenrocks", line
    return shlex.join(job)


def test_the_readme_names_the_main_job_without_a_config() -> None:
    assert readme_main_job() == "sevenrocks tournament"


def test_the_main_job_from_a_fresh_folder(tmp_path: Path) -> None:
    require_default_sandbox()
    command = f"{readme_main_job()} --budget {BUDGET}"
    output = expect_success(command, tmp_path, timeout=900)  # exit 0 with "sandbox: bwrap" said

    # the verdict, said once, in the words docs/tournament.md uses
    assert len(VERDICT.findall(output)) == 1, output[-4000:]
    assert "Traceback" not in output

    # the leaderboard in every format, in the documented default folder of the reader's cwd
    out = tmp_path / "sevenrocks-out"
    for fmt in ("txt", "json", "csv", "md", "html"):
        assert (out / f"leaderboard.{fmt}").stat().st_size > 0, fmt
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["matches"] == BUDGET
    names = {b["name"] for b in board["bots"]}
    assert names == {"random", "greedy", "defensive"}, names  # the default field (config.DEFAULT_FIELD), by entry point
    assert sum(b["matches"] for b in board["bots"]) >= BUDGET
    assert all(not b["forfeits"] for b in board["bots"]), board["bots"]  # no bot was lost to the sandbox
    assert (out / "site" / "index.html").exists()
    assert (out / "logs" / "sandbox.txt").read_text().startswith("sandbox: bwrap")

    # the stored SQLite file: every match finished, each with its record
    db = tmp_path / "sevenrocks.db"
    with sqlite3.connect(db) as con:
        statuses = [s for (s,) in con.execute("SELECT status FROM matches")]
        recorded = con.execute("SELECT count(*) FROM records JOIN matches USING (match_id)").fetchone()[0]
    assert statuses == ["done"] * BUDGET, statuses
    assert recorded == BUDGET

    # the records are readable: the engine replays each without a discrepancy
    records = sorted((out / "site" / "records").glob("*.jsonl"))
    assert len(records) == BUDGET
    verified = run_documented(f"sevenrocks verify {shlex.quote(str(out / 'site' / 'records'))}", tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert f"verified {BUDGET} record(s): {BUDGET} clean" in verified.stdout, verified.stdout

    # and the leaderboard can be read again from the stored file alone
    again = run_documented("sevenrocks leaderboard --db sevenrocks.db --format json", tmp_path)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["matches"] == BUDGET
