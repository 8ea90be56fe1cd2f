"""What one seat may know: the state object a bot decides from.

A :class:`SeatView` is fed only public facts and the seat's own tiles, through the
``on_*`` methods. The in-process runner feeds it engine events (:meth:`observe`,
which drops what the seat may not see); the gRPC client feeds it protocol messages.
Either way a bot sees exactly the same object.

Why a view is split in two: the public facts (layout, history, hand sizes, scores,
voids) are the same for every seat, so they live in a :class:`PublicTable` that the
in-process runner keeps once per match and shares between its seats
(:func:`observe_all`); each :class:`SeatView` adds only what is private to its seat
(the hand, the tiles it drew). Feeding four seats then costs one layout update per
placement instead of four. Treat a view as read-only: a bot that changes the layout
or the history it was given changes them for every seat sharing the table.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Sequence
from typing import NamedTuple, cast

from .rules import (
    ALL_TILES, Draw, Event, GameState, LeaderBy, Layout, MatchEnd, Move, Pass, Phase, Play, Port,
    RoundEnd, RoundStart, Ruleset, Tile,
)

__all__ = ["PublicDraw", "PublicEvent", "PublicPass", "PublicPlay", "PublicTable", "SeatView", "observe_all"]


class PublicPlay(NamedTuple):
    """A placement as every seat saw it (a named tuple: one is made per placement).

    Attributes:
        seat: Who placed it.
        tile: The tile placed.
        port: Where it attached (``None`` for the round's opening tile).
        ends: The scoring-ends total after it.
        award: The points it scored (``ends`` when a positive multiple of 5, else 0).
    """


    seat: int
    tile: Tile
    port: Port | None
    ends: int
    award: int


class PublicPass(NamedTuple):
    """A pass: ``seat`` had no legal move (and, in fives, nothing left to draw)."""

    seat: int


class PublicDraw(NamedTuple):
    """A fives draw; ``tile`` is None unless this seat drew it."""

    seat: int
    tile: Tile | None


PublicEvent = PublicPlay | PublicPass | PublicDraw

_new = tuple.__new__  # a NamedTuple's own __new__ is Python code; these are made on the hot path


class PublicTable:
    """The public facts of one match at this moment: what every seat knows alike.

    One table may serve every seat of a match fed from one source: the in-process
    runner's seats, and the seats one gRPC client holds in a match (:mod:`.sharedtable`).
    """

    __slots__ = ("players", "round", "leader", "leader_by", "hand_sizes", "boneyard_size", "layout", "scores",
                 "to_move", "history", "voids", "revealed")

    def __init__(self, ruleset: Ruleset) -> None:
        n = ruleset.players
        self.players = n
        self.round = 0
        self.leader = 0
        self.leader_by = LeaderBy.LOT
        self.hand_sizes: list[int] = [0] * n
        self.boneyard_size = 0
        self.layout = Layout()
        self.scores: list[int] = [0] * ruleset.teams
        #: The seat whose turn it is (the referee only asks this seat when it is its turn).
        self.to_move = 0
        #: Public events of the current round, in order (a draw's tile withheld unless
        #: the table belongs to the drawing seat alone).
        self.history: list[PublicEvent] = []
        #: Per seat, pip values the seat is known not to hold (it passed or drew on them).
        self.voids: list[set[int]] = [set() for _ in range(n)]
        #: Hands revealed at the end of each finished round.
        self.revealed: list[list[list[Tile]]] = []

    def on_round_start(self, round: int, leader: int, leader_by: LeaderBy, hand_sizes: Sequence[int],
                       boneyard_size: int, scores: Sequence[int] | None = None) -> None:
        self.round = round
        self.leader = self.to_move = leader
        self.leader_by = leader_by
        self.hand_sizes = list(hand_sizes)
        self.boneyard_size = boneyard_size
        self.layout = Layout()
        self.history = []
        self.voids = [set() for _ in range(self.players)]
        if scores is not None:
            self.scores = list(scores)

    def on_play(self, seat: int, tile: Tile, port: Port | None, ends: int, award: int, scores: Sequence[int]) -> None:
        self._on_play(seat, tile, port, ends, award, scores)

    def _on_play(self, seat: int, tile: object, port: Port | None, ends: int, award: int,
                 scores: Sequence[int]) -> None:
        """:meth:`on_play` with the tile as ``object``: compiled, it is stored without re-boxing (rules/bits.py)."""
        self.layout.place(_new(Move, (tile, port)))  # the numbers inside: Layout.place converts
        self.hand_sizes[seat] -= 1
        self.scores = list(scores)
        self.history.append(_new(PublicPlay, (seat, tile, port, ends, award)))
        self.to_move = (seat + 1) % self.players

    def _note_void(self, seat: int) -> None:
        """``seat`` had nothing to play on the open values; record them as its voids.

        A fives tile drawn just before stays in the hand and may hold values the seat
        was void in earlier, so after a second draw (or a pass after a draw) only the
        values open now are still certain.
        """
        values = self.layout.open_values()
        history = self.history
        last = history[-1] if history else None
        if type(last) is PublicDraw and last.seat == seat:
            self.voids[seat] = values
        else:
            self.voids[seat].update(values)

    def on_pass(self, seat: int) -> None:
        self._note_void(seat)
        self.history.append(_new(PublicPass, (seat,)))
        self.to_move = (seat + 1) % self.players

    def on_draw(self, seat: int, tile: Tile | None) -> None:
        """A draw by ``seat``; ``tile`` only when this table is the drawing seat's own."""
        self._note_void(seat)
        self.boneyard_size -= 1
        self.hand_sizes[seat] += 1
        self.history.append(_new(PublicDraw, (seat, tile)))
        self.to_move = seat

    def on_round_end(self, hands: list[list[Tile]], scores: Sequence[int]) -> None:
        self.revealed.append([list(h) for h in hands])
        self.scores = list(scores)


class SeatView:
    """Everything the seat ``seat`` may know at this moment of the match.

    The SDK keeps one view per seat up to date and hands it to ``choose_move``. It
    holds only public facts and the seat's own tiles: no other hand, no boneyard
    tile it has not drawn. Treat it as read-only; copy what you want to keep.

    Attributes:
        ruleset: The game being played (`seven-rocks` or `fives`, players, target).
        seat: This seat, `0 .. players-1` clockwise.
        match_id: The match's name, as in its record.
        round: The current round, from 1.
        leader: The seat that opened this round.
        leader_by: Why it leads: a lot, the previous domino, or fives rotation.
        hand: This seat's tiles, sorted.
        hand_sizes: How many tiles each seat holds, indexed by seat.
        boneyard_size: Tiles left to draw (fives; always 0 in Seven Rocks).
        layout: The tiles on the table with their open ports and the scoring-ends
            total ([`Layout`][sevenrocks.sdk.rules.layout.Layout]).
        scores: Every team's score, indexed by team (Seven Rocks: team = seat % 2;
            fives: team = seat).
        to_move: The seat whose turn it is (the referee asks only the seat to move).
        history: This round's public events in order: `PublicPlay`, `PublicPass`
            and `PublicDraw` (a draw shows its tile only to the drawer).
        voids: Per seat, the pip values it is known not to hold, because it
            passed or drew while they were open.
        time_left_ms: Milliseconds left for this decision, when the referee sets a
            limit (`None` in process).
        bank_left_ms: Milliseconds left in the match's time bank, when the event has one.
        revealed: The hands every seat still held at the end of each finished round.
        seat_names: Player names by seat, when the referee sends them.

    The public attributes (``round``, ``leader``, ``leader_by``, ``hand_sizes``,
    ``boneyard_size``, ``layout``, ``scores``, ``to_move``, ``history``, ``voids``,
    ``revealed``) read through to the :class:`PublicTable`; ``hand`` and the rest are
    the seat's own.
    """

    __slots__ = ("ruleset", "seat", "match_id", "table", "hand", "time_left_ms", "bank_left_ms", "seat_names",
                 "_drawn", "_merged")

    def __init__(self, ruleset: Ruleset, seat: int, match_id: str = "", table: PublicTable | None = None) -> None:
        self.ruleset = ruleset
        self.seat = seat
        self.match_id = match_id
        #: The public facts; shared with the match's other seats when one runner feeds them all.
        self.table = table if table is not None else PublicTable(ruleset)
        self.hand: list[Tile] = []
        #: Milliseconds left for this decision, when a referee sets a limit.
        self.time_left_ms: int | None = None
        #: Milliseconds left in the match bank, when the event has one.
        self.bank_left_ms: int | None = None
        #: Player names by seat, when the referee sends them.
        self.seat_names: list[str] = []
        #: This round's own draws on a shared table: (history index, the draw with its tile).
        self._drawn: list[tuple[int, PublicDraw]] = []
        self._merged: list[PublicEvent] | None = None

    # ------------------------------------------------------------------ public facts (the table's)

    @property
    def round(self) -> int:
        """The round in play (1 is the first)."""
        return self.table.round

    @round.setter
    def round(self, value: int) -> None:
        self.table.round = value

    @property
    def leader(self) -> int:
        """The seat that led this round."""
        return self.table.leader

    @leader.setter
    def leader(self, value: int) -> None:
        self.table.leader = value

    @property
    def leader_by(self) -> LeaderBy:
        """Why that seat led: lot, domino or rotation."""
        return self.table.leader_by

    @leader_by.setter
    def leader_by(self, value: LeaderBy) -> None:
        self.table.leader_by = value

    @property
    def hand_sizes(self) -> list[int]:
        """Tiles held, per seat."""
        return self.table.hand_sizes

    @hand_sizes.setter
    def hand_sizes(self, value: list[int]) -> None:
        self.table.hand_sizes = value

    @property
    def boneyard_size(self) -> int:
        """Tiles left to draw (fives)."""
        return self.table.boneyard_size

    @boneyard_size.setter
    def boneyard_size(self, value: int) -> None:
        self.table.boneyard_size = value

    @property
    def layout(self) -> Layout:
        """The tiles on the table (the one rules engine's Layout)."""
        return self.table.layout

    @layout.setter
    def layout(self, value: Layout) -> None:
        self.table.layout = value

    @property
    def scores(self) -> list[int]:
        """Score per team (per seat in fives)."""
        return self.table.scores

    @scores.setter
    def scores(self, value: list[int]) -> None:
        self.table.scores = value

    @property
    def to_move(self) -> int:
        """The seat whose turn it is (the referee only asks this seat when it is its turn)."""
        return self.table.to_move

    @to_move.setter
    def to_move(self, value: int) -> None:
        self.table.to_move = value

    @property
    def voids(self) -> list[set[int]]:
        """Per seat, pip values it is known not to hold (it passed or drew on them)."""
        return self.table.voids

    @voids.setter
    def voids(self, value: list[set[int]]) -> None:
        self.table.voids = value

    @property
    def revealed(self) -> list[list[list[Tile]]]:
        """Hands revealed at the end of each finished round, for learning bots."""
        return self.table.revealed

    @revealed.setter
    def revealed(self, value: list[list[list[Tile]]]) -> None:
        self.table.revealed = value

    @property
    def history(self) -> list[PublicEvent]:
        """Public events of the current round, in order (this seat's own draws with their tile)."""
        if not self._drawn:
            return self.table.history
        shared = self.table.history
        merged = self._merged
        if merged is None or len(merged) != len(shared):
            merged = list(shared)
            for i, ev in self._drawn:
                merged[i] = ev
            self._merged = merged
        return merged

    @history.setter
    def history(self, value: list[PublicEvent]) -> None:
        self.table.history = value
        self._drawn = []
        self._merged = None

    def __repr__(self) -> str:
        return (f"SeatView(match_id={self.match_id!r}, seat={self.seat}, round={self.round}, hand={self.hand!r}, "
                f"scores={self.scores!r}, to_move={self.to_move})")

    # ------------------------------------------------------------------ facts

    @property
    def team(self) -> int:
        """This seat's team: the index of its score in :attr:`scores`."""
        return self.ruleset.team_of(self.seat)

    @property
    def partner(self) -> int | None:
        """The partner's seat in Seven Rocks (opposite: ``seat + 2``); ``None`` in fives."""
        return (self.seat + 2) % 4 if self.ruleset.partnerships else None

    def legal_moves(self) -> list[Move]:
        """The moves this seat may make now (from the one rules engine)."""
        return self.table.layout.moves_for(self.hand)

    def unseen(self) -> list[Tile]:
        """Tiles this seat has not seen: in other hands or the boneyard."""
        seen = set(self.hand)
        seen.update(self.table.layout.tiles)
        return [t for t in ALL_TILES if t not in seen]

    def state_with(self, hands: list[list[Tile]], boneyard: list[Tile] | None = None) -> GameState:
        """A full engine state of this position with the hidden tiles filled in.

        For search: fill the other seats' hands (and the boneyard) with a guess,
        then :meth:`GameState.play` moves on the copy. The state does not deal
        further rounds.
        """
        t = self.table
        g = GameState(self.ruleset, auto_deal=False)
        g.round = t.round
        g.scores = list(t.scores)
        g.hands = hands
        g.boneyard = boneyard or []
        g.layout = t.layout.copy()
        g.turn = t.to_move
        g.leader = t.leader
        g.leader_by = t.leader_by
        passes = 0
        for ev in reversed(t.history):
            if type(ev) is PublicPass:
                passes += 1
            elif type(ev) is PublicPlay:
                break
        g.passes = passes
        g.phase = Phase.TURN
        return g

    # ------------------------------------------------------------------ updates (one seat, its own table)

    def on_round_start(
        self, round: int, leader: int, leader_by: LeaderBy, hand: list[Tile],
        hand_sizes: list[int], boneyard_size: int, scores: list[int] | None = None,
    ) -> None:
        self.table.on_round_start(round, leader, leader_by, hand_sizes, boneyard_size, scores)
        self._own_round(hand)

    def on_play(self, seat: int, tile: Tile, port: Port | None, ends: int, award: int, scores: Sequence[int]) -> None:
        self.table.on_play(seat, tile, port, ends, award, scores)
        if seat == self.seat and tile in self.hand:
            self.hand.remove(tile)

    def on_pass(self, seat: int) -> None:
        self.table.on_pass(seat)

    def on_draw(self, seat: int, tile: Tile | None) -> None:
        mine = seat == self.seat and tile is not None
        self.table.on_draw(seat, tile if mine else None)
        if mine:
            assert tile is not None
            insort(self.hand, tile)

    def on_round_end(self, hands: list[list[Tile]], scores: list[int]) -> None:
        self.table.on_round_end(hands, scores)

    def observe(self, event: Event) -> None:
        """Feed an engine event, keeping only what this seat may see."""
        alone: list[SeatView | None] = [None] * self.ruleset.players
        alone[self.seat] = self
        observe_all(alone, self.table, event)

    # ------------------------------------------------------------------ the seat's own part

    def _own_round(self, hand: list[Tile]) -> None:
        self.hand = sorted(hand)
        self._drawn = []
        self._merged = None

    def _own_draw(self, tile: Tile) -> None:
        """This seat drew ``tile``, just appended (without it) to the shared history."""
        insort(self.hand, tile)
        i = len(self.table.history) - 1
        self._drawn.append((i, _new(PublicDraw, (self.seat, tile))))
        self._merged = None


def observe_all(views: Sequence[SeatView | None], table: PublicTable, event: Event) -> None:
    """Feed one engine event to the seats of ``views`` (indexed by seat; None: a seat fed
    elsewhere), which all share ``table``: the public part once, each seat's private
    part (its hand, its drawn tile) to that seat only."""
    if isinstance(event, Play):
        seat = event.seat
        tile = cast("tuple[object, ...]", event)[2]  # the tile as an object, not re-boxed (rules/bits.py)
        table._on_play(seat, tile, event.port, event.ends, event.award, event.scores)
        v = views[seat]
        if v is not None:
            try:
                cast("list[object]", v.hand).remove(tile)
            except ValueError:  # not this view's tile to hold
                pass
    elif isinstance(event, Pass):
        table.on_pass(event.seat)
    elif isinstance(event, Draw):
        seat = event.seat
        table.on_draw(seat, None)
        v = views[seat]
        if v is not None:
            v._own_draw(event.tile)
    elif isinstance(event, RoundStart):
        table.on_round_start(event.round, event.leader, event.leader_by, [len(h) for h in event.hands],
                             len(event.boneyard))
        for v in views:
            if v is not None:
                v._own_round(list(event.hands[v.seat]))
    elif isinstance(event, RoundEnd):
        table.on_round_end([list(h) for h in event.hands], event.scores)
    elif isinstance(event, MatchEnd):
        table.scores = list(event.scores)
