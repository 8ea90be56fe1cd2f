"""Engine events: each maps one-to-one onto a line of a match record (docs/records.md).

The engine returns these from every state change; the record writer, the referee's
per-seat filtering and the verifier all work from the same values.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple, TypeAlias

from .layout import Port
from .tiles import Tile
from .picklable import picklable


class LeaderBy(StrEnum):
    LOT = "lot"
    DOMINO = "domino"
    ROTATION = "rotation"


class RoundEndReason(StrEnum):
    DOMINO = "domino"
    BLOCKED = "blocked"


class MatchEndReason(StrEnum):
    TARGET = "target"
    FORFEIT = "forfeit"
    ROUND_CAP = "round_cap"


class FaultCause(StrEnum):
    TIMEOUT = "timeout"
    ILLEGAL = "illegal"
    MALFORMED = "malformed"
    DISCONNECT = "disconnect"
    CRASH = "crash"


def _tiles(ts: tuple[Tile, ...] | list[Tile]) -> list[list[int]]:
    return [[a, b] for a, b in ts]


def port_json(port: Port | None) -> dict[str, Any] | None:
    if port is None:
        return None
    return {"tile": [port.tile[0], port.tile[1]], "side": port.side.value}


@dataclass(frozen=True, slots=True)
class RoundStart:
    """A round was dealt: every hand, the boneyard in drawing order, and who leads why."""

    round: int
    leader: int
    leader_by: LeaderBy
    hands: tuple[tuple[Tile, ...], ...]
    boneyard: tuple[Tile, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "event": "round_start", "round": self.round, "leader": self.leader,
            "leader_by": self.leader_by.value, "hands": [_tiles(h) for h in self.hands],
            "boneyard": _tiles(self.boneyard),
        }


class Play(NamedTuple):
    """A placement: ``seat`` put ``tile`` on ``port`` (``None``: the opening), leaving
    ``ends`` on the scoring ends, scoring ``award``; ``scores`` are after the award.

    Play, Pass and Draw are named tuples, not dataclasses: the engine creates one per
    move, and a frozen dataclass costs four times as much to build."""

    round: int
    seat: int
    tile: Tile
    port: Port | None
    ends: int
    award: int
    scores: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "event": "play", "round": self.round, "seat": self.seat,
            "tile": [self.tile[0], self.tile[1]], "port": port_json(self.port),
            "ends": self.ends, "award": self.award, "scores": list(self.scores),
        }


class Pass(NamedTuple):
    """``seat`` had no legal move (in fives: and nothing left to draw)."""

    round: int
    seat: int

    def to_json(self) -> dict[str, Any]:
        return {"event": "pass", "round": self.round, "seat": self.seat}


class Draw(NamedTuple):
    """Fives: ``seat`` drew ``tile`` from the boneyard, having no legal move."""

    round: int
    seat: int
    tile: Tile

    def to_json(self) -> dict[str, Any]:
        return {"event": "draw", "round": self.round, "seat": self.seat, "tile": [self.tile[0], self.tile[1]]}


@dataclass(frozen=True, slots=True)
class Settlement:
    """Seven Rocks: ``seat`` held ``pips`` at the round's end and was debited ``points`` (<= 0)."""

    seat: int
    pips: int
    points: int


@dataclass(frozen=True, slots=True)
class Bonus:
    """Fives: the round's winner ``seat`` scored ``points``, its opponents' pips rounded to 5."""

    seat: int
    points: int


@dataclass(frozen=True, slots=True)
class RoundEnd:
    """A round ended by ``reason`` (``by`` the dominoer, or None when blocked), with the
    hands left, the Seven Rocks settlement or the fives bonus, and the scores after."""

    round: int
    reason: RoundEndReason
    by: int | None
    hands: tuple[tuple[Tile, ...], ...]
    #: Seven Rocks: one debit per seat. Fives: empty (see ``bonus``).
    settlement: tuple[Settlement, ...]
    #: Fives only: the round winner's bonus, or None when nobody won the round.
    bonus: Bonus | None
    scores: tuple[int, ...]
    partnerships: bool

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "event": "round_end", "round": self.round, "reason": self.reason.value,
            "by": self.by, "hands": [_tiles(h) for h in self.hands],
        }
        if self.partnerships:
            out["settlement"] = [{"seat": s.seat, "pips": s.pips, "points": s.points} for s in self.settlement]
        else:
            out["bonus"] = None if self.bonus is None else {"seat": self.bonus.seat, "points": self.bonus.points}
        out["scores"] = list(self.scores)
        return out


@dataclass(frozen=True, slots=True)
class Offender:
    """Who forfeited the match, why (``cause``) and a human-readable ``detail``."""

    seat: int
    cause: FaultCause
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "cause": self.cause.value, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class MatchEnd:
    """The match ended by ``reason``: ``winner`` is a team (None for a drawn round cap),
    ``rounds`` the rounds dealt, ``offender`` the seat that forfeited, if any."""

    reason: MatchEndReason
    winner: int | None
    scores: tuple[int, ...]
    rounds: int
    offender: Offender | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "event": "match_end", "reason": self.reason.value, "winner": self.winner,
            "scores": list(self.scores), "rounds": self.rounds,
        }
        if self.offender is not None:
            out["offender"] = self.offender.to_json()
        return out


Event: TypeAlias = RoundStart | Play | Pass | Draw | RoundEnd | MatchEnd


picklable(RoundStart, Settlement, Bonus, RoundEnd, Offender, MatchEnd)  # compiled frozen dataclasses: see picklable.py
