"""A match as the viewer's steps: one small JSON object per record line, with where each tile is drawn.

The replay page, the published site and the live page all draw from these steps,
so one drawing script serves them all. The layout is rebuilt with the engine's own
:class:`~sevenrocks.sdk.rules.Layout` (no rule restated here): the engine says which
side of a new tile touched which port and which ports stay open; this module only
turns that into positions on a grid.

Geometry: the first tile sits at the origin. A line runs west and east from it; the
spinner's branches run north and south from the spinner. A tile is 2 units long
and 1 wide; a double lies across its arm (1 unit along it). ``x``/``y`` are the
tile's centre, ``o`` is ``"h"`` or ``"v"`` and ``pips`` the two halves in drawing
order (left to right, top to bottom).

Hidden information: a step built for the public (``hands=None`` at a round start,
``tile=None`` in another seat's draw) carries only counts. The browser decides what
to show of a full record; the live server only ever builds public steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from sevenrocks.sdk.rules import Layout, Move, Port, RecordError, RulesError, Side, Tile, make_ruleset
from sevenrocks.sdk.rules.records import parse_lines

Direction = tuple[int, int]
WEST, EAST, NORTH, SOUTH = (-1, 0), (1, 0), (0, -1), (0, 1)
#: The arm a port of the first tile leads along.
_ROOT_ARMS = {Side.LOW: WEST, Side.HIGH: EAST, Side.LINE_A: WEST, Side.LINE_B: EAST,
              Side.BRANCH_A: NORTH, Side.BRANCH_B: SOUTH}
GAP = 0.08


@dataclass(slots=True)
class _Placed:
    x: float
    y: float
    o: str  # "h" or "v"
    arm: Direction


def _extent(p: _Placed, d: Direction) -> float:
    """Half the tile's length along direction ``d``."""
    along_x = d[1] == 0
    long_side = (p.o == "h") == along_x
    return 1.0 if long_side else 0.5


@dataclass(slots=True)
class LayoutGeometry:
    """The engine's layout plus where each placed tile is drawn."""

    layout: Layout = field(default_factory=Layout)
    placed: dict[Tile, _Placed] = field(default_factory=dict)

    def place(self, tile: Tile, port: Port | None) -> dict[str, Any]:
        """Place ``tile`` at ``port`` and return how to draw it.

        The move is not checked again here (``sevenrocks replay`` verifies a record with
        the engine first); a port the layout does not have fails as a KeyError, which
        :func:`steps_from_record` reports with the line."""
        self.layout.place(Move(tile, port))
        a, b = tile
        double = a == b
        if port is None:
            p = _Placed(0.0, 0.0, "v" if double else "h", EAST)
            pips = [a, b]
        else:
            host = self.placed[port.tile]
            if port.side in (Side.BRANCH_A, Side.BRANCH_B) or port.tile == self.layout.tiles[0]:
                d = _ROOT_ARMS[port.side]
            else:
                d = host.arm
            conn = self.layout.connections[-1]
            horizontal_arm = d[1] == 0
            o = ("v" if horizontal_arm else "h") if double else ("h" if horizontal_arm else "v")
            p = _Placed(0.0, 0.0, o, d)
            dist = _extent(host, d) + GAP + _extent(p, d)
            p.x, p.y = host.x + d[0] * dist, host.y + d[1] * dist
            inner = a if conn.side is Side.LOW or double else b
            outer = b if inner == a else a
            # Draw order is left-to-right / top-to-bottom; the inner half faces the host.
            pips = [inner, outer] if d in (EAST, SOUTH) else [outer, inner]
        self.placed[tile] = p
        return {"x": round(p.x, 3), "y": round(p.y, 3), "o": p.o, "pips": pips}

    def open_values(self) -> list[int]:
        """The pip value each open port needs, in the engine's port order."""
        return list(self.layout.open_ports().values())


#: [a, b] in either order -> the engine's tile (a lookup: a record has a few hundred tiles).
_TILE_OF: dict[tuple[int, int], Tile] = {**{(a, b): (a, b) for a in range(7) for b in range(a, 7)},
                                         **{(b, a): (a, b) for a in range(7) for b in range(a, 7)}}


def _tile(v: Any) -> Tile:
    try:
        return _TILE_OF[(v[0], v[1])] if len(v) == 2 and isinstance(v, list) else _bad_tile(v)
    except (TypeError, KeyError, IndexError):
        return _bad_tile(v)


def _bad_tile(v: Any) -> Tile:
    raise RecordError(f"{v!r} is not a tile [low, high] of double-six")


def _port(v: Any) -> Port | None:
    if v is None:
        return None
    try:
        return Port(_tile(v["tile"]), Side(v["side"]))
    except (KeyError, TypeError, ValueError):
        raise RecordError(f"{v!r} is not a port {{\"tile\": [a, b], \"side\": ...}}") from None


class StepBuilder:
    """Turns a match's events, one by one, into viewer steps."""

    def __init__(self) -> None:
        self.geometry = LayoutGeometry()
        self.round = 0

    def round_start(self, round_: int, leader: int, leader_by: str, hands: Sequence[Sequence[Tile]] | None,
                    hand_sizes: Sequence[int], boneyard: int, scores: Sequence[int] | None = None) -> dict[str, Any]:
        self.geometry = LayoutGeometry()
        self.round = round_
        step: dict[str, Any] = {"k": "round", "r": round_, "leader": leader, "by": leader_by,
                                "sizes": list(hand_sizes), "boneyard": boneyard}
        if hands is not None:
            step["hands"] = [[list(t) for t in h] for h in hands]
        if scores is not None:
            step["scores"] = list(scores)
        return step

    def play(self, seat: int, tile: Tile, port: Port | None, ends: int, award: int,
             scores: Sequence[int]) -> dict[str, Any]:
        draw = self.geometry.place(tile, port)
        return {"k": "play", "r": self.round, "seat": seat, "tile": list(tile), "at": draw,
                "open": self.geometry.open_values(), "ends": ends, "award": award, "scores": list(scores)}

    def passed(self, seat: int) -> dict[str, Any]:
        return {"k": "pass", "r": self.round, "seat": seat}

    def draw(self, seat: int, tile: Tile | None) -> dict[str, Any]:
        step: dict[str, Any] = {"k": "draw", "r": self.round, "seat": seat}
        if tile is not None:
            step["tile"] = list(tile)
        return step

    def round_end(self, reason: str, by: int | None, hands: Sequence[Sequence[Tile]],
                  settlement: Sequence[dict[str, int]] | None, bonus: dict[str, int] | None,
                  scores: Sequence[int]) -> dict[str, Any]:
        return {"k": "round_end", "r": self.round, "reason": reason, "by": by,
                "hands": [[list(t) for t in h] for h in hands], "settlement": list(settlement or []),
                "bonus": bonus, "scores": list(scores)}

    def match_end(self, reason: str, winner: int | None, scores: Sequence[int], rounds: int,
                  offender: dict[str, Any] | None) -> dict[str, Any]:
        return {"k": "match_end", "r": self.round, "reason": reason, "winner": winner,
                "scores": list(scores), "rounds": rounds, "offender": offender}


def match_meta(header: dict[str, Any]) -> dict[str, Any]:
    """What the viewer needs from a ``match_start`` line."""
    seats = header.get("seats")
    if header.get("event") != "match_start" or not isinstance(seats, list) or not seats:
        raise RecordError("the first line must be match_start with a seats list")
    try:
        rs = make_ruleset(str(header.get("ruleset", "")), players=len(seats), target=int(header.get("target", 250)))
    except (TypeError, ValueError) as e:
        raise RecordError(f"match_start: {e}") from None
    return {
        "match_id": str(header.get("match_id", "")), "ruleset": rs.name, "target": rs.target,
        "players": rs.players, "partnerships": rs.partnerships, "teams": rs.teams,
        "names": [str(s.get("player", f"seat {i}")) if isinstance(s, dict) else f"seat {i}" for i, s in enumerate(seats)],
        "seat_team": [rs.team_of(i) for i in range(rs.players)],
        "event_id": header.get("event_id"), "deal": header.get("deal") if isinstance(header.get("deal"), int) else None,
    }


def steps_from_record(lines: Iterable[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The match's facts and its steps, from the lines of a record (any writer's).

    Raises :class:`RecordError` on a line the viewer cannot draw (a tile that is not
    a tile, a port the layout does not have); run ``sevenrocks verify`` for the full story.
    """
    builder = StepBuilder()
    meta: dict[str, Any] | None = None
    steps: list[dict[str, Any]] = []
    scores: list[int] = []
    for rec in parse_lines(lines):
        d = rec.data
        try:
            if meta is None:
                meta = match_meta(d)
                scores = [0] * meta["teams"]
                continue
            kind = d["event"]
            if kind == "round_start":
                hands = [[_tile(t) for t in h] for h in d["hands"]]
                steps.append(builder.round_start(int(d["round"]), int(d["leader"]), str(d.get("leader_by", "")),
                                                 hands, [len(h) for h in hands], len(d.get("boneyard") or []),
                                                 scores))
            elif kind == "play":
                scores = [int(s) for s in d["scores"]]
                steps.append(builder.play(int(d["seat"]), _tile(d["tile"]), _port(d.get("port")),
                                          int(d["ends"]), int(d["award"]), scores))
            elif kind == "pass":
                steps.append(builder.passed(int(d["seat"])))
            elif kind == "draw":
                steps.append(builder.draw(int(d["seat"]), _tile(d["tile"])))
            elif kind == "round_end":
                scores = [int(s) for s in d["scores"]]
                steps.append(builder.round_end(str(d["reason"]), d.get("by"),
                                               [[_tile(t) for t in h] for h in d["hands"]],
                                               d.get("settlement"), d.get("bonus"), scores))
            elif kind == "match_end":
                scores = [int(s) for s in d["scores"]]
                steps.append(builder.match_end(str(d["reason"]), d.get("winner"), scores,
                                               int(d.get("rounds", builder.round)), d.get("offender")))
            # Unknown events are skipped: readers ignore what they do not know.
        except (RecordError, RulesError) as e:
            raise RecordError(f"line {rec.lineno}: {e}") from None
        except (KeyError, TypeError, ValueError) as e:
            raise RecordError(f"line {rec.lineno}: {d.get('event')} cannot be drawn ({type(e).__name__}: {e})") from None
    if meta is None:
        raise RecordError("empty record")
    return meta, steps
