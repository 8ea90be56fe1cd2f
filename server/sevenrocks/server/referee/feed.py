"""The spectator side of the referee: ``ListMatches`` and the live ``WatchMatch`` feed.

A feed entry shares the match's own event list (no copy per match), and converts
events for a watcher only when someone watches, through the same conversion the
seats get, with every hidden tile withheld: a Deal without hands, a Draw without
its tile, an offender's detail with its tiles blanked. Hands become public in
RoundEnd, which the feed shows whole, when the seats see it.

Three rules keep the feed from helping a bot (docs/security.md):

* a *hidden* match (a duplicate deal, whose hands another match may still be
  playing) is neither listed nor watchable, running or finished, until the event's
  :class:`~.dealguard.DealGuard` says every other match of its deal is stored
  (without a guard, never: the referee alone does not know what its event stored);
* with a spectator token set, every call must carry it (``authorization: Bearer``);
  a referee listening beyond loopback with no spectator token refuses every call;
* at most :data:`~.guard.MAX_SPECTATOR_WATCHERS` ``WatchMatch`` streams are open at once.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from typing import Any

import grpc

from sevenrocks.sdk.convert import assignment_msg, result_msg, spectator_message
from sevenrocks.sdk.rules import Event, MatchEnd, Play, RoundEnd, Ruleset
from sevenrocks.v1 import referee_pb2 as pb
from sevenrocks.v1 import referee_pb2_grpc as pb_grpc

from .dealguard import DealGuard
from .guard import MAX_SPECTATOR_WATCHERS, StreamCap


class FeedEntry:
    """One match as spectators see it."""

    __slots__ = ("match_id", "ruleset", "names", "events", "ranks", "per_move_ms", "bank_ms", "hidden", "_changed")

    def __init__(self, match_id: str, ruleset: Ruleset, names: Sequence[str], events: list[Event],
                 per_move_ms: int, bank_ms: int | None, hidden: bool = False) -> None:
        self.match_id = match_id
        self.ruleset = ruleset
        self.names = list(names)
        #: The match's own event list, appended to as the match plays.
        self.events = events
        self.ranks: list[int] | None = None
        self.per_move_ms = per_move_ms
        self.bank_ms = bank_ms
        #: Shown to spectators only as the event's deal guard allows (a duplicate deal).
        self.hidden = hidden
        self._changed: asyncio.Event | None = None

    @property
    def finished(self) -> bool:
        return self.ranks is not None

    def published(self) -> None:
        """New events were appended: wake the watchers, if any."""
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    async def changed(self) -> None:
        if self._changed is None:
            self._changed = asyncio.Event()
        await self._changed.wait()

    def summary(self) -> pb.MatchSummary:
        scores = [0] * self.ruleset.teams
        rnd = 0
        for ev in reversed(self.events):
            if isinstance(ev, (Play, RoundEnd, MatchEnd)):
                scores = list(ev.scores)
                break
        for ev in reversed(self.events):
            if hasattr(ev, "round"):
                rnd = ev.round
                break
        msg = pb.MatchSummary(match_id=self.match_id, ruleset=self.ruleset.name, seat_names=self.names,
                              status="finished" if self.finished else "running", round=rnd, scores=scores)
        if self.ranks is not None and self.events and isinstance(self.events[-1], MatchEnd):
            msg.result.CopyFrom(result_msg(self.events[-1], self.ranks))
        return msg

    async def watch(self) -> AsyncIterator[pb.RefereeMessage]:
        """Everything public so far, then each event as it happens, through the result."""
        yield pb.RefereeMessage(match_id=self.match_id, seat_assignment=assignment_msg(
            self.ruleset, self.names, self.per_move_ms, self.bank_ms))
        scores = [0] * self.ruleset.teams
        i = 0
        while True:
            while i < len(self.events):
                ev = self.events[i]
                i += 1
                if isinstance(ev, MatchEnd):
                    while self.ranks is None:
                        await self.changed()
                yield spectator_message(self.match_id, ev, scores, self.ranks or ())
                if isinstance(ev, (Play, RoundEnd)):
                    scores = list(ev.scores)
                elif isinstance(ev, MatchEnd):
                    return
            if self.finished:
                return  # stopped without a result (the referee was shut down mid-match)
            await self.changed()


class FeedHub:
    """Running matches and the most recent finished ones, by id."""

    def __init__(self, keep_finished: int = 200, guard: DealGuard | None = None) -> None:
        self.running: dict[str, FeedEntry] = {}
        self.finished: OrderedDict[str, FeedEntry] = OrderedDict()
        self.keep_finished = keep_finished
        #: The event's one rule for what may be shown (set by the event that runs on this referee).
        self.guard = guard

    def open(self, entry: FeedEntry) -> None:
        self.running[entry.match_id] = entry

    def close(self, entry: FeedEntry, ranks: Sequence[int]) -> None:
        entry.ranks = list(ranks)
        entry.published()
        self.running.pop(entry.match_id, None)
        self.finished[entry.match_id] = entry
        while len(self.finished) > self.keep_finished:
            self.finished.popitem(last=False)

    def get(self, match_id: str) -> FeedEntry | None:
        return self.running.get(match_id) or self.finished.get(match_id)

    def visible(self, entry: FeedEntry) -> bool:
        """May spectators see this match? A hidden one only when the deal guard allows it."""
        return not entry.hidden or (self.guard is not None and self.guard.shown(entry.match_id))

    def shown(self, include_finished: bool) -> list[FeedEntry]:
        """The entries a spectator may see (:meth:`visible`), running first."""
        entries = list(self.running.values()) + (list(self.finished.values()) if include_finished else [])
        return [e for e in entries if self.visible(e)]


class SpectatorService(pb_grpc.SpectatorServicer):
    """Read-only calls: a thin translation onto :class:`FeedHub`, behind the spectator token.

    ``token``: the bearer token every call must carry (None: none asked for). With no
    token, calls are served only when ``open_without_token`` (the referee listens on
    loopback); beyond loopback they are refused, so a forgotten token never exposes
    the feed to the network.
    """

    def __init__(self, hub: FeedHub, token: str | None = None, open_without_token: bool = True,
                 max_watchers: int = MAX_SPECTATOR_WATCHERS) -> None:
        self.hub = hub
        self.token = token
        self.open_without_token = open_without_token
        self.watchers = StreamCap("Spectator.WatchMatch", max_watchers)

    async def _authorize(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        if self.token is None:
            if not self.open_without_token:
                await context.abort(grpc.StatusCode.PERMISSION_DENIED,
                                    "this referee listens beyond loopback and has no spectator token, so its "
                                    "Spectator service is closed; the operator sets one (SEVENROCKS_SPECTATOR_TOKEN)")
            return
        for key, value in context.invocation_metadata() or ():
            if key == "authorization" and isinstance(value, str) and value.startswith("Bearer ") \
                    and secrets.compare_digest(value[len("Bearer "):].strip(), self.token):
                return
        await context.abort(grpc.StatusCode.UNAUTHENTICATED,
                            "the Spectator service needs the spectator token: send metadata "
                            "'authorization: Bearer <spectator token>' (it is not a bot's token)")

    async def ListMatches(  # noqa: N802 (gRPC method name)
        self, request: pb.ListMatchesRequest, context: grpc.aio.ServicerContext[pb.ListMatchesRequest, pb.ListMatchesResponse]
    ) -> pb.ListMatchesResponse:
        await self._authorize(context)
        return pb.ListMatchesResponse(matches=[e.summary() for e in self.hub.shown(request.include_finished)])

    async def WatchMatch(  # noqa: N802
        self, request: pb.WatchMatchRequest, context: grpc.aio.ServicerContext[pb.WatchMatchRequest, pb.RefereeMessage]
    ) -> AsyncIterator[pb.RefereeMessage]:
        await self._authorize(context)
        entry = self.hub.get(request.match_id)
        if entry is None or not self.hub.visible(entry):
            # A hidden match answers exactly like a missing one: its existence is not shown either.
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r} on this referee; "
                                "ListMatches shows the running and recent ones")
            return
        async with self.watchers.hold(context):
            async for msg in entry.watch():
                yield msg
