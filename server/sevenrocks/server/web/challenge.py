"""The challenge API of a league's web server: an author asks for unranked matches and reads their results.

::

    POST /api/challenges          body: {"opponents": ["greedy", "bob@2"], "matches": 4}
    GET  /api/challenges          the author's challenges, newest last, with their results
    GET  /api/challenges/ID       one of them

Each call needs ``Authorization: Bearer TOKEN`` (an author's token). A challenge of
another author answers 404, the same as one that does not exist. What a result shows
is the match's outcome (seats, scores, ranks, how it ended), never its record: the
record holds every hand. The tables are read and written on the referee's loop
(``on_referee``), where the league's own connection and its field live.
"""

from __future__ import annotations

import html
import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from ..submissions import challenges as ch
from ..submissions.authors import get_author
from ..submissions.desk import Desk

#: The largest request body a challenge needs (a list of names).
MAX_BODY = 4096


def _error(status: int, text: str) -> web.Response:
    return web.json_response({"error": text}, status=status)


def challenge_json(db: Any, c: ch.Challenge) -> dict[str, Any]:
    """What the author sees of one challenge: who played, its state, and each match's result."""
    results = [p.to_json(c.challenger) for p in ch.played(db, c.id)]
    # ranks are by team: a seat's team is its index modulo the number of teams (the rules' team_of)
    won = sum(1 for r in results if r["ranks"][r["seats"].index(c.challenger) % len(r["ranks"])] == 0)
    return {"id": c.id, "challenger": c.challenger, "opponents": list(c.opponents), "matches": c.matches,
            "played": len(results), "won": won, "state": c.state, "reason": c.reason,
            "created_at": c.created_at, "url": f"/api/challenges/{c.id}", "results": results}


class ChallengeAPI:
    def __init__(self, desk: Desk, token_of: Callable[[web.Request], str], author_of: Callable[[str], str],
                 call: Callable[[web.Request, Callable[[], Awaitable[Any]]], Awaitable[Any]]) -> None:
        self.desk = desk
        self.db = desk.db
        #: The submission API's own: a request's bearer token, and token -> author name (or HTTP 401).
        self.token_of = token_of
        self.author_of = author_of
        #: Runs a read or write of the league's tables on the referee's loop (the submission API's
        #: :meth:`~.submit.SubmitAPI.call`, which also counts a wrong token against the request's address).
        self.call = call

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/api/challenges", self.ask)
        app.router.add_get("/api/challenges", self.listing)
        app.router.add_get("/api/challenges/{cid:[0-9]+}", self.one)

    async def ask(self, request: web.Request) -> web.Response:
        token = self.token_of(request)
        if request.content_length is not None and request.content_length > MAX_BODY:
            return _error(413, f"a challenge is a short JSON object (at most {MAX_BODY} bytes)")
        raw = await request.content.read(MAX_BODY + 1)
        try:
            body = json.loads(raw or b"{}")
            names, matches = body.get("opponents", []), body.get("matches")
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names) or \
                    not (matches is None or (isinstance(matches, int) and not isinstance(matches, bool))):
                raise ValueError
        except (ValueError, AttributeError):
            return _error(400, 'send JSON: {"opponents": ["NAME", ...], "matches": N} (matches is optional)')

        async def make() -> web.Response:
            author = self.author_of(token)
            record = get_author(self.db, author)
            if record is not None and record.disqualified_at is not None:
                return _error(403, f"{author} is disqualified from this league ({record.disqualified_reason})")
            refused = self.desk.challenges.quota(author)
            if refused is not None:
                return _error(429, refused)
            try:
                c = self.desk.challenges.ask(author, names, matches, self.desk.version_of)
            except ch.ChallengeError as e:
                return _error(400, str(e))
            self.desk.say(f"challenge {c.id} of {author}: {c.challenger} against {', '.join(c.opponents)}, "
                          f"{c.matches} unranked matches")
            return web.json_response(challenge_json(self.db, c), status=202)

        answer: web.Response = await self.call(request, make)
        return answer

    async def listing(self, request: web.Request) -> web.Response:
        token = self.token_of(request)

        async def read() -> web.Response:
            author = self.author_of(token)
            return web.json_response({"author": author, "challenges": [
                challenge_json(self.db, c) for c in ch.of_author(self.db, author)]})

        answer: web.Response = await self.call(request, read)
        return answer

    async def one(self, request: web.Request) -> web.Response:
        token, cid = self.token_of(request), int(request.match_info["cid"])

        async def read() -> web.Response:
            author = self.author_of(token)
            c = ch.get(self.db, cid)
            if c is None or c.author != author:
                return _error(404, "no such challenge of yours")
            return web.json_response(challenge_json(self.db, c))

        answer: web.Response = await self.call(request, read)
        return answer


def render_challenges(db: Any, author: str) -> str:
    """The author page's section: each challenge of ``author``, newest first, with its results (no records)."""

    rows = ["<h2>Challenges (unranked)</h2><table id=challenges><tr><th>#</th><th>version</th><th>against</th>"
            "<th>state</th><th>played</th><th>won</th><th>results</th></tr>"]
    mine = ch.of_author(db, author)
    for c in reversed(mine):
        j = challenge_json(db, c)
        results = "; ".join(f"{' '.join(r['seats'])}: {r['scores']} ({r['end']})" for r in j["results"])
        rows.append(f"<tr class='challenge-{c.state}'><td>{c.id}</td><td>{html.escape(c.challenger)}</td>"
                    f"<td>{html.escape(', '.join(c.opponents))}</td><td>{c.state}</td><td>{j['played']} of "
                    f"{c.matches}</td><td>{j['won']}</td><td>{html.escape(results or c.reason or '')}</td></tr>")
    if not mine:
        rows.append("<tr><td colspan=7>none yet: sevenrocks submit --challenge NAME --to URL --token TOKEN</td></tr>")
    return "\n".join([*rows, "</table>"])
