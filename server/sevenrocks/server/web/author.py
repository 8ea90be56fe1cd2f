"""The author's page of a league: a bot's newest matches and its own log, for whoever holds its token.

Why: a league's authors fix their bots from what they see them do, and most have no
shell on the machine the league runs on. ``/author/?token=...`` (or ``Authorization:
Bearer ...``) shows, to the holder of one entrant's token, that entrant's versions,
their newest matches with links to the replays, and the end of each version's own
log — nothing of any other bot. A remote entrant's token is the one it connects
with; a launched entrant's *author token* is derived from a secret kept in the
league's database (:func:`author_token`) and written for the organiser to hand out.

Each listed match links to its replay (``?replay=MATCH``: the live site's own replay
page, rendered by its page process, served only for a shown match one of the
holder's versions played), and ``archive.zip`` streams everything of the holder's
own in one download: the stored record of every shown match of their versions, their
versions' logs (up to the same point as the page's), and their submissions' build and
validation logs. It is written as it is read, a record at a time, from this thread's
read-only connection, so a long history neither waits in memory nor reaches the
referee's loop; one download per holder at a time.

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

import asyncio
import hashlib
import hmac
import html
import secrets
import time
import zipfile
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from aiohttp import web

from ..events.store import Store, StoredMatch
from ..publish.leaderboard import LeaderboardError, standing_places
from ..publish.site import safe_name
from ..submissions import ledger
from ..submissions.authors import author_for
from ..submissions.desk import Desk
from .webloop import Readers

#: Runs a coroutine function on the referee's loop (:meth:`..web.server.LiveSite.on_referee`).
OnReferee = Callable[[Callable[[], Awaitable[Any]]], Awaitable[Any]]


async def direct(fn: Callable[[], Awaitable[Any]]) -> Any:
    """:data:`OnReferee` for a page served on the referee's own loop (no web thread): just run it."""
    return await fn()


#: Renders the live site's replay page of one match by its id: (status, content type, text); None: no pages.
Replay = Callable[[str], Awaitable["tuple[int, str, str] | None"]]

#: The live site's standings as its live page gets them: ``{"rows": [{"place", "name", "mu", "sigma", ...}]}``.
Standings = Callable[[], Awaitable[dict[str, Any]]]

#: How many of a version's newest matches, and lines of its log, the page shows.
NEWEST = 30
LOG_LINES = 80
#: Matches read from the seat indexes per query while an archive is written, and bytes of a log per read.
ARCHIVE_PAGE = 200
LOG_CHUNK = 256 * 1024
NO_MATCH = ("no such match of yours, or its deal is still being played (it is shown once every match of "
            "its deal has finished)\n")
#: Wrong tokens one client address may try in FAILED_WINDOW_S; past that it is answered 429 until
#: the oldest ages out (a guess costs a lookup of every token: no client may make the page a loop).
MAX_FAILED = 10
FAILED_WINDOW_S = 60.0


class FailedTokens:
    """Wrong tokens per client address over the last ``window`` seconds (at most 10,000 addresses).

    One is shared by every endpoint that takes a token (the author pages, the submission and the
    challenge APIs): wrong tries anywhere count together. It limits only *wrong* tokens: a request is
    looked up first, and a valid token is always served, so a neighbour behind the same address (a
    NAT, a proxy) guessing tokens never locks an author out of their own page (it once did, for a
    minute). Past the limit a wrong token is answered 429 instead of 401 (:meth:`refusal`)."""

    def __init__(self, limit: int = MAX_FAILED, window: float = FAILED_WINDOW_S) -> None:
        self.limit, self.window = limit, window
        self._seen: dict[str, deque[float]] = {}

    def refusal(self, peer: str, text: str, as_json: bool = False) -> web.Response:
        """The answer to a wrong token from ``peer``: 401 with ``text``, or 429 once it tried too many."""
        if self.blocked(peer):
            said = (f"more than {self.limit} wrong tokens from your address in a minute: wait a minute, then "
                    "use the token the organiser gave you")
            headers = {"Retry-After": str(int(self.window))}
            if as_json:
                return web.json_response({"error": said}, status=429, headers=headers)
            return web.Response(status=429, headers=headers, text=said[0].upper() + said[1:] + ".\n")
        self.add(peer)
        if as_json:
            return web.json_response({"error": text}, status=401)
        return web.Response(status=401, text=text)

    def blocked(self, peer: str) -> bool:
        times = self._seen.get(peer)
        while times and times[0] < time.monotonic() - self.window:
            times.popleft()
        return times is not None and len(times) >= self.limit

    def add(self, peer: str) -> None:
        if len(self._seen) >= 10_000 and peer not in self._seen:
            self._seen = {p: t for p, t in self._seen.items() if t and t[-1] >= time.monotonic() - self.window}
        self._seen.setdefault(peer, deque()).append(time.monotonic())


@dataclass
class Holder:
    """Whom a request's token names: an entrant (launched or remote), or a registered author."""

    label: str
    #: The entrants' names (bases) whose versions the holder may see.
    bases: list[str]
    #: Set for a registered author: their submissions, and each one's version in the field.
    subs: list[ledger.Submission] | None = None
    named: dict[int, str | None] = field(default_factory=dict)


async def _send(response: web.StreamResponse, sink: _Sink) -> None:
    """Send what the archive wrote so far, then let the web thread answer others: a write returns at once
    while the client's socket has room, so a download of little to send and much to compress (a long
    log) would otherwise hold the thread, every other page with it, until its end."""
    await response.write(sink.take())
    await asyncio.sleep(0)


class _Sink:
    """A write-only stream for :class:`zipfile.ZipFile` (it cannot seek, so each entry ends in a data
    descriptor): collects what is written until :meth:`take` hands it to the response."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes, /) -> int:
        self.parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def take(self) -> bytes:
        out, self.parts = b"".join(self.parts), []
        return out


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
                 desk: Desk | None = None, on_referee: OnReferee | None = None, replay: Replay | None = None,
                 standings: Standings | None = None) -> None:
        """``store``: the event's database, read on the web thread through a read-only connection of
        that thread's own; ``tokens`` and ``visible`` are called on the web thread. ``desk``: the
        league's submissions, whose tables are read on the referee's loop (``on_referee``), where the
        event's own connection lives. ``replay``: the live site's replay page of a match
        (:meth:`..web.server.LiveSite.replay_of`); without it the matches are listed without links."""
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
        #: Wrong tokens per client address: pass it to the submission API too (:class:`..web.submit.SubmitAPI`).
        self.failed = FailedTokens()
        self.replay = replay
        #: The live standings (:meth:`..web.server.LiveSite.standings`): the holder's place, rating and interval.
        self.standings = standings
        #: Holders whose archive is being written now (one download each at a time).
        self._downloading: set[str] = set()
        #: (matches stored, places, bots ranked) of the last place line (:meth:`places_line`).
        self._places: tuple[int, dict[str, str], int] | None = None

    def add_routes(self, app: web.Application) -> None:
        """``/author/`` (the page, and ``?replay=MATCH``) and ``/author/archive.zip``."""
        app.router.add_get("/author/", self.handle)
        app.router.add_get("/author/archive.zip", self.archive)

    def entrant_of(self, given: str) -> str | None:
        found = None
        for token, name in self.tokens().items():
            if secrets.compare_digest(given.encode(), token.encode()):
                found = name
        return found

    async def holder(self, request: web.Request) -> Holder | web.Response:
        """Whom the request's token names, or the refusal to send (401, or 429 after many wrong tokens)."""
        given = request.query.get("token", "")
        bearer = request.headers.get("Authorization", "")
        if bearer.startswith("Bearer "):
            given = given or bearer[7:]
        peer = request.remote or ""
        base = self.entrant_of(given) if given else None
        author: str | None = None
        subs: list[ledger.Submission] = []
        named: dict[int, str | None] = {}
        if base is None and self.desk is not None:
            author, subs, named = await self.on_referee(lambda: self._submissions(given))
        if base is None and author is None:
            text = ("This page needs an entrant's token: open /author/?token=... with the token the organiser "
                    "gave you.\n")
            return self.failed.refusal(peer, text) if given else web.Response(status=401, text=text)
        if base is not None:
            return Holder(base, [base])
        return Holder(str(author), sorted({s.entrant for s in subs}), subs, named)

    def versions(self, store: Store, who: Holder) -> list[str]:
        """The holder's versions in the league, oldest first: an entrant's every version; a registered
        author's, only the versions their own submissions became (not any entrant that shares a name)."""
        if who.subs is not None:
            made = set(who.named.values())
            return [r.name for r in store.league_entrants(self.event) if r.name in made]
        return [r.name for r in store.league_entrants(self.event) if r.base in who.bases]

    async def handle(self, request: web.Request) -> web.Response:
        who = await self.holder(request)
        if isinstance(who, web.Response):
            return who
        store = self.readers()
        versions = self.versions(store, who)
        if "replay" in request.query:
            return await self.replay_page(store, versions, request.query["replay"])
        before = request.query.get("before", "")
        # A registered author's unranked challenges (their own results only).
        label = who.label
        challenges = await self.on_referee(lambda: self._challenges(label)) if who.subs is not None else ""
        standing = await self.standing_rows(versions)
        page = self.render(store, who.label, versions, int(before) if before.isdigit() else None,
                           request.query.get("token") or bearer_of(request), who.subs, who.named, challenges,
                           standing)
        return web.Response(text=page, content_type="text/html", headers=PRIVATE)

    async def standing_rows(self, versions: list[str]) -> list[dict[str, Any]] | None:
        """The standings' rows of the holder's versions (None: the site has no standings yet)."""
        if self.standings is None:
            return None
        try:
            answer = await self.standings()
        except RuntimeError:  # the page process failed on this version of the pages: the page goes on without
            return None
        rows = answer.get("rows") or []
        return [r for r in rows if r.get("name") in set(versions)]

    def own_shown(self, store: Store, versions: list[str], match_id: str) -> StoredMatch | None:
        """The match ``match_id`` if it is of this event, one of ``versions`` played it, and it is shown."""
        m = store.match(match_id)
        if m is None or m.event_id != self.event or not set(m.seats) & set(versions) or not self.visible(m):
            return None
        return m

    async def replay_page(self, store: Store, versions: list[str], match_id: str) -> web.Response:
        """The live site's replay page of one of the holder's shown matches (404 for any other match)."""
        answer = await self.replay(match_id) if self.replay and self.own_shown(store, versions, match_id) else None
        if answer is None:
            return web.Response(status=404, text=NO_MATCH, headers=PRIVATE)
        status, kind, text = answer
        return web.Response(status=status, text=text, content_type=kind, headers=PRIVATE)

    def all_shown(self, store: Store, versions: list[str]) -> Iterator[tuple[str, StoredMatch]]:
        """(version, match) for every shown match of ``versions``, each match once, newest first per
        version: read a page at a time from the seat indexes, never the event's whole history at once."""
        seen: set[str] = set()
        for version in reversed(versions):
            before: int | None = None
            while True:
                page = store.seat_matches(self.event, version, before, ARCHIVE_PAGE)
                for m in page:
                    if m.match_id not in seen and self.visible(m):
                        seen.add(m.match_id)
                        yield version, m
                if len(page) < ARCHIVE_PAGE:
                    break
                before = page[-1].index

    async def archive(self, request: web.Request) -> web.StreamResponse:
        """``archive.zip``: the holder's records, logs and submission logs, streamed as it is written."""
        who = await self.holder(request)
        if isinstance(who, web.Response):
            return who
        if who.label in self._downloading:
            return web.Response(status=429, headers={"Retry-After": "10"},
                                text="Your archive is already being downloaded: one download at a time.\n")
        self._downloading.add(who.label)
        response = web.StreamResponse(headers={
            **PRIVATE, "Content-Type": "application/zip",
            "Content-Disposition": f'attachment; filename="{safe_name(who.label)}-records.zip"'})
        try:
            store = self.readers()
            versions = self.versions(store, who)
            await response.prepare(request)
            sink = _Sink()
            with zipfile.ZipFile(sink, "w", zipfile.ZIP_DEFLATED) as zf:
                index = ["match\tversion\tindex\tseats\tscores\tend\tfault\trecord"]
                for version, m in self.all_shown(store, versions):
                    lines = store.record(m.match_id)
                    name = f"records/{safe_name(m.match_id)}.jsonl"
                    if lines is not None:
                        zf.writestr(name, lines)
                    fault = "" if m.fault is None else f"{m.seats[m.fault.seat]}: {m.fault.cause.value}"
                    index.append("\t".join((m.match_id, version, str(m.index), " ".join(m.seats),
                                            " ".join(map(str, m.scores)), m.reason, fault,
                                            name if lines is not None else "")))
                    await _send(response, sink)
                for version in versions:
                    await self._add_log(zf, sink, response, version)
                for sub in who.subs or []:
                    for label, text in (("build", sub.build_log), ("validation", sub.check_log)):
                        if text:
                            zf.writestr(f"submissions/{sub.id}-{label}.log", text)
                zf.writestr("matches.tsv", "\n".join(index) + "\n")
                zf.writestr("README.txt", ARCHIVE_README.format(who=who.label, versions=", ".join(versions) or "none"))
            await _send(response, sink)
            await response.write_eof()
            return response
        except ConnectionError:  # the client went away: the archive stops here (no one to write it for)
            return response
        finally:
            self._downloading.discard(who.label)

    async def _add_log(self, zf: zipfile.ZipFile, sink: _Sink, response: web.StreamResponse, version: str) -> None:
        """``logs/VERSION.log``: the version's log up to the end of the last finished round, a chunk at a time."""
        limit = self.log_limit(version)
        path = self.log_dir / f"{version}.log"
        if not limit or not path.is_file():
            return
        with path.open("rb") as f, zf.open(f"logs/{safe_name(version)}.log", "w") as out:
            left = limit
            while left > 0:
                data = f.read(min(LOG_CHUNK, left))
                if not data:
                    break
                left -= len(data)
                out.write(data)
                await _send(response, sink)

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
               named: dict[int, str | None] | None = None, challenges: str = "",
               standing: list[dict[str, Any]] | None = None) -> str:
        with_token = f"&token={quote(token)}" if token else ""
        board = "/" + (f"?token={quote(token)}" if token else "")
        parts = [f"<!doctype html><meta charset=utf-8><title>{html.escape(base)}: author page</title>"
                 "<link rel=stylesheet href='/static/site.css'><link rel=icon href='data:,'>",
                 f"<h1>{html.escape(base)}</h1><p>Versions: {html.escape(', '.join(versions)) or 'none yet'}</p>",
                 self.places_line(store, versions),
                 f"<p><a id=archive href='archive.zip?{with_token[1:]}' download>Download your records "
                 "and logs</a> (one .zip: every shown match's record, your versions' logs, your submissions' "
                 "build and validation logs)</p>",
                 render_standing(standing, versions, board)]
        if subs is not None:
            parts.append(self.render_submissions(subs, named or {}))
            parts.append(challenges)
        oldest: int | None = None
        withdrawn = {r.name: r.withdrawn for r in store.league_entrants(self.event) if r.withdrawn}
        for version in reversed(versions):
            if version in withdrawn:
                parts.append(f"<p class=withdrawn><b>{html.escape(version)} is withdrawn</b>: "
                             f"{html.escape(withdrawn[version] or '')}. It plays no more matches; a fix needs a "
                             "new submission (a new version), which joins the field on its own.</p>")
            own = self.newest(store, version, before)
            if len(own) == NEWEST:
                oldest = own[-1].index if oldest is None else max(oldest, own[-1].index)
            where = "newest" if before is None else f"before match index {before}:"
            parts.append(f"<h2>{html.escape(version)}: {where} {len(own)} matches</h2><table class=own-matches>"
                         "<tr><th>match</th><th>result</th><th>score (yours first)</th><th>partner</th>"
                         "<th>opponents</th><th>end</th><th>fault</th></tr>")
            for m in own:
                fault = "" if m.fault is None else f"{m.seats[m.fault.seat]}: {m.fault.cause.value} {m.fault.detail}"
                shown = html.escape(m.match_id)
                if self.replay is not None:
                    href = f"?replay={quote(m.match_id)}{with_token}"  # quote()d: nothing HTML could read
                    shown = f"<a class=replay href='{href}'>{shown}</a>"
                side = your_side(m, version)
                parts.append(f"<tr><td>{shown}</td><td class='result {side.result}'>{side.result}</td>"
                             f"<td>{html.escape(side.score)}</td><td>{html.escape(side.partner or '–')}</td>"
                             f"<td>{html.escape(', '.join(side.opponents))}</td><td>{html.escape(m.reason)}</td>"
                             f"<td>{html.escape(fault)}</td></tr>")
            parts.append("</table>")
            if before is not None:
                continue  # an older page: the log is the newest page's
            tail = self.log_tail(version)
            parts.append(f"<h3>the end of {html.escape(version)}'s log (as of the last finished round)</h3>"
                         f"<pre>{html.escape(tail) or '(nothing yet)'}</pre>")
        if oldest is not None:
            parts.append(f"<p><a href='?before={oldest}{with_token}'>older matches</a></p>")
        return "\n".join(parts)

    # -- places: where each version stands, as the leaderboard prints it -----------------

    def places_line(self, store: Store, versions: list[str]) -> str:
        """One line: each version's place interval (``2–3`` of 9) in the event's every-pair verdict.

        A fit of every result, redone only when matches were stored since the last one."""
        stored = int(store.db.execute("SELECT COUNT(*) FROM matches WHERE event_id = ?", (self.event,)).fetchone()[0])
        if self._places is None or self._places[0] != stored:
            try:
                places, ranked = standing_places(store, self.event)
            except LeaderboardError:
                places, ranked = {}, 0
            self._places = (stored, places, ranked)
        _, places, ranked = self._places
        shown = [f"{html.escape(v)}: place {html.escape(places[v])} of {ranked}" for v in versions if v in places]
        return ("<p id=places>" + ("; ".join(shown) if shown else "Place: not ranked yet") + " (every place the "
                "settled pairs allow: 2–3 is second or third; every claim holds at once at the league's level)</p>")

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


def bearer_of(request: web.Request) -> str | None:
    header = request.headers.get("Authorization", "")
    return header[7:].strip() or None if header.startswith("Bearer ") else None


@dataclass(frozen=True, slots=True)
class Side:
    """One match as its author reads it: from their version's side of the table."""

    result: str  # "won", "lost" or "drawn"
    score: str  # "250–70": their side's score first
    partner: str | None
    opponents: tuple[str, ...]


def your_side(m: StoredMatch, version: str) -> Side:
    """``m`` from ``version``'s side: won or lost, the score (theirs first), the partner and the opponents.

    Scores are per side: one per seat, or one per partnership (seats 0 and 2 against 1 and 3)."""
    sides = len(m.scores) or 1
    seat = m.seats.index(version)
    team = seat % sides
    partner = next((n for i, n in enumerate(m.seats) if i != seat and i % sides == team), None)
    opponents = tuple(n for i, n in enumerate(m.seats) if i % sides != team)
    if m.winner is None:
        result = "drawn"
    else:
        result = "won" if m.winner == team else "lost"
    others = [str(sc) for t, sc in enumerate(m.scores) if t != team]
    score = "–".join([str(m.scores[team]) if m.scores else "?", *others])
    return Side(result, score, partner, opponents)


def render_standing(rows: list[dict[str, Any]] | None, versions: list[str], board: str) -> str:
    """The holder's place, rating and its interval, as the standings state them, and the way to the leaderboard."""
    link = f"<p><a id=leaderboard href='{html.escape(board)}'>The league's leaderboard</a> (every entrant)</p>"
    if not rows:
        why = "no rated match yet" if rows is not None else "no standings yet"
        return f"<h2>Your standing</h2><p id=standing>{why}: {html.escape(', '.join(versions)) or 'no version'}</p>" + link
    out = ["<h2>Your standing</h2><table id=standing><tr><th>version</th><th>place</th><th>rating (μ)</th>"
           "<th>95% interval</th><th>conservative</th><th>matches</th><th>won</th><th>lost</th></tr>"]
    for r in rows:
        mu, sigma = r.get("mu"), r.get("sigma")
        interval = f"{mu - 1.96 * sigma:.1f} … {mu + 1.96 * sigma:.1f}" if mu is not None and sigma is not None else "–"
        out.append(f"<tr><td>{html.escape(str(r['name']))}</td><td class=place>{html.escape(str(r.get('place', '–')))}"
                   f"</td><td class=rating>{'–' if mu is None else f'{mu:.1f}'}</td><td class=interval>{interval}</td>"
                   f"<td>{r.get('rating', '–')}</td><td>{r.get('matches', 0)}</td><td>{r.get('wins', 0)}</td>"
                   f"<td>{r.get('losses', 0)}</td></tr>")
    return "\n".join([*out, "</table>", link])


#: Headers of everything the author pages send: never cached, never named to another site.
PRIVATE = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}

ARCHIVE_README = """\
{who}: your records and logs from this league (versions: {versions}).

matches.tsv        every match of yours that is shown (its deal finished), newest first per version
records/*.jsonl    each of those matches' stored record (docs/records.md); replay one with
                   sevenrocks replay records/MATCH.jsonl
logs/VERSION.log   each version's own log, up to the end of the last finished round
submissions/       the build and validation log of each of your submissions

Matches still in play, and anything of other authors' bots, are not in here.
"""
