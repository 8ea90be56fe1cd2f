"""The gRPC referee: authenticates bot streams, seats them in matches, drives the engine.

The referee has no rules of its own. A match is one coroutine (:class:`MatchRun`)
around a :class:`GameState`: it sends each seat what that seat may see (through
:mod:`sevenrocks.sdk.convert`), asks the seat to move only when it has a choice,
checks the answer with the engine and hands every breach to the fault policy.
Many matches share one referee and one stream per bot process; a match holds
a few small objects and no thread, so a referee can run a thousand at once, and a
bad bot can only ever fault its own seats.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from sevenrocks.sdk.convert import assignment_msg, event_bodies, turn_msg
from sevenrocks.sdk.rules import (
    Event, FaultCause, GameState, IllegalMoveError, MatchEnd, Move, Offender, Play, RoundEnd, Ruleset,
)
from sevenrocks.sdk.rules.records import MatchHeader, header_for, record_lines
from sevenrocks.v1 import referee_pb2 as pb
from sevenrocks.v1 import referee_pb2_grpc as pb_grpc

from .faults import Fault, FaultPolicy, StrikeBook, TimeControl
from .feed import FeedEntry, FeedHub, SpectatorService
from .session import Pending, SeatLink, Session
from .wire import BadMessage, decode_bot_message, framed_for, seat_prefix

__all__ = ["FaultPolicy", "PROTOCOL_VERSION", "Referee", "RefereeMatch", "TimeControl"]

log = logging.getLogger(__name__)

#: The protocol version of proto/sevenrocks/v1 (Hello.protocol_version).
PROTOCOL_VERSION = 1
#: A bot must send its Hello this soon after opening the stream.
HELLO_TIMEOUT_S = 10.0
#: How long a lost stream waits for its bot process to show an exit code (crash vs disconnect).
CRASH_PROBE_S = 0.25
SERVICE_NAMES = ("sevenrocks.v1.Referee", "sevenrocks.v1.Spectator")


class ExitProbe(Protocol):
    """Anything with a ``returncode`` (None while running), e.g. :class:`~.launch.BotProcess`."""

    @property
    def returncode(self) -> int | None: ...


@dataclass
class RefereeMatch:
    """What :meth:`Referee.play_match` returns: the finished match and its record."""

    match_id: str
    header: MatchHeader
    events: list[Event]
    record_lines: list[str]
    winner: int | None
    scores: tuple[int, ...]
    reason: str
    offender: Offender | None
    #: Seat -> the time of each of its decisions, measured at the referee, in ms.
    decision_ms: dict[int, list[float]]
    #: Seat -> strikes counted under the ``strike`` policy.
    strikes: dict[int, int] = field(default_factory=dict)
    #: Rank of each team (0 best).
    ranks: list[int] = field(default_factory=list)


class MatchRun:
    """One match in progress: the engine, the seat links, the clocks, the strikes."""

    def __init__(self, referee: Referee, match_id: str, ruleset: Ruleset, seed: int,
                 seats: Sequence[str], extra: Mapping[str, Any] | None) -> None:
        self.referee = referee
        self.match_id = match_id
        self.entrants = list(seats)
        self.header = header_for(match_id, ruleset, seed, self.entrants, dict(extra or {}))
        self.game = GameState(ruleset, seed=seed)
        self.events: list[Event] = []
        self.extras: list[dict[str, Any]] = []
        self.links: list[SeatLink] = []
        self.book = StrikeBook(referee.fault_policy)
        self.forced: Fault | None = None
        self.decision_ms: dict[int, list[float]] = {s: [] for s in range(ruleset.players)}
        tc = referee.time_control
        self.bank_left: list[int] | None = [tc.bank_ms] * ruleset.players if tc.bank_ms is not None else None
        self.scores: list[int] = [0] * ruleset.teams
        self.feed = FeedEntry(match_id, ruleset, self.entrants, self.events, tc.per_move_ms, tc.bank_ms)

    # ------------------------------------------------------------------ faults

    def report(self, fault: Fault) -> None:
        """A fault outside the seat's own turn (duplicate id, a stream lost between turns)."""
        if self.game.over or self.forced is not None:
            return
        link = self.links[fault.seat] if fault.seat < len(self.links) else None
        if self.referee.fault_policy.kind == "strike" and link is not None and link.dead is not None:
            return  # a dead seat strikes at each of its turns instead
        if self.book.forfeits(fault):
            self.force(fault)
        elif link is not None and link.session is not None:
            link.session.notice(f"fault counted: {self.book.label(fault)}", self.match_id, fault.seat)

    def force(self, fault: Fault) -> None:
        """End the match for ``fault`` at the next step, waking whoever is waiting."""
        self.forced = Fault(fault.seat, fault.cause, self.book.label(fault))
        for link in self.links:
            if link.pending is not None and not link.pending.future.done():
                link.pending.future.set_result(self.forced)

    # ------------------------------------------------------------------ seats

    async def bind(self) -> None:
        """Give every seat a session of its entrant (waiting for it to connect if need be)."""
        timeout = self.referee.time_control.connect_timeout_s
        sessions = await self.referee.claim_seats(self.entrants, timeout)
        tc = self.referee.time_control
        assignment = assignment_msg(self.game.ruleset, self.entrants, tc.per_move_ms, tc.bank_ms)
        for seat, got in enumerate(sessions):
            if isinstance(got, Session):
                link = SeatLink(self, self.match_id, seat, got, prefix=seat_prefix(self.match_id, seat))
                got.links[(self.match_id, seat)] = link
                got.send(pb.RefereeMessage(match_id=self.match_id, seat=seat, seat_assignment=assignment))
            else:
                link = SeatLink(self, self.match_id, seat, None, dead=Fault(seat, got[0], got[1]))
            self.links.append(link)
        for link in self.links:
            if link.dead is not None:
                self.report(link.dead)

    def release(self) -> None:
        for link in self.links:
            if link.session is not None:
                link.session.links.pop((self.match_id, link.seat), None)
        self.referee.seats_changed()

    # ------------------------------------------------------------------ events

    def publish(self, new: list[Event], extra: dict[str, Any] | None = None) -> None:
        """Record ``new`` and send each live seat its view of it (each body serialized once)."""
        ranks: Sequence[int] = ()
        links = self.links
        for i, ev in enumerate(new):
            self.events.append(ev)
            self.extras.append(extra if (extra and i == 0) else {})
            if isinstance(ev, MatchEnd):
                ranks = self.game.final_ranks()
            live = [link.seat for link in links if link.session is not None and link.dead is None]
            for group, field, body in event_bodies(ev, live, self.scores, ranks):
                data = body.SerializeToString()
                for seat in group:
                    link = links[seat]
                    assert link.session is not None
                    link.session.send_framed(framed_for(link.prefix, field, data))
            if isinstance(ev, (Play, RoundEnd)):
                self.scores = list(ev.scores)
        self.feed.published()

    async def ask(self, seat: int, moves: list[Move]) -> tuple[Move | Fault, float | None]:
        """Send a TurnRequest and await the answer or the deadline; the time is measured here.

        The clock starts when the stream takes the request, not when it is queued
        (back-pressure, issue 6): a referee busy with a thousand matches never times out
        an innocent bot. A stream that takes nothing gets at most one more limit of grace.
        """
        link = self.links[seat]
        if link.dead is not None or link.session is None:
            return link.dead or Fault(seat, FaultCause.DISCONNECT, "no stream"), None
        session = link.session
        tc = self.referee.time_control
        bank = self.bank_left[seat] if self.bank_left is not None else 0
        limit_ms = tc.per_move_ms + bank
        rid = next(self.referee.request_ids)
        fut: asyncio.Future[Move | Fault] = asyncio.get_running_loop().create_future()
        pending = link.pending = Pending(rid, fut, moves, limit_ms / 1000)
        session.send_turn(turn_msg(self.match_id, seat, rid, self.game.round, moves, tc.per_move_ms, bank), pending)
        t0 = time.perf_counter()
        answer: Move | Fault
        try:
            async with asyncio.timeout(2 * limit_ms / 1000) as timer:
                pending.timer = timer  # Pending.start() moves the deadline to hand-off + limit
                answer = await fut
        except TimeoutError:
            if session.losing:  # the stream just died: its own fault (crash/disconnect) is on its way
                answer = await fut
            else:
                link.pending = None
                link.late.add(rid)
                answer = Fault(seat, FaultCause.TIMEOUT,
                               f"round {self.game.round}, request {rid}: no move within {limit_ms} ms")
        ms = (time.perf_counter() - (pending.sent_at or t0)) * 1000
        if self.bank_left is not None:
            self.bank_left[seat] = max(0, bank - max(0, int(ms) - tc.per_move_ms))
        self.decision_ms[seat].append(ms)
        return answer, ms

    # ------------------------------------------------------------------ the match

    async def run(self) -> RefereeMatch:
        await self.bind()
        game = self.game
        autoplay = self.referee.autoplay_forced
        try:
            self.publish(game.start())
            while not game.over:
                if self.forced is not None:
                    f = self.forced
                    self.publish(game.forfeit(f.seat, f.cause, f.detail))
                    break
                seat = game.turn
                moves = game.legal_moves()
                if autoplay and len(moves) == 1:
                    self.publish(game.play(moves[0]), {"auto": "forced"})
                    continue
                answer, ms = await self.ask(seat, moves)
                if self.forced is not None:
                    continue
                extra: dict[str, Any] = {"decision_ms": round(ms, 3)} if ms is not None else {}
                if isinstance(answer, Move):
                    try:
                        game.check(answer)
                    except IllegalMoveError as e:
                        answer = Fault(seat, FaultCause.ILLEGAL,
                                       f"round {game.round}: {answer} is illegal: {e}")
                if isinstance(answer, Fault):
                    if self.book.forfeits(answer):
                        self.force(answer)
                        continue
                    label = self.book.label(answer)
                    extra.update(auto="strike", fault={"cause": answer.cause.value, "detail": label})
                    link = self.links[seat]
                    if link.session is not None and link.dead is None:
                        link.session.notice(f"the referee played for you: {label}", self.match_id, seat)
                    answer = moves[0]
                self.publish(game.play(answer), extra)
        finally:
            if not game.over:  # cancelled or an engine error: still end the match for the seats
                log.error("match %s stopped before its end", self.match_id)
            self.release()
            self.referee.feed.close(self.feed, game.final_ranks() if game.over else [])
        return self.result()

    def result(self) -> RefereeMatch:
        end = self.events[-1]
        assert isinstance(end, MatchEnd)
        return RefereeMatch(
            match_id=self.match_id, header=self.header, events=self.events,
            record_lines=record_lines(self.header, self.events, self.extras),
            winner=end.winner, scores=end.scores, reason=end.reason.value, offender=end.offender,
            decision_ms=self.decision_ms, strikes=dict(self.book.strikes), ranks=self.game.final_ranks(),
        )


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
        self._entrant_of: dict[str, str] = {}
        for name, token in tokens.items():
            if not token:
                raise ValueError(f"entrant {name!r} has an empty token")
            if token in self._entrant_of:
                raise ValueError(f"entrants {self._entrant_of[token]!r} and {name!r} share a token; give each its own")
            self._entrant_of[token] = name
        self.time_control = time_control
        self.fault_policy = fault_policy
        self.autoplay_forced = autoplay_forced
        self.max_message_bytes = max_message_bytes
        #: Open bot streams allowed at once; more are refused as UNAVAILABLE (the SDK retries).
        self.max_streams = max_streams
        self.request_ids = itertools.count(1)
        self.feed = FeedHub()
        self.sessions: dict[str, list[Session]] = {}
        self._probes: dict[str, ExitProbe] = {}
        self._changed = asyncio.Event()
        self._server: grpc.aio.Server | None = None
        self._health: health.aio.HealthServicer | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._session_ids = itertools.count(1)

    # ------------------------------------------------------------------ lifecycle

    async def start(self, address: str = "127.0.0.1:0", tls: tuple[bytes, bytes] | None = None) -> int:
        """Listen on ``address`` (``tls``: PEM certificate chain and key); return the bound port."""
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
        await server.start()
        for name in ("", *SERVICE_NAMES):
            await self._health.set(name, health_pb2.HealthCheckResponse.SERVING)
        self._server = server
        return port

    async def stop(self, grace: float = 1.0) -> None:
        """Say Goodbye to every bot, let the streams drain, and stop serving."""
        if self._health is not None:
            await self._health.enter_graceful_shutdown()
        for sessions in list(self.sessions.values()):
            for s in sessions:
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

    def attach_process(self, entrant: str, process: ExitProbe) -> None:
        """Tell the referee which process plays ``entrant``, so that a lost stream whose
        process has exited is adjudicated as a ``crash`` rather than a ``disconnect``."""
        self._probes[entrant] = process

    def seats_changed(self) -> None:
        """Wake everyone waiting for an entrant to connect or to have a free seat."""
        self._changed.set()
        self._changed = asyncio.Event()

    def connected(self) -> set[str]:
        return {name for name, ss in self.sessions.items() if any(not s.closed for s in ss)}

    async def wait_for_entrants(self, names: Iterable[str], timeout: float) -> set[str]:
        """Wait until every one of ``names`` has a stream open (or ``timeout`` s); return those that do."""
        wanted = set(names)
        deadline = time.monotonic() + timeout
        while not wanted <= self.connected():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                await asyncio.wait_for(self._changed.wait(), min(left, 0.5))
            except TimeoutError:
                pass
        return wanted & self.connected()

    async def claim_seats(self, entrants: Sequence[str], timeout: float) -> list[Session | tuple[FaultCause, str]]:
        """A session for every seat of one match, all taken at once (back-pressure, issue 6).

        A connected entrant whose streams have no free seat (a stream plays at most the
        ``max_seats`` of its Hello) is busy, not at fault: the match waits for it as long
        as it takes, so an event with more matches in flight than the bots accept slows
        down instead of forfeiting them. Seats are handed out only once every connected
        entrant of the match has room, with no await in between, so two matches never
        split the last free seats and no stream holds more seats than it asked for. Only
        an entrant with no stream at all runs out of ``timeout``.
        """
        deadline = time.monotonic() + timeout
        while True:
            picked = self._pick_seats(entrants, time.monotonic() >= deadline, timeout)
            if picked is not None:
                return picked
            try:
                await asyncio.wait_for(self._changed.wait(), 0.2)
            except TimeoutError:
                pass

    def _pick_seats(self, entrants: Sequence[str], expired: bool,
                    timeout: float) -> list[Session | tuple[FaultCause, str]] | None:
        """The sessions for ``entrants`` if every connected one has room now, else None (wait)."""
        failed: dict[str, tuple[FaultCause, str]] = {}
        streams: dict[str, list[Session]] = {}
        for entrant, need in Counter(entrants).items():
            if entrant not in self._entrant_of.values():
                failed[entrant] = FaultCause.DISCONNECT, f"entrant {entrant!r} has no token on this referee"
                continue
            open_ = [s for s in self.sessions.get(entrant, ()) if not s.closed]
            probe = self._probes.get(entrant)
            if not open_:
                if probe is not None and probe.returncode is not None:
                    failed[entrant] = (FaultCause.DISCONNECT,
                                       f"the bot process exited with code {probe.returncode} before it connected")
                elif expired:
                    failed[entrant] = FaultCause.DISCONNECT, f"entrant {entrant!r} did not connect within {timeout:g} s"
                else:
                    return None
            elif sum(max(0, s.free) for s in open_) < need:
                if expired and sum(s.max_seats for s in open_) < need:
                    failed[entrant] = FaultCause.DISCONNECT, (
                        f"entrant {entrant!r} plays at most {sum(s.max_seats for s in open_)} seat(s) at once "
                        f"(max_seats in its Hello) but this match needs {need}")
                else:
                    return None  # busy: wait for its matches to end
            else:
                streams[entrant] = open_
        taken: Counter[str] = Counter()
        out: list[Session | tuple[FaultCause, str]] = []
        for entrant in entrants:
            if entrant in failed:
                out.append(failed[entrant])
                continue
            session = max(streams[entrant], key=lambda s: s.free - taken[s.id])
            taken[session.id] += 1
            out.append(session)
        return out

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
                return self._entrant_of.get(value[len("Bearer "):].strip())
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
        if self.max_streams is not None and sum(map(len, self.sessions.values())) >= self.max_streams:
            await context.abort(grpc.StatusCode.UNAVAILABLE,
                                f"the referee holds its limit of {self.max_streams} bot streams; retry later")
        session = Session(f"s{next(self._session_ids)}-{secrets.token_hex(3)}", entrant, hello, 1024)
        session.send(pb.RefereeMessage(welcome=pb.Welcome(
            protocol_version=PROTOCOL_VERSION, entrant=entrant, session_id=session.id,
            max_message_bytes=self.max_message_bytes)))
        self.sessions.setdefault(entrant, []).append(session)
        self.seats_changed()
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
            self.sessions[entrant].remove(session)
            self.seats_changed()

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
        probe = self._probes.get(session.entrant)

        async def classify() -> None:
            nonlocal cause, detail
            if probe is not None:
                deadline = time.monotonic() + CRASH_PROBE_S
                while probe.returncode is None and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)
                if probe.returncode is not None:
                    cause, detail = FaultCause.CRASH, f"the bot process exited with code {probe.returncode}"
            session.lost(cause, detail)

        if probe is None:
            session.lost(cause, detail)
            return
        task = asyncio.get_running_loop().create_task(classify())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
