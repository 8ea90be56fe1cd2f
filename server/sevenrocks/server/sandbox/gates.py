"""Each launched bot's own door to the referee, with room for a few connections only.

A sandboxed bot reaches the referee through a Unix socket. If every bot shared the
referee's socket, one bot could hold as many connections as its processes may open
files (measured: 80 children with ~245 connections each took the tournament to
19,632 of 20,000 file descriptors, the event ran 2-5x slower and innocent bots
timed out). So the referee's own socket is private (a folder only the harness can
enter), and each bot gets a :class:`Gate`: a socket of its own (bound into its
sandbox at ``/run/sevenrocks/referee.sock``) that relays at most
:data:`CONNECTIONS_PER_BOT` connections at once to the referee. A bot at its cap is
simply not accepted any more: further ``connect`` calls wait in the kernel's listen
queue (a few) or fail, and cost the harness nothing, because the gate stops polling
its socket until one of the bot's connections closes. A bot's gRPC channel needs
one connection (two for a moment while it reconnects).

The gates relay bytes in a thread of their own with its own event loop, so neither
a relay nor a flood of connection attempts waits on the referee's loop. What a bot
sends is read as it passes (:mod:`.framing`): a gRPC message announced over
:data:`~.framing.MAX_MESSAGE_BYTES` closes that connection at once, before its body
crosses (so a bot's 60 MB messages cost the harness neither memory nor the relay's
time), and the gate tells whoever watches it (:attr:`Gate.on_fault`: the referee
charges the bot a ``malformed`` fault).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
from collections.abc import Callable
from pathlib import Path

from .framing import MAX_MESSAGE_BYTES, MessageSizes, Oversized

#: Connections one bot may hold open to the referee at once.
CONNECTIONS_PER_BOT = 4
#: Bytes read at a time from one side of a relayed connection.
CHUNK = 1 << 16


class Gate:
    """One bot's listening socket; relays up to ``cap`` connections at once to ``upstream``."""

    def __init__(self, loop: asyncio.AbstractEventLoop, path: Path, upstream: Path, cap: int,
                 max_message: int = MAX_MESSAGE_BYTES) -> None:
        self.loop = loop
        self.path = path
        self.upstream = upstream
        self.cap = cap
        self.max_message = max_message
        #: Connections closed for a breach (an oversized message), and the last one's detail.
        self.faults = 0
        self.fault: str | None = None
        #: Called, in the gates' thread, with the detail of each breach (set by whoever charges the bot).
        self.on_fault: Callable[[str], None] | None = None
        #: Connections relayed now, and since the gate opened (tests and benches read them).
        self.open = 0
        self.accepted = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._polling = False
        self._closed = False
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        os.chmod(path, 0o666)  # the bot's own uid connects
        self.sock.listen(cap)
        self.sock.setblocking(False)

    def start(self) -> None:
        self._poll(True)

    def _poll(self, on: bool) -> None:
        if on and not self._polling and not self._closed:
            self.loop.add_reader(self.sock.fileno(), self._accept)
        elif not on and self._polling:
            self.loop.remove_reader(self.sock.fileno())
        self._polling = on and not self._closed

    def _accept(self) -> None:
        while self.open < self.cap:
            try:
                conn, _ = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # out of files: rest, then try again
                self._poll(False)
                self.loop.call_later(0.5, self._poll, True)
                return
            self.open += 1
            self.accepted += 1
            task = self.loop.create_task(self._relay(conn))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        self._poll(False)

    async def _relay(self, conn: socket.socket) -> None:
        writers: list[asyncio.StreamWriter] = []
        try:
            down_r, down_w = await asyncio.open_unix_connection(sock=conn, limit=CHUNK)
            writers.append(down_w)
            up_r, up_w = await asyncio.open_unix_connection(str(self.upstream), limit=CHUNK)
            writers.append(up_w)
            sizes = MessageSizes(self.max_message)
            pipes = [asyncio.ensure_future(_pipe(down_r, up_w, sizes.feed)), asyncio.ensure_future(_pipe(up_r, down_w))]
            await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
            for p in pipes:  # one side is done: the connection is over
                p.cancel()
            for result in await asyncio.gather(*pipes, return_exceptions=True):
                if isinstance(result, Oversized):
                    self._breach(str(result))
        except OSError:
            pass
        finally:
            for w in writers:
                w.close()
            if not writers:
                conn.close()
            self.open -= 1
            self._poll(True)

    def _breach(self, detail: str) -> None:
        self.faults += 1
        self.fault = detail
        if self.on_fault is not None:
            self.on_fault(detail)

    def close(self) -> None:
        self._closed = True
        self._poll(False)
        for t in list(self._tasks):
            t.cancel()
        self.sock.close()
        with contextlib.suppress(OSError):
            self.path.unlink()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                check: Callable[[bytes], None] | None = None) -> None:
    """Copy until the reader ends; ``check`` sees each chunk before it is passed on (and may
    raise, which ends the copy with that chunk held back)."""
    while True:
        data = await reader.read(CHUNK)
        if not data:
            return
        if check is not None:
            check(data)
        writer.write(data)
        await writer.drain()


class Gates:
    """The gates of one run: a thread with an event loop, started with the first gate."""

    def __init__(self, upstream: Path, cap: int = CONNECTIONS_PER_BOT) -> None:
        self.upstream = upstream
        self.cap = cap
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._open: set[Gate] = set()

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=loop.run_forever, name="sevenrocks-gates", daemon=True)
                self._thread.start()
                self._loop = loop
            return self._loop

    def open(self, path: Path) -> Gate:
        """Listen at ``path`` for one bot (the path must not exist yet)."""
        loop = self._running_loop()

        async def make() -> Gate:
            gate = Gate(loop, path, self.upstream, self.cap)
            gate.start()
            return gate

        gate = asyncio.run_coroutine_threadsafe(make(), loop).result(30)
        self._open.add(gate)
        return gate

    def shut(self, gate: Gate) -> None:
        """Stop one bot's gate and every connection it relays."""
        self._open.discard(gate)
        loop = self._loop
        if loop is None or loop.is_closed():
            return

        async def shut() -> None:
            gate.close()

        with contextlib.suppress(RuntimeError, TimeoutError):
            asyncio.run_coroutine_threadsafe(shut(), loop).result(10)

    def close(self) -> None:
        """Shut every gate still open and stop the thread."""
        for gate in list(self._open):
            self.shut(gate)
        with self._lock:
            loop, thread, self._loop = self._loop, self._thread, None
        if loop is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(10)
        loop.close()
