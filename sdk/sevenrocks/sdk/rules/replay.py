"""Replay a match record through the engine and list every discrepancy.

The verifier is the engine itself: it feeds the record's deals and decisions
(placements, forfeits) to a :class:`GameState` and compares every line with the
event the engine produces at that point. Whatever the engine would have done
differently — a wrong total, an illegal port, a pass while holding a playable tile,
a line after the match was won — becomes a :class:`Discrepancy` naming the line.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, NoReturn

from .errors import IllegalMoveError, RecordError, RulesError
from .events import Draw, Event, FaultCause, LeaderBy, MatchEnd, MatchEndReason, Offender, Pass, Play, RoundEnd, port_json
from .layout import Move, Port, Side
from .records import RecordLine, parse_lines
from .rulesets import make_ruleset
from .state import DEAL_PROCEDURE, GameState, Phase, draw_deal, forfeit_winner
from .tiles import ALL_TILES, Tile, fmt, is_tile
from .picklable import picklable

#: Stop listing a file's discrepancies after this many.
MAX_PER_FILE = 50
#: The round cap of a record whose match_start does not state one.
DEFAULT_ROUND_CAP = 200
#: What the replay plays to when no cap is stated: the record's own end decides.
UNSTATED_CAP = 1 << 30


@dataclass(frozen=True, slots=True)
class Discrepancy:
    """One problem at one line of a record (line 0: the file as a whole)."""

    line: int
    message: str

    def format(self, name: str) -> str:
        return f"{name}:{self.line}: {self.message}"


class _Stop(Exception):
    """The record has left the engine's path: later lines cannot be checked."""


# Fast paths: a well-formed line (nearly every line) is read and compared without the
# general code below, which stays the one source of every message. Each fast path
# only ever answers "exactly as the general code would, with nothing to report";
# anything else falls through to the general code.
_TILE_OF: dict[tuple[int, int], Tile] = {t: t for t in ALL_TILES}
_SIDE_OF: dict[str, Side] = {s.value: s for s in Side}
_PORT_JSON: dict[Port, dict[str, Any] | None] = {}
_MISSING = "<missing>"


def _same_play(ev: Play, d: dict[str, Any]) -> bool:
    """True if ``d`` is the line ``ev.to_json()`` describes (compared as :meth:`_Replay.compare` does)."""
    port = ev.port
    if port is None:
        want_port = None
    else:
        want_port = _PORT_JSON.get(port)
        if want_port is None:
            want_port = _PORT_JSON[port] = port_json(port)
    a, b = ev.tile
    return (d.get("event") == "play" and d.get("round", _MISSING) == ev.round and d.get("seat", _MISSING) == ev.seat
            and d.get("tile", _MISSING) == [a, b] and d.get("port", _MISSING) == want_port
            and d.get("ends", _MISSING) == ev.ends and d.get("award", _MISSING) == ev.award
            and d.get("scores", _MISSING) == list(ev.scores))


def _same_small(ev: Event, d: dict[str, Any]) -> bool:
    """The same for a pass or a draw."""
    if type(ev) is Pass:
        return d.get("event") == "pass" and d.get("round", _MISSING) == ev.round and d.get("seat", _MISSING) == ev.seat
    if type(ev) is Draw:
        a, b = ev.tile
        return (d.get("event") == "draw" and d.get("round", _MISSING) == ev.round
                and d.get("seat", _MISSING) == ev.seat and d.get("tile", _MISSING) == [a, b])
    return False


def _tile(value: Any, what: str) -> Tile:
    if type(value) is list and len(value) == 2:
        a, b = value
        if type(a) is int and type(b) is int:
            t = _TILE_OF.get((a, b))
            if t is not None:
                return t
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(x, int) for x in value)):
        raise RecordError(f"{what} is {value!r}, not a tile [a, b]")
    t = (value[0], value[1])
    if not is_tile(t):
        raise RecordError(f"{what} {value!r} is not a tile [low, high] of double-six")
    return t


def _port(value: Any) -> Port | None:
    if value is None:
        return None
    if type(value) is dict and "tile" in value:
        name = value.get("side")
        side = _SIDE_OF.get(name) if type(name) is str else None
        if side is not None:
            return tuple.__new__(Port, (_tile(value["tile"], "port tile"), side))
    if not isinstance(value, dict) or "tile" not in value or "side" not in value:
        raise RecordError(f"port {value!r} is not {{\"tile\": [a, b], \"side\": ...}}")
    try:
        side = Side(value["side"])
    except ValueError:
        raise RecordError(f"port side {value['side']!r} is not one of {', '.join(s.value for s in Side)}") from None
    return Port(_tile(value["tile"], "port tile"), side)


def _hands(value: Any, what: str) -> list[list[Tile]]:
    if not isinstance(value, list):
        raise RecordError(f"{what} is not a list of hands")
    return [[_tile(t, f"{what} tile") for t in h] for h in value]


def _known(got: Any, want: Any) -> Any:
    """``got`` with the keys that ``want`` does not have dropped, at every level.

    The format says readers ignore keys they do not know, inside nested objects
    (``port``, settlement entries, ``bonus``, ``offender``) as much as on a line.
    """
    if isinstance(want, dict) and isinstance(got, dict):
        return {k: _known(got[k], v) if k in got else got.get(k, "<missing>") for k, v in want.items()}
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        return [_known(g, w) for g, w in zip(got, want)]
    return got


def _norm(key: str, value: Any) -> Any:
    """Normalise fields whose order other writers may choose freely."""
    if key == "hands" and isinstance(value, list):
        return [sorted(map(tuple, h)) if isinstance(h, list) else h for h in value]
    if key == "settlement" and isinstance(value, list):
        return sorted(value, key=lambda s: s.get("seat", 0) if isinstance(s, dict) else 0)
    return value


class _Replay:
    def __init__(self) -> None:
        self.found: list[Discrepancy] = []
        self.game: GameState | None = None
        self.pending: deque[Event] = deque()
        #: False when match_start states no round_cap: the cap is then 200 unless the
        #: record itself ends by round_cap after another number of rounds.
        self.cap_stated = True
        #: Line of the first round_start past the default cap, when no cap is stated.
        self.past_default_cap: int | None = None
        #: Scores after the last play: what a forfeit during the forced moves after it sees.
        self.play_scores: tuple[int, ...] = ()
        #: Set by a forfeit recorded among the forced moves the engine had already made.
        self.forfeited_mid_turn = False

    @property
    def over(self) -> bool:
        return self.forfeited_mid_turn or (self.game is not None and self.game.over)

    @property
    def end_reason(self) -> MatchEndReason | None:
        if self.forfeited_mid_turn:
            return MatchEndReason.FORFEIT
        return self.game.end_reason if self.game is not None else None

    def report(self, line: int, message: str) -> None:
        self.found.append(Discrepancy(line, message))

    def stop(self, line: int, message: str) -> NoReturn:
        self.report(line, message)
        raise _Stop

    # ------------------------------------------------------------ header

    def header(self, rec: RecordLine) -> None:
        d = rec.data
        if d.get("event") != "match_start":
            self.stop(rec.lineno, f"the first line must be match_start, found {d.get('event')!r}")
        seats = d.get("seats")
        if not isinstance(seats, list) or not seats:
            self.stop(rec.lineno, "match_start has no seats list")
        self.cap_stated = "round_cap" in d
        try:
            rs = make_ruleset(
                d.get("ruleset", ""), players=len(seats), target=int(d.get("target", 250)),
                round_cap=int(d["round_cap"]) if self.cap_stated else UNSTATED_CAP,
            )
        except (ValueError, TypeError) as e:
            self.stop(rec.lineno, str(e))
        for i, s in enumerate(seats):
            if not isinstance(s, dict) or s.get("seat") != i:
                self.report(rec.lineno, f"seats[{i}] should describe seat {i}, found {s!r}")
            elif s.get("team") != rs.team_of(i):
                self.report(rec.lineno, f"seat {i} is in team {rs.team_of(i)} in {rs.name}, not {s.get('team')!r}")
        rng = None
        if d.get("deal") == DEAL_PROCEDURE:
            if not isinstance(d.get("seed"), int):
                self.stop(rec.lineno, f"seed {d.get('seed')!r} is not an integer")
            rng = random.Random(d["seed"])
        self.game = GameState(rs, rng=rng, auto_deal=False)

    # ------------------------------------------------------------ lines

    def line(self, rec: RecordLine) -> None:
        g = self.game
        assert g is not None
        d, n, kind = rec.data, rec.lineno, rec.data.get("event")
        if self.pending:
            if kind == "match_end" and d.get("reason") == "forfeit" and isinstance(self.pending[0], (Pass, Draw)):
                self.forfeit_mid_turn(rec)
            else:
                self.compare(self.pending.popleft(), rec)
            return
        if self.over:
            reason = self.end_reason
            self.stop(n, f"{kind} after the match ended ({reason.value if reason else '?'}); nothing may follow")
        if kind == "round_start":
            self.round_start(rec)
        elif kind == "play":
            self.play(rec)
        elif kind in ("pass", "draw"):
            if g.phase is not Phase.TURN:
                self.stop(n, f"{kind} before the round started")
            seat = d.get("seat")
            moves = g.legal_moves()
            if seat != g.turn:
                self.stop(n, f"wrong turn order: seat {seat} acts, but it is seat {g.turn}'s turn")
            self.stop(n, f"seat {seat} {'passed' if kind == 'pass' else 'drew'} while holding a playable tile "
                         f"({', '.join(str(m) for m in moves[:4])})")
        elif kind == "match_end" and d.get("reason") == "forfeit":
            self.forfeit(rec)
        elif kind == "match_end" and d.get("reason") == "round_cap" and g.phase is Phase.ROUND_OVER:
            if self.cap_stated:
                self.stop(n, f"match_end by round_cap after round {g.round}, but match_start states "
                             f"round_cap {g.ruleset.round_cap}")
            self.compare(g.adjudicate()[0], rec)  # no cap stated: the record shows it was this round
        elif kind in ("round_end", "match_end") and g.phase is not Phase.TURN:
            self.stop(n, f"{kind} between rounds: round {g.round} has ended and no round_start followed")
        elif kind in ("round_end", "match_end"):
            self.stop(n, f"{kind} while the round is still in play: seat {g.turn} has a move to make")
        else:
            self.report(n, f"unknown event {kind!r}")

    def round_start(self, rec: RecordLine) -> None:
        g = self.game
        assert g is not None
        d, n = rec.data, rec.lineno
        if g.phase not in (Phase.NOT_STARTED, Phase.ROUND_OVER):
            self.stop(n, f"round_start while round {g.round} is still in play")
        if not self.cap_stated and g.round == DEFAULT_ROUND_CAP and self.past_default_cap is None:
            self.past_default_cap = n
        if d.get("round") != g.round + 1:
            self.report(n, f"round is {d.get('round')!r}, expected {g.round + 1}")
        try:
            hands = _hands(d.get("hands"), "hands")
            boneyard = [_tile(t, "boneyard tile") for t in d.get("boneyard", [])]
            leader_by = LeaderBy(str(d.get("leader_by")))
        except (RecordError, ValueError) as e:
            self.stop(n, str(e))
        leader = d.get("leader")
        want, want_by = g.next_leader()
        if leader_by is not want_by:
            self.report(n, f"leader_by is {leader_by.value!r}, but this round is led by {want_by.value}")
        if want is not None and leader != want:
            why = "the previous round's dominoer" if want_by is LeaderBy.DOMINO else "the next seat clockwise"
            self.report(n, f"leader is seat {leader}, but {why} is seat {want}")
        if g.rng is not None:
            dealt, bone, lot = draw_deal(g.rng, g.ruleset, want is None)
            if [sorted(h) for h in hands] != dealt or boneyard != bone:
                self.report(n, "the deal differs from the one the match's seed gives (tampered deal)")
            if lot is not None and leader != lot:
                self.report(n, f"the lot chose seat {lot}, but the record says seat {leader} leads")
        if not isinstance(leader, int):
            self.stop(n, f"leader {leader!r} is not a seat")
        try:
            g.start_round(hands, boneyard, leader, leader_by)
        except RulesError as e:
            self.stop(n, str(e))

    def play(self, rec: RecordLine) -> None:
        g = self.game
        assert g is not None
        d, n = rec.data, rec.lineno
        if g.phase is not Phase.TURN:
            self.stop(n, "play before the round started")
        seat = d.get("seat")
        if seat != g.turn:
            self.stop(n, f"wrong turn order: seat {seat} plays, but it is seat {g.turn}'s turn")
        try:
            move = tuple.__new__(Move, (_tile(d.get("tile"), "tile"), _port(d.get("port"))))
            events = g.play(move)
        except (RecordError, IllegalMoveError) as e:
            self.stop(n, str(e))
        self.compare(events[0], rec)
        self.play_scores = events[0].scores if isinstance(events[0], Play) else ()
        if len(events) > 1:
            self.pending.extend(events[1:])

    def forfeit(self, rec: RecordLine) -> None:
        g = self.game
        assert g is not None
        off = rec.data.get("offender")
        if not isinstance(off, dict):
            self.stop(rec.lineno, "a forfeit needs an offender {\"seat\", \"cause\", \"detail\"}")
        try:
            events = g.forfeit(off.get("seat", -1), FaultCause(str(off.get("cause"))), str(off.get("detail", "")))
        except (ValueError, RulesError) as e:
            self.stop(rec.lineno, f"offender: {e}")
        self.compare(events[0], rec)

    def forfeit_mid_turn(self, rec: RecordLine) -> None:
        """A forfeit where the engine had forced passes or draws still to come.

        A referee may record a fault (a disconnect, say) at any moment, also while a seat
        is due a pass or a draw. Nothing has scored since the last play, so the forfeit
        is judged on that play's scores, and the forced moves never happened.
        """
        g = self.game
        assert g is not None
        off = rec.data.get("offender")
        if not isinstance(off, dict):
            self.stop(rec.lineno, "a forfeit needs an offender {\"seat\", \"cause\", \"detail\"}")
        seat = off.get("seat")
        if not (isinstance(seat, int) and 0 <= seat < g.ruleset.players):
            self.stop(rec.lineno, f"offender: seat {seat!r} is not in this match")
        try:
            offender = Offender(seat, FaultCause(str(off.get("cause"))), str(off.get("detail", "")))
        except ValueError as e:
            self.stop(rec.lineno, f"offender: {e}")
        scores = self.play_scores
        winner = forfeit_winner(g.ruleset, scores, seat)
        self.pending.clear()
        self.forfeited_mid_turn = True
        self.compare(MatchEnd(MatchEndReason.FORFEIT, winner, scores, g.round, offender), rec)

    # ------------------------------------------------------------ comparing

    def compare(self, expected: Event, rec: RecordLine) -> None:
        if type(expected) is Play:
            if _same_play(expected, rec.data):
                return
        elif _same_small(expected, rec.data):
            return
        g = self.game
        assert g is not None
        want = expected.to_json()
        d, n = rec.data, rec.lineno
        if d.get("event") != want["event"]:
            self.stop(n, self.diverged(expected, d))
        for key, value in want.items():
            got = d.get(key, "<missing>")
            want_value = _norm(key, value)
            if _known(_norm(key, got), want_value) == want_value:
                continue
            self.report(n, self.explain(expected, key, got, value))
        if isinstance(expected, MatchEnd) and d.get("offender") is not None and expected.offender is None:
            self.report(n, "offender given, but the match did not end by forfeit")

    def diverged(self, expected: Event, got: dict[str, Any]) -> str:
        kind = got.get("event")
        if isinstance(expected, MatchEnd) and expected.reason.value == "target":
            return (f"{kind} after the target was reached: team {expected.winner} has "
                    f"{expected.scores[expected.winner or 0]}, so the match ended; expected match_end")
        if isinstance(expected, Pass) and kind == "play":
            return f"seat {expected.seat} holds no tile that fits an open port; expected a pass"
        if isinstance(expected, Play):
            return f"expected a play by seat {expected.seat}, found {kind}"
        if isinstance(expected, RoundEnd):
            return f"{kind}, but the round is over ({expected.reason.value}); expected round_end"
        return f"expected {expected.to_json()['event']}, found {kind}"

    @staticmethod
    def explain(expected: Event, key: str, got: Any, want: Any) -> str:
        kind = expected.to_json()["event"]
        if isinstance(expected, Play) and key == "ends":
            return f"ends is {got}, but the layout's scoring ends total after {fmt(expected.tile)} is {want}"
        if isinstance(expected, Play) and key == "award":
            return f"award is {got}, but ends {expected.ends} awards {want}"
        if isinstance(expected, RoundEnd) and key == "settlement":
            return (f"settlement {got} differs from {want}: each hand's pips are rounded to 5 "
                    "separately, never combined with the partner's")
        return f"{kind}: {key} is {got!r}, expected {want!r}"


def verify_lines(lines: Iterable[str]) -> list[Discrepancy]:
    """Every discrepancy between a record's lines and the engine's replay of them."""
    r = _Replay()
    try:
        records = parse_lines(lines)
        first = True
        for rec in records:
            if first:
                r.header(rec)
                first = False
            else:
                r.line(rec)
            if len(r.found) >= MAX_PER_FILE:
                r.report(rec.lineno, f"more than {MAX_PER_FILE} discrepancies; stopped checking")
                raise _Stop
        if first:
            r.stop(0, "empty record")
        g = r.game
        assert g is not None
        if r.pending:
            r.stop(0, f"the record ends early: expected {r.pending[0].to_json()['event']} next")
        if not r.over:
            r.stop(0, "the record ends before the match ended (no match_end)")
        if r.past_default_cap is not None and r.end_reason is not MatchEndReason.ROUND_CAP:
            r.report(r.past_default_cap, f"round {DEFAULT_ROUND_CAP + 1} started, but match_start states no "
                                         f"round_cap, so the cap is the default {DEFAULT_ROUND_CAP}")
    except RecordError as e:
        r.report(0, str(e))
    except _Stop:
        pass
    return r.found


def verify_file(path: Path) -> list[Discrepancy]:
    with path.open(encoding="utf-8") as f:
        return verify_lines(f)


picklable(Discrepancy)  # compiled frozen dataclasses: see picklable.py
