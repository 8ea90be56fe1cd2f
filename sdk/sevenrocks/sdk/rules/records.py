"""Match records (docs/records.md): the public JSON Lines format, written and read here only.

Writing is pure: :func:`record_lines` turns a match's events into the lines of its
record. Reading parses lines into plain dicts with line numbers; the verifier
(:mod:`sevenrocks.sdk.rules.replay`) checks them against the engine.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Final, Iterable, Iterator, NamedTuple, Sequence, cast

from .errors import RecordError
from .events import Draw, Event, Pass, Play, RoundEnd, RoundStart
from .layout import Port
from .tiles import ALL_TILES, Tile
from .rulesets import Ruleset
from .state import DEAL_PROCEDURE
from .picklable import picklable


@dataclass(frozen=True, slots=True)
class SeatEntry:
    seat: int
    player: str
    team: int


@dataclass(frozen=True, slots=True)
class MatchHeader:
    """The facts of a match_start line."""

    match_id: str
    ruleset: Ruleset
    seed: int
    seats: tuple[SeatEntry, ...]
    #: Extra keys for the match_start line (event id, bot versions, ...).
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "event": "match_start", "match_id": self.match_id, "ruleset": self.ruleset.name,
            "target": self.ruleset.target, "seed": self.seed,
            "seats": [{"seat": s.seat, "player": s.player, "team": s.team} for s in self.seats],
            "round_cap": self.ruleset.round_cap, "deal": DEAL_PROCEDURE,
        }
        clash = sorted(set(self.extra) & set(out))
        if clash:
            # An extra key must never change what a format key means (docs/records.md).
            raise ValueError(f"extra keys {', '.join(clash)} would overwrite match_start's own keys")
        out.update(self.extra)
        return out


def header_for(
    match_id: str, ruleset: Ruleset, seed: int, players: Sequence[str], extra: dict[str, Any] | None = None
) -> MatchHeader:
    """A header seating ``players`` in seat order."""
    if len(players) != ruleset.players:
        raise ValueError(f"{ruleset.name} needs {ruleset.players} players, got {len(players)}")
    seats = tuple(SeatEntry(i, p, ruleset.team_of(i)) for i, p in enumerate(players))
    return MatchHeader(match_id, ruleset, seed, seats, dict(extra or {}))


def dumps(obj: dict[str, Any]) -> str:
    """One record line: compact-enough, key order as written, ASCII-safe UTF-8."""
    return json.dumps(obj, ensure_ascii=False)


# The lines of every round (placements, passes, draws, the deal and the round's end)
# are formatted directly: the same text ``dumps(ev.to_json())`` gives, at a fraction
# of its cost. tests/rules/test_byte_identical.py pins the output to what json.dumps
# wrote before this writer existed.
_PORTS: dict[Port | None, str] = {None: "null"}
_TILE: dict[object, str] = {t: f"[{t[0]}, {t[1]}]" for t in ALL_TILES}
_PLAY_KEYS = frozenset(("event", "round", "seat", "tile", "port", "ends", "award", "scores"))
_PASS_KEYS = frozenset(("event", "round", "seat"))
_DRAW_KEYS = frozenset(("event", "round", "seat", "tile"))
_START_KEYS = frozenset(("event", "round", "leader", "leader_by", "hands", "boneyard"))
_END_KEYS = frozenset(("event", "round", "reason", "by", "hands", "settlement", "bonus", "scores"))


def _tiles_text(tiles: Iterable[Tile]) -> str:
    tile = _TILE
    # The tiles as objects: compiled, a typed tile would be re-boxed for each look-up (bits.py).
    return "[" + ", ".join([tile[t] for t in cast("Iterable[object]", tiles)]) + "]"


def _hands_text(hands: Iterable[Iterable[Tile]]) -> str:
    return "[" + ", ".join([_tiles_text(h) for h in hands]) + "]"


def _port_text(port: Port | None) -> str:
    text = _PORTS.get(port)
    if text is None:
        (a, b), side = port  # type: ignore[misc]  # None is in the cache
        text = _PORTS[port] = f'{{"tile": [{a}, {b}], "side": "{side.value}"}}'
    return text


#: The text of the small integers a line holds (rounds, seats, pips, ends, awards, most
#: scores): str() makes a new string each time; these are made once.
_SMALL: Final[list[str]] = [str(i) for i in range(1024)]


def _int(i: int) -> str:
    return _SMALL[i] if 0 <= i < 1024 else str(i)


def _ints(xs: Sequence[int]) -> str:
    if len(xs) == 2:  # Seven Rocks' two team scores: the common case, without a join
        return f"[{_int(xs[0])}, {_int(xs[1])}]"
    return "[" + ", ".join([_int(x) for x in xs]) + "]"


def _event_text(ev: Event) -> str | None:
    """The record line of a round's event; None for the match's end (rare: json.dumps)."""
    if isinstance(ev, Play):
        rnd, seat, (a, b), port, ends, award, scores = ev
        return (f'{{"event": "play", "round": {_int(rnd)}, "seat": {_int(seat)}, "tile": [{_int(a)}, {_int(b)}], '
                f'"port": {_port_text(port)}, "ends": {_int(ends)}, "award": {_int(award)}, '
                f'"scores": {_ints(scores)}}}')
    if isinstance(ev, Pass):
        return f'{{"event": "pass", "round": {_int(ev.round)}, "seat": {_int(ev.seat)}}}'
    if isinstance(ev, Draw):
        rnd, seat, (a, b) = ev
        return f'{{"event": "draw", "round": {rnd}, "seat": {seat}, "tile": [{a}, {b}]}}'
    if isinstance(ev, RoundStart):
        return (f'{{"event": "round_start", "round": {ev.round}, "leader": {ev.leader}, '
                f'"leader_by": "{ev.leader_by.value}", "hands": {_hands_text(ev.hands)}, '
                f'"boneyard": {_tiles_text(ev.boneyard)}}}')
    if isinstance(ev, RoundEnd):
        head = (f'{{"event": "round_end", "round": {ev.round}, "reason": "{ev.reason.value}", '
                f'"by": {"null" if ev.by is None else ev.by}, "hands": {_hands_text(ev.hands)}, ')
        if ev.partnerships:
            parts = ", ".join([f'{{"seat": {x.seat}, "pips": {x.pips}, "points": {x.points}}}' for x in ev.settlement])
            middle = f'"settlement": [{parts}]'
        elif ev.bonus is None:
            middle = '"bonus": null'
        else:
            middle = f'"bonus": {{"seat": {ev.bonus.seat}, "points": {ev.bonus.points}}}'
        return f'{head}{middle}, "scores": {_ints(ev.scores)}}}'
    return None


def _event_keys(ev: Event) -> frozenset[str]:
    """The keys of the line :func:`_event_text` writes for ``ev``."""
    if isinstance(ev, Play):
        return _PLAY_KEYS
    if isinstance(ev, Pass):
        return _PASS_KEYS
    if isinstance(ev, Draw):
        return _DRAW_KEYS
    if isinstance(ev, RoundStart):
        return _START_KEYS
    return _END_KEYS


def record_lines(header: MatchHeader, events: Iterable[Event], extras: Sequence[dict[str, Any]] = ()) -> list[str]:
    """The record's lines (without newlines); ``extras[i]`` adds keys to event ``i``."""
    lines = [dumps(header.to_json())]
    append = lines.append
    n_extras = len(extras)
    for i, ev in enumerate(events):
        extra = extras[i] if i < n_extras else None
        text = _event_text(ev)
        if text is not None:
            if not extra:
                append(text)
                continue
            if _event_keys(ev).isdisjoint(extra):  # new keys go last, as dict.update would put them
                append(text[:-1] + ", " + dumps(extra)[1:])
                continue
        obj = ev.to_json()
        if extra:
            obj.update(extra)
        append(dumps(obj))
    return lines


def write_record(path: Path, lines: Sequence[str]) -> None:
    """Write a record atomically (a temp file renamed into place): never a half file.

    The folder is made when it is missing (found by the first open failing, which
    saves a ``mkdir`` and a ``stat`` per record when it exists, as it does for all
    but the first record of a run).
    """
    data = ("\n".join(lines) + "\n").encode("utf-8") if lines else b""
    tmp = os.fspath(path) + ".tmp"
    try:
        f = open(tmp, "wb")  # bytes: no text wrapper to set up per file, and "\n" on every OS
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        f = open(tmp, "wb")
    with f:
        f.write(data)
    os.replace(tmp, path)


class RecordLine(NamedTuple):
    lineno: int
    data: dict[str, Any]


#: msgspec's decoder, imported on first use: writing a record (``simulate``, the referee)
#: never reads one, and the import is a measurable part of a short command's start-up.
_DECODER: list[Callable[[str], Any]] = []


def _decode(raw: str) -> Any:
    if not _DECODER:
        import msgspec

        _DECODER.append(msgspec.json.Decoder().decode)
    return _DECODER[0](raw)


def loads(raw: str) -> Any:
    """Parse one record line: msgspec reads a well-formed line as the standard library
    does (integers of any size included), at a fraction of the cost; anything it refuses
    (NaN, a number out of float range, a lone surrogate, every malformed line) goes to
    ``json.loads``, so values and error messages stay the standard library's."""
    try:
        return _decode(raw)
    except ValueError:  # msgspec.DecodeError, UnicodeEncodeError
        return json.loads(raw)


def read_record(path: Path) -> Iterator[RecordLine]:
    """Yield each non-blank line of a record as a dict; raise :class:`RecordError` on bad JSON."""
    with path.open(encoding="utf-8") as f:
        yield from parse_lines(f)


def parse_lines(lines: Iterable[str]) -> Iterator[RecordLine]:
    for n, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            data = loads(raw)
        except json.JSONDecodeError as e:
            raise RecordError(f"line {n}: not JSON ({e.msg})") from None
        if not isinstance(data, dict) or "event" not in data:
            raise RecordError(f"line {n}: expected a JSON object with an \"event\" key")
        yield tuple.__new__(RecordLine, (n, data))  # NamedTuple's own __new__ is Python code


picklable(SeatEntry, MatchHeader)  # compiled frozen dataclasses: see picklable.py
