"""The league as its viewers and authors meet it, against a real league process with --web:

* the live page of a duplicate league shows a running match (its twin already stored);
* an author's token opens the public leaderboard, and an author's page shows their place, rating,
  its interval and each match won or lost from their side, with partner and opponents;
* ``submit`` prints every state the submission passed and the version's real name (``NAME@2``);
* ``league authors add`` prints the league's own --web address;
* the viewer token survives a restart (kept in --db), and ``--new-web-token`` makes a new one.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest

from sevenrocks.server.submissions.build import run_build

from .bundles import ROOT, sdk_bot
from .league_run import LeagueRun, page, submit

VIEWER = "viewer-secret-token"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, bwrap: None) -> Iterator[tuple[LeagueRun, dict[str, str]]]:
    league = LeagueRun(tmp_path_factory.mktemp("users"))
    tokens = {"alice": league.add_author("alice")}
    league.start(args=("--web-token", VIEWER))
    yield league, tokens
    league.stop()


def test_the_live_page_of_a_duplicate_league_shows_a_running_match(run: tuple[LeagueRun, dict[str, str]]) -> None:
    """Each table is played twice; the second match of a deal starts once the first is stored, and the
    deal guard lets it be watched: the live list is not "none right now" for the whole run."""
    league, _ = run

    async def first_running() -> list[dict[str, Any]]:
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(f"{league.url}/live/ws?token={VIEWER}") as ws:
                deadline = time.monotonic() + 240
                while time.monotonic() < deadline:
                    msg = await ws.receive_json(timeout=deadline - time.monotonic())
                    if msg.get("type") == "matches" and msg["running"]:
                        running: list[dict[str, Any]] = msg["running"]
                        return running
        raise AssertionError("no running match was shown in 240 s:\n" + league.output()[-3000:])

    running = asyncio.run(first_running())
    assert all(len(m["names"]) == 4 for m in running)
    assert all(m["status"] for m in running)


def test_an_author_token_opens_the_public_leaderboard(run: tuple[LeagueRun, dict[str, str]]) -> None:
    league, tokens = run
    league.wait_for("a stored match", lambda: league.query("SELECT COUNT(*) FROM matches")[0][0] >= 1, 240)
    assert page(f"{league.url}/")[0] == 401  # the site needs a token
    status, body = page(f"{league.url}/?token={tokens['alice']}")
    assert status == 200 and "Leaderboard" in body
    assert page(f"{league.url}/?token=not-a-token")[0] == 401


def _entrant_token(league: LeagueRun, name: str) -> str:
    listing = (league.folder / "out" / "author-tokens.txt").read_text().split()
    return listing[listing.index(name) + 1]


def test_an_authors_page_shows_place_rating_interval_and_won_lost(run: tuple[LeagueRun, dict[str, str]]) -> None:
    league, _ = run
    token = _entrant_token(league, "greedy")
    url = f"{league.url}/author/?token={token}"
    league.wait_for("a shown match on greedy's page",
                    lambda: "class='result " in page(url)[1] and "class=place" in page(url)[1], 300)
    body = page(url)[1]
    place = re.search(r"<td class=place>([^<]+)</td>", body)
    assert place is not None and re.fullmatch(r"=?\d+([–-]\d+)?", place.group(1)), body[:3000]
    assert re.search(r"<td class=rating>-?\d+\.\d</td>", body)
    assert re.search(r"<td class=interval>-?\d+\.\d … -?\d+\.\d</td>", body)
    results = re.findall(r"<td class='result (won|lost|drawn)'>", body)
    assert results and set(results) <= {"won", "lost", "drawn"}
    others = {"random", "defensive", "greedy2"}
    row = re.search(r"<td class='result \w+'>\w+</td><td>(\d+)–(\d+)</td><td>([^<]*)</td><td>([^<]*)</td>", body)
    assert row is not None
    partner, opponents = row.group(3), row.group(4).split(", ")
    assert partner in others | {"greedy"} and set(opponents) <= others | {"greedy"} and len(opponents) == 2
    assert "[" not in row.group(0)  # no raw score lists
    assert f"href='/?token={token}'" in body  # the way to the public leaderboard
    assert page(f"{league.url}/?token={token}")[0] == 200


def test_submit_prints_every_state_and_the_versions_real_name(run: tuple[LeagueRun, dict[str, str]],
                                                              tmp_path: Path) -> None:
    league, tokens = run
    bot = sdk_bot(tmp_path / "alices-bot")
    first = submit(league.url, tokens["alice"], bot)
    assert first.returncode == 0, first.stdout + first.stderr
    states = re.findall(r"^(\w+) \(\+\d+\.\d s\)$", first.stdout, re.M)
    assert states == ["unpacked", "built", "validated", "active"], first.stdout
    assert "active: alice plays in the league" in first.stdout
    (bot / "bot.py").write_text((bot / "bot.py").read_text() + "\n# a fix\n")
    second = submit(league.url, tokens["alice"], bot)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "active: alice@2 plays in the league" in second.stdout, second.stdout


def test_authors_add_prints_the_leagues_own_address(run: tuple[LeagueRun, dict[str, str]]) -> None:
    league, _ = run
    out = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "league", "authors", "add", "bob",
                          "--db", str(league.db)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    token = out.stdout.strip()
    assert f"sevenrocks submit PATH --to {league.url} --token {token}" in out.stderr, out.stderr


def _token_of(url: str) -> str:
    return parse_qs(urlsplit(url).query)["token"][0]


def test_the_viewer_token_survives_a_restart_and_is_renewed_only_when_asked(tmp_path: Path, bwrap: None) -> None:
    """On an address other than loopback the site needs a token: the one made at the first start is kept in
    --db, so every link shared goes on working after a restart; --new-web-token makes a new one."""
    league = LeagueRun(tmp_path)
    try:
        first = _token_of(league.start(web="0.0.0.0:0").live)
        league.stop()
        again = league.start(web="0.0.0.0:0")
        assert _token_of(again.live) == first
        assert page(f"{again.url}/live.html?token={first}")[0] == 200
        league.stop()
        renewed = _token_of(league.start(web="0.0.0.0:0", args=("--new-web-token",)).live)
        assert renewed != first
        assert page(f"{league.url}/live.html?token={first}")[0] == 401
    finally:
        league.stop()


def _submit_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "submit", *args], capture_output=True,
                          text=True, timeout=120, env=env)


def test_submit_tells_a_url_without_scheme_a_url_with_a_path_and_a_missing_token(tmp_path: Path) -> None:
    bot = sdk_bot(tmp_path / "bot")
    bare = _submit_cli(str(bot), "--to", "127.0.0.1:8080", "--token", "sr_x")
    assert bare.returncode == 2 and "add http://" in bare.stderr and "--to http://127.0.0.1:8080" in bare.stderr
    path = _submit_cli(str(bot), "--to", "http://127.0.0.1:8080/author/", "--token", "sr_x")
    assert path.returncode == 2 and "the URL is the league site's root" in path.stderr
    assert "--to http://127.0.0.1:8080 " in path.stderr
    env = {k: v for k, v in os.environ.items() if k != "SEVENROCKS_AUTHOR_TOKEN"}
    none = _submit_cli(str(bot), "--to", "http://127.0.0.1:8080", env=env)
    assert none.returncode == 2 and "SEVENROCKS_AUTHOR_TOKEN" in none.stderr, none.stderr


def test_a_build_that_needs_the_network_says_it_has_none_and_what_to_ship(tmp_path: Path, bwrap: None) -> None:
    """The Node kit without node_modules: ``npm ci`` in the build's sandbox (no network) fails at once, and the
    reason says why and what to ship instead."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    kit = ROOT / "examples" / "bots" / "node"
    folder = tmp_path / "node"
    shutil.copytree(kit, folder, ignore=shutil.ignore_patterns("node_modules"))
    started = time.monotonic()
    result = run_build(folder, "npm ci")
    took = time.monotonic() - started
    assert not result.ok
    assert "a build has none" in (result.reason or ""), (result.reason, result.log[-2000:])
    assert "node_modules" in (result.reason or "")
    print(f"npm ci without the network failed after {took:.1f} s")
