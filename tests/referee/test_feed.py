"""The spectator feed ends even for a match that stopped without a result."""

from __future__ import annotations

import asyncio

from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.server.referee.feed import FeedEntry, FeedHub


def test_a_watcher_of_an_unfinished_match_is_released_when_it_stops() -> None:
    async def go() -> list[str | None]:
        hub = FeedHub()
        entry = FeedEntry("cut", make_ruleset(), ["a", "b", "c", "d"], [], 1000, None)
        hub.open(entry)

        async def watch() -> list[str | None]:
            return [m.WhichOneof("body") async for m in entry.watch()]

        watcher = asyncio.create_task(watch())
        await asyncio.sleep(0.01)
        hub.close(entry, [])
        return await asyncio.wait_for(watcher, 5)

    assert asyncio.run(go()) == ["seat_assignment"]
