"""Authors submit to a real league over HTTP with ``sevenrocks submit``; the league plays what passed.

One league process (``--web``, the default sandbox: bubblewrap) serves the module's
tests, in order: three kinds of bot, a failing bot, a fix, a disqualification; kill -9
of the league mid-pipeline has its own. The refusals that need no match played
(quota, size, names, another author's token) are in test_submit_api.py and test_door.py,
in the default suite, with one lean round trip (upload, build, check, a ranked match);
this module plays matches for over a minute, so it is slow. Each test also runs alone.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from . import bundles
from .league_run import LeagueRun, api, page, submit

pytestmark = pytest.mark.slow


KINDS = [("alice", "python SDK bot (grpc)", bundles.sdk_bot), ("bob", "stdio bot (the docs' example)", bundles.stdio_bot),
         ("carol", "bot with a build step", bundles.built_bot)]


@pytest.mark.parametrize("author, kind, make", KINDS, ids=[k[0] for k in KINDS])
def test_each_kind_of_bot_submitted_over_http_validates_and_plays_ranked(
        league: tuple[LeagueRun, dict[str, str]], tmp_path: Path, author: str, kind: str, make: Any) -> None:
    run, tokens = league
    started = time.monotonic()
    done = submit(run.url, tokens[author], make(tmp_path / author))
    assert done.returncode == 0, done.stdout + done.stderr
    states = [line.split(" (")[0] for line in done.stdout.splitlines()]
    assert states[0].startswith(f"submission ") and f"of {author}: received" in states[0] and "active" in states
    assert f"active: {author} plays in the league" in done.stdout
    active_s = time.monotonic() - started
    run.wait_for(f"a ranked match of {author}", lambda: run.matches_of(author) > 0)
    print(f"{kind}: upload to active {active_s:.1f} s, to first ranked match {time.monotonic() - started:.1f} s")
    # Ranked: a launched version of the league, rated with everyone's results, on the leaderboard.
    assert run.query("SELECT kind FROM entrants WHERE name = ?", author) == [("launched",)]
    if author == "carol":
        build_log = run.query("SELECT build_log FROM submissions WHERE author = 'carol'")[0][0]
        assert "wrote table.json" in str(build_log)


def test_a_bot_that_fails_validation_never_plays(league: tuple[LeagueRun, dict[str, str]], tmp_path: Path) -> None:
    run, tokens = league
    done = submit(run.url, tokens["dave"], bundles.bad_bot(tmp_path / "bad"), "--name", "bobbad")  # no entrant yet
    assert done.returncode == 1
    assert "rejected: validation: the conformance check failed" in done.stderr
    assert "not a double-six tile" in done.stderr  # the end of the check's log, for the author
    time.sleep(2)
    assert run.query("SELECT name FROM entrants WHERE base = 'bobbad'") == []
    assert run.matches_of("bobbad") == 0


def test_a_fix_becomes_name_at_2_and_an_unsubmitted_edit_changes_nothing(league: tuple[LeagueRun, dict[str, str]],
                                                                        tmp_path: Path) -> None:
    run, tokens = league
    folder = bundles.sdk_bot(tmp_path / "alice")
    run.wait_for("alice in the field", lambda: run.query("SELECT 1 FROM entrants WHERE name = 'alice'"))
    (folder / "bot.py").write_text(bundles.SDK_BOT.replace("max(", "min("))  # edited, not submitted
    before = run.matches_of("alice")
    run.wait_for("more matches of alice", lambda: run.matches_of("alice") > before + 2)
    assert [r[0] for r in run.query("SELECT name FROM entrants WHERE base = 'alice'")] == ["alice"]
    done = submit(run.url, tokens["alice"], folder)
    assert done.returncode == 0, done.stderr
    run.wait_for("alice@2 playing", lambda: run.matches_of("alice@2") > 0)
    rows = dict(run.query("SELECT name, retired_at IS NOT NULL FROM entrants WHERE base = 'alice'"))
    assert rows == {"alice": 1, "alice@2": 0}
    assert run.matches_of("alice") >= before  # the old version keeps its rows
    status, mine = api(f"{run.url}/api/submissions", tokens["alice"])
    assert status == 200 and [(s["state"], s["version"]) for s in mine["submissions"]] == [
        ("retired", "alice"), ("active", "alice@2")]


def test_a_disqualified_author_leaves_the_field_and_cannot_submit(league: tuple[LeagueRun, dict[str, str]],
                                                                 tmp_path: Path) -> None:
    import subprocess
    import sys

    run, tokens = league
    if not run.query("SELECT 1 FROM submissions WHERE author = 'carol' AND state = 'active'"):  # run alone
        done = submit(run.url, tokens["carol"], bundles.built_bot(tmp_path / "carol-first"))
        assert done.returncode == 0, done.stdout + done.stderr
    run.wait_for("a match of carol", lambda: run.matches_of("carol") > 0)
    out = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "league", "disqualify", "carol",
                          "--db", str(run.db), "--reason", "read the referee's files"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    run.wait_for("carol retired", lambda: run.query(
        "SELECT retired_at IS NOT NULL, withdrawn_reason FROM entrants WHERE name = 'carol'") ==
        [(1, "disqualified by the organiser: read the referee's files")])
    def total() -> int:
        return int(run.query("SELECT COUNT(*) FROM matches")[0][0])

    # The round under way when she was disqualified finishes; none after it seats her.
    now = total()
    run.wait_for("the round under way to end", lambda: total() >= now + 8)
    played = run.matches_of("carol")
    assert played > 0  # her matches stay stored
    now = total()
    run.wait_for("two more rounds", lambda: total() >= now + 8)
    assert run.matches_of("carol") == played
    again = submit(run.url, tokens["carol"], bundles.built_bot(tmp_path / "carol"))
    assert again.returncode == 2 and "refused (403): carol is disqualified" in again.stderr


@pytest.mark.parametrize("killed_in", ["unpacked", "built"], ids=["during-build", "during-validation"])
def test_kill_9_of_the_league_mid_pipeline_loses_no_submission(tmp_path: Path, bwrap: None, killed_in: str) -> None:
    """Killed while the build runs (state unpacked) or while the check runs (state built): on restart the
    submission is worked again from its upload and plays; before that it is never in the field."""
    run = LeagueRun(tmp_path / "league")
    token = run.add_author("erin")
    run.start()
    folder = bundles.built_bot(tmp_path / "erin")
    (folder / "sevenrocks-bot.toml").write_text('command = ["python3", "bot.py"]\n'
                                                'build = "sleep 3; python3 prepare.py"\n')
    done = submit(run.url, token, folder, "--no-wait")
    assert done.returncode == 0, done.stderr
    run.wait_for(f"state {killed_in}", lambda: run.query("SELECT state FROM submissions") == [(killed_in,)],
                 timeout=60)
    run.kill9()
    assert run.query("SELECT state FROM submissions") == [(killed_in,)]
    assert run.query("SELECT name FROM entrants WHERE base = 'erin'") == []  # never half-active
    run.start()
    run.wait_for("erin active and playing", lambda: run.matches_of("erin") > 0)
    assert "the league stopped while it was being worked; it is done again" in run.output()
    assert run.query("SELECT state FROM submissions") == [("active",)]
    run.stop()
