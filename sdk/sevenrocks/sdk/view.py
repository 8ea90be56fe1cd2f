"""What one seat may know: the state object a bot decides from.

A :class:`SeatView` is fed only public facts and the seat's own tiles, through the
``on_*`` methods. The in-process runner feeds it engine events (:meth:`observe`,
which drops what the seat may not see); the gRPC client feeds it protocol messages.
Either way a bot sees exactly the same object.
"""

from __future__ import annotations

from bisect import insort
from dataclasses import dataclass, field

from .rules import (
    ALL_TILES, Draw, Event, GameState, LeaderBy, Layout, MatchEnd, Move, Pass, Phase, Play, Port,
    RoundEnd, RoundStart, Ruleset, Tile,
)


@dataclass(frozen=True, slots=True)
class PublicPlay:
    """A placement as every seat saw it.

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


@dataclass(frozen=True, slots=True)
class PublicPass:
    """A pass: ``seat`` had no legal move (and, in fives, nothing left to draw)."""

    seat: int


@dataclass(frozen=True, slots=True)
class PublicDraw:
    """A fives draw; ``tile`` is None unless this seat drew it."""

    seat: int
    tile: Tile | None


PublicEvent = PublicPlay | PublicPass | PublicDraw


@dataclass(slots=True)
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
    """

    ruleset: Ruleset
    seat: int
    match_id: str = ""
    round: int = 0
    leader: int = 0
    leader_by: LeaderBy = LeaderBy.LOT
    hand: list[Tile] = field(default_factory=list)
    hand_sizes: list[int] = field(default_factory=list)
    boneyard_size: int = 0
    layout: Layout = field(default_factory=Layout)
    scores: list[int] = field(default_factory=list)
    #: The seat whose turn it is (the referee only asks this seat when it is its turn).
    to_move: int = 0
    #: Public events of the current round, in order.
    history: list[PublicEvent] = field(default_factory=list)
    #: Per seat, pip values the seat is known not to hold (it passed or drew on them).
    voids: list[set[int]] = field(default_factory=list)
    #: Milliseconds left for this decision, when a referee sets a limit.
    time_left_ms: int | None = None
    #: Milliseconds left in the match bank, when the event has one.
    bank_left_ms: int | None = None
    #: Hands revealed at the end of each finished round, for learning bots.
    revealed: list[list[list[Tile]]] = field(default_factory=list)
    #: Player names by seat, when the referee sends them.
    seat_names: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = self.ruleset.players
        if not self.scores:
            self.scores = [0] * self.ruleset.teams
        if not self.hand_sizes:
            self.hand_sizes = [0] * n
        if not self.voids:
            self.voids = [set() for _ in range(n)]

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
        return self.layout.moves_for(self.hand)

    def unseen(self) -> list[Tile]:
        """Tiles this seat has not seen: in other hands or the boneyard."""
        seen = set(self.hand)
        seen.update(self.layout.tiles)
        return [t for t in ALL_TILES if t not in seen]

    def state_with(self, hands: list[list[Tile]], boneyard: list[Tile] | None = None) -> GameState:
        """A full engine state of this position with the hidden tiles filled in.

        For search: fill the other seats' hands (and the boneyard) with a guess,
        then :meth:`GameState.play` moves on the copy. The state does not deal
        further rounds.
        """
        g = GameState(self.ruleset, auto_deal=False)
        g.round = self.round
        g.scores = list(self.scores)
        g.hands = [sorted(h) for h in hands]
        g.boneyard = list(boneyard or [])
        g.layout = self.layout.copy()
        g.turn = self.to_move
        g.leader = self.leader
        g.leader_by = self.leader_by
        passes = 0
        for ev in reversed(self.history):
            if isinstance(ev, PublicPass):
                passes += 1
            elif isinstance(ev, PublicPlay):
                break
        g.passes = passes
        g.phase = Phase.TURN
        return g

    # ------------------------------------------------------------------ updates

    def on_round_start(
        self, round: int, leader: int, leader_by: LeaderBy, hand: list[Tile],
        hand_sizes: list[int], boneyard_size: int, scores: list[int] | None = None,
    ) -> None:
        self.round = round
        self.leader = self.to_move = leader
        self.leader_by = leader_by
        self.hand = sorted(hand)
        self.hand_sizes = list(hand_sizes)
        self.boneyard_size = boneyard_size
        self.layout = Layout()
        self.history = []
        self.voids = [set() for _ in range(self.ruleset.players)]
        if scores is not None:
            self.scores = list(scores)

    def on_play(self, seat: int, tile: Tile, port: Port | None, ends: int, award: int, scores: list[int]) -> None:
        self.layout.place(Move(tile, port))
        if seat == self.seat and tile in self.hand:
            self.hand.remove(tile)
        self.hand_sizes[seat] -= 1
        self.scores = list(scores)
        self.history.append(PublicPlay(seat, tile, port, ends, award))
        self.to_move = (seat + 1) % self.ruleset.players

    def _note_void(self, seat: int) -> None:
        """``seat`` had nothing to play on the open values; record them as its voids.

        A fives tile drawn just before stays in the hand and may hold values the seat
        was void in earlier, so after a second draw (or a pass after a draw) only the
        values open now are still certain.
        """
        values = set(self.layout.open_ports().values())
        last = self.history[-1] if self.history else None
        if isinstance(last, PublicDraw) and last.seat == seat:
            self.voids[seat] = values
        else:
            self.voids[seat].update(values)

    def on_pass(self, seat: int) -> None:
        self._note_void(seat)
        self.history.append(PublicPass(seat))
        self.to_move = (seat + 1) % self.ruleset.players

    def on_draw(self, seat: int, tile: Tile | None) -> None:
        self._note_void(seat)
        self.boneyard_size -= 1
        self.hand_sizes[seat] += 1
        if seat == self.seat and tile is not None:
            insort(self.hand, tile)
        self.history.append(PublicDraw(seat, tile if seat == self.seat else None))
        self.to_move = seat

    def on_round_end(self, hands: list[list[Tile]], scores: list[int]) -> None:
        self.revealed.append([list(h) for h in hands])
        self.scores = list(scores)

    def observe(self, event: Event) -> None:
        """Feed an engine event, keeping only what this seat may see."""
        if isinstance(event, Play):
            self.on_play(event.seat, event.tile, event.port, event.ends, event.award, list(event.scores))
        elif isinstance(event, Pass):
            self.on_pass(event.seat)
        elif isinstance(event, Draw):
            self.on_draw(event.seat, event.tile if event.seat == self.seat else None)
        elif isinstance(event, RoundStart):
            self.on_round_start(
                event.round, event.leader, event.leader_by, list(event.hands[self.seat]),
                [len(h) for h in event.hands], len(event.boneyard),
            )
        elif isinstance(event, RoundEnd):
            self.on_round_end([list(h) for h in event.hands], list(event.scores))
        elif isinstance(event, MatchEnd):
            self.scores = list(event.scores)
