"""One match on the referee: the engine, the seat links, the clocks and the strikes.

The referee has no rules of its own. A match is one coroutine (:class:`MatchRun`)
around a :class:`GameState`: it sends each seat what that seat may see (through
:mod:`sevenrocks.sdk.convert`), asks the seat to move only when it has a choice,
checks the answer with the engine and hands every breach to the fault policy.
A match holds a few small objects and no thread, so a referee can run a thousand
at once, and a bad bot can only ever fault its own seats.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from sevenrocks.sdk.convert import assignment_msg, event_bodies
from sevenrocks.sdk.rules import Event, FaultCause, GameState, IllegalMoveError, MatchEnd, Move, Offender, Play, RoundEnd, Ruleset
from sevenrocks.sdk.rules.records import MatchHeader, header_for, record_lines
from sevenrocks.v1 import referee_pb2 as pb

from .faults import Fault, FaultPolicy, StrikeBook, TimeControl
from .feed import FeedEntry, FeedHub
from .seats import SeatRegistry
from .session import Pending, SeatLink, Session
from .wire import body_field, frame, framed_for, play_body, seat_prefix, turn_request_body

__all__ = ["MatchHost", "MatchRun", "RefereeMatch", "RefereeStopped"]

log = logging.getLogger(__name__)


class RefereeStopped(RuntimeError):
    """The referee shut down while the match was running: nobody's fault, no result.

    Raised instead of adjudicating the seats whose streams the shutdown closed, so
    that an executor voids the match and plays it again rather than blaming bots."""


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
    #: When (perf_counter) the turn the offender never answered was handed to its stream, if
    #: its stream was lost during a turn: the oldest such turn is what a dying bot was working on.
    lost_turn_sent_at: float | None = None


class MatchHost(Protocol):
    """What a match needs from the referee that runs it (:class:`.server.Referee` is one).

    A protocol, so that this module does not import :mod:`.server` (which imports it):
    the match reads the referee's clock and fault policy, claims seats from its
    registry and publishes to its feed, and nothing else.
    """

    @property
    def seats(self) -> SeatRegistry: ...
    @property
    def feed(self) -> FeedHub: ...
    @property
    def request_ids(self) -> Iterator[int]: ...
    @property
    def time_control(self) -> TimeControl: ...
    @property
    def fault_policy(self) -> FaultPolicy: ...
    @property
    def autoplay_forced(self) -> bool: ...
    @property
    def stopping(self) -> bool: ...


class MatchRun:
    """One match in progress: the engine, the seat links, the clocks, the strikes."""

    def __init__(self, referee: MatchHost, match_id: str, ruleset: Ruleset, seed: int,
                 seats: Sequence[str], extra: Mapping[str, Any] | None, hidden: bool = False,
                 opening: Sequence[Move] = ()) -> None:
        self.referee = referee
        #: Moves the referee plays itself before asking anyone (``sevenrocks check``'s scripted positions).
        self.opening = list(opening)
        self.match_id = match_id
        self.entrants = list(seats)
        self.header = header_for(match_id, ruleset, seed, self.entrants, dict(extra or {}))
        self.game = GameState(ruleset, seed=seed)
        self.events: list[Event] = []
        self.extras: list[dict[str, Any]] = []
        self.links: list[SeatLink] = []
        self.book = StrikeBook(referee.fault_policy)
        self.forced: Fault | None = None
        self.lost_turn_sent_at: float | None = None
        self.decision_ms: dict[int, list[float]] = {s: [] for s in range(ruleset.players)}
        tc = referee.time_control
        self.bank_left: list[int] | None = [tc.bank_ms] * ruleset.players if tc.bank_ms is not None else None
        self.scores: list[int] = [0] * ruleset.teams
        self.feed = FeedEntry(match_id, ruleset, self.entrants, self.events, tc.per_move_ms, tc.bank_ms, hidden)

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
        sessions = await self.referee.seats.claim(self.entrants, timeout)
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
        self.referee.seats.changed()

    # ------------------------------------------------------------------ events

    def publish(self, new: list[Event], extra: dict[str, Any] | None = None) -> None:
        """Record ``new`` and send each live seat its view of it (each body serialized once)."""
        ranks: Sequence[int] = ()
        # Queuing a message never ends a seat, so the live seats are the same for every event.
        live = [link.seat for link in self.links if link.session is not None and link.dead is None]
        for i, ev in enumerate(new):
            self.events.append(ev)
            self.extras.append(extra if (extra and i == 0) else {})
            if type(ev) is Play:  # most events: one body for every seat, hand-built (wire.play_body)
                self._send(live, "play", play_body(ev))
            else:
                if isinstance(ev, MatchEnd):
                    ranks = self.game.final_ranks()
                for group, field, body in event_bodies(ev, live, self.scores, ranks):
                    self._send(group, field, body.SerializeToString())
            if isinstance(ev, (Play, RoundEnd)):
                self.scores = list(ev.scores)
        self.feed.published()

    def _send(self, seats: Sequence[int], field: str, data: bytes) -> None:
        """Queue one serialized body, in RefereeMessage ``field``, to each of ``seats`` (the field built once)."""
        links = self.links
        tail = body_field(field, data)
        for seat in seats:
            link = links[seat]
            assert link.session is not None
            link.session.send_framed(frame(link.prefix + tail))

    async def ask(self, seat: int, moves: list[Move]) -> tuple[Move | Fault, float | None]:
        """Send a TurnRequest and await the answer or the deadline; the time is measured here.

        The clock starts when the stream takes the request, not when it is queued
        (back-pressure, docs/scale.md): a referee busy with a thousand matches never times out
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
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Move | Fault | None] = loop.create_future()
        pending = link.pending = Pending(rid, fut, moves, limit_ms / 1000, session=session)
        session.send_turn(framed_for(link.prefix, "turn_request",
                                     turn_request_body(rid, self.game.round, moves, tc.per_move_ms, bank)), pending)
        pending.arm(loop)
        t0 = time.perf_counter()
        try:
            got = await fut
        finally:
            pending.stop()
        answer: Move | Fault
        if got is None:  # the deadline passed (Pending._deadline)
            if link.pending is pending:
                link.pending = None
            link.late.add(rid)
            answer = Fault(seat, FaultCause.TIMEOUT, f"round {self.game.round}, request {rid}: no move within {limit_ms} ms")
        else:
            answer = got
        # The clock stops when the answer arrived (Session.on_move), not when this task
        # resumes: a busy referee's own scheduling is never charged to the bot.
        ms = ((pending.answered_at or time.perf_counter()) - (pending.sent_at or t0)) * 1000
        if isinstance(answer, Fault) and answer.cause in (FaultCause.CRASH, FaultCause.DISCONNECT):
            self.lost_turn_sent_at = pending.sent_at or t0
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
                self._check_stopping()
                if self.forced is not None:
                    f = self.forced
                    self.publish(game.forfeit(f.seat, f.cause, f.detail))
                    break
                if self.opening:  # checked by the engine like any move; marked in the record
                    self.publish(game.play(self.opening.pop(0)), {"auto": "scripted"})
                    continue
                seat = game.turn
                moves = game.legal_moves()
                if autoplay and len(moves) == 1:
                    self.publish(game.play(moves[0]), {"auto": "forced"})
                    continue
                answer, ms = await self.ask(seat, moves)
                self._check_stopping()
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

    def _check_stopping(self) -> None:
        if self.referee.stopping:
            raise RefereeStopped(f"the referee shut down during match {self.match_id}")

    def result(self) -> RefereeMatch:
        end = self.events[-1]
        assert isinstance(end, MatchEnd)
        return RefereeMatch(
            match_id=self.match_id, header=self.header, events=self.events,
            record_lines=record_lines(self.header, self.events, self.extras),
            winner=end.winner, scores=end.scores, reason=end.reason.value, offender=end.offender,
            decision_ms=self.decision_ms, strikes=dict(self.book.strikes), ranks=self.game.final_ranks(),
            lost_turn_sent_at=self.lost_turn_sent_at,
        )
