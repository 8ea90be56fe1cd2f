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
``Authorization: Bearer``), like the gRPC Spectator service. A league's authors' own tokens
open the same pages (:attr:`LiveSite.also`): their page links the public leaderboard.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import secrets
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from aiohttp import HttpVersion10, WSMsgType, web

from ..league.status import read_status
from ..events.store import Store
from ..publish.replay import static_text, template
from ..publish.site import STATIC_FILES
from ..referee.dealguard import DealGuard
from ..referee.feed import FeedEntry, FeedHub
from . import metrics, pagetasks
from .live import public_steps
from .pageproc import PageProcess, Snapshot
from .webloop import Readers, WebLoop, relay

T = TypeVar("T")

log = logging.getLogger(__name__)

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
    """The aiohttp application of the live site, served from its own thread (:mod:`.webloop`).

    Constructed and started from the referee's loop; every handler runs on the web
    loop. A route added with ``site.app.router.add_get(...)`` before :meth:`start`
    runs there too: it reads the database through :meth:`reader` (never the event's
    own ``Store``, which belongs to the referee's thread) and reaches the event
    through :meth:`on_referee`.
    """

    def __init__(self, hub: Callable[[], FeedHub | None], store: Store | None = None, event: str | None = None,
                 guard: DealGuard | None = None, token: str | None = None, log_dir: Path | None = None,
                 total: Callable[[], int] | None = None) -> None:
        self.hub = hub
        self.event = event
        self.guard = guard
        self.token = token
        self.log_dir = log_dir
        self.total = total
        #: Other tokens that may view the site (a league's authors: they see the public leaderboard
        #: too); called on the web thread. None: the viewer token only.
        self.also: Callable[[str], bool] | None = None
        #: Read-only connections to the event's database, one per thread that reads (the web thread).
        self.readers = Readers(store.path) if store is not None else None
        self.web = WebLoop()
        #: Renders the site's pages (leaderboard, match list, bots, replays) away from the harness.
        self.pages = PageProcess()
        #: (when, stored, version, snapshot): what the pages show, looked at most once a second.
        self._view: tuple[float, int, int, Snapshot | None] = (0.0, -1, 0, None)
        self._runner: web.AppRunner | None = None
        #: Open live-page sockets, told when the event ends (:meth:`stop`).
        self._sockets: set[web.WebSocketResponse] = set()
        self.app = web.Application(middlewares=[self._auth])
        r = self.app.router
        r.add_get("/", self._index)
        r.add_get("/index.html", self._index)
        r.add_get("/live.html", self._live_page)
        r.add_get("/live/ws", self._ws)
        r.add_get("/matches.html", self._page("matches"))
        r.add_get("/bots.html", self._page("bots"))
        r.add_get("/bots/{file}.html", self._page("bot", "file"))
        r.add_get("/m/{file}.html", self._page("replay", "file"))
        r.add_get("/records/{file}.jsonl", self._page("record", "file"))
        r.add_get("/data/matches-{k:[0-9]+}.js", self._page("chunk", "k"))
        r.add_get("/static/{name}", self._static)
        r.add_get("/metrics", metrics.handler(self.readers, lambda: len(self.running())))

    # ------------------------------------------------------------------ lifecycle

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host:port`` from the web thread; returns the bound port (an OSError if it is taken)."""
        try:
            return await self.web.run(self._start_here(host, port))
        except BaseException:
            await self.web.close()
            raise

    async def _start_here(self, host: str, port: int) -> int:
        self._runner = web.AppRunner(self.app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        try:
            await site.start()
        except BaseException:
            await self._runner.cleanup()
            self._runner = None
            raise
        server = site._server  # the asyncio server: the bound port when port was 0
        sockets = getattr(server, "sockets", None) or []
        return int(sockets[0].getsockname()[1]) if sockets else port

    async def stop(self, ended: str | None = None) -> None:
        """Stop serving; ``ended`` is told to every open live page first (e.g. that the event has ended)."""
        if self.web.thread.is_alive():
            await self.web.run(self._stop_here(ended))
        await self.web.close()
        await asyncio.to_thread(self.pages.close)

    async def _stop_here(self, ended: str | None) -> None:
        for ws in list(self._sockets):
            with contextlib.suppress(ConnectionError, RuntimeError):
                if ended is not None:
                    await ws.send_json({"type": "ended", "text": ended})
                await ws.close()  # so the handlers end now, not at the server's shutdown timeout
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self.readers is not None:
            self.readers.close_here()

    def reader(self) -> Store | None:
        """This thread's read-only connection to the event's database (None when the site has no database)."""
        return self.readers() if self.readers is not None else None

    async def on_referee(self, fn: Callable[[], Awaitable[T]]) -> T:
        """Run ``fn()`` on the referee's loop (briefly: the bots' clocks run there) and return its result."""
        return await self.web.on_referee(fn)

    @property
    def thread(self) -> threading.Thread:
        """The thread every request is answered on (not the referee's)."""
        return self.web.thread

    # ------------------------------------------------------------------ access

    @web.middleware
    async def _auth(self, request: web.Request,
                    handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        if request.version < HttpVersion10:
            # HTTP/0.9 has no headers: no Host, no Origin, no cookie to check. Answer nothing.
            if request.transport is not None:
                request.transport.close()
            raise web.HTTPBadRequest()
        if self.token is None or request.path.startswith(("/author/", "/api/", "/static/")):
            # The author page and the submission API check authors' own tokens; the stylesheet is public.
            return await handler(request)
        given = request.query.get("token") or request.cookies.get(COOKIE) or ""
        bearer = request.headers.get("Authorization", "")
        if bearer.startswith("Bearer "):
            given = given or bearer[7:]
        viewer = secrets.compare_digest(given.encode(), self.token.encode())
        if not viewer and not (given and self.also is not None and self.also(given)):
            return web.Response(status=401, text="This viewer needs its token: open the address the server "
                                                 "printed (it ends in ?token=...), or, as an author, the "
                                                 "leaderboard link of your author page.\n")
        response = await handler(request)
        if request.query.get("token") and not response.prepared:
            response.set_cookie(COOKIE, given, httponly=True, samesite="Strict")
        return response

    # ------------------------------------------------------------------ pages

    def view(self) -> tuple[int, Snapshot] | None:
        """The version of the pages to show and what it holds (looked at most once a second; None: no database).

        The deal guard is asked here, on the web thread, for every stored match: the
        page process gets the ids it shows, so it never needs the guard itself.
        """
        store = self.reader()
        if store is None:
            return None
        at, count, version, snap = self._view
        if snap is not None and time.monotonic() - at < 1.0:
            return version, snap
        ids = store.match_ids([self.event] if self.event else None)
        guard = self.guard
        shown = frozenset(i for i in ids if guard.shown(i)) if guard is not None else None
        if snap is None or len(ids) != count or shown != snap.shown:
            version += 1
            snap = Snapshot(str(store.path), self.event, str(self.log_dir) if self.log_dir else None, shown)
        self._view = (time.monotonic(), len(ids), version, snap)
        return version, snap

    async def render(self, what: str, arg: str = "") -> Any:
        """One page (or the standings) from the page process; None when the site has no database."""
        view = self.view()
        if view is None:
            return None
        return await self.pages.ask(view[0], view[1], what, arg)

    async def replay_of(self, match_id: str) -> tuple[int, str, str] | None:
        """The replay page of one match by its id, rendered as ``/m/...`` is: (status, type, text); None: no database.

        For the author page, which checks first that the match is the author's own."""
        answer: tuple[int, str, str] | None = await self.render("replay_of", match_id)
        return answer

    def _page(self, what: str, key: str | None = None) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handler(request: web.Request) -> web.Response:
            answer = await self.render(what, request.match_info[key] if key else "")
            if answer is None:
                return _not_yet()
            status, kind, text = answer
            return web.Response(status=status, text=text, content_type=kind)
        return handler

    async def _index(self, request: web.Request) -> web.Response:
        answer = await self.render("index")
        if answer is None or answer[0] == 302:
            raise web.HTTPFound("live.html")
        status, kind, text = answer
        return web.Response(status=status, text=text, content_type=kind)

    async def _live_page(self, request: web.Request) -> web.Response:
        return _html(template("live.html.j2").render(root="", here="live", live=True,
                                                     has_site=self.readers is not None))

    async def _static(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in STATIC_FILES:
            raise web.HTTPNotFound()
        kind = "text/css" if name.endswith(".css") else "text/javascript"
        return web.Response(text=static_text(name), content_type=kind)

    # ------------------------------------------------------------------ live

    def running(self) -> list[dict[str, Any]]:
        # Read from the web thread: a list() of the hub's dict is one step under the interpreter lock,
        # and a summary only reads the match's append-only event list.
        hub = self.hub()
        if hub is None:
            return []
        return [_summary(e) for e in hub.shown(include_finished=False)]

    async def standings(self) -> dict[str, Any]:
        answer = await self.render("standings")
        total = self.total() if self.total else 0
        if answer is None:
            return {"type": "standings", "rows": [], "done": 0, "total": total}
        if answer["total"] is None:
            answer["total"] = total
        return {"type": "standings", **answer}

    def league_state(self) -> dict[str, Any] | None:
        """What a league is doing (playing, waiting and for what, frozen, finished); None for an event."""
        store = self.reader()
        status = read_status(store.db, self.event) if store is not None and self.event else None
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
            referee_loop = self.web.referee_loop
            if entry is None or hub is None or not hub.visible(entry) or referee_loop is None:
                await ws.send_json({"type": "error", "match_id": match_id,
                                    "text": "no such running match, or its deal is still being played elsewhere"})
                return
            async for item in public_steps(entry.match_id, relay(entry, referee_loop)):
                item["sent"] = round(time.time(), 3)  # lets a viewer (or a test) see how fresh a move is
                await ws.send_json(item)

        async def lists() -> None:
            last_running: Any = None
            last_version = -2
            last_league: dict[str, Any] | None = None
            while not ws.closed:
                running = self.running()
                if running != last_running:
                    await ws.send_json({"type": "matches", "running": running})
                    last_running = running
                view = self.view()
                version = view[0] if view is not None else -1
                if version != last_version:  # the standings change only with the pages' version
                    try:
                        standings = await self.standings()
                    except RuntimeError as e:  # the page process failed on this version: say so, go on
                        log.warning("the live standings could not be built: %s", e)
                        standings = pagetasks.problem("standings")  # (the page keeps the last ones)
                    await ws.send_json(standings)
                    last_version = version
                league = self.league_state()
                if league is not None and league != last_league:
                    await ws.send_json(league)
                    last_league = league
                await asyncio.sleep(0.2)

        lister = pagetasks.start(ws, "lists", lists())
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
                    watcher = pagetasks.start(ws, "watch", watch(wanted), wanted)
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


def kept_viewer_token(db: Any, event: str, host: str, given: str | None, renew: bool = False) -> str | None:
    """The viewer token of a league, kept in its database (``db``, the writer's connection) like its port.

    Why: every link the organiser shared ends in ``?token=...``; a token made anew at each
    start answered all of them 401 after a restart. So the token made once is kept and used
    again; ``given`` (``--web-token``) replaces it, ``renew`` (``--new-web-token``) makes a new
    one (the old links stop working). On loopback without either, none is needed (nor made).
    """
    if is_loopback(host) and not given and not renew:
        return None  # anyone on this machine may watch (the kept token stays for the next non-loopback run)
    key = f"viewer_token:{event}"
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    kept = None if row is None else str(row[0])
    token = given or (None if renew else kept) or secrets.token_urlsafe(18)
    if token is not None and token != kept:
        db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, token))
    return token


def viewer_url(host: str, port: int, token: str | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/live.html" + (f"?token={token}" if token else "")
