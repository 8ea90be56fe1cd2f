"""An unranked challenge survives ``kill -9`` of the league: nothing lost, no stored match played again.

A real league (``--web``, the default sandbox), a bot submitted over HTTP, a challenge of
four matches asked through the API, one challenge match between ranked rounds. The
league is killed with SIGKILL once the first challenge match is stored, and started
again on the same database: the challenge must end ``done`` with matches 1-4, each
once. The submitted bot writes the match id of each decision on its log, which the
league appends to; the test marks the log where the restart is. A match stored
before the kill must not be played after it (the one in play at the kill, never
stored, is rightly played again).
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request
from pathlib import Path

import pytest

from sevenrocks.server.league.runner import run_league
from sevenrocks.server.submissions.challenges import Challenges, create, get, match_id, played
from sevenrocks.server.submissions.pipeline import SubmitSettings

from ..league.test_league import FIELD, in_process_league
from . import bundles
from .league_run import LeagueRun, submit

SETTINGS = "challenges_per_day = 3\nchallenge_matches = 4\nchallenge_matches_per_round = 1"

#: The SDK bot, telling its log (stderr) which match each decision is of.
TELLING = '''\
import sys

from sevenrocks.sdk.bot import Bot
from sevenrocks.sdk.client import run


class Heaviest(Bot):
    name = "heaviest"

    def choose_move(self, view):
        print(f"playing {view.match_id}", file=sys.stderr, flush=True)
        return max(view.legal_moves(), key=lambda m: sum(m.tile))


if __name__ == "__main__":
    run(Heaviest())
'''


@pytest.mark.slow
def test_a_challenge_resumes_after_kill_9_with_nothing_lost_and_nothing_played_twice(
        tmp_path: Path, bwrap: None) -> None:
    run = LeagueRun(tmp_path / "league", submissions=SETTINGS)
    token = run.add_author("alice")
    run.start()
    try:
        folder = bundles.sdk_bot(tmp_path / "alice")
        (folder / "bot.py").write_text(TELLING)
        done = submit(run.url, token, folder)
        assert done.returncode == 0, done.stdout + done.stderr
        run.wait_for("alice in the field", lambda: run.matches_of("alice") > 0, timeout=180)
        req = urllib.request.Request(f"{run.url}/api/challenges", headers={"Authorization": f"Bearer {token}"},
                                     data=json.dumps({"opponents": ["greedy"], "matches": 4}).encode())
        with urllib.request.urlopen(req, timeout=60) as r:
            assert r.status == 202

        def stored() -> list[int]:
            return [int(str(n)) for (n,) in run.query("SELECT n FROM challenge_matches ORDER BY n")]

        run.wait_for("a first challenge match", lambda: len(stored()) >= 1, timeout=240)
        run.kill9()
        before = run.query("SELECT n, match_id, seed, played_at FROM challenge_matches ORDER BY n")
        assert 1 <= len(before) < 4, before  # mid-challenge (one challenge match between two ranked rounds)
        assert run.query("SELECT state FROM challenges") == [("queued",)]
        logs = sorted((tmp_path / "league" / "out" / "logs").glob("alice*.log"))
        assert logs, "the submitted bot has no log"
        for log in logs:
            with log.open("a") as f:
                f.write("=== the league was killed here ===\n")

        run.start()
        run.wait_for("the challenge done", lambda: run.query("SELECT state FROM challenges") == [("done",)],
                     timeout=300)
        after = run.query("SELECT n, match_id, seed, played_at FROM challenge_matches ORDER BY n")
        assert [n for n, *_ in after] == [1, 2, 3, 4]  # nothing lost
        assert after[:len(before)] == before  # what was stored stays as it was
        assert run.query("SELECT COUNT(*) FROM matches WHERE match_id LIKE 'challenge.%'") == [(0,)]
    finally:
        run.stop()

    # Nothing played twice: no match stored before the kill is played after it.
    seen: dict[str, list[str]] = {"before": [], "after": []}
    for log in logs:
        text = log.read_text(errors="replace")
        assert "=== the league was killed here ===" in text, f"{log} was not appended to"
        head, _, tail = text.partition("=== the league was killed here ===")
        seen["before"] += re.findall(r"playing (challenge\.\d+\.\d+)", head)
        seen["after"] += re.findall(r"playing (challenge\.\d+\.\d+)", tail)
    assert set(seen["before"]) | set(seen["after"]) == {str(m) for _, m, *_ in after}, seen
    replayed = {str(m) for _, m, *_ in before} & set(seen["after"])
    assert not replayed, f"stored before the kill, played again after it: {sorted(replayed)}"


def test_a_challenge_plays_each_missing_number_once_and_ends(tmp_path: Path) -> None:
    """After a gap (match 2 voided, or in play at a kill, while match 3 was stored), the next step plays 2 and
    4, not 3 again: a count of stored matches would replay 3 (stored once, the replay dropped) forever."""
    game, store, _ = in_process_league(tmp_path, '[event]\nname = "x"\n[league]\nstop_after = 2\n' + FIELD)
    with store:
        asyncio.run(run_league(game))  # the field as a running league has it
        challenges = Challenges(game, SubmitSettings(challenge_matches=4, challenge_matches_per_round=4), print)
        cid = create(store.db, "alice", "a", ["b"], 4)
        for n in (1, 3):  # what a league killed after a voided match 2 leaves
            store.db.execute("INSERT INTO challenge_matches (challenge, n, match_id, seed, seats, scores, ranks, "
                             "reason, rounds, record, played_at) VALUES (?, ?, ?, 1, '[]', '[]', '[]', 'target', 1, "
                             "'', 0)", (cid, n, match_id(cid, n)))
        assert [n for _, n, _ in challenges._next(4, set())] == [2, 4]
        assert asyncio.run(challenges.between_rounds(lambda withdrawn: None, set())) == 2
        assert [p.n for p in played(store.db, cid)] == [1, 2, 3, 4]
        c = get(store.db, cid)
        assert c is not None and c.state == "done"
