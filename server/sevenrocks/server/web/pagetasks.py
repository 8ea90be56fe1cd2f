"""The tasks behind an open live page, and what the page is told when one of them fails.

Why: each live page has tasks on the web thread — one sends it the running matches,
the standings and the league's state, one sends the steps of the match it watches.
An exception in one of them used to end that task without a word: the page kept
what it last showed and looked live, stale for as long as it stayed open. Now the
failure is logged with its traceback (for the organiser) and the page gets a
``{"type": "problem"}`` message that ``live.js`` shows in a banner (for the viewer).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from typing import Any

from aiohttp import web

log = logging.getLogger(__name__)

#: What the viewer reads, by the task that failed.
TEXTS = {
    "lists": "This page has stopped updating: the server could not read what the event is doing. "
             "Reload the page; if this comes back, the organiser finds the reason in the event's log.",
    "watch": "This match cannot be shown: the server could not follow it. Pick another match, or reload the page.",
    "standings": "The standings could not be built; the table shows the last ones that were. "
                 "They are built again when the next match is stored.",
}


def problem(what: str, match_id: str | None = None) -> dict[str, Any]:
    """The message that tells a live page one of its parts is not being updated, and what to do."""
    return {"type": "problem", "what": what, "match_id": match_id, "text": TEXTS[what]}


def start(ws: web.WebSocketResponse, what: str, work: Coroutine[Any, Any, None],
          match_id: str | None = None) -> asyncio.Task[None]:
    """Run ``work`` (one of the page's tasks, named ``what`` in :data:`TEXTS`) so that its failure is
    logged and shown on the page; the page closing (a failed send) is no failure."""
    async def run() -> None:
        try:
            await work
        except ConnectionError:  # the page went away while a message was sent
            return
        except Exception:  # noqa: BLE001 (any failure: the page must not go silent)
            log.exception("a live page's %s task failed%s", what, f" (match {match_id})" if match_id else "")
            if not ws.closed:
                with contextlib.suppress(ConnectionError, RuntimeError):
                    await ws.send_json(problem(what, match_id))

    return asyncio.create_task(run())
