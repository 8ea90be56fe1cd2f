"""The author page answers at most ten wrong tokens a minute per client address, then 429; a right token
from the same address is still served (it was once refused, locking an author out for a neighbour's guesses).

Author tokens are HMACs of a secret kept in the league's database (not guessable),
but every guess made the page look up every token: a client guessing without end
kept the league's web server busy. Real aiohttp server on loopback.
"""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from pathlib import Path

from aiohttp import web

from sevenrocks.server.events.store import Store
from sevenrocks.server.web.author import MAX_FAILED, AuthorPages


def test_the_eleventh_wrong_token_in_a_minute_is_refused_429_and_a_right_one_still_served(tmp_path: Path) -> None:
    async def go() -> list[int]:
        with Store(tmp_path / "l.db", writer=True) as store:
            pages = AuthorPages(store, "x", tmp_path, lambda: {"right-token-0123456789": "a"}, lambda m: True,
                                lambda v: None)
            app = web.Application()
            app.router.add_get("/author/", pages.handle)
            runner = web.AppRunner(app)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            port = runner.addresses[0][1]

            def status(token: str) -> int:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/author/?token={token}", timeout=30) as r:
                        return int(r.status)
                except urllib.error.HTTPError as e:
                    return e.code

            try:
                codes = [await asyncio.to_thread(status, f"guess-{i}") for i in range(MAX_FAILED + 1)]
                codes.append(await asyncio.to_thread(status, "right-token-0123456789"))
            finally:
                await runner.cleanup()
            return codes

    codes = asyncio.run(go())
    assert MAX_FAILED == 10
    assert codes == [401] * 10 + [429, 200], codes
