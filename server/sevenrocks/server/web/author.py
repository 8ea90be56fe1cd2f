"""The author's page of a league: a bot's newest matches and its own log, for whoever holds its token.

Why: a league's authors fix their bots from what they see them do, and most have no
shell on the machine the league runs on. ``/author/?token=...`` (or ``Authorization:
Bearer ...``) shows, to the holder of one entrant's token, that entrant's versions,
their newest matches with links to the replays, and the end of each version's own
log — nothing of any other bot. A remote entrant's token is the one it connects
with; a launched entrant's *author token* is derived from a secret kept in the
league's database (:func:`author_token`) and written for the organiser to hand out.

Bounded: the page asks the database for each version's newest matches only
(:meth:`~..events.store.Store.seat_matches`, served by an index on each seat), never
for the league's whole history, and ``?before=N`` pages back through older ones.
It runs on the live site's own thread with that thread's read-only connection.

Nothing hidden from a match still in play: the match list holds only the matches
the site's deal guard shows, and the log is served only up to where it stood at the
end of the last finished round (a bot's log holds the hands it was dealt, which
the other match of its duplicate group may still be playing).
"""

from __future__ import annotations

import hashlib
import hmac
import html
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from ..events.store import Store, StoredMatch
from ..submissions import ledger
from ..submissions.authors import author_for
from ..submissions.desk import Desk
from .webloop import Readers

#: Runs a coroutine function on the referee's loop (:meth:`..web.server.LiveSite.on_referee`).
OnReferee = Callable[[Callable[[], Awaitable[Any]]], Awaitable[Any]]


async def direct(fn: Callable[[], Awaitable[Any]]) -> Any:
    """:data:`OnReferee` for a page served on the referee's own loop (no web thread): just run it."""
    return await fn()


#: How many of a version's newest matches, and lines of its log, the page shows.
NEWEST = 30
LOG_LINES = 80
#: Wrong tokens one client address may try in FAILED_WINDOW_S; past that it is answered 429 until
#: the oldest ages out (a guess costs a lookup of every token: no client may make the page a loop).
MAX_FAILED = 10
FAILED_WINDOW_S = 60.0


class FailedTokens:
    """Wrong tokens per client address over the last ``window`` seconds (at most 10,000 addresses)."""

    def __init__(self, limit: int = MAX_FAILED, window: float = FAILED_WINDOW_S) -> None:
        self.limit, self.window = limit, window
        self._seen: dict[str, deque[float]] = {}

    def blocked(self, peer: str) -> bool:
        times = self._seen.get(peer)
        while times and times[0] < time.monotonic() - self.window:
            times.popleft()
        return times is not None and len(times) >= self.limit

    def add(self, peer: str) -> None:
        if len(self._seen) >= 10_000 and peer not in self._seen:
            self._seen = {p: t for p, t in self._seen.items() if t and t[-1] >= time.monotonic() - self.window}
        self._seen.setdefault(peer, deque()).append(time.monotonic())


def league_secret(store: Store, event: str) -> str:
    """The league's secret for author tokens, made once and kept in the database."""
    key = f"author_secret:{event}"
    row = store.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    if row is not None:
        return str(row[0])
    value = secrets.token_hex(32)
    store.db.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (key, value))
    return league_secret(store, event)


def author_token(secret: str, entrant: str) -> str:
    """The token that opens ``entrant``'s author page (every version of it)."""
    return hmac.new(secret.encode(), f"author:{entrant}".encode(), hashlib.sha256).hexdigest()[:32]


class AuthorPages:
    """The ``/author/`` handler: who the token belongs to, then only that entrant's matches and logs."""

    def __init__(self, store: Store, event: str, log_dir: Path, tokens: Callable[[], dict[str, str]],
                 visible: Callable[[StoredMatch], bool], log_limit: Callable[[str], int | None],
                 desk: Desk | None = None, on_referee: OnReferee | None = None) -> None:
        """``store``: the event's database, read on the web thread through a read-only connection of
        that thread's own; ``tokens`` and ``visible`` are called on the web thread. ``desk``: the
        league's submissions, whose tables are read on the referee's loop (``on_referee``), where the
        event's own connection lives."""
        self.readers = Readers(store.path)
        self.store = store
        #: The league's submissions: a registered author's token shows their submissions and entrants.
        self.desk = desk
        self.on_referee: OnReferee = on_referee or direct
        self.event = event
        self.log_dir = log_dir
        #: token -> entrant (its [[entrants]] name): remote tokens and author tokens.
        self.tokens = tokens
        self.visible = visible
        #: version -> bytes of its log that may be shown (None: none yet).
        self.log_limit = log_limit
        self.failed = FailedTokens()

    def entrant_of(self, given: str) -> str | None:
        found = None
        for token, name in self.tokens().items():
            if secrets.compare_digest(given.encode(), token.encode()):
                found = name
        return found

    async def handle(self, request: web.Request) -> web.Response:
        given = request.query.get("token", "")
        bearer = request.headers.get("Authorization", "")
        if bearer.startswith("Bearer "):
            given = given or bearer[7:]
        peer = request.remote or ""
        if self.failed.blocked(peer):
            return web.Response(status=429, headers={"Retry-After": str(int(FAILED_WINDOW_S))},
                                text=f"More than {MAX_FAILED} wrong tokens from your address in a minute: "
                                     "wait a minute, then open the page with the token the organiser gave you.\n")
        base = self.entrant_of(given) if given else None
        author: str | None = None
        subs: list[ledger.Submission] = []
        named: dict[int, str | None] = {}
        challenges_html = ""  # the author's unranked challenges
        if base is None and self.desk is not None:
            author, subs, named = await self.on_referee(lambda: self._submissions(given))
        if author is not None:
            challenges_html = await self.on_referee(lambda: self._challenges(str(author)))
        if base is None and author is None:
            if given:
                self.failed.add(peer)
            return web.Response(status=401, text="This page needs an entrant's token: open /author/?token=... "
                                                 "with the token the organiser gave you.\n")
        bases = [base] if base is not None else sorted({s.entrant for s in subs})
        store = self.readers()
        versions = [r.name for r in store.league_entrants(self.event) if r.base in bases]
        before = request.query.get("before", "")
        page = self.render(store, author or str(base), versions, int(before) if before.isdigit() else None,
                           request.query.get("token"), subs if author is not None else None, named, challenges_html)
        return web.Response(text=page, content_type="text/html",
                            headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})

    def log_tail(self, version: str) -> str:
        limit = self.log_limit(version)
        path = self.log_dir / f"{version}.log"
        if not limit or not path.is_file():
            return ""
        with path.open("rb") as f:
            start = max(0, limit - 64 * 1024)
            f.seek(start)
            data = f.read(limit - start)
        return "\n".join(data.decode("utf-8", "replace").splitlines()[-LOG_LINES:])

    def newest(self, store: Store, version: str, before: int | None) -> list[StoredMatch]:
        """``version``'s newest shown matches below schedule index ``before``, newest first (at most NEWEST).

        Read a page at a time from the seat indexes: the matches the deal guard
        still hides are the round in play, so this stops after a page or two.
        """
        out: list[StoredMatch] = []
        while len(out) < NEWEST:
            page = store.seat_matches(self.event, version, before, NEWEST)
            out += [m for m in page if self.visible(m)][: NEWEST - len(out)]
            if len(page) < NEWEST:
                break
            before = page[-1].index
        return out

    def render(self, store: Store, base: str, versions: list[str], before: int | None = None,
               token: str | None = None, subs: list[ledger.Submission] | None = None,
               named: dict[int, str | None] | None = None, challenges: str = "") -> str:
        parts = [f"<!doctype html><meta charset=utf-8><title>{html.escape(base)}: author page</title>"
                 "<link rel=stylesheet href='/static/site.css'><link rel=icon href='data:,'>",
                 f"<h1>{html.escape(base)}</h1><p>Versions: {html.escape(', '.join(versions)) or 'none yet'}</p>"]
        if subs is not None:
            parts.append(self.render_submissions(subs, named or {}))
            parts.append(challenges)
        oldest: int | None = None
        for version in reversed(versions):
            own = self.newest(store, version, before)
            if len(own) == NEWEST:
                oldest = own[-1].index if oldest is None else max(oldest, own[-1].index)
            where = "newest" if before is None else f"before match index {before}:"
            parts.append(f"<h2>{html.escape(version)}: {where} {len(own)} matches</h2><table>"
                         "<tr><th>match</th><th>seats</th><th>scores</th><th>end</th><th>fault</th></tr>")
            for m in own:
                fault = "" if m.fault is None else f"{m.seats[m.fault.seat]}: {m.fault.cause.value} {m.fault.detail}"
                parts.append(f"<tr><td>{html.escape(m.match_id)}</td><td>{html.escape(' '.join(m.seats))}</td>"
                             f"<td>{html.escape(str(list(m.scores)))}</td><td>{html.escape(m.reason)}</td>"
                             f"<td>{html.escape(fault)}</td></tr>")
            parts.append("</table>")
            if before is not None:
                continue  # an older page: the log is the newest page's
            tail = self.log_tail(version)
            parts.append(f"<h3>the end of {html.escape(version)}'s log (as of the last finished round)</h3>"
                         f"<pre>{html.escape(tail) or '(nothing yet)'}</pre>")
        if oldest is not None:
            query = f"before={oldest}" + (f"&token={html.escape(token)}" if token else "")
            parts.append(f"<p><a href='?{query}'>older matches</a></p>")
        return "\n".join(parts)

    async def _submissions(self, given: str) -> tuple[str | None, list[ledger.Submission], dict[int, str | None]]:
        """The author a token names, their submissions and each one's version in the field: read on
        the referee's loop, where the event's own connection (and the submissions' tables) live."""
        assert self.desk is not None
        author = author_for(self.store.db, given)
        if author is None:
            return None, [], {}
        subs = ledger.of_author(self.store.db, author)
        return author, subs, {sub.id: self.desk.version_of(sub) for sub in subs}

    async def _challenges(self, author: str) -> str:
        """The author's challenges as the page shows them (read on the referee's loop, like submissions)."""
        from .challenge import render_challenges

        return render_challenges(self.store.db, author)

    def render_submissions(self, subs: list[ledger.Submission], named: dict[int, str | None]) -> str:
        """Every submission of the author, newest first: its state, why, and its build and check logs."""
        rows = ["<h2>Submissions</h2><table id=submissions><tr><th>#</th><th>entrant</th><th>state</th>"
                "<th>version</th><th>received (UTC)</th><th>reason</th></tr>"]
        logs = []
        for sub in reversed(subs):
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(sub.received_at))
            version = named.get(sub.id) or ""
            rows.append(f"<tr class='state-{sub.state}'><td>{sub.id}</td><td>{html.escape(sub.entrant)}</td>"
                        f"<td class=state>{sub.state}</td><td>{html.escape(version)}</td><td>{when}</td>"
                        f"<td>{html.escape(sub.reason or '')}</td></tr>")
            for label, text in (("build log", sub.build_log), ("validation log", sub.check_log)):
                if text:
                    logs.append(f"<details><summary>submission {sub.id}: {label}</summary>"
                                f"<pre>{html.escape(text)}</pre></details>")
        if not subs:
            rows.append("<tr><td colspan=6>none yet: sevenrocks submit PATH --to URL --token TOKEN</td></tr>")
        return "\n".join([*rows, "</table>", *logs])
