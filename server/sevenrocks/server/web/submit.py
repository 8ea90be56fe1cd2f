"""The submission API of a league's web server: authors upload bots with their own token.

::

    POST /api/submissions?name=NAME     body: the bundle (.tar.gz or .zip), Authorization: Bearer TOKEN
    GET  /api/submissions               the author's submissions, newest last
    GET  /api/submissions/ID            one of them, with its build and validation logs

Why it is shaped so: the referee shares this process, so the handler (on the web
server's own thread) only streams the body to a file (counting bytes against the limit as it
goes, never trusting ``Content-Length`` alone), checks the quota and the name,
writes the ``received`` row and queues the work; unpacking, the build and the
check run off the loop (:mod:`..submissions.pipeline`). The few reads and writes of
the league's tables run on the referee's loop (``on_referee``), where the event's own
database connection and the pipeline's queue live: short statements, never the upload. A submission of another
author answers 404, the same as one that does not exist: an id says nothing. Wrong tokens are counted per
client address with the author pages' own counter (:class:`.author.FailedTokens`): past ten a minute,
a wrong token is answered 429; a valid token is always served.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from ..submissions import ledger
from ..submissions.authors import AuthorError, author_for, check_name, get_author, list_authors
from ..submissions.desk import Desk
from .author import FailedTokens, OnReferee, direct


def bearer(request: web.Request) -> str:
    header = request.headers.get("Authorization", "")
    return header[7:].strip() if header.startswith("Bearer ") else ""


def _error(status: int, text: str) -> web.Response:
    return web.json_response({"error": text}, status=status)


#: What a request without a known author token is told (401).
NO_TOKEN = ("this needs an author token: send Authorization: Bearer TOKEN with the token the organiser "
            "gave you")


class SubmitAPI:
    def __init__(self, desk: Desk, on_referee: OnReferee | None = None, failed: FailedTokens | None = None) -> None:
        """``failed``: the counter of wrong tokens per address the author pages use (one for the site)."""
        self.desk = desk
        self.on_referee: OnReferee = on_referee or direct
        self.failed = failed or FailedTokens()
        self.db = desk.db
        #: Authors with an upload in progress: one at a time each, so parallel uploads cannot outrun the quota.
        self._receiving: set[str] = set()

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/api/submissions", self.submit)
        app.router.add_get("/api/submissions", self.listing)
        app.router.add_get("/api/submissions/{sid:[0-9]+}", self.one)
        from .challenge import ChallengeAPI  # unranked challenges: the same authors, the same tokens

        ChallengeAPI(self.desk, bearer, self._author, self.call).add_routes(app)

    def _author(self, token: str) -> str:
        author = author_for(self.db, token)
        if author is None:
            raise web.HTTPUnauthorized(text=_json_text(NO_TOKEN), content_type="application/json")
        return author

    async def call(self, request: web.Request, fn: Callable[[], Awaitable[Any]]) -> Any:
        """``fn`` on the referee's loop; a wrong token it met is counted against the request's address
        (answered 401, or 429 past the limit). The token is always looked up first: a valid one is
        served whatever others sent from the same address."""
        try:
            return await self.on_referee(fn)
        except web.HTTPUnauthorized:
            if not bearer(request):
                return _error(401, NO_TOKEN)
            return self.failed.refusal(request.remote or "", NO_TOKEN, as_json=True)

    def _quota(self, author: str) -> str | None:
        per_day = self.desk.settings.submissions_per_day
        since = time.time() - ledger.DAY_S
        if ledger.count_since(self.db, author, since) < per_day:
            return None
        oldest = self.db.execute("SELECT MIN(received_at) FROM (SELECT received_at FROM submissions WHERE "
                                 "author = ? AND received_at >= ? ORDER BY received_at DESC LIMIT ?)",
                                 (author, since, per_day)).fetchone()[0]
        when = datetime.datetime.fromtimestamp(oldest + ledger.DAY_S, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        return (f"quota reached: {author} has made {per_day} submissions in the last 24 hours "
                f"(submissions_per_day = {per_day}); the next one is possible after {when}")

    def _name(self, author: str, wanted: str | None) -> str:
        name = wanted or author
        try:
            check_name(name, "entrant")
        except AuthorError as e:
            raise web.HTTPBadRequest(text=_json_text(str(e)), content_type="application/json") from None
        # A name is another's when another author's accepted submission took it first, when another
        # author is registered under it, or when the organiser's config has it; a rejected upload claims
        # nothing (a 0-byte upload with ?name=NAME once made NAME its sender's).
        owner = ledger.owner_of(self.db, name)
        others = {a.name for a in list_authors(self.db)} - {author}
        if (owner is not None and owner != author) or name in self.desk.config_names() or name in others:
            raise web.HTTPConflict(text=_json_text(f"the entrant name {name!r} belongs to another author or to "
                                                   "the organiser's config; choose another with --name"),
                                   content_type="application/json")
        mine, most = self.desk.entrants_of(author), self.desk.settings.entrants_per_author
        if name not in mine and len(mine) >= most:  # a new name is a new ranked entrant: bounded per author
            raise web.HTTPConflict(text=_json_text(
                f"{author} has {len(mine)} entrant(s) in play ({', '.join(mine)}) and the league allows "
                f"{most} per author (entrants_per_author = {most}); send a new version of one with --name "
                f"{mine[0]}"), content_type="application/json")
        return name

    async def submit(self, request: web.Request) -> web.Response:
        token, wanted = bearer(request), request.query.get("name")
        admitted = await self.call(request, lambda: self._admit(token, wanted))
        if isinstance(admitted, web.Response):
            return admitted
        author, name = admitted
        limit = self.desk.settings.max_upload_mb * 2**20
        if request.content_length is not None and request.content_length > limit:
            return _error(413, f"the upload is {request.content_length / 2**20:.1f} MiB; the limit is "
                               f"{self.desk.settings.max_upload_mb} MiB (leave build outputs and dependencies out)")
        if author in self._receiving:
            return _error(409, f"an upload of {author} is still arriving; send one at a time")
        self._receiving.add(author)
        try:
            path = await self._receive(request, limit)
        finally:
            self._receiving.discard(author)
        if path is None:
            return _error(413, f"the upload is over the {self.desk.settings.max_upload_mb} MiB limit (leave build "
                               "outputs and dependencies out)")
        queued: web.Response = await self.on_referee(lambda: self._queue(author, name, path))
        return queued

    async def _admit(self, token: str, wanted: str | None) -> tuple[str, str] | web.Response:
        """Who uploads, under which name: or the refusal (on the referee's loop)."""
        author = self._author(token)
        record = get_author(self.db, author)
        if record is not None and record.disqualified_at is not None:
            return _error(403, f"{author} is disqualified from this league ({record.disqualified_reason})")
        closed = self._closed()
        if closed is not None:
            return closed
        refused = self._quota(author)
        if refused is not None:
            return _error(429, refused)
        return author, self._name(author, wanted)

    def _closed(self) -> web.Response | None:
        """The refusal of every upload once the final froze the field (entries are closed): told at the
        door, before a byte is stored or the quota counts it, never ``active`` for a bot that cannot play."""
        league = self.desk.league
        if league.store.league_state(league.config.name).frozen_at is None and league.final_matches() <= 0:
            return None
        return _error(409, "entries are closed: the league is playing its final with the field it has; no "
                           "submission is taken (nothing was stored, your quota is unchanged)")

    async def _queue(self, author: str, name: str, path: Path) -> web.Response:
        """The ``received`` row and the pipeline's turn for an upload that arrived (on the referee's loop)."""
        refused = self._quota(author)  # again: a parallel upload of the same author may have landed meanwhile
        closed = self._closed()  # or the final began while it arrived
        if refused is not None or closed is not None:
            path.unlink(missing_ok=True)
            return closed or _error(429, str(refused))
        upload = self.desk.pipeline.store_upload(path)
        sid = ledger.create(self.db, author, name, upload)
        self.desk.pipeline.queue.put_nowait(sid)
        return web.json_response({"id": sid, "entrant": name, "state": "received",
                                  "queued_before": self.desk.pipeline.queue.qsize() - 1,
                                  "url": f"/api/submissions/{sid}"}, status=202)

    async def _receive(self, request: web.Request, limit: int) -> Path | None:
        """Stream the body into a file of the upload folder; None when it outgrew ``limit``."""
        fd, name = tempfile.mkstemp(prefix=".incoming-", dir=self.desk.pipeline.uploads)
        path = Path(name)
        size = 0
        try:
            with os.fdopen(fd, "wb") as out:
                async for chunk in request.content.iter_chunked(256 * 1024):
                    size += len(chunk)
                    if size > limit:
                        path.unlink(missing_ok=True)
                        return None
                    await asyncio.to_thread(out.write, chunk)
                await asyncio.to_thread(_sync, out)
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        return path

    async def listing(self, request: web.Request) -> web.Response:
        token = bearer(request)

        async def read() -> web.Response:
            author = self._author(token)
            subs = [dict(s.to_json(logs=False), version=self.desk.version_of(s))
                    for s in ledger.of_author(self.db, author)]
            return web.json_response({"author": author, "submissions": subs})

        answer: web.Response = await self.call(request, read)
        return answer

    async def one(self, request: web.Request) -> web.Response:
        token, sid = bearer(request), int(request.match_info["sid"])

        async def read() -> web.Response:
            author = self._author(token)
            sub = ledger.get(self.db, sid)
            if sub is None or sub.author != author:
                return _error(404, "no such submission of yours")
            out: dict[str, Any] = sub.to_json()
            out["version"] = self.desk.version_of(sub)
            out["states"] = [{"state": st, "at": at} for st, at in ledger.history(self.db, sid)]
            out["queued"] = sub.state in ledger.UNFINISHED
            return web.json_response(out)

        answer: web.Response = await self.call(request, read)
        return answer


def _sync(out: Any) -> None:
    out.flush()
    os.fsync(out.fileno())


def _json_text(text: str) -> str:
    return json.dumps({"error": text})
