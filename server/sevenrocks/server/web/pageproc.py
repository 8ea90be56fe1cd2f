"""The live site's pages, rendered in a process of their own.

Why a process and not the web thread: building the pages means building the
leaderboard, a TrueSkill replay and fit of every stored match (seconds at a few
thousand matches, pure Python). In a thread of the harness that work would hold
the interpreter lock for up to its switch interval at every turn, and the referee's
thread would wait for it before reading each bot's move. In a process it runs on
its own interpreter, and the harness only sends a request and reads the answer.

The web thread sends ``(version, snapshot, what, arg)``: ``version`` names what
the pages must show (the matches stored, and which of them the deal guard shows);
``snapshot`` carries it only when it changed, since the process keeps the pages of
the last version it built. The answer is ``(status, content type, text)``; status
302 sends the browser to ``text``.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import signal
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

Answer = tuple[int, str, str]

HTML = "text/html"
NOT_FOUND_MATCH = ("no such match, or its deal is still being played (it is shown once every match of its deal "
                   "has finished)\n")


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What one version of the pages shows: the database, the event, and the matches the deal guard shows."""

    db: str
    event: str | None
    log_dir: str | None
    #: Match ids the guard shows (None: no guard, every stored match is shown).
    shown: frozenset[str] | None


class _Stale(Exception):
    """The process holds no pages of the version asked for: send the snapshot."""


class _Pages:
    """The process's side: the pages of the newest version it was sent."""

    def __init__(self) -> None:
        self.version = -1
        self.pages: Any = None
        self.store: Any = None

    def get(self, version: int, snap: Snapshot | None) -> Any:
        from ..events.store import Store
        from ..publish.leaderboard import LeaderboardError
        from ..publish.site import SitePages

        if version == self.version:
            return self.pages
        if snap is None:
            raise _Stale()
        if self.store is None:
            self.store = Store.reader(snap.db)
        shown = snap.shown
        try:
            self.pages = SitePages(self.store, snap.event, Path(snap.log_dir) if snap.log_dir else None, live=True,
                                   visible=(lambda m: m.match_id in shown) if shown is not None else None)
        except LeaderboardError:
            self.pages = None
        self.version = version
        return self.pages

    def answer(self, version: int, snap: Snapshot | None, what: str, arg: str) -> Answer | dict[str, Any]:
        pages = self.get(version, snap)
        if what == "standings":
            if pages is None:
                return {"rows": [], "done": 0, "total": None}
            lb = pages.lb
            rows = [{"rank": r.rank, "place": str(getattr(r, "place", None) or r.rank), "name": r.name,
                     "rating": round(r.conservative, 2), "mu": round(r.mu, 3), "sigma": round(r.sigma, 3),
                     "matches": r.matches, "wins": r.wins, "draws": r.draws, "losses": r.losses} for r in lb.bots]
            return {"rows": rows, "done": lb.matches, "total": lb.scheduled}
        if pages is None:
            if what == "index":
                return 302, HTML, "live.html"
            return 404, HTML, "<p>No results stored yet. <a href='live.html'>Watch the live matches</a>.</p>"
        if what == "index":
            return 200, HTML, pages.index()
        if what == "matches":
            return 200, HTML, pages.match_list()
        if what == "bots":
            return 200, HTML, pages.bot_list()
        if what == "bot":
            name = {v: k for k, v in pages.bot_files.items()}.get(arg)
            if name is None:
                return 404, "text/plain", "no such bot in this event\n"
            return 200, HTML, pages.bot(name)
        if what == "chunk":
            k = int(arg)
            if k >= pages.chunks:
                return 404, "text/plain", "no such part of the match list\n"
            return 200, "text/javascript", pages.chunk(k)
        if what == "replay_of":  # by match id: the author page links a match without the site's file names
            what, arg = "replay", pages.files.get(arg, "")
        if what in ("replay", "record"):
            m = pages.by_file.get(arg)
            lines = self.store.record(m.match_id) if m is not None else None
            if m is None:
                return 404, "text/plain", NOT_FOUND_MATCH
            if lines is None:
                return 404, "text/plain", "no record stored for this match\n"
            if what == "record":
                return 200, "application/x-ndjson", lines
            return 200, HTML, pages.replay(arg, lines)
        return 404, "text/plain", "no such page\n"


def serve(conn: Connection) -> None:
    """The page process: answer requests from ``conn`` until it closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the harness's to handle
    state = _Pages()
    while True:
        try:
            version, snap, what, arg = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply: Any = ("ok", state.answer(version, snap, what, arg))
        except _Stale:
            reply = ("stale", None)
        except Exception as e:  # noqa: BLE001 (a page that fails is a 500, not a dead process)
            reply = ("error", f"{type(e).__name__}: {e}")
        conn.send(reply)


class PageProcess:
    """The web thread's handle on the page process: one request at a time, restarted if it dies."""

    def __init__(self) -> None:
        self._proc: Any = None
        self._conn: Connection | None = None
        self._lock = asyncio.Lock()
        self._sent_version = -1
        self._io = threading.Lock()

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else int(self._proc.pid)

    def _start(self) -> Connection:
        if self._conn is not None and self._proc is not None and self._proc.is_alive():
            return self._conn
        self.close()
        # spawn, not fork: the harness holds gRPC and asyncio threads that a fork would copy mid-step.
        ctx = multiprocessing.get_context("spawn")
        ours, theirs = ctx.Pipe()
        self._proc = ctx.Process(target=serve, args=(theirs,), name="sevenrocks-pages", daemon=True)
        self._proc.start()
        theirs.close()
        self._conn = ours
        self._sent_version = -1
        return ours

    def _roundtrip(self, version: int, snap: Snapshot, what: str, arg: str) -> Any:
        with self._io:
            conn = self._start()
            send = snap if self._sent_version != version else None
            conn.send((version, send, what, arg))
            kind, value = conn.recv()
            if kind == "stale":
                conn.send((version, snap, what, arg))
                kind, value = conn.recv()
            if kind == "error":
                raise RuntimeError(value)
            self._sent_version = version
            return value

    async def ask(self, version: int, snap: Snapshot, what: str, arg: str = "") -> Any:
        """The answer to one request, from the page process (started on first use)."""
        async with self._lock:
            return await asyncio.to_thread(self._roundtrip, version, snap, what, arg)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._proc is not None:
            self._proc.terminate()
            self._proc.join(5)
            self._proc = None
