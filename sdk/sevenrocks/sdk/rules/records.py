"""Match records (docs/records.md): the public JSON Lines format, written and read here only.

Writing is pure: :func:`record_lines` turns a match's events into the lines of its
record. Reading parses lines into plain dicts with line numbers; the verifier
(:mod:`sevenrocks.sdk.rules.replay`) checks them against the engine.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from .errors import RecordError
from .events import Event
from .rulesets import Ruleset
from .state import DEAL_PROCEDURE


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


def record_lines(header: MatchHeader, events: Iterable[Event], extras: Sequence[dict[str, Any]] = ()) -> list[str]:
    """The record's lines (without newlines); ``extras[i]`` adds keys to event ``i``."""
    lines = [dumps(header.to_json())]
    for i, ev in enumerate(events):
        obj = ev.to_json()
        if i < len(extras) and extras[i]:
            obj.update(extras[i])
        lines.append(dumps(obj))
    return lines


def write_record(path: Path, lines: Sequence[str]) -> None:
    """Write a record atomically (a temp file renamed into place): never a half file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    tmp.replace(path)


@dataclass(frozen=True, slots=True)
class RecordLine:
    lineno: int
    data: dict[str, Any]


def read_record(path: Path) -> Iterator[RecordLine]:
    """Yield each non-blank line of a record as a dict; raise :class:`RecordError` on bad JSON."""
    with path.open(encoding="utf-8") as f:
        yield from parse_lines(f)


def parse_lines(lines: Iterable[str]) -> Iterator[RecordLine]:
    for n, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as e:
            raise RecordError(f"line {n}: not JSON ({e.msg})") from None
        if not isinstance(data, dict) or "event" not in data:
            raise RecordError(f"line {n}: expected a JSON object with an \"event\" key")
        yield RecordLine(n, data)
