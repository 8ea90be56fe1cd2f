"""The submission pool's queue: oldest first, never two submissions of one author under way at once.

This is the bound docs/league.md states (one author's slow build delays another author's upload by at
most one other submission's clock); test_door.py shows it with real builds, this pins the rule itself.
"""

from __future__ import annotations

import asyncio

import pytest

from sevenrocks.server.submissions.pipeline import FairQueue


def test_a_busy_authors_next_upload_waits_and_another_authors_goes_first() -> None:
    async def run() -> list[tuple[int, str]]:
        q = FairQueue(lambda sid: {1: "alice", 2: "alice", 3: "bob"}[sid])
        for sid in (1, 2, 3):
            q.put_nowait(sid)
        taken = [await q.take(), await q.take()]  # alice's first, then bob's: alice's second waits
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(q.take(), 0.2)  # only alice's second is left, and alice is busy
        q.done("alice")
        taken.append(await asyncio.wait_for(q.take(), 1.0))
        return taken

    assert asyncio.run(run()) == [(1, "alice"), (3, "bob"), (2, "alice")]
