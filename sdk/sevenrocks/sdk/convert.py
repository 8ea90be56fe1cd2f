"""The one module that converts between protocol messages and engine values.

Both ends of the wire use it: the referee turns engine events into what each seat
(or a spectator) may see, and the client turns those messages back into the calls
that feed a :class:`~sevenrocks.sdk.view.SeatView`. Everything a peer sends is
validated here, so a malformed tile or port becomes a :class:`WireError` naming the
bad value instead of an exception deep in the engine.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from sevenrocks.v1 import referee_pb2 as pb

from .limits import MAX_ROUND_CAP as MAX_ROUND_CAP, MAX_TARGET as MAX_TARGET  # re-exported: callers import them here
from .rules import (
    ALL_TILES, Draw, Event, LeaderBy, MatchEnd, Move, Offender, Pass, Play, Port, RoundEnd,
    RoundStart, Ruleset, Side, Tile, make_ruleset,
)


class WireError(ValueError):
    """A protocol message that does not describe a valid value (a malformed message)."""


_SIDE_TO_PB: dict[Side, pb.Side.ValueType] = {
    Side.LOW: pb.SIDE_LOW, Side.HIGH: pb.SIDE_HIGH, Side.LINE_A: pb.SIDE_LINE_A,
    Side.LINE_B: pb.SIDE_LINE_B, Side.BRANCH_A: pb.SIDE_BRANCH_A, Side.BRANCH_B: pb.SIDE_BRANCH_B,
}
_PB_TO_SIDE = {v: k for k, v in _SIDE_TO_PB.items()}
_TILES: dict[tuple[int, int], Tile] = {t: t for t in ALL_TILES}

# ------------------------------------------------------------------ values


def tile_msg(t: Tile) -> pb.Tile:
    return pb.Tile(low=t[0], high=t[1])


def tile_of(msg: pb.Tile) -> Tile:
    """The engine tile for ``msg``; :class:`WireError` unless it is a double-six tile, low first."""
    t = _TILES.get((msg.low, msg.high))
    if t is None:
        raise WireError(f"tile [{msg.low}|{msg.high}] is not a double-six tile written low first")
    return t


def port_msg(port: Port) -> pb.Port:
    return pb.Port(tile=tile_msg(port.tile), side=_SIDE_TO_PB[port.side])


def port_of(msg: pb.Port) -> Port:
    if not msg.HasField("tile"):
        raise WireError("port has no tile")
    side = _PB_TO_SIDE.get(msg.side)
    if side is None:
        raise WireError(f"port side {msg.side} is not one of low, high, line_a, line_b, branch_a, branch_b")
    return Port(tile_of(msg.tile), side)


_PLACEMENTS: dict[Move, pb.Placement] = {}


def placement_msg(move: Move) -> pb.Placement:
    """The placement message for ``move`` (cached: a match uses few distinct moves)."""
    msg = _PLACEMENTS.get(move)
    if msg is None:
        msg = pb.Placement(tile=tile_msg(move.tile))
        if move.port is not None:
            msg.port.CopyFrom(port_msg(move.port))
        if len(_PLACEMENTS) < 20_000:
            _PLACEMENTS[move] = msg
    return msg


#: Valid placements seen so far, by their bytes: both ends of the wire convert the same few
#: hundred placements over and over (a decision, every seat's copy of every play). Reading
#: a placement's eight fields from Python built a wrapper object per submessage (~4.6 us a
#: call, five calls per decision); its bytes are one C call (~0.4 us) and a dict lookup.
_MOVES: dict[bytes, Move] = {}


def move_of(msg: pb.Placement) -> Move:
    """The engine move a placement names; :class:`WireError` if it names no valid tile or port."""
    key = msg.SerializeToString()
    move = _MOVES.get(key)
    if move is None:
        move = _move_of(msg)  # raises WireError for anything invalid, which is never cached
        # Only the canonical bytes of a valid move are kept (unknown fields or odd encodings
        # from a bot are converted but not cached), so the cache holds at most one entry
        # per valid placement and no peer can fill it.
        if key == placement_msg(move).SerializeToString():
            _MOVES[key] = move
    return move


def _move_of(msg: pb.Placement) -> Move:
    if not msg.HasField("tile"):
        raise WireError("placement has no tile")
    return Move(tile_of(msg.tile), port_of(msg.port) if msg.HasField("port") else None)


def ruleset_of(msg: pb.SeatAssignment) -> Ruleset:
    try:
        return make_ruleset(msg.ruleset, msg.players, msg.target, msg.round_cap)
    except ValueError as e:
        raise WireError(f"seat assignment: {e}") from None


#: A tile as messages write it (``[a|b]``), wherever a detail may name one.
_TILE_TEXT = re.compile(r"\[\s*-?\d+\s*\|\s*-?\d+\s*\]")
#: What every tile in a fault detail becomes on the wire.
WITHHELD_TILE = "[?|?]"


def public_detail(detail: str) -> str:
    """A fault detail fit for every seat and spectator: each tile it names is withheld.

    An ``illegal`` forfeit's detail names the tile the offender tried, which is still
    in its hand; the stored record keeps the whole detail, the wire never does.
    """
    return _TILE_TEXT.sub(WITHHELD_TILE, detail)


def offender_msg(o: Offender) -> pb.Offender:
    """The offender as the wire carries it: its detail through :func:`public_detail`."""
    return pb.Offender(seat=o.seat, cause=o.cause.value, detail=public_detail(o.detail))


# ------------------------------------------------------------------ referee -> seat




def assignment_msg(
    ruleset: Ruleset, names: Sequence[str], per_move_ms: int, bank_ms: int | None
) -> pb.SeatAssignment:
    if not 0 < ruleset.target <= MAX_TARGET or not 0 < ruleset.round_cap <= MAX_ROUND_CAP:
        raise ValueError(f"target {ruleset.target} / round cap {ruleset.round_cap} out of range: at most "
                         f"{MAX_TARGET} points and {MAX_ROUND_CAP} rounds")
    return pb.SeatAssignment(
        ruleset=ruleset.name, players=ruleset.players, target=ruleset.target,
        round_cap=ruleset.round_cap, seat_names=list(names),
        teams=[ruleset.team_of(s) for s in range(ruleset.players)],
        per_move_ms=per_move_ms, bank_ms=bank_ms or 0,
    )


def deal_msg(ev: RoundStart, seat: int | None, scores: Sequence[int]) -> pb.Deal:
    """The deal as ``seat`` sees it (its own hand only); ``None``: a spectator (no hand)."""
    return pb.Deal(
        round=ev.round, leader=ev.leader, leader_by=ev.leader_by.value,
        hand=[tile_msg(t) for t in ev.hands[seat]] if seat is not None else [],
        hand_sizes=[len(h) for h in ev.hands], boneyard_size=len(ev.boneyard), scores=list(scores),
    )


def play_msg(ev: Play) -> pb.PlayEvent:
    return pb.PlayEvent(
        round=ev.round, seat=ev.seat, placement=placement_msg(Move(ev.tile, ev.port)),
        ends=ev.ends, award=ev.award, scores=list(ev.scores),
    )


def draw_msg(ev: Draw, seat: int | None) -> pb.DrawEvent:
    """A draw as ``seat`` sees it: the tile only for the drawing seat."""
    msg = pb.DrawEvent(round=ev.round, seat=ev.seat)
    if seat == ev.seat:
        msg.tile.CopyFrom(tile_msg(ev.tile))
    return msg


def round_end_msg(ev: RoundEnd) -> pb.RoundEnd:
    msg = pb.RoundEnd(
        round=ev.round, reason=ev.reason.value,
        hands=[pb.Hand(tiles=[tile_msg(t) for t in h]) for h in ev.hands],
        settlement=[pb.Settlement(seat=s.seat, pips=s.pips, points=s.points) for s in ev.settlement],
        scores=list(ev.scores),
    )
    if ev.by is not None:
        msg.by = ev.by
    if ev.bonus is not None:
        msg.bonus.CopyFrom(pb.Bonus(seat=ev.bonus.seat, points=ev.bonus.points))
    return msg


def result_msg(ev: MatchEnd, ranks: Iterable[int]) -> pb.MatchResult:
    msg = pb.MatchResult(reason=ev.reason.value, scores=list(ev.scores), rounds=ev.rounds, ranks=list(ranks))
    if ev.winner is not None:
        msg.winner = ev.winner
    if ev.offender is not None:
        msg.offender.CopyFrom(offender_msg(ev.offender))
    return msg


Body = pb.PlayEvent | pb.PassEvent | pb.DrawEvent | pb.Deal | pb.RoundEnd | pb.MatchResult


def event_bodies(
    ev: Event, seats: Sequence[int], scores: Sequence[int], ranks: Sequence[int] = ()
) -> list[tuple[Sequence[int], str, Body]]:
    """What each of ``seats`` hears of ``ev``, hidden tiles withheld: groups of seats that
    get the same body, as ``(seats, RefereeMessage field name, body)``.

    ``scores`` are the team scores before ``ev`` (a Deal carries them); ``ranks`` the
    final ranks when ``ev`` ends the match. Grouping lets the referee serialize a
    public event once for every seat.
    """
    if isinstance(ev, Play):
        return [(seats, "play", play_msg(ev))]
    if isinstance(ev, Pass):
        return [(seats, "passed", pb.PassEvent(round=ev.round, seat=ev.seat))]
    if isinstance(ev, Draw):
        others = [s for s in seats if s != ev.seat]
        out: list[tuple[Sequence[int], str, Body]] = [(others, "draw", draw_msg(ev, None))] if others else []
        if len(others) < len(seats):
            out.append(((ev.seat,), "draw", draw_msg(ev, ev.seat)))
        return out
    if isinstance(ev, RoundStart):
        return [((s,), "deal", deal_msg(ev, s, scores)) for s in seats]
    if isinstance(ev, RoundEnd):
        return [(seats, "round_end", round_end_msg(ev))]
    return [(seats, "match_result", result_msg(ev, ranks))]


def event_messages(
    match_id: str, ev: Event, seats: Sequence[int], scores: Sequence[int], ranks: Sequence[int] = ()
) -> list[tuple[int, pb.RefereeMessage]]:
    """``(seat, message)`` for each of ``seats``: :func:`event_bodies` as whole messages."""
    out: list[tuple[int, pb.RefereeMessage]] = []
    for group, field, body in event_bodies(ev, seats, scores, ranks):
        for s in group:
            msg = pb.RefereeMessage(match_id=match_id, seat=s)
            getattr(msg, field).CopyFrom(body)
            out.append((s, msg))
    return out


def spectator_message(match_id: str, ev: Event, scores: Sequence[int], ranks: Sequence[int] = ()) -> pb.RefereeMessage:
    """``ev`` as the public feed shows it: no hand in a Deal, no tile in another seat's Draw."""
    if isinstance(ev, RoundStart):
        return pb.RefereeMessage(match_id=match_id, deal=deal_msg(ev, None, scores))
    if isinstance(ev, Draw):
        return pb.RefereeMessage(match_id=match_id, draw=draw_msg(ev, None))
    return event_messages(match_id, ev, (0,), scores, ranks)[0][1]


def turn_msg(
    match_id: str, seat: int, request_id: int, round: int, moves: Sequence[Move], time_left_ms: int, bank_left_ms: int
) -> pb.RefereeMessage:
    return pb.RefereeMessage(match_id=match_id, seat=seat, turn_request=pb.TurnRequest(
        request_id=request_id, round=round, legal_moves=[placement_msg(m) for m in moves],
        time_left_ms=time_left_ms, bank_left_ms=bank_left_ms,
    ))


# ------------------------------------------------------------------ seat side


def leader_by_of(value: str) -> LeaderBy:
    try:
        return LeaderBy(value)
    except ValueError:
        raise WireError(f"leader_by {value!r} is not one of lot, domino, rotation") from None


def hands_of(msg: pb.RoundEnd) -> list[list[Tile]]:
    return [[tile_of(t) for t in h.tiles] for h in msg.hands]
