"""One bot stream (``Referee.Play``): the seats it holds, its outbox, its pending turns.

A session is small and passive: the stream handler feeds it the bot's messages and
drains its outbox; matches put messages in and await answers through
:class:`SeatLink`. Everything a bot sends is checked here before any match sees it:
a move for a seat it does not hold is refused with a notice (it must never cost the
real holder anything), a duplicate or unknown request id is a fault of that seat.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from sevenrocks.sdk.convert import WireError, move_of
from sevenrocks.sdk.rules import FaultCause, Move
from sevenrocks.v1 import referee_pb2 as pb

from .faults import Fault
from .wire import frame

if TYPE_CHECKING:
    from collections.abc import Sequence


#: Refused messages a stream may send before it is closed as malformed.
MAX_IGNORED = 1000
#: Notices a session keeps the text of, for diagnostics.
MAX_KEPT_NOTICES = 20


class MatchHandle(Protocol):
    """What a session needs from a running match: somewhere to report faults."""

    def report(self, fault: Fault) -> None: ...


@dataclass(slots=True)
class Pending:
    """An outstanding TurnRequest: answered once, through ``future``.

    Its clock starts when the stream takes the request (:meth:`start`). The deadline is
    hand-off + limit, and a stream that takes nothing gets one more limit of grace
    (ask + 2 limits). One loop timer per turn enforces it (:meth:`arm`): it first fires at
    ask + limit, the earliest deadline there can be, and moves itself on only if the turn
    is still open, so an answered turn costs one ``call_at`` and one cancel, not the
    enter, reschedule and exit of an ``asyncio.timeout``. A turn whose deadline passes
    is resolved with ``None``.
    """

    request_id: int
    future: asyncio.Future[Move | Fault | None]
    moves: Sequence[Move]
    limit_s: float = 0.0
    #: perf_counter() when the request was handed to the stream.
    sent_at: float | None = None
    #: perf_counter() when the bot's answer arrived.
    answered_at: float | None = None
    #: The stream the turn was sent on: when it is being lost, its own fault resolves the turn.
    session: Session | None = None
    #: The loop's time when the turn was asked, and its one timer.
    asked_at: float = 0.0
    timer: asyncio.TimerHandle | None = None

    def arm(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start the turn's timer (call once, when the request is queued)."""
        self.asked_at = loop.time()
        self.timer = loop.call_at(self.asked_at + self.limit_s, self._deadline)

    def start(self, now: float) -> None:
        self.sent_at = now

    def stop(self) -> None:
        """The turn is over: drop its timer."""
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def _deadline(self) -> None:
        """The timer fired: move it to the turn's real deadline if that is later, else end the turn."""
        if self.future.done():
            return
        loop = asyncio.get_running_loop()
        if self.sent_at is None:  # not handed off yet: the grace runs to ask + 2 limits
            left = self.asked_at + 2 * self.limit_s - loop.time()
        else:  # handed off: hand-off + limit (perf_counter, the clock the decision is measured on)
            left = self.sent_at + self.limit_s - time.perf_counter()
        if left > 0:
            self.timer = loop.call_later(left, self._deadline)
        elif self.session is None or not self.session.losing:  # a stream being lost: its own fault is on its way
            self.timer = None
            self.future.set_result(None)


@dataclass(slots=True)
class SeatLink:
    """One seat of one match, played over one session."""

    match: MatchHandle
    match_id: str
    seat: int
    session: Session | None
    pending: Pending | None = None
    #: The serialized address (match id, seat) every message to this seat starts with.
    prefix: bytes = b""
    #: Request ids this seat answered, or that timed out (answers to those are late, not faults).
    answered: set[int] = field(default_factory=set)
    late: set[int] = field(default_factory=set)
    #: Set once the seat can no longer answer (never connected, stream lost, crashed).
    dead: Fault | None = None

    def fail(self, fault: Fault) -> None:
        """The seat can no longer play: resolve its pending turn, or tell its match."""
        if self.dead is not None:
            return
        self.dead = fault
        if self.pending is not None and not self.pending.future.done():
            self.pending.future.set_result(fault)
        else:
            self.match.report(fault)


class Session:
    """One authenticated bot stream and the seats it plays."""

    __slots__ = ("id", "entrant", "name", "version", "max_seats", "links", "_outbox", "_ready", "_unflushed",
                 "closed", "losing", "end", "ignored", "peer", "notices")

    def __init__(self, session_id: str, entrant: str, hello: pb.Hello, default_max_seats: int) -> None:
        self.id = session_id
        self.entrant = entrant
        self.name = hello.name
        self.version = hello.version
        self.max_seats = hello.max_seats or default_max_seats
        self.links: dict[tuple[str, int], SeatLink] = {}
        #: Framed RefereeBatch entries (:func:`~.wire.frame`), in order.
        self._outbox: list[bytes] = []
        self._ready = asyncio.Event()
        #: Turns queued but not yet handed to the stream: their clocks start at the hand-off.
        self._unflushed: list[Pending] = []
        self.closed = False
        #: The stream is gone and the referee is finding out why (crash or disconnect).
        self.losing = False
        #: Why the session ended (for its seats), once it has.
        self.end: tuple[FaultCause, str] | None = None
        #: Messages refused without charging a seat (see :meth:`ignore`).
        self.ignored = 0
        #: The client's address as gRPC reports it (for the log).
        self.peer = ""
        #: The first notices sent on this stream (``sevenrocks check`` reports them).
        self.notices: list[str] = []

    @property
    def free(self) -> int:
        return self.max_seats - len(self.links)

    # ------------------------------------------------------------------ outgoing

    def send(self, msg: pb.RefereeMessage) -> None:
        self.send_framed(frame(msg.SerializeToString()))

    def send_framed(self, data: bytes) -> None:
        """Queue one framed message (built once per event and seat by :func:`~.wire.framed_for`)."""
        if self.closed:
            return
        self._outbox.append(data)
        self._ready.set()

    def send_turn(self, data: bytes, pending: Pending) -> None:
        """Queue a framed TurnRequest; its clock starts when :meth:`next_batch` hands it to the stream.

        Back-pressure (docs/scale.md): a referee busy with a thousand matches, or a stream slow
        to take messages, never eats into a bot's thinking time.
        """
        self.send_framed(data)
        self._unflushed.append(pending)

    def notice(self, text: str, match_id: str = "", seat: int = 0) -> None:
        if len(self.notices) < MAX_KEPT_NOTICES:
            self.notices.append(text)
        self.send(pb.RefereeMessage(match_id=match_id, seat=seat, notice=pb.Notice(text=text)))

    def ignore(self, text: str, match_id: str = "", seat: int = 0) -> None:
        """Refuse a message that no seat can be charged for, with a notice; a stream that
        keeps sending such messages is broken, and is closed before its notices pile up."""
        self.ignored += 1
        if self.ignored > MAX_IGNORED:
            self.lost(FaultCause.MALFORMED, f"more than {MAX_IGNORED} messages that no seat of the stream could take; "
                                            f"the last: {text}")
        else:
            self.notice(text, match_id, seat)

    def _handed_off(self) -> None:
        if self._unflushed:
            now = time.perf_counter()
            for p in self._unflushed:
                p.start(now)
            self._unflushed = []

    async def next_batch(self) -> bytes | None:
        """Everything queued since the last batch, as one RefereeBatch; None once closed and drained."""
        while not self._outbox:
            if self.closed:
                return None
            self._ready.clear()
            await self._ready.wait()
        batch, self._outbox = self._outbox, []
        self._handed_off()
        return b"".join(batch)

    def close(self, goodbye: str | None = None) -> None:
        """Stop sending (after a Goodbye, if given); the stream ends once the outbox drains."""
        if self.closed:
            return
        if goodbye is not None:
            self._outbox.append(frame(pb.RefereeMessage(goodbye=pb.Goodbye(reason=goodbye)).SerializeToString()))
        self.closed = True
        self._ready.set()

    # ------------------------------------------------------------------ incoming

    def on_move(self, msg: pb.Move) -> None:
        link = self.links.get((msg.match_id, msg.seat))
        if link is None:
            self.ignore(f"move for match {msg.match_id!r} seat {msg.seat} ignored: this stream does not hold that seat",
                        msg.match_id, msg.seat)
            return
        rid = msg.request_id
        pending = link.pending
        if pending is not None and pending.request_id == rid:
            link.pending = None
            link.answered.add(rid)
            if pending.future.done():
                return
            try:
                move: Move | Fault = move_of(msg.placement)
            except WireError as e:
                move = Fault(link.seat, FaultCause.MALFORMED, f"request {rid}: {e}")
            pending.answered_at = time.perf_counter()
            pending.future.set_result(move)
        elif rid in link.late:
            self.ignore(f"request {rid} answered after its deadline; already adjudicated", msg.match_id, msg.seat)
        elif rid in link.answered:
            link.match.report(Fault(link.seat, FaultCause.MALFORMED, f"duplicate answer to request {rid}"))
        else:
            link.match.report(Fault(link.seat, FaultCause.MALFORMED, f"answer to unknown request id {rid}"))

    def charge(self, cause: FaultCause, detail: str) -> None:
        """One fault of the stream that names no seat (a message it could not parse):
        one fault in each match the stream plays, never one per seat it holds there.

        The seat charged is the one whose turn is pending (its turn is then adjudicated
        as this fault), else the stream's lowest seat of that match. Used under the
        ``strike`` policy, where the stream stays open: one garbage message is one strike.
        """
        chosen: dict[str, SeatLink] = {}
        for link in sorted(self.links.values(), key=lambda k: k.seat):
            held = chosen.get(link.match_id)
            if held is None or (held.pending is None and link.pending is not None):
                chosen[link.match_id] = link
        if not chosen:
            self.ignore(f"{detail}; ignored: this stream holds no seat")
            return
        for link in chosen.values():
            fault = Fault(link.seat, cause, detail)
            pending = link.pending
            if pending is not None and not pending.future.done():
                link.pending = None
                link.late.add(pending.request_id)  # a real answer after this is late, not a second fault
                pending.future.set_result(fault)
            else:
                link.match.report(fault)

    def on_error(self, msg: pb.BotError) -> None:
        link = self.links.get((msg.match_id, msg.seat))
        if link is None:
            self.ignore(f"error report for match {msg.match_id!r} seat {msg.seat} ignored: not your seat")
            return
        link.fail(Fault(link.seat, FaultCause.CRASH, f"the bot reported an error: {msg.detail[:500]}"))

    def lost(self, cause: FaultCause, detail: str) -> None:
        """The stream is gone: every seat of this session faults with ``cause``."""
        self.end = (cause, detail)
        self.closed = True
        self._ready.set()
        for link in list(self.links.values()):
            link.fail(Fault(link.seat, cause, detail))
