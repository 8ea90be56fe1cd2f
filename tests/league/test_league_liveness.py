"""A league never stalls: after a withdrawal it plays on; with no table to seat it waits, says why, and costs nothing.

The in-process tests drive the league's loop (the field planner, the waiting state)
with in-process bots; the slow test runs `sevenrocks league` as an organiser does:
launched bots in the default sandbox, a bot file broken mid-league (its new version is
withdrawn), the field cut below a table, then a fixed version joining.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from sevenrocks.server.league.runner import run_league
from sevenrocks.server.league.status import read_status

from ..fresh_env import fresh_env
from .test_league import in_process_league, wait_for
from ..versions.test_versions import write_bot

HEAD = '[event]\nname = "x"\n[league]\nround_matches = 4\npoll_s = 0.05\nidle_s = 0.1\n'


def field(*names: str) -> str:
    kinds = ["greedy", "random", "defensive"]
    return "".join(f'[[entrants]]\nname = "{n}"\nbot = "{kinds[i % 3]}"\n' for i, n in enumerate(names))


def rewrite(path: Path, text: str) -> None:
    """A new config, with a modification time the league cannot miss."""
    before = path.stat().st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))


def test_a_pairings_league_reduced_to_three_plays_on_head_to_head(tmp_path: Path) -> None:
    """Pairings need four different entrants at a table; three left (a withdrawal, a retirement) used to
    make the planner return nothing, and the loop asked it again, at full CPU, for ever."""
    game, store, said = in_process_league(tmp_path, HEAD.replace("[league]", '[league]\nstop_after = 24') + field(*"abcd"))
    with store:
        path = game.path
        assert path is not None

        def retire_a(p: Any) -> None:
            if p.done == 8:
                rewrite(path, HEAD.replace("[league]", '[league]\nstop_after = 24') + field("b", "c", "d"))

        asyncio.run(asyncio.wait_for(run_league(game, retire_a), 120))
        matches = store.matches(["x"])
        assert len(matches) >= 24
        later = [m for m in matches if "a" not in m.seats]
        assert len(later) >= 16 and all(len(set(m.seats)) == 2 for m in later[-8:])  # each partners itself
        assert not any(line.startswith("waiting") for line in said)


def test_with_no_table_to_seat_the_league_waits_says_why_and_resumes_when_one_joins(tmp_path: Path) -> None:
    game, store, said = in_process_league(tmp_path, HEAD + field("a", "b"))
    path = game.path
    assert path is not None
    seen: dict[str, Any] = {}

    async def organiser(league: asyncio.Task[Any]) -> None:
        while len(store.matches(["x"])) < 4:
            await asyncio.sleep(0.05)
        rewrite(path, HEAD + field("a"))  # b retired: one entrant, a table needs two
        while (status := read_status(store.db, "x")) is None or status.state != "waiting":
            assert not league.done()
            await asyncio.sleep(0.05)
        seen["status"] = status
        rounds = store.league_state("x").rounds
        matches = len(store.matches(["x"]))
        await asyncio.sleep(1.5)  # 15 of its idle_s: a spinning loop would plan round after round
        seen["rounds"] = store.league_state("x").rounds - rounds
        seen["stored"] = len(store.matches(["x"])) - matches
        rewrite(path, HEAD.replace("[league]", f"[league]\nstop_after = {matches + 8}") + field("a", "c"))

    async def main() -> None:
        league = asyncio.ensure_future(run_league(game))
        await asyncio.wait_for(organiser(league), 60)
        await asyncio.wait_for(league, 60)

    with store:
        asyncio.run(main())
        status = seen["status"]
        assert "only 1 of 1 active entrants can be seated and a table needs 2" in status.detail
        assert seen["rounds"] == 0 and seen["stored"] == 0  # waiting: nothing planned, nothing stored
        waiting = [line for line in said if line.startswith("waiting:")]
        assert len(waiting) == 1 and "a table needs 2" in waiting[0]  # said once, not every idle_s
        assert any(line.startswith("playing:") for line in said)  # and when it plays again
        assert store.match_counts("x").get("c", 0) >= 4
        assert read_status(store.db, "x").state == "finished"  # type: ignore[union-attr]


# ---------------------------------------------------------------------- the organiser's path


def league_toml(path: Path, entrants: list[str]) -> None:
    lines = ['[event]', 'name = "spring"', 'concurrency = 2',
             '[time]', 'per_move_ms = 5000', 'connect_timeout_s = 60',
             '[bots]', 'restart_backoff_s = 0.2',
             '[league]', 'round_matches = 4', 'poll_s = 0.5', 'idle_s = 1.0']
    for name in entrants:
        lines += ["[[entrants]]", f'name = "{name}"',
                  f'command = [{json.dumps(sys.executable)}, "alpha/alpha.py"]' if name == "alpha"
                  else f'bot = "{name}"']
    path.write_text("\n".join(lines) + "\n")


def stored(db: Path) -> list[list[str]]:
    if not db.exists():
        return []
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return [json.loads(s) for (s,) in con.execute("SELECT seats FROM matches ORDER BY rowid")]
    except sqlite3.OperationalError:
        return []
    finally:
        con.close()


def withdrawn(db: Path, name: str) -> bool:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        row = con.execute("SELECT withdrawn_reason FROM entrants WHERE name = ?", (name,)).fetchone()
    except sqlite3.OperationalError:
        return False
    finally:
        con.close()
    return row is not None and row[0] is not None


def league_state(db: Path) -> str | None:
    """The league's recorded state (playing, waiting, ...), read as `leaderboard --db` reads it."""
    c = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        status = read_status(c, "spring")
    finally:
        c.close()
    return None if status is None else status.state


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of one process (not its children), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.slow  # ~2 min: a withdrawal by three crashes, a 30 s CPU measurement, a new version's start
def test_a_league_plays_on_after_a_withdrawal_and_waits_idle_below_a_table(tmp_path: Path) -> None:
    work = tmp_path / "work"
    (work / "alpha").mkdir(parents=True)
    write_bot(work / "alpha" / "alpha.py", "alpha one")
    cfg, db, out = work / "league.toml", work / "league.db", work / "out"
    league_toml(cfg, ["alpha", "random", "greedy", "defensive"])
    env = fresh_env()
    env.pop("SEVENROCKS_SANDBOX", None)  # the default sandbox: auto
    proc = subprocess.Popen([sys.executable, "-m", "sevenrocks.server.cli", "league", "league.toml", "--db", str(db),
                             "--out", str(out), "--quiet"], cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    try:
        wait_for("8 matches", lambda: len(stored(db)) >= 8, proc)
        # The organiser's step: alpha's file replaced by one that exits at start, the config untouched.
        write_bot(work / "alpha" / "alpha.py", "alpha two", extra="raise SystemExit('broken at start')")
        wait_for("alpha@2 withdrawn", lambda: withdrawn(db, "alpha@2"), proc)
        at_withdrawal = len(stored(db))
        # 1. The league plays on among the three left (a pairings table needs four: they partner themselves).
        wait_for("8 more matches", lambda: len(stored(db)) >= at_withdrawal + 8, proc)
        assert not any("alpha@2" in seats for seats in stored(db))
        # 2. Below a table: only greedy is left (alpha@2 withdrawn, the others retired).
        league_toml(cfg, ["alpha", "greedy"])
        # The round in flight ends first (on a loaded machine it may take a while), then it waits.
        wait_for("the league to wait", lambda: league_state(db) == "waiting", proc)
        time.sleep(1)
        before = len(stored(db))
        used = cpu_seconds(proc.pid)
        time.sleep(30)
        idle_cpu = cpu_seconds(proc.pid) - used
        assert len(stored(db)) == before  # nothing to play...
        # ...and next to no CPU: about 0.4% of a core measured (the sandbox's watchdog reads each live
        # bot's cgroup 10 times a second), 1.4% on a machine at load 23; a planning loop used 87%.
        assert idle_cpu < 0.9, f"{idle_cpu:.2f} s of CPU in 30 s of waiting (3% of a core allowed)"
        board = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "leaderboard", "--db", str(db)],
                               capture_output=True, text=True, env=env, timeout=120)
        assert "league: waiting since" in board.stdout + board.stderr, board.stdout + board.stderr
        # 3. A fixed file is a new version: alpha@3 joins, the league resumes.
        write_bot(work / "alpha" / "alpha.py", "alpha three")
        wait_for("alpha@3 to play", lambda: sum("alpha@3" in s for s in stored(db)) >= 4, proc)
    finally:
        if proc.poll() is None:
            proc.terminate()
        _, err = proc.communicate(timeout=120)
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    (reason,), = con.execute("SELECT withdrawn_reason FROM entrants WHERE name = 'alpha@2'").fetchall()
    con.close()
    assert reason.startswith("withdrawn after 3 crashes in a row"), reason
    waiting = [line for line in err.splitlines() if line.startswith("waiting:")]
    assert waiting and "only 1 of 2 active entrants can be seated and a table needs 2" in waiting[0], err
    assert "alpha@2 withdrawn" in waiting[0]
    assert "alpha@3 replaces alpha@2 (a new version)" in err
    print(f"CPU while waiting: {idle_cpu:.3f} s in 30 s")


def test_a_round_smaller_than_one_table_still_plays(tmp_path: Path) -> None:
    """A duplicate pairings table is four matches (every seat order of one deal); a round of fewer
    made the planner return nothing and the loop asked it again, at full CPU, for ever. The round
    grows to the smallest that holds a table."""
    head = HEAD.replace("round_matches = 4", "round_matches = 2\nstop_after = 8").replace(
        '[event]\nname = "x"\n', '[event]\nname = "x"\nduplicate = true\n')
    game, store, said = in_process_league(tmp_path, head + field(*"abcd"))
    with store:
        asyncio.run(asyncio.wait_for(run_league(game), 120))
        assert len(store.matches(["x"])) >= 8
