"""The live site: the event's pages rendered on request, plus live matches over a WebSocket.

Why rendered on request and not a folder: while an event runs, the pages change
with every finished match, and some must not be shown yet. In a duplicate event
the same deal is played again with the seats exchanged; a bot that could read the
first match's record (or watch it live) would know every hand of the second. So
the event's :class:`~..referee.dealguard.DealGuard` — the same one the referee's
spectator feed asks — shows a match (live, as a replay or as a record) only once every
other match of its deal group is stored. ``serve`` has no groups: all is shown.

Browsers: the WebSocket answers only pages of this site (its ``Origin`` must be this
server's own), so no other web page open in the viewer's browser can read the feed
through it; a request without an HTTP version (HTTP/0.9) is not answered.

Access: on a loopback address anyone on this machine may watch; on any other
address every request needs the viewer token (``?token=`` once, then a cookie, or
``Authorization: Bearer``), like the gRPC Spectator service.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import secrets
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import HttpVersion10, WSMsgType, web

from ..events.league_status import read_status
from ..events.store import Store, StoredMatch
from ..publish.leaderboard import LeaderboardError
from ..publish.replay import static_text, template
from ..publish.site import STATIC_FILES, SitePages
from ..referee.dealguard import DealGuard
from ..referee.feed import FeedEntry, FeedHub
from . import metrics
from .live import public_steps

COOKIE = "sevenrocks_viewer"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_hostport(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8080`` for IPv6); raises ValueError naming what is wrong."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{text!r} is not HOST:PORT (for example 127.0.0.1:8080; port 0 picks a free one)")
    return host.strip("[]"), int(port)


def _summary(entry: FeedEntry) -> dict[str, Any]:
    s = entry.summary()
    return {"match_id": s.match_id, "names": list(s.seat_names), "round": s.round, "scores": list(s.scores),
            "status": s.status}


class LiveSite:
    """The aiohttp application of the live site."""

    def __init__(self, hub: Callable[[], FeedHub | None], store: Store | None = None, event: str | None = None,
                 guard: DealGuard | None = None, token: str | None = None, log_dir: Path | None = None,
                 total: Callable[[], int] | None = None) -> None:
        self.hub = hub
        self.store = store
        self.event = event
        self.guard = guard
        self.token = token
        self.log_dir = log_dir
        self.total = total
        self._pages: tuple[float, int, SitePages | None] = (0.0, -1, None)
        self._runner: web.AppRunner | None = None
        #: Open live-page sockets, told when the event ends (:meth:`stop`).
        self._sockets: set[web.WebSocketResponse] = set()
        self.app = web.Application(middlewares=[self._auth])
        r = self.app.router
        r.add_get("/", self._index)
        r.add_get("/index.html", self._index)
        r.add_get("/live.html", self._live_page)
        r.add_get("/live/ws", self._ws)
        r.add_get("/matches.html", self._page(lambda p: p.match_list()))
        r.add_get("/bots.html", self._page(lambda p: p.bot_list()))
        r.add_get("/bots/{file}.html", self._bot)
        r.add_get("/m/{file}.html", self._replay)
        r.add_get("/records/{file}.jsonl", self._record)
        r.add_get("/data/matches-{k:[0-9]+}.js", self._chunk)
        r.add_get("/static/{name}", self._static)
        r.add_get("/metrics", metrics.handler(store, lambda: len(self.running())))

    # ------------------------------------------------------------------ lifecycle

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host:port``; returns the bound port."""
        self._runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        server = site._server  # the asyncio server: the bound port when port was 0
        sockets = getattr(server, "sockets", None) or []
        return int(sockets[0].getsockname()[1]) if sockets else port

    async def stop(self, ended: str | None = None) -> None:
        """Stop serving; ``ended`` is told to every open live page first (e.g. that the event has ended)."""
        for ws in list(self._sockets):
            with contextlib.suppress(ConnectionError, RuntimeError):
                if ended is not None:
                    await ws.send_json({"type": "ended", "text": ended})
                await ws.close()  # so the handlers end now, not at the server's shutdown timeout
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # ------------------------------------------------------------------ access

    @web.middleware
    async def _auth(self, request: web.Request,
                    handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        if request.version < HttpVersion10:
            # HTTP/0.9 has no headers: no Host, no Origin, no cookie to check. Answer nothing.
            if request.transport is not None:
                request.transport.close()
            raise web.HTTPBadRequest()
        if self.token is None or request.path == "/author/" or request.path.startswith(("/api/", "/static/")):
            # The author page and the submission API check authors' own tokens; the stylesheet is public.
            return await handler(request)
        given = request.query.get("token") or request.cookies.get(COOKIE) or ""
        bearer = request.headers.get("Authorization", "")
        if bearer.startswith("Bearer "):
            given = given or bearer[7:]
        if not secrets.compare_digest(given.encode(), self.token.encode()):
            return web.Response(status=401, text="This viewer needs its token: open the address the server "
                                                 "printed (it ends in ?token=...).\n")
        response = await handler(request)
        if request.query.get("token") and not response.prepared:
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="Strict")
        return response

    # ------------------------------------------------------------------ pages

    def pages(self) -> SitePages | None:
        """The site's pages from the database as it is now (rebuilt at most once a second)."""
        if self.store is None:
            return None
        at, count, pages = self._pages
        if pages is not None and time.monotonic() - at < 1.0:
            return pages
        done = self.store.db.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
        if pages is None or done != count:
            try:
                guard = self.guard
                pages = SitePages(self.store, self.event, self.log_dir, live=True,
                                  visible=(lambda m: guard.shown(m.match_id)) if guard is not None else None)
            except LeaderboardError:
                pages = None
        self._pages = (time.monotonic(), done, pages)
        return pages

    def _page(self, render: Callable[[SitePages], str]) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handler(request: web.Request) -> web.Response:
            pages = self.pages()
            if pages is None:
                return _not_yet()
            return _html(render(pages))
        return handler

    async def _index(self, request: web.Request) -> web.Response:
        pages = self.pages()
        if pages is None:
            raise web.HTTPFound("live.html")
        return _html(pages.index())

    async def _live_page(self, request: web.Request) -> web.Response:
        return _html(template("live.html.j2").render(root="", here="live", live=True,
                                                     has_site=self.store is not None))

    async def _bot(self, request: web.Request) -> web.Response:
        pages = self.pages()
        by_file = {v: k for k, v in pages.bot_files.items()} if pages else {}
        name = by_file.get(request.match_info["file"])
        if pages is None or name is None:
            raise web.HTTPNotFound(text="no such bot in this event\n")
        return _html(pages.bot(name))

    def _visible_record(self, file_id: str) -> tuple[SitePages, str]:
        pages = self.pages()
        m = pages.by_file.get(file_id) if pages else None
        if pages is None or m is None or self.store is None:
            raise web.HTTPNotFound(text="no such match, or its deal is still being played (it is shown once "
                                        "every match of its deal has finished)\n")
        lines = self.store.record(m.match_id)
        if lines is None:
            raise web.HTTPNotFound(text="no record stored for this match\n")
        return pages, lines

    async def _replay(self, request: web.Request) -> web.Response:
        file_id = request.match_info["file"]
        pages, lines = self._visible_record(file_id)
        return _html(pages.replay(file_id, lines))

    async def _record(self, request: web.Request) -> web.Response:
        _, lines = self._visible_record(request.match_info["file"])
        return web.Response(text=lines, content_type="application/x-ndjson")

    async def _chunk(self, request: web.Request) -> web.Response:
        pages = self.pages()
        k = int(request.match_info["k"])
        if pages is None or k >= pages.chunks:
            raise web.HTTPNotFound()
        return web.Response(text=pages.chunk(k), content_type="text/javascript")

    async def _static(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in STATIC_FILES:
            raise web.HTTPNotFound()
        kind = "text/css" if name.endswith(".css") else "text/javascript"
        return web.Response(text=static_text(name), content_type=kind)

    # ------------------------------------------------------------------ live

    def running(self) -> list[dict[str, Any]]:
        hub = self.hub()
        if hub is None:
            return []
        return [_summary(e) for e in hub.shown(include_finished=False)]

    def standings(self) -> dict[str, Any]:
        pages = self.pages()
        if pages is None:
            return {"type": "standings", "rows": [], "done": 0, "total": self.total() if self.total else 0}
        lb = pages.lb
        rows = [{"rank": r.rank, "name": r.name, "rating": round(r.conservative, 2), "matches": r.matches,
                 "wins": r.wins, "draws": r.draws, "losses": r.losses} for r in lb.bots]
        return {"type": "standings", "rows": rows, "done": lb.matches, "total": lb.scheduled}

    def league_state(self) -> dict[str, Any] | None:
        """What a league is doing (playing, waiting and for what, frozen, finished); None for an event."""
        status = read_status(self.store.db, self.event) if self.store is not None and self.event else None
        if status is None:
            return None
        return {"type": "league", "state": status.state, "detail": status.detail, "line": status.line()}

    async def _ws(self, request: web.Request) -> web.WebSocketResponse:
        if not same_origin(request):
            # Another web page open in the viewer's browser (a browser always sends its Origin).
            raise web.HTTPForbidden(text="the live feed answers pages of this site only\n")
        ws = web.WebSocketResponse(heartbeat=20.0, max_msg_size=4096)
        await ws.prepare(request)
        self._sockets.add(ws)
        watcher: asyncio.Task[None] | None = None

        async def watch(match_id: str) -> None:
            hub = self.hub()
            entry = hub.get(match_id) if hub else None
            if entry is None or hub is None or not hub.visible(entry):
                await ws.send_json({"type": "error", "match_id": match_id,
                                    "text": "no such running match, or its deal is still being played elsewhere"})
                return
            async for item in public_steps(entry):
                item["sent"] = round(time.time(), 3)  # lets a viewer (or a test) see how fresh a move is
                await ws.send_json(item)

        async def lists() -> None:
            last_running: Any = None
            last_done = -2
            last_league: dict[str, Any] | None = None
            while not ws.closed:
                running = self.running()
                if running != last_running:
                    await ws.send_json({"type": "matches", "running": running})
                    last_running = running
                st = self.standings()
                if st["done"] != last_done:
                    await ws.send_json(st)
                    last_done = st["done"]
                league = self.league_state()
                if league is not None and league != last_league:
                    await ws.send_json(league)
                    last_league = league
                await asyncio.sleep(0.2)

        lister = asyncio.create_task(lists())
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                try:
                    wanted = json.loads(msg.data).get("watch")
                except (ValueError, AttributeError):
                    continue
                if isinstance(wanted, str):
                    if watcher is not None:
                        watcher.cancel()
                    watcher = asyncio.create_task(watch(wanted))
        finally:
            self._sockets.discard(ws)
            for task in (lister, watcher):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, ConnectionError):
                        await task
        return ws


def same_origin(request: web.Request) -> bool:
    """Whether a request comes from a page of this site, or from no web page at all.

    Browsers send ``Origin`` with every WebSocket handshake, and a page cannot forge
    it; a program that is not a browser may leave it out (it could set any header
    anyway, and holds no viewer's cookie). So: no ``Origin`` passes, an ``Origin``
    passes only when it names this server as the request reached it (``Host``).
    """
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    scheme, sep, rest = origin.partition("://")
    if not sep or rest.rstrip("/") != rest.rstrip("/").split("/")[0]:
        return False  # "null" (a sandboxed frame, a file), or not an origin at all
    default = {"http": "80", "https": "443"}.get(scheme.lower())
    want = f"{request.scheme}://{request.host}".lower()

    def normal(o: str) -> str:
        o = o.rstrip("/").lower()
        return o[: -len(f":{default}")] if default and o.endswith(f":{default}") else o

    return normal(origin) == normal(want)


def _html(text: str) -> web.Response:
    return web.Response(text=text, content_type="text/html")


def _not_yet() -> web.Response:
    return web.Response(status=404, content_type="text/html",
                        text="<p>No results stored yet. <a href='live.html'>Watch the live matches</a>.</p>")


def viewer_token(host: str, given: str | None) -> str | None:
    """The token a viewer needs: none on loopback unless one is given; else the given or a new one."""
    if given:
        return given
    return None if is_loopback(host) else secrets.token_urlsafe(18)


def viewer_url(host: str, port: int, token: str | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/live.html" + (f"?token={token}" if token else "")
