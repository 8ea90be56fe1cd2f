"""The gRPC referee service: authenticates bot streams, reads them, plays matches.

Three parts, one job each: this module is the gRPC side (listening, the Hello
handshake, reading a stream, adjudicating a lost one); :mod:`.seats` decides which
stream plays which seat; :mod:`.match` drives one match through the engine. Many
matches share one referee and one stream per bot process.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import secrets
import time
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from sevenrocks.sdk.rules import FaultCause, Ruleset
from sevenrocks.v1 import referee_pb2 as pb
from sevenrocks.v1 import referee_pb2_grpc as pb_grpc

from .faults import FaultPolicy, TimeControl
from .feed import FeedHub, SpectatorService
from .match import MatchRun, RefereeMatch
from .seats import ExitProbe, SeatRegistry
from .session import Session
from .wire import BadMessage, decode_bot_message

__all__ = ["FaultPolicy", "PROTOCOL_VERSION", "Referee", "RefereeMatch", "TimeControl"]

log = logging.getLogger(__name__)

#: The protocol version of proto/sevenrocks/v1 (Hello.protocol_version).
PROTOCOL_VERSION = 1
#: A bot must send its Hello this soon after opening the stream.
HELLO_TIMEOUT_S = 10.0
#: How long a lost stream waits for its bot process to show an exit code (crash vs disconnect).
CRASH_PROBE_S = 0.25
SERVICE_NAMES = ("sevenrocks.v1.Referee", "sevenrocks.v1.Spectator")


class Referee:
    """A gRPC referee: bots connect with their entrant's token; :meth:`play_match` plays.

    ``tokens`` maps entrant name to token. One referee runs any number of matches at
    once (call :meth:`play_match` concurrently); an entrant may hold several seats of
    one match and seats in many matches over one stream.
    """

    def __init__(
        self,
        tokens: Mapping[str, str],
        time_control: TimeControl = TimeControl(),
        fault_policy: FaultPolicy = FaultPolicy(),
        autoplay_forced: bool = False,
        max_message_bytes: int = 64 * 1024,
        max_streams: int | None = None,
    ) -> None:
        self.seats = SeatRegistry(tokens)
        self.time_control = time_control
        self.fault_policy = fault_policy
        self.autoplay_forced = autoplay_forced
        self.max_message_bytes = max_message_bytes
        #: Open bot streams allowed at once; more are refused as UNAVAILABLE (the SDK retries).
        self.max_streams = max_streams
        self.request_ids = itertools.count(1)
        self.feed = FeedHub()
        self._server: grpc.aio.Server | None = None
        self._health: health.aio.HealthServicer | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._session_ids = itertools.count(1)

    # ------------------------------------------------------------------ lifecycle

    async def start(self, address: str = "127.0.0.1:0", tls: tuple[bytes, bytes] | None = None,
                    unix_socket: str | os.PathLike[str] | None = None) -> int:
        """Listen on ``address`` (``tls``: PEM certificate chain and key); return the bound port.

        ``unix_socket``: also listen, without TLS, on this Unix socket path (how
        sandboxed bots, which have no network, reach the referee)."""
        limit = max(4 * 1024 * 1024, 16 * self.max_message_bytes)
        server = grpc.aio.server(options=[
            ("grpc.max_receive_message_length", limit),
            ("grpc.keepalive_permit_without_calls", 1),
            ("grpc.http2.min_ping_interval_without_data_ms", 5000),
        ])
        server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("sevenrocks.v1.Referee", {
            "Play": grpc.stream_stream_rpc_method_handler(
                self._play,
                request_deserializer=decode_bot_message(self.max_message_bytes),
                response_serializer=bytes,  # Session.next_batch() encodes
            ),
        })])
        pb_grpc.add_SpectatorServicer_to_server(SpectatorService(self.feed), server)
        self._health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        reflection.enable_server_reflection((*SERVICE_NAMES, reflection.SERVICE_NAME, health.SERVICE_NAME), server)
        if tls is None:
            port = server.add_insecure_port(address)
        else:
            cert, key = tls
            port = server.add_secure_port(address, grpc.ssl_server_credentials([(key, cert)]))
        if port == 0:
            raise OSError(f"cannot listen on {address}: the address is taken or invalid")
        if unix_socket is not None and server.add_insecure_port(f"unix:{os.fspath(unix_socket)}") == 0:
            raise OSError(f"cannot listen on the Unix socket {os.fspath(unix_socket)}")
        await server.start()
        for name in ("", *SERVICE_NAMES):
            await self._health.set(name, health_pb2.HealthCheckResponse.SERVING)
        self._server = server
        return port

    async def stop(self, grace: float = 1.0) -> None:
        """Say Goodbye to every bot, let the streams drain, and stop serving."""
        if self._health is not None:
            await self._health.enter_graceful_shutdown()
        for s in self.seats.all_sessions():
            s.close(goodbye="the referee is shutting down")
        deadline = time.monotonic() + grace
        while any(self.sessions.values()) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        if self._server is not None:
            await self._server.stop(grace)
            self._server = None
        for task in list(self._tasks):
            task.cancel()

    # ------------------------------------------------------------------ entrants

    @property
    def sessions(self) -> dict[str, list[Session]]:
        """Entrant name -> its open bot streams."""
        return self.seats.sessions

    def attach_process(self, entrant: str, process: ExitProbe) -> None:
        """Tell the referee which process plays ``entrant``, so that a lost stream whose
        process has exited is adjudicated as a ``crash`` rather than a ``disconnect``."""
        self.seats.attach_process(entrant, process)

    def connected(self) -> set[str]:
        """The entrants with at least one open stream."""
        return self.seats.connected()

    async def wait_for_entrants(self, names: Iterable[str], timeout: float) -> set[str]:
        """Wait until every one of ``names`` has a stream open (or ``timeout`` s); return those that do."""
        return await self.seats.wait_for_entrants(names, timeout)

    # ------------------------------------------------------------------ matches

    async def play_match(
        self, match_id: str, ruleset: Ruleset, seed: int, seats: Sequence[str],
        extra: Mapping[str, Any] | None = None,
    ) -> RefereeMatch:
        """Play one match with ``seats[i]`` (an entrant name) in seat ``i``; always ends with a record."""
        if len(seats) != ruleset.players:
            raise ValueError(f"{ruleset.name} needs {ruleset.players} seats, got {len(seats)}")
        if self.feed.get(match_id) is not None and match_id in self.feed.running:
            raise ValueError(f"match {match_id!r} is already running on this referee")
        run = MatchRun(self, match_id, ruleset, seed, seats, extra)
        self.feed.open(run.feed)
        return await run.run()

    # ------------------------------------------------------------------ the bot stream

    def _authenticate(self, context: grpc.aio.ServicerContext[Any, Any]) -> str | None:
        for key, value in context.invocation_metadata() or ():
            if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
                return self.seats.entrant_of(value[len("Bearer "):].strip())
        return None

    async def _play(
        self, requests: AsyncIterator[pb.BotMessage | BadMessage], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[bytes]:
        entrant = self._authenticate(context)
        if entrant is None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED,
                                "missing or unknown token: send metadata 'authorization: Bearer <token>' "
                                "with the token the operator gave your entrant (SEVENROCKS_TOKEN)")
        assert entrant is not None
        try:
            first = await asyncio.wait_for(anext(requests), HELLO_TIMEOUT_S)
        except StopAsyncIteration:
            return
        except TimeoutError:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, f"no Hello within {HELLO_TIMEOUT_S:g} s")
            return
        if isinstance(first, BadMessage) or first.WhichOneof("body") != "hello":
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message on the stream must be a Hello")
            return
        hello = first.hello
        if hello.protocol_version != PROTOCOL_VERSION:
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                f"protocol version {hello.protocol_version} is not supported; "
                                f"this referee speaks version {PROTOCOL_VERSION}")
        if hello.entrant and hello.entrant != entrant:
            log.warning("stream for entrant %r used the token of %r", hello.entrant, entrant)
            await context.abort(grpc.StatusCode.UNAUTHENTICATED,
                                f"this token belongs to another entrant, not {hello.entrant!r}; "
                                "use your own entrant's token")
        # Checked here, with no await before the session is registered, so that streams
        # opening at once cannot all pass the check while waiting for their Hello.
        if self.max_streams is not None and self.seats.open_streams() >= self.max_streams:
            await context.abort(grpc.StatusCode.UNAVAILABLE,
                                f"the referee holds its limit of {self.max_streams} bot streams; retry later")
        session = Session(f"s{next(self._session_ids)}-{secrets.token_hex(3)}", entrant, hello, 1024)
        session.send(pb.RefereeMessage(welcome=pb.Welcome(
            protocol_version=PROTOCOL_VERSION, entrant=entrant, session_id=session.id,
            max_message_bytes=self.max_message_bytes)))
        self.seats.add(session)
        reader = asyncio.create_task(self._read(session, requests))
        try:
            while (batch := await session.next_batch()) is not None:
                yield batch
            if session.end is not None and session.end[0] is FaultCause.MALFORMED:
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, session.end[1])
        finally:
            reader.cancel()
            if not session.closed or (session.end is None and session.links):
                self._lose(session, FaultCause.DISCONNECT, "the stream to the bot was lost")
            self.seats.remove(session)

    async def _read(self, session: Session, requests: AsyncIterator[pb.BotMessage | BadMessage]) -> None:
        detail = "the bot closed its stream"
        try:
            async for msg in requests:
                if isinstance(msg, BadMessage):
                    session.lost(FaultCause.MALFORMED, msg.detail)
                    return
                kind = msg.WhichOneof("body")
                if kind == "move":
                    session.on_move(msg.move)
                elif kind == "error":
                    session.on_error(msg.error)
                elif kind == "hello":
                    session.notice("a second Hello was ignored")
                else:
                    session.lost(FaultCause.MALFORMED, "a message with no body (not a Hello, Move or BotError)")
                    return
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the transport failed under us: a disconnect, not a referee error
            detail = f"the stream to the bot failed: {type(e).__name__}: {e}"
        if not session.closed:
            self._lose(session, FaultCause.DISCONNECT, detail)

    def _lose(self, session: Session, cause: FaultCause, detail: str) -> None:
        """Adjudicate a lost stream: a crash if the bot's process has exited, else ``cause``."""
        if session.losing or session.end is not None:
            return
        session.losing = True
        probe = self.seats.probe(session.entrant)

        async def classify() -> None:
            nonlocal cause, detail
            if probe is not None:
                deadline = time.monotonic() + CRASH_PROBE_S
                while probe.returncode is None and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)
                if probe.returncode is not None:
                    # A sandbox limit that killed the bot names itself (e.g. "killed: memory limit ...").
                    why = getattr(probe, "exit_detail", None)
                    cause, detail = FaultCause.CRASH, why or f"the bot process exited with code {probe.returncode}"
            session.lost(cause, detail)

        if probe is None:
            session.lost(cause, detail)
            return
        task = asyncio.get_running_loop().create_task(classify())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
