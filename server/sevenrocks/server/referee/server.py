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
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc

from sevenrocks.sdk.rules import FaultCause, Move, Ruleset
from sevenrocks.v1 import referee_pb2 as pb
from sevenrocks.v1 import referee_pb2_grpc as pb_grpc

from .faults import FaultPolicy, TimeControl
from .feed import FeedHub, SpectatorService
from .gcpolicy import tune_for_serving
from .guard import CappedHealth, CappedReflection, connection_budget, is_loopback, raise_open_files_limit, server_options
from .match import MatchRun, RefereeMatch
from .refusals import RefusalLog
from .seats import ExitProbe, SeatRegistry, exit_detail
from .session import Session
from .wire import BadMessage, decode_bot_message

__all__ = ["FaultPolicy", "PROTOCOL_VERSION", "Referee", "RefereeMatch", "TimeControl"]

log = logging.getLogger(__name__)

#: The protocol version of proto/sevenrocks/v1 (Hello.protocol_version).
PROTOCOL_VERSION = 1
#: A bot must send its Hello this soon after opening the stream.
HELLO_TIMEOUT_S = 5.0
#: Streams of one token that may wait for their Hello at once (more are refused at once).
MAX_AWAITING_HELLO = 4
#: Messages gRPC itself accepts, far above the referee's own limit, so that an oversized
#: message reaches the referee and is charged ``malformed``. A bigger one ends the whole
#: call before the referee sees it (a disconnect, see :meth:`Referee._read`).
GRPC_RECEIVE_LIMIT = 64 * 1024 * 1024
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
        spectator_token: str | None = None,
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
        #: The bearer token the Spectator service asks for (None: open on loopback, closed beyond).
        self.spectator_token = spectator_token
        self._server: grpc.aio.Server | None = None
        #: With TLS: a plaintext port on 127.0.0.1 for the bots launched on this machine.
        self.local_port: int | None = None
        self._health: CappedHealth | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._session_ids = itertools.count(1)
        #: Set by :meth:`stop`: a match still running then ends with RefereeStopped, blaming nobody.
        self.stopping = False
        self._awaiting_hello: Counter[str] = Counter()
        #: Refused streams (token, protocol version): one log line per peer host and minute.
        self.refused_log = RefusalLog(log)
        #: gRPC's own receive limit once started (see GRPC_RECEIVE_LIMIT).
        self.grpc_receive_limit = GRPC_RECEIVE_LIMIT

    # ------------------------------------------------------------------ lifecycle

    async def start(self, address: str = "127.0.0.1:0", tls: tuple[bytes, bytes] | None = None,
                    unix_socket: str | os.PathLike[str] | None = None) -> int:
        """Listen on ``address`` (``tls``: PEM certificate chain and key); return the bound port.

        ``unix_socket``: also listen, without TLS, on this Unix socket path (how
        sandboxed bots, which have no network, reach the referee).

        The soft open-files limit is raised to the hard one first, and the server closes
        connections that never finish their handshake or carry no call (:mod:`.guard`).
        """
        tune_for_serving()  # full GC passes were the load run's longest pauses (gcpolicy.py)
        soft, _ = raise_open_files_limit()
        self.grpc_receive_limit = limit = max(GRPC_RECEIVE_LIMIT, 16 * self.max_message_bytes)
        server = grpc.aio.server(options=server_options(limit, connection_budget(soft)))
        server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("sevenrocks.v1.Referee", {
            "Play": grpc.stream_stream_rpc_method_handler(
                self._play,
                request_deserializer=decode_bot_message(self.max_message_bytes),
                response_serializer=bytes,  # Session.next_batch() encodes
            ),
        })])
        pb_grpc.add_SpectatorServicer_to_server(
            SpectatorService(self.feed, self.spectator_token, open_without_token=is_loopback(address)), server)
        self._health = CappedHealth()
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        reflection_pb2_grpc.add_ServerReflectionServicer_to_server(
            CappedReflection((*SERVICE_NAMES, reflection.SERVICE_NAME, health.SERVICE_NAME)), server)
        if tls is None:
            port = server.add_insecure_port(address)
        else:
            cert, key = tls
            port = server.add_secure_port(address, grpc.ssl_server_credentials([(key, cert)]))
            # Bots launched on this machine dial a loopback port of their own (no certificate needed).
            self.local_port = server.add_insecure_port("127.0.0.1:0") or None
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
        self.stopping = True
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
        extra: Mapping[str, Any] | None = None, hidden: bool = False,
        opening: Sequence[Move] = (),
    ) -> RefereeMatch:
        """Play one match with ``seats[i]`` (an entrant name) in seat ``i``; always ends with a record.

        ``hidden``: spectators never see this match, running or finished (a duplicate
        deal, whose hands another match of its set may still be playing).

        ``opening``: moves of the seeded match the referee plays itself (marked
        ``"auto": "scripted"``) before it asks any seat, to put bots in a chosen position.
        """
        if len(seats) != ruleset.players:
            raise ValueError(f"{ruleset.name} needs {ruleset.players} seats, got {len(seats)}")
        if self.feed.get(match_id) is not None and match_id in self.feed.running:
            raise ValueError(f"match {match_id!r} is already running on this referee")
        run = MatchRun(self, match_id, ruleset, seed, seats, extra, hidden, opening)
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
            self.refused_log.refused(context.peer(), "missing or unknown token")
            await context.abort(grpc.StatusCode.UNAUTHENTICATED,
                                "missing or unknown token: send metadata 'authorization: Bearer <token>' "
                                "with the token the operator gave your entrant (SEVENROCKS_TOKEN)")
        assert entrant is not None
        if self._awaiting_hello[entrant] >= MAX_AWAITING_HELLO:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                f"entrant {entrant!r} has {MAX_AWAITING_HELLO} streams waiting to send their Hello; "
                                "send the Hello first thing on every stream")
        self._awaiting_hello[entrant] += 1
        try:
            first = await asyncio.wait_for(anext(requests), HELLO_TIMEOUT_S)
        except StopAsyncIteration:
            return
        except TimeoutError:
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, f"no Hello within {HELLO_TIMEOUT_S:g} s")
            return
        finally:
            self._awaiting_hello[entrant] -= 1
        if isinstance(first, BadMessage) or first.WhichOneof("body") != "hello":
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message on the stream must be a Hello")
            return
        hello = first.hello
        if hello.protocol_version != PROTOCOL_VERSION:
            self.refused_log.refused(context.peer(), f"entrant {entrant!r} speaks protocol version "
                                                  f"{hello.protocol_version}, not {PROTOCOL_VERSION}")
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                f"protocol version {hello.protocol_version} is not supported; "
                                f"this referee speaks version {PROTOCOL_VERSION}")
        if hello.entrant and hello.entrant != entrant:
            self.refused_log.refused(context.peer(), f"stream for entrant {hello.entrant!r} used the token of {entrant!r}")
            await context.abort(grpc.StatusCode.UNAUTHENTICATED,
                                f"this token belongs to another entrant, not {hello.entrant!r}; "
                                "use your own entrant's token")
        # Checked here, with no await before the session is registered, so that streams
        # opening at once cannot all pass the checks while waiting for their Hello.
        live = self.seats.live_session(entrant)
        if live is not None:
            # One live stream per token: a second one is a stolen token or a reconnect
            # whose old stream the referee has not yet seen die. Either way it gets no
            # seat; a genuine reconnect succeeds once keepalive drops the old stream.
            log.warning("refused a second stream for entrant %r from %s: its token already holds live stream %s "
                        "(from %s)", entrant, context.peer(), live.id, live.peer)
            await context.abort(grpc.StatusCode.ALREADY_EXISTS,
                                f"entrant {entrant!r} already has a live stream ({live.id}) on this referee; "
                                "a token holds one stream at a time. If this bot lost its connection, retry: the "
                                "old stream is dropped once the referee sees it is gone (within about 30 s)")
        if self.max_streams is not None and self.seats.open_streams() >= self.max_streams:
            await context.abort(grpc.StatusCode.UNAVAILABLE,
                                f"the referee holds its limit of {self.max_streams} bot streams; retry later")
        session = Session(f"s{next(self._session_ids)}-{secrets.token_hex(3)}", entrant, hello, 1024)
        session.peer = context.peer()
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
                    if self.fault_policy.kind == "strike":
                        session.charge(FaultCause.MALFORMED, msg.detail)  # one fault, one strike
                        continue
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
        else:
            # gRPC ends the request stream the same way when the bot half-closes, when it
            # cancels, and when it sends a message over GRPC_RECEIVE_LIMIT (which the
            # referee never sees): the detail names all three.
            detail = ("the bot's stream ended (it closed or cancelled the stream, or sent a message over "
                      f"gRPC's {self.grpc_receive_limit // (1024 * 1024)} MiB limit)")
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
                    cause, detail = FaultCause.CRASH, exit_detail(probe)
            session.lost(cause, detail)

        if probe is None:
            session.lost(cause, detail)
            return
        task = asyncio.get_running_loop().create_task(classify())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
