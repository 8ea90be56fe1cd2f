"""The live site never runs on the referee's event loop: nothing a spectator or an author does reaches a bot's clock.

Structural, not timed: the referee's loop is *blocked outright* while the site is
asked for every kind of page; each still answers, which it could not if any part of
answering ran on that loop. The pages are built in another process (the harness
never constructs them), routes added to the site run on the web thread, and the
author page's query reads the seat indexes, not the league's whole history.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from sevenrocks.server.events.store import Store
from sevenrocks.server.publish.site import SitePages
from sevenrocks.server.web.server import LiveSite


class RefereeLoop:
    """An event loop on a thread, standing for the referee's; it can be blocked and released."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.release = threading.Event()

    def run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(60)

    def block(self) -> None:
        """Occupy the loop until :meth:`unblock`, as a long synchronous step on the referee would."""
        started = threading.Event()

        def hold() -> None:
            started.set()
            self.release.wait(120)

        self.loop.call_soon_threadsafe(hold)
        assert started.wait(30)

    def unblock(self) -> None:
        self.release.set()

    def close(self) -> None:
        self.release.set()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)


@pytest.fixture
def referee() -> Iterator[RefereeLoop]:
    r = RefereeLoop()
    yield r
    r.close()


def get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=60) as resp:
        return resp.status, resp.read().decode()


def test_every_page_answers_while_the_referees_loop_is_blocked(site_db: Path, referee: RefereeLoop,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    built_here: list[int] = []
    original = SitePages.__init__

    def counting(self: SitePages, *args: Any, **kwargs: Any) -> None:
        built_here.append(threading.get_ident())
        original(self, *args, **kwargs)

    monkeypatch.setattr(SitePages, "__init__", counting)
    seen: dict[str, Any] = {}

    async def probe(request: web.Request) -> web.Response:  # a route added as another module would add one
        seen["thread"] = threading.get_ident()
        seen["reader"] = site.reader()
        return web.Response(text="ok")

    with Store(site_db) as store:
        site = LiveSite(lambda: None, store, None)
        site.app.router.add_get("/probe", probe)
        port = referee.run(site.start("127.0.0.1", 0))
        base = f"http://127.0.0.1:{port}"
        referee.block()
        try:
            status, index = get(f"{base}/index.html")
            assert status == 200 and "<table" in index
            assert get(f"{base}/matches.html")[0] == 200
            assert get(f"{base}/bots.html")[0] == 200
            assert get(f"{base}/data/matches-0.js")[1].startswith("SR.addMatches(0,")
            file_id = re.search(r'"file":\s*"([^"]+)"', get(f"{base}/data/matches-0.js")[1])
            assert file_id is not None
            assert get(f"{base}/m/{file_id[1]}.html")[0] == 200
            assert get(f"{base}/records/{file_id[1]}.jsonl")[1].startswith("{")
            assert get(f"{base}/probe") == (200, "ok")
        finally:
            referee.unblock()
        referee.run(site.stop())
    assert built_here == []  # every page was built in the page process, none in the harness
    assert seen["thread"] not in (referee.thread.ident, threading.get_ident())
    assert seen["reader"] is not None and seen["reader"] is not store  # its own read-only connection


def test_the_page_process_is_not_the_harness_and_ends_with_the_site(site_db: Path, referee: RefereeLoop) -> None:
    with Store(site_db) as store:
        site = LiveSite(lambda: None, store, None)
        port = referee.run(site.start("127.0.0.1", 0))
        assert get(f"http://127.0.0.1:{port}/index.html")[0] == 200
        pid = site.pages.pid
        assert pid is not None and pid != os.getpid()
        referee.run(site.stop())
    assert site.pages.pid is None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_route_reaches_the_event_only_through_on_referee(site_db: Path, referee: RefereeLoop) -> None:
    """What a submission route needs: it answers on the web thread, and a change to the event runs
    on the referee's loop, where the event's own objects live."""
    ran_on: list[int] = []

    async def change() -> str:
        ran_on.append(threading.get_ident())
        return "accepted"

    async def submit(request: web.Request) -> web.Response:
        return web.Response(text=await site.on_referee(change))

    with Store(site_db) as store:
        site = LiveSite(lambda: None, store, None)
        site.app.router.add_post("/submit", submit)
        port = referee.run(site.start("127.0.0.1", 0))
        req = urllib.request.Request(f"http://127.0.0.1:{port}/submit", data=b"", method="POST")
        with urllib.request.urlopen(req, timeout=60) as resp:
            assert resp.read() == b"accepted"
        referee.run(site.stop())
    assert ran_on == [referee.thread.ident]


def test_the_author_query_reads_the_seat_indexes_and_pages_back(site_db: Path, tmp_path: Path) -> None:
    db = tmp_path / "copy.db"
    db.write_bytes(site_db.read_bytes())
    with Store(db, writer=True) as store:  # a writer creates the seat indexes (once, on an older file too)
        everything = store.matches(["site"])
        mine = [m for m in reversed(everything) if "greedy" in m.seats]
        newest = store.seat_matches("site", "greedy", limit=5)
        assert [m.match_id for m in newest] == [m.match_id for m in mine[:5]]
        older = store.seat_matches("site", "greedy", before=newest[-1].index, limit=5)
        assert [m.match_id for m in older] == [m.match_id for m in mine[5:10]]
        assert newest[0] == mine[0]  # the whole row, as matches() reads it
        issued: list[str] = []
        store.db.set_trace_callback(issued.append)  # the statements as run, their values in place
        store.seat_matches("site", "greedy", limit=5)
        store.db.set_trace_callback(None)
        assert len(issued) == 2
        plans = [" | ".join(str(r[-1]) for r in store.db.execute("EXPLAIN QUERY PLAN " + sql)) for sql in issued]
        for k in range(4):
            assert f"USING INDEX matches_seat{k}" in plans[0], plans[0]
        assert "SCAN m" not in " ".join(plans) and "SCAN matches" not in " ".join(plans), plans


def test_the_sites_reader_reads_any_file_name_and_never_writes(site_db: Path, tmp_path: Path) -> None:
    import sqlite3

    odd = tmp_path / "a ?#% b" / "site.db"
    odd.parent.mkdir()
    odd.write_bytes(site_db.read_bytes())
    with Store(odd, writer=True) as writer:
        reader = Store.reader(odd)
        try:
            assert len(reader.matches()) == len(writer.matches()) == 12
            with pytest.raises(sqlite3.OperationalError):
                reader.db.execute("DELETE FROM matches")
        finally:
            reader.close()
        assert len(writer.matches()) == 12


def test_the_author_page_shows_the_newest_shown_matches_and_pages_back(site_db: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from sevenrocks.server.web import author
    from sevenrocks.server.web.author import AuthorPages

    monkeypatch.setattr(author, "NEWEST", 3)
    with Store(site_db) as store:
        mine = [m for m in reversed(store.matches(["site"])) if "greedy" in m.seats]
        hidden = {mine[0].match_id, mine[2].match_id}  # the deal guard still hides these two
        pages = AuthorPages(store, "site", tmp_path, dict, lambda m: m.match_id not in hidden, lambda v: None)
        shown = [m for m in mine if m.match_id not in hidden]
        reader = Store.reader(site_db)
        try:
            first = pages.render(reader, "greedy", ["greedy"], token="tok")
            assert [m.match_id for m in shown[:3]] == re.findall(r"<tr><td>([^<]+)</td>", first)
            assert not hidden & set(re.findall(r"<tr><td>([^<]+)</td>", first))
            link = re.search(r"href='\?before=(\d+)&token=tok'", first)
            assert link is not None and int(link[1]) == shown[2].index
            older = pages.render(reader, "greedy", ["greedy"], before=int(link[1]))
            assert [m.match_id for m in shown[3:6]] == re.findall(r"<tr><td>([^<]+)</td>", older)
        finally:
            reader.close()
