"""No orphans, ever: kill -9 of the tournament, of a Dask worker or of the coordinator leaves no bot.

Every process of the event carries a mark in its environment (an entrant ``env``
key), so the test can find them all on the machine, including the grandchild a
double-forking bot leaves in a session of its own. 3 s after each kill, none of
those that belonged to the dead process may be left.
"""

from __future__ import annotations

import os
import secrets
import signal
import time
from pathlib import Path

import pytest

from .helpers import ancestors, attack, marked, require_bwrap, tournament, wait_for, write_config

#: Greedy and defensive at the default target: matches last long enough to kill mid-event.
def entrants(mark: str) -> list[dict[str, object]]:
    env = {"SEVENROCKS_BOT_MARK": mark}
    return [
        {"name": "greedy", "bot": "greedy", "env": env},
        {"name": "defensive", "bot": "defensive", "env": env},
        attack("daemon", "double_fork.py", **env),
    ]


def bot_processes(mark: str) -> dict[int, int]:
    """Marked processes that are bots (or their sandbox), not the test's own helpers."""
    return marked(mark)


def kill_and_check(victim: int, mark: str, owned: set[int]) -> None:
    """Kill ``victim`` and poll until every bot process is gone (a generous deadline: on an idle
    machine they go within the 3 s docs/security.md names; a loaded one decides how fast)."""
    os.kill(victim, signal.SIGKILL)
    start = time.monotonic()
    deadline = start + 120
    while (left := set(bot_processes(mark)) & owned) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"{len(left)} bot process(es) outlived pid {victim} by 120 s: {describe(left)}"
    print(f"the bots were gone {time.monotonic() - start:.2f} s after kill -9 of pid {victim}")


def describe(pids: set[int]) -> list[str]:
    out = []
    for pid in sorted(pids):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:120]
        except OSError:
            cmd = "?"
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            state = next(line for line in status.splitlines() if line.startswith("State"))
        except (OSError, StopIteration):
            state = "?"
        out.append(f"{pid} {cmd} ({state}; ancestors {ancestors(pid)})")
    return out


def test_kill_9_of_the_tournament_leaves_no_bot(tmp_path: Path) -> None:
    require_bwrap()
    mark = f"sevenrocks-orphan-{secrets.token_hex(6)}"
    config = write_config(tmp_path / "e.toml", entrants(mark), name="orphans", format="self", deals=2)
    proc = tournament(config, tmp_path / "e.db", tmp_path / "out")
    try:
        # three bots, their sandboxes and the daemon's grandchild
        wait_for(lambda: sum(1 for p in bot_processes(mark) if p != proc.pid) >= 7, 60, "the bots to start")
        owned = set(bot_processes(mark))
        kill_and_check(proc.pid, mark, owned)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()


def test_kill_9_of_an_off_mode_tournament_leaves_no_child_of_a_bot(tmp_path: Path) -> None:
    """``off`` contains nothing, but no bot outlives the harness there either: a crashed harness
    left a bot's ordinary children running (4 at 100% CPU for 9 minutes in the attack run)."""
    mark = f"sevenrocks-orphan-{secrets.token_hex(6)}"
    bots = [attack("parent", "plain_children.py", SEVENROCKS_BOT_MARK=mark), {"name": "greedy", "bot": "greedy"}]
    config = write_config(tmp_path / "e.toml", bots, {"mode": "off"}, {"fresh_process": "never"},
                          name="orphans", format="self", deals=4)
    proc = tournament(config, tmp_path / "e.db", tmp_path / "out")
    try:
        wait_for(lambda: sum(1 for p in bot_processes(mark) if p != proc.pid) >= 3, 60, "the bot and its children")
        owned = set(bot_processes(mark)) - {proc.pid}
        kill_and_check(proc.pid, mark, owned)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()


@pytest.mark.cluster
def test_kill_9_of_a_dask_worker_and_of_the_coordinator_leaves_no_bot(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    require_bwrap()
    mark = f"sevenrocks-orphan-{secrets.token_hex(6)}"
    config = write_config(tmp_path / "e.toml", entrants(mark), name="orphans", format="self", deals=40,
                          concurrency=1)
    coordinator = tournament(config, tmp_path / "e.db", tmp_path / "out", "--cluster", "local:2")
    workers: set[int] = set()
    try:
        def shares() -> dict[int, set[int]]:
            """Worker pid -> the marked processes below it (each bot: its sandbox's two and itself)."""
            found = bot_processes(mark)
            out: dict[int, set[int]] = {}
            for pid in found:
                chain = ancestors(pid)
                if coordinator.pid in chain and len(chain) > chain.index(coordinator.pid) >= 1:
                    worker = chain[chain.index(coordinator.pid) - 1]
                    out.setdefault(worker, set()).add(pid)
            return out

        wait_for(lambda: sum(len(v) >= 9 for v in shares().values()) >= 2, 300,
                 "two Dask workers to start their three bots each")
        workers.update(shares())
        victim = sorted(workers)[0]
        owned = shares()[victim]
        kill_and_check(victim, mark, owned)

        # The other worker plays on (its bots may be between two matches at this instant: a fresh
        # process per match is the default, so look for a few seconds).
        wait_for(lambda: bot_processes(mark), 60, "the other worker's bots to run on")
        owned = set(bot_processes(mark))
        workers.update(children(coordinator.pid))
        kill_and_check(coordinator.pid, mark, owned | set(bot_processes(mark)))
        assert bot_processes(mark) == {}
    finally:
        for pid in [coordinator.pid, *workers]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        coordinator.wait()
        assert coordinator.stdout is not None
        coordinator.stdout.close()


def children(parent: int) -> set[int]:
    """The direct children of ``parent`` (the coordinator's Dask worker processes)."""
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
                out.add(int(entry))
    return out
