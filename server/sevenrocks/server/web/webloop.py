"""The live site's own thread and event loop, its read-only database connections, and the way back.

Why a thread of its own: the referee times every bot's decision on its event loop.
When the web server shared that loop, a spectator loading a page (or four authors
reloading theirs) delayed the referee's next read of a bot's move, and the bot's
clock ran meanwhile. Now the site's requests are parsed, answered and written on
:class:`WebLoop`'s thread, and the pages themselves are rendered in a process of
their own (:mod:`.pageproc`), so neither the work nor the interpreter lock they
take reaches the referee's loop.

What still crosses, and how:

* the database: each thread (and the page process) opens its own read-only
  connection (:class:`Readers`); SQLite's WAL lets them read while the event writes;
* the deal guard (:class:`~..referee.dealguard.DealGuard`) is thread-safe: it is
  asked from here directly;
* the live feed of a running match lives on the referee's loop (its wake-ups are
  that loop's events): :func:`relay` runs a small pump there that hands each public
  message to this thread (``call_soon_threadsafe``), where it is turned into steps;
* anything else that must run beside the referee: :meth:`WebLoop.on_referee`.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from sevenrocks.v1 import referee_pb2 as pb

from ..events.store import Store
from ..referee.feed import FeedEntry

T = TypeVar("T")


class Readers:
    """A read-only :class:`Store` per thread, opened on first use in that thread (SQLite wants one each)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._opened: list[Store] = []
        self._lock = threading.Lock()

    def __call__(self) -> Store:
        store: Store | None = getattr(self._local, "store", None)
        if store is None:
            store = self._local.store = Store.reader(self.path)
            with self._lock:
                self._opened.append(store)
        return store

    def close_here(self) -> None:
        """Close this thread's connection (call it from the thread that used it)."""
        store: Store | None = getattr(self._local, "store", None)
        if store is not None:
            self._local.store = None
            with self._lock:
                self._opened.remove(store)
            store.close()


class WebLoop:
    """An asyncio loop on a daemon thread of its own; coroutines are run on it from the referee's loop."""

    def __init__(self, name: str = "sevenrocks-web") -> None:
        self.loop = asyncio.new_event_loop()
        #: The loop that started this one (the referee's): where :meth:`on_referee` runs things.
        self.referee_loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._started = False

    def _run(self) -> None:
        # Ctrl-C belongs to the main thread; a process started from here (the page process) inherits
        # this mask, so a Ctrl-C at the terminal stops the event and not the pages mid-render.
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            with contextlib.suppress(RuntimeError):
                self.loop.run_until_complete(self.loop.shutdown_default_executor())
            self.loop.close()

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the web loop and wait for it from the caller's loop (its exceptions come back)."""
        if not self._started:
            self.referee_loop = asyncio.get_running_loop()
            self._started = True
            self._thread.start()
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    async def close(self) -> None:
        """Stop the loop and wait for its thread (without blocking the caller's loop)."""
        if self._started and self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            await asyncio.to_thread(self._thread.join, 30)

    async def on_referee(self, fn: Callable[[], Awaitable[T]]) -> T:
        """Run ``fn()`` on the referee's loop and await its result from the web loop.

        For a route that must change the event (say, accept a submission): keep
        what runs there short, it shares the loop with the bots' clocks.
        """
        if self.referee_loop is None:
            raise RuntimeError("the web loop was not started from a referee's loop")

        async def call() -> T:
            return await fn()

        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(call(), self.referee_loop))


_END = object()


async def relay(entry: FeedEntry, referee_loop: asyncio.AbstractEventLoop) -> AsyncIterator[pb.RefereeMessage]:
    """``entry.watch()`` as seen from the web loop: a pump on the referee's loop hands each message over.

    The pump does only what the gRPC Spectator service does for a watcher (read the
    match's public messages); the conversion to steps happens on the caller's loop.
    """
    here = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()

    async def pump() -> None:
        try:
            async for msg in entry.watch():
                here.call_soon_threadsafe(queue.put_nowait, msg)
        finally:
            with contextlib.suppress(RuntimeError):  # the web loop is already closed
                here.call_soon_threadsafe(queue.put_nowait, _END)

    pumping: Future[None] = asyncio.run_coroutine_threadsafe(pump(), referee_loop)
    try:
        while True:
            msg = await queue.get()
            if msg is _END:
                break
            yield msg
    finally:
        pumping.cancel()
