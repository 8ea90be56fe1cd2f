"""A league as its organiser meets it, as the command runs it (subprocesses, the default sandbox):

* a finished league run again prints its stored final standings and starts nothing (no referee, no site);
* the published site after ``--final`` leads with the final: shared places, retired versions marked;
* a leaderboard printed to a pipe is plain and narrow;
* a config typo is reported before the referee, the statistics and the event loop are imported;
* a bot killed at its memory limit is withdrawn with one line naming the limit, under ``--quiet`` too.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..fresh_env import fresh_env

BOT = """from sevenrocks.sdk.client import run
from sevenrocks.bots.greedy import GreedyBot

if __name__ == "__main__":
    run(GreedyBot())
"""

CONFIG = """\
[event]
name = "users"
ruleset = "seven-rocks"
target = 50
seed = 1
duplicate = true
concurrency = 2

[league]
round_matches = 4
poll_s = 0.5
idle_s = 0.5
stop_after = {stop_after}

[time]
per_move_ms = 10000
connect_timeout_s = 60

[[entrants]]
name = "greedy"
bot = "greedy"

[[entrants]]
name = "random"
bot = "random"

[[entrants]]
name = "mine"
command = [{python}, "mine.py"]
"""


def league(folder: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "league", "l.toml", "--db", "l.db",
                           "--out", "out", *args], cwd=folder, capture_output=True, text=True, env=fresh_env(),
                          timeout=timeout)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A league that played a round, saw ``mine`` change (``mine@2``), then closed with ``--final 2``."""
    folder = tmp_path_factory.mktemp("finished")
    (folder / "mine.py").write_text(BOT)
    (folder / "l.toml").write_text(CONFIG.format(stop_after=4, python=json.dumps(sys.executable)))
    first = league(folder, "--quiet")
    assert first.returncode == 0, first.stderr
    (folder / "mine.py").write_text(BOT + "# a fix\n")  # the author saves a new version
    (folder / "l.toml").write_text(CONFIG.format(stop_after=8, python=json.dumps(sys.executable)))
    second = league(folder, "--quiet")
    assert second.returncode == 0, second.stderr
    assert "mine@2 replaces mine" in second.stderr
    (folder / "l.toml").write_text(CONFIG.format(stop_after=0, python=json.dumps(sys.executable)))
    final = league(folder, "--quiet", "--final", "2")
    assert final.returncode == 0, final.stderr
    yield folder


def busy_port() -> socket.socket:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    return s


def test_a_finished_league_run_again_prints_its_standings_and_starts_nothing(finished: Path) -> None:
    """Both addresses it would listen on are taken: a referee or a site started would fail; it starts neither."""
    referee, web = busy_port(), busy_port()
    try:
        started = time.monotonic()
        again = league(finished, "--final", "2", "--listen", f"127.0.0.1:{referee.getsockname()[1]}",
                       "--web", f"127.0.0.1:{web.getsockname()[1]}", timeout=120)
        took = time.monotonic() - started
    finally:
        referee.close()
        web.close()
    assert again.returncode == 0, again.stderr
    assert again.stdout == (finished / "out" / "final.txt").read_text()
    assert "is finished" in again.stderr and "nothing more is played" in again.stderr
    assert "referee listening" not in again.stderr and "live pages" not in again.stderr
    print(f"a finished league run again: {took:.1f} s (load {os.getloadavg()[0]:.1f})")


def test_the_published_site_shows_the_final_with_shared_places_and_retired_versions(finished: Path) -> None:
    final = json.loads((finished / "out" / "final.json").read_text())
    index = (finished / "out" / "site" / "index.html").read_text()
    assert 'id="final-title">Final standings' in index
    table = index.split('<table id="final">')[1].split("</table>")[0]
    rows = re.findall(r'<tr data-name="([^"]+)"><td class="place">([^<]+)</td>', table)
    assert rows == [(r["name"], r["place"]) for r in final["standings"]]
    assert "mine@2" in dict(rows) and "mine" not in dict(rows)  # the retired first version is not ranked
    bots = index.split('<table id="bots"')[1].split("</table>")[0]
    assert re.search(r'data-name="mine" .*?>mine</a> <span class="retired">\(retired\)</span>', bots)
    assert not re.search(r'data-name="mine@2" .*?<span class="retired">', bots.split('data-name="mine@2"')[1]
                         .split("</tr>")[0])


def test_a_leaderboard_printed_to_a_pipe_is_plain_and_narrow(finished: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "leaderboard", "--db", str(finished / "l.db")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert not any(ch in out.stdout for ch in "┏┃│└━")
    table = [line for line in lines if re.match(r"\s*\d+\s+\S", line)]
    assert table and max(len(line) for line in lines if not line.startswith(("Bots —", "Order"))) <= 120, \
        "\n".join(lines)


def test_a_config_typo_is_told_before_the_heavy_parts_are_imported(tmp_path: Path) -> None:
    (tmp_path / "typo.toml").write_text('[event]\nname = "x"\ntargett = 100\n[[entrants]]\nname = "a"\nbot = "greedy"\n')
    probe = ("import sys\nfrom sevenrocks.server.cli import main\n"
             "try:\n    main(['league', 'typo.toml', '--db', 'x.db'])\nexcept SystemExit as e:\n    code = e.code\n"
             "heavy = [m for m in ('sevenrocks.server.referee.server', 'sevenrocks.server.league.runner', "
             "'sevenrocks.server.stats.fit', 'sevenrocks.server.events.tournament', 'scipy') if m in sys.modules]\n"
             "print(code, heavy)\n")
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "unknown key 'targett'" in out.stderr
    assert out.stdout.strip() == "2 []", out.stdout
    assert not (tmp_path / "x.db").exists()


HOG = """import sys
from sevenrocks.sdk.client import run
from sevenrocks.bots.greedy import GreedyBot

hoard = bytearray(400 * 2**20)  # over the league's memory limit: the sandbox kills it
run(GreedyBot())
"""


def test_a_bot_killed_at_its_memory_limit_is_withdrawn_with_the_limit_named_under_quiet(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text(HOG)
    config = CONFIG.format(stop_after=8, python=json.dumps(sys.executable)).replace(
        "[time]", "[sandbox]\nmemory_mb = 200\n\n[bots]\nmax_crashes_in_row = 1\n\n[time]")
    config += '\n[[entrants]]\nname = "defensive"\nbot = "defensive"\n'
    (tmp_path / "l.toml").write_text(config)
    out = league(tmp_path, "--quiet", "--sandbox", "auto", timeout=600)
    assert out.returncode == 0, out.stderr
    line = next((ln for ln in out.stderr.splitlines() if ln.startswith("mine withdrawn")), None)
    assert line is not None, out.stderr
    assert "memory limit 200 MiB" in line, line
