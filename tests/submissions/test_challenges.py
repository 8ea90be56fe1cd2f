"""Unranked challenges: an author's newest version plays a few matches against named entrants, seen by them only.

The end-to-end test starts a real league (``--web``, the default sandbox), submits a
bot over HTTP and asks for a challenge with ``sevenrocks submit --challenge``; it plays
matches, so it is slow. The refusals (no token, no active version, unknown names, the
quota) need no match played, and the spectator feed's rule is a unit of its own.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.server.events.planner import Table, tasks_of
from sevenrocks.server.league.runner import run_league
from sevenrocks.server.referee.dealguard import DealGuard
from sevenrocks.server.referee.feed import FeedEntry, FeedHub
from sevenrocks.server.submissions.challenges import Challenges, create, seats_of
from sevenrocks.server.submissions.pipeline import SubmitSettings

from ..league.test_league import FIELD, in_process_league
from . import bundles
from .league_run import LeagueRun, api, page, submit

SETTINGS = "challenges_per_day = 3\nchallenge_matches = 3\nchallenge_matches_per_round = 1"


def ask(url: str, token: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(f"{url}/api/challenges", data=json.dumps(body).encode(),
                                 headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def test_a_challenge_match_is_never_shown_to_spectators() -> None:
    """Even in a league without duplicate deals (where every match is shown at once)."""
    for duplicate in (False, True):
        hub = FeedHub(guard=DealGuard(duplicate))
        ranked = FeedEntry("lg-d001-a.b", make_ruleset(), ["a", "b"], [], 1000, None, hidden=duplicate)
        private = FeedEntry("challenge.1.1", make_ruleset(), ["me", "a"], [], 1000, None, hidden=True)
        hub.open(ranked)
        hub.open(private)
        hub.guard.plan([type("T", (), {"match_id": "lg-d001-a.b", "group": "g", "deal": 1})()])  # type: ignore
        assert [e.match_id for e in hub.shown(True)] == ["lg-d001-a.b"]
        hub.close(private, [0, 1])
        assert [e.match_id for e in hub.shown(True)] == ["lg-d001-a.b"]
        assert not hub.guard.shown("challenge.1.1")  # type: ignore[union-attr]


@pytest.mark.parametrize("key, value, words", [
    ("challenges_per_day", "-1", "expected a number >= 0, got -1"),
    ("challenge_matches", "0", "expected a number >= 1, got 0"),
    ("challenge_matches", "2.5", "expected a whole number from 1 to 20, got 2.5"),
    ("challenge_matches_per_round", "21", "expected a whole number from 0 to 20, got 21"),
])
def test_the_challenge_settings_are_checked(key: str, value: str, words: str) -> None:
    import tomllib

    from sevenrocks.server.events.config import ConfigError
    from sevenrocks.server.submissions.desk import parse_submissions

    with pytest.raises(ConfigError) as e:
        parse_submissions(tomllib.loads(f"[submissions]\n{key} = {value}\n"), "league.toml")
    assert f"league.toml: [submissions].{key}: {words}" in str(e.value)
    s = parse_submissions({}, "league.toml")[0]
    assert (s.challenges_per_day, s.challenge_matches, s.challenge_matches_per_round) == (3, 4, 2)


def test_the_challenger_plays_every_seat_against_each_opponent_in_turn() -> None:
    assert [seats_of("me", ["a", "b"], n, 2) for n in range(4)] == [
        ("me", "a"), ("b", "me"), ("me", "a"), ("b", "me")]
    tables = [seats_of("me", ["a", "b", "c"], n, 4) for n in range(4)]
    assert [t.index("me") for t in tables] == [0, 1, 2, 3]
    assert all(sorted(t) == ["a", "b", "c", "me"] for t in tables)
    # A partnership game (the default ruleset): each entrant plays both seats of its team, as ranked matches do.
    assert [seats_of("me", ["a", "b"], n, 4, True) for n in range(3)] == [
        ("me", "a", "me", "a"), ("b", "me", "b", "me"), ("me", "a", "me", "a")]


def test_a_challenge_deal_is_never_a_ranked_deal_of_its_league(tmp_path: Path) -> None:
    """docs/league.md: each challenge match is dealt from a fresh random seed, never a ranked deal. A real
    league plays two ranked matches (in process); then its challenge matches are planned and played. No
    challenge seed is one its ranked matches were dealt from, nor one the league's ranked deal derivation
    gives for any of its first rounds; and planning the same matches again deals them afresh (a seed
    derived from the league's, however named, would repeat: whoever knows one could know the other)."""
    game, store, _ = in_process_league(tmp_path, '[event]\nname = "x"\n[league]\nstop_after = 2\n' + FIELD)
    with store:
        asyncio.run(run_league(game))
        challenges = Challenges(game, SubmitSettings(challenge_matches=3, challenge_matches_per_round=3), print)
        create(store.db, "alice", "a", ["b", "c"], 3)
        planned = [t.seed for _, _, t in challenges._next(3, set())]
        again = [t.seed for _, _, t in challenges._next(3, set())]  # the same three matches, planned anew
        assert asyncio.run(challenges.between_rounds(lambda withdrawn: None, set())) == 3
        dealt = {int(s) for (s,) in store.db.execute("SELECT seed FROM challenge_matches")}
        ranked = {int(s) for (s,) in store.db.execute("SELECT seed FROM matches")}
        seeds = {game.config.seed} | {c.seed for c in store.seeds(["x"])}
    assert len(planned) == 3 and len(dealt) == 3 and len(ranked) >= 1
    # The ranked deals of this league: every table and seat order of its first 300 rounds, by its own seeds.
    tables = [Table("pairs", (("a", "b"), ("c", "d")))] * 16
    derivable = {t.seed for s in seeds for r in range(300)
                 for t in tasks_of(dataclasses.replace(game.config, seed=s), tables, r, 0)}
    assert ranked <= derivable  # the derivation is the one the league's ranked matches use
    assert not (set(planned) | set(again) | dealt) & derivable, "a challenge was dealt a ranked deal"
    assert not set(planned) & set(again), "a challenge's deal is derived, not fresh: planned twice, dealt alike"


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory, bwrap: None) -> Iterator[tuple[LeagueRun, dict[str, str]]]:
    run = LeagueRun(tmp_path_factory.mktemp("league"), submissions=SETTINGS)
    tokens = {name: run.add_author(name) for name in ("alice", "bob")}
    run.start()
    yield run, tokens
    run.stop()


def test_a_challenge_is_refused_without_a_token_an_active_version_or_known_opponents(
        league: tuple[LeagueRun, dict[str, str]]) -> None:
    run, tokens = league
    assert ask(run.url, "", {"opponents": ["greedy"]})[0] == 401
    assert ask(run.url, "sr_made-up", {"opponents": ["greedy"]})[0] == 401
    status, answer = ask(run.url, tokens["bob"], {"opponents": ["greedy"]})
    assert status == 400 and "bob has no version in the league's field yet" in answer["error"]
    done = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "submit", "--challenge", "greedy",
                           "--to", run.url, "--token", tokens["bob"]], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "refused (400): bob has no version in the league's field yet" in done.stderr
    assert run.query("SELECT COUNT(*) FROM challenges") == [(0,)]  # a refusal is no challenge (nor quota)


@pytest.mark.slow
def test_a_challenge_plays_unranked_between_rounds_and_only_its_author_sees_it(
        league: tuple[LeagueRun, dict[str, str]], tmp_path: Path) -> None:
    run, tokens = league
    assert submit(run.url, tokens["alice"], bundles.sdk_bot(tmp_path / "alice")).returncode == 0
    run.wait_for("alice in the field", lambda: run.matches_of("alice") > 0)
    # Unknown names, itself, too many matches: refused, with the reason.
    status, answer = ask(run.url, tokens["alice"], {"opponents": ["nobody"]})
    assert status == 400 and "'nobody' is not an active entrant" in answer["error"]
    status, answer = ask(run.url, tokens["alice"], {"opponents": ["alice"]})
    assert status == 400 and "is the version that plays your challenge" in answer["error"]
    status, answer = ask(run.url, tokens["alice"], {"opponents": ["greedy"], "matches": 4})
    assert status == 400 and "a challenge plays 1 to 3 matches (challenge_matches = 3)" in answer["error"]

    ranked_before = run.query("SELECT COUNT(*), MAX(finished_at) FROM matches")[0]
    done = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "submit", "--challenge", "greedy", "random",
                           "--to", run.url, "--token", tokens["alice"], "--timeout", "300"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "challenge 1: alice against greedy, random, 3 unranked matches" in done.stdout
    assert [line.split(":")[0] for line in done.stdout.splitlines() if line.startswith("match ")] == [
        "match 1", "match 2", "match 3"]
    assert "done: alice won" in done.stdout

    # Stored apart: never in the matches every rating, standing, leaderboard and page reads.
    played = run.query("SELECT match_id, seats, played_at, record FROM challenge_matches ORDER BY n")
    assert [json.loads(str(s)) for _, s, _, _ in played] == [  # a partnership game: two seats each
        ["alice", "greedy", "alice", "greedy"], ["random", "alice", "random", "alice"],
        ["alice", "greedy", "alice", "greedy"]]
    assert all(str(r).startswith("{") for *_, r in played)  # the record is kept, for the organiser
    assert run.query("SELECT COUNT(*) FROM matches WHERE match_id LIKE 'challenge.%'") == [(0,)]
    ids = {str(m) for m, *_ in played}
    rated = {str(n) for (n,) in run.query("SELECT match_id FROM matches")}
    assert not ids & rated and ranked_before[0] < len(rated)
    # A challenge deal is never a ranked deal (docs/league.md): no ranked match was dealt from its seed.
    dealt = {int(str(x)) for (x,) in run.query("SELECT seed FROM challenge_matches")}
    assert dealt and not dealt & {int(str(x)) for (x,) in run.query("SELECT seed FROM matches")}
    # Bounded work: one challenge match between two ranked rounds (challenge_matches_per_round = 1).
    times = [float(str(t)) for _, _, t, _ in played]
    for a, b in zip(times, times[1:]):
        between = run.query("SELECT COUNT(*) FROM matches WHERE finished_at > ? AND finished_at < ?", a, b)[0][0]
        assert int(str(between)) >= 1, "two challenge matches with no ranked match between them"

    # Its author sees the results (never the record: it holds every hand) ...
    status, mine = api(f"{run.url}/api/challenges/1", tokens["alice"])
    assert status == 200 and mine["state"] == "done" and mine["played"] == 3
    assert all(set(r) == {"n", "seats", "scores", "ranks", "end", "rounds", "played_at", "fault"}
               for r in mine["results"])
    status, text = page(f"{run.url}/author/?token={tokens['alice']}")
    assert status == 200 and "Challenges (unranked)" in text and "challenge-done" in text
    # ... nobody else does: not another author, not the live site, not the standings.
    assert api(f"{run.url}/api/challenges/1", tokens["bob"])[0] == 404
    status, theirs = api(f"{run.url}/api/challenges", tokens["bob"])
    assert status == 200 and theirs["challenges"] == []
    status, text = page(f"{run.url}/author/?token={tokens['bob']}")
    assert status == 200 and "challenge." not in text and "alice against" not in text
    for path in ("/matches.html", "/bots.html", "/"):  # the live site (no viewer token on loopback)
        status, text = page(f"{run.url}{path}")
        assert status == 200 and "challenge." not in text, path

    # The quota: challenges_per_day = 3; the fourth of the day is refused (the first counted).
    for _ in range(2):
        assert ask(run.url, tokens["alice"], {"opponents": ["greedy"], "matches": 1})[0] == 202
    status, answer = ask(run.url, tokens["alice"], {"opponents": ["greedy"]})
    assert status == 429 and "challenges_per_day = 3" in answer["error"]
    run.wait_for("the queued challenges played", lambda: run.query(
        "SELECT COUNT(*) FROM challenges WHERE state = 'done'") == [(3,)], timeout=180)
