"""A loopback TCP relay that can cut its connections, for the reconnect check.

``sevenrocks check`` points one bot process at this relay instead of the referee.
:meth:`DropProxy.drop` aborts every connection it carries, on both sides, which is
what a network failure looks like to the bot (its gRPC library reports UNAVAILABLE)
and to the referee (the stream is lost: a ``disconnect``). Nothing in the referee
is special-cased: the bot has to come back the way it would after a real drop.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

__all__ = ["DropProxy"]

CHUNK = 64 * 1024


class DropProxy:
    """Relay ``127.0.0.1:<port>`` to the referee's loopback port."""

    def __init__(self, target_port: int, host: str = "127.0.0.1") -> None:
        self.host = host
        self.target_port = target_port
        self._server: asyncio.Server | None = None
        self._unix: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        #: Connections accepted so far (a reconnect shows as one more).
        self.accepted = 0

    async def start(self, unix_socket: Path | None = None) -> int:
        """Listen on a free loopback port (and on ``unix_socket``, the path a sandboxed bot
        dials); return the port."""
        self._server = await asyncio.start_server(self._handle, self.host, 0)
        port: int = self._server.sockets[0].getsockname()[1]
        if unix_socket is not None:
            self._unix = await asyncio.start_unix_server(self._handle, str(unix_socket))
            os.chmod(unix_socket, 0o666)  # a bot under a uid of its own must be able to connect
        return port

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.target_port)
        except OSError:
            writer.transport.abort()
            return
        pair = (writer, up_writer)
        self._writers.update(pair)
        pumps = [asyncio.create_task(self._pump(reader, up_writer)), asyncio.create_task(self._pump(up_reader, writer))]
        self._tasks.update(pumps)
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in pumps:
                t.cancel()
                self._tasks.discard(t)
            for w in pair:
                w.transport.abort()
                self._writers.discard(w)

    @staticmethod
    async def _pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await src.read(CHUNK):
                dst.write(data)
                await dst.drain()

    def drop(self) -> int:
        """Abort every open connection (both sides, no goodbye); return how many ends were cut."""
        cut = len(self._writers)
        for w in list(self._writers):
            w.transport.abort()
        return cut

    async def stop(self) -> None:
        self.drop()
        for server in (self._server, self._unix):
            if server is not None:
                server.close()
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(server.wait_closed(), 1.0)
        self._server = self._unix = None
        for t in list(self._tasks):
            t.cancel()
