"""A live match as viewer steps, built only from the spectator feed.

:func:`public_steps` reads :meth:`~..referee.feed.FeedEntry.watch` — the same public messages the
gRPC Spectator service sends, with every hidden tile already withheld — and turns
them into the steps the replay script draws. Nothing here reads the match's own
event list, so no hand of a running match can reach a browser through this module:
a deal carries hand sizes only, another seat's draw no tile; hands appear when the
round ends and they are shown to every seat anyway.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from sevenrocks.sdk.convert import move_of, tile_of
from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.v1 import referee_pb2 as pb

from ..publish.steps import StepBuilder


def meta_of(match_id: str, a: pb.SeatAssignment) -> dict[str, Any]:
    """The viewer's match facts from a seat assignment (the same shape a record's header gives)."""
    rs = make_ruleset(a.ruleset, a.players, a.target)
    return {"match_id": match_id, "ruleset": rs.name, "target": rs.target, "players": rs.players,
            "partnerships": rs.partnerships, "teams": rs.teams, "names": list(a.seat_names),
            "seat_team": [rs.team_of(s) for s in range(rs.players)], "event_id": None, "deal": None}


def step_of(builder: StepBuilder, msg: pb.RefereeMessage) -> dict[str, Any] | None:
    """One public message as a step (None for a message the viewer does not draw)."""
    which = msg.WhichOneof("body")
    if which == "deal":
        d = msg.deal
        return builder.round_start(d.round, d.leader, d.leader_by, None, list(d.hand_sizes), d.boneyard_size,
                                   list(d.scores))
    if which == "play":
        p = msg.play
        move = move_of(p.placement)
        return builder.play(p.seat, move.tile, move.port, p.ends, p.award, list(p.scores))
    if which == "passed":
        return builder.passed(msg.passed.seat)
    if which == "draw":
        return builder.draw(msg.draw.seat, None)  # never a tile, even if one were present
    if which == "round_end":
        e = msg.round_end
        return builder.round_end(
            e.reason, e.by if e.HasField("by") else None, [[tile_of(t) for t in h.tiles] for h in e.hands],
            [{"seat": s.seat, "pips": s.pips, "points": s.points} for s in e.settlement],
            {"seat": e.bonus.seat, "points": e.bonus.points} if e.HasField("bonus") else None, list(e.scores))
    if which == "match_result":
        r = msg.match_result
        off = ({"seat": r.offender.seat, "cause": r.offender.cause, "detail": r.offender.detail}
               if r.HasField("offender") else None)
        return builder.match_end(r.reason, r.winner if r.HasField("winner") else None, list(r.scores), r.rounds, off)
    return None


async def public_steps(match_id: str, feed: AsyncIterator[pb.RefereeMessage]) -> AsyncIterator[dict[str, Any]]:
    """``{"type": "meta"}`` first, then one ``{"type": "step"}`` per public event, through the result.

    ``feed``: :meth:`FeedEntry.watch` of the match, or that feed relayed to the web
    thread (:func:`~.webloop.relay`).
    """
    builder = StepBuilder()
    n = 0
    async for msg in feed:
        if msg.WhichOneof("body") == "seat_assignment":
            yield {"type": "meta", "match_id": match_id, "meta": meta_of(match_id, msg.seat_assignment)}
            continue
        step = step_of(builder, msg)
        if step is not None:
            yield {"type": "step", "match_id": match_id, "i": n, "step": step}
            n += 1
