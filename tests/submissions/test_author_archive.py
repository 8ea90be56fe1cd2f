"""The author page's replay links and its one download (``/author/archive.zip``), on the live site's own thread.

A real league is played in process (six entrants, so some matches leave a given bot
out), then served by the real :class:`LiveSite` (its web thread and page process)
with the league's :class:`DealGuard`: one duplicate group is marked as still in
play, as the last round of a running league is. What an author's token reaches is
then read over real HTTP while the referee's loop is blocked (the pages, replays and
archive are served from the web thread alone).
"""

from __future__ import annotations

import asyncio
import io
import re
import urllib.error
import urllib.request
import zipfile
from html import unescape
from pathlib import Path
from typing import Any

from sevenrocks.server.league.runner import run_league
from sevenrocks.server.events.store import Store
from sevenrocks.server.referee.dealguard import DealGuard
from sevenrocks.server.web.author import AuthorPages, author_token, league_secret
from sevenrocks.server.web.server import LiveSite

from ..league.test_league import in_process_league

FIELD = "".join(f'[[entrants]]\nname = "{n}"\nbot = "{b}"\n'
                for n, b in [("a", "greedy"), ("b", "random"), ("c", "greedy"), ("d", "random"), ("e", "greedy"),
                             ("f", "random")])


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def listed(page: str) -> set[str]:
    """The match ids the author page links to their replays."""
    return {unescape(m) for m in re.findall(r"<a class=replay href='\?replay=[^']*'>([^<]+)</a>", page)}


def test_the_archive_holds_what_the_page_lists_of_one_author_and_nothing_of_another_or_in_play(
        tmp_path: Path) -> None:
    game, store, _ = in_process_league(tmp_path, '[event]\nname = "x"\n[league]\nstop_after = 24\n' + FIELD)
    logs = tmp_path / "logs"
    logs.mkdir()
    with store:
        asyncio.run(run_league(game))
        matches = store.matches(["x"])
        # The league's deal guard, told every match is stored but those of one group of a's: that group
        # is a round still in play (a duplicate twin of it is being played now).
        guard = DealGuard(True)
        guard.plan(matches)
        in_play_group = next(m.group for m in reversed(matches) if "a" in m.seats)
        in_play = {m.match_id for m in matches if m.group == in_play_group}
        guard.stored(m.match_id for m in matches if m.match_id not in in_play)
        assert in_play and not any(guard.shown(mid) for mid in in_play)
        a_shown = {m.match_id for m in matches if "a" in m.seats and m.match_id not in in_play}
        not_a = [m for m in matches if "a" not in m.seats and m.match_id not in in_play]
        b_only = [m for m in not_a if "b" in m.seats]
        assert a_shown and b_only, "six entrants on four seats: some matches leave a out"
        (logs / "a.log").write_text("a saw hand 1\na sees hand 3 in a round still in play\n")
        (logs / "b.log").write_text("b saw hand 2\n")
        shown_log = {"a": len("a saw hand 1\n"), "b": len("b saw hand 2\n")}
        secret = league_secret(store, "x")
        token_a, token_b = author_token(secret, "a"), author_token(secret, "b")

        async def serve() -> dict[str, Any]:
            site = LiveSite(lambda: None, store, "x", guard, "viewer-secret", logs)
            pages = AuthorPages(store, "x", logs, lambda: {author_token(secret, n): n for n in "abcdef"},
                                lambda m: guard.shown(m.match_id), shown_log.get, replay=site.replay_of)
            pages.add_routes(site.app)
            port = await site.start("127.0.0.1", 0)
            base = f"http://127.0.0.1:{port}/author/"

            def fetch_all() -> dict[str, Any]:
                mine = sorted(a_shown)[0]
                return {
                    "page_a": get(f"{base}?token={token_a}"),
                    "zip_a": get(f"{base}archive.zip?token={token_a}"),
                    "zip_b": get(f"{base}archive.zip?token={token_b}"),
                    "zip_none": get(f"{base}archive.zip"),
                    "zip_wrong": get(f"{base}archive.zip?token=not-a-token"),
                    "replay_own": get(f"{base}?replay={mine}&token={token_a}"),
                    "replay_by_b_of_a_only": get(f"{base}?replay={next(iter(a_shown - {m.match_id for m in matches if 'b' in m.seats}))}&token={token_b}"),  # noqa: E501
                    "replay_not_own": get(f"{base}?replay={not_a[0].match_id}&token={token_a}"),
                    "replay_in_play": get(f"{base}?replay={sorted(in_play)[0]}&token={token_a}"),
                    "viewer_replay_without_token": get(f"http://127.0.0.1:{port}/m/{mine}.html"),
                }

            try:
                # Called here, not in a thread: this (the referee's) loop is blocked for every request, so
                # the page, its replays and the archive are all served from the web thread.
                return fetch_all()
            finally:
                await site.stop()

        got = asyncio.run(serve())

        status, page = got["page_a"]
        assert status == 200
        text = page.decode()
        assert listed(text) == a_shown  # every shown match of a's links to its replay; none in play
        assert "archive.zip?token=" in text

        status, body = got["zip_a"]
        assert status == 200
        with zipfile.ZipFile(io.BytesIO(body)) as z:
            names = set(z.namelist())
            records = {n[len("records/"):-len(".jsonl")] for n in names if n.startswith("records/")}
            assert records == a_shown == listed(text)  # what the page lists, and nothing in play
            rows = z.read("matches.tsv").decode().splitlines()[1:]
            assert {r.split("\t")[0] for r in rows} == a_shown
            for mid in records:
                assert z.read(f"records/{mid}.jsonl").decode() == store.record(mid)  # the stored record itself
            assert z.read("logs/a.log") == b"a saw hand 1\n"  # up to the last finished round only
            assert {n for n in names if n.startswith("logs/")} == {"logs/a.log"}
            assert "README.txt" in names

        status, body = got["zip_b"]
        assert status == 200
        with zipfile.ZipFile(io.BytesIO(body)) as z:
            names = set(z.namelist())
            assert {n for n in names if n.startswith("logs/")} == {"logs/b.log"}
            b_records = {n[len("records/"):-len(".jsonl")] for n in names if n.startswith("records/")}
            assert b_records == {m.match_id for m in matches if "b" in m.seats and m.match_id not in in_play}
            assert not b_records & (a_shown - b_records) and not b_records & in_play
            assert all(b"a saw hand" not in z.read(n) for n in names)  # nothing of a's log

        assert got["zip_none"][0] == 401 and got["zip_wrong"][0] == 401
        status, replay = got["replay_own"]
        assert status == 200 and b'<div id="viewer">' in replay and b"static/replay.js" in replay
        for refused in ("replay_by_b_of_a_only", "replay_not_own", "replay_in_play"):
            assert got[refused][0] == 404, refused
        assert got["viewer_replay_without_token"][0] == 401  # the site itself still needs the viewer's token
