"""The spectator side of the referee: ``ListMatches`` and the live ``WatchMatch`` feed.

A feed entry shares the match's own event list (no copy per match), and converts
events for a watcher only when someone watches, through the same conversion the
seats get, with every hidden tile withheld: a Deal without hands, a Draw without
its tile. Hands become public in RoundEnd, which the feed shows whole.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence

import grpc

from sevenrocks.sdk.convert import assignment_msg, result_msg, spectator_message
from sevenrocks.sdk.rules import Event, MatchEnd, Play, RoundEnd, Ruleset
from sevenrocks.v1 import referee_pb2 as pb
from sevenrocks.v1 import referee_pb2_grpc as pb_grpc


class FeedEntry:
    """One match as spectators see it."""

    __slots__ = ("match_id", "ruleset", "names", "events", "ranks", "per_move_ms", "bank_ms", "_changed")

    def __init__(self, match_id: str, ruleset: Ruleset, names: Sequence[str], events: list[Event],
                 per_move_ms: int, bank_ms: int | None) -> None:
        self.match_id = match_id
        self.ruleset = ruleset
        self.names = list(names)
        #: The match's own event list, appended to as the match plays.
        self.events = events
        self.ranks: list[int] | None = None
        self.per_move_ms = per_move_ms
        self.bank_ms = bank_ms
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

    def __init__(self, keep_finished: int = 200) -> None:
        self.running: dict[str, FeedEntry] = {}
        self.finished: OrderedDict[str, FeedEntry] = OrderedDict()
        self.keep_finished = keep_finished

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


class SpectatorService(pb_grpc.SpectatorServicer):
    """Read-only calls: a thin translation onto :class:`FeedHub`."""

    def __init__(self, hub: FeedHub) -> None:
        self.hub = hub

    async def ListMatches(  # noqa: N802 (gRPC method name)
        self, request: pb.ListMatchesRequest, context: grpc.aio.ServicerContext[pb.ListMatchesRequest, pb.ListMatchesResponse]
    ) -> pb.ListMatchesResponse:
        entries = list(self.hub.running.values())
        if request.include_finished:
            entries += list(self.hub.finished.values())
        return pb.ListMatchesResponse(matches=[e.summary() for e in entries])

    async def WatchMatch(  # noqa: N802
        self, request: pb.WatchMatchRequest, context: grpc.aio.ServicerContext[pb.WatchMatchRequest, pb.RefereeMessage]
    ) -> AsyncIterator[pb.RefereeMessage]:
        entry = self.hub.get(request.match_id)
        if entry is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no match {request.match_id!r} on this referee; "
                                "ListMatches shows the running and recent ones")
            return
        async for msg in entry.watch():
            yield msg
