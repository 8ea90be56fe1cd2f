"""The match state machine for both rulesets.

A :class:`GameState` is the omniscient state of one match (every hand, the boneyard,
the layout, the scores). The only decisions are placements: passes and fives draws
are forced, so the engine performs them itself, and :meth:`GameState.play` returns
every event up to the next decision. One random source per match deals the tiles
and draws the lots, so a seed replays a match exactly.
"""

from __future__ import annotations

import random
from enum import StrEnum
from typing import cast

from .errors import IllegalMoveError, RulesError
from .events import (
    Bonus, Draw, Event, FaultCause, LeaderBy, MatchEnd, MatchEndReason, Offender, Pass, Play,
    RoundEnd, RoundEndReason, RoundStart, Settlement,
)
from .bits import N_TILES, NO_PORT, TILE_BIT, TILE_INDEX, TILE_OBJ, mask_pips, mask_tiles, tile_indices, tiles_mask
from .layout import MOVE_OF, PORT_OF, Layout, Move, code_of
from .randomness import shuffle
from .rulesets import Ruleset
from .tiles import ALL_TILES, Tile, fmt, round5

#: Names the dealing procedure below; records carry it so that ``verify`` knows it can
#: re-derive every deal and lot from the seed. Change it if the procedure changes.
DEAL_PROCEDURE = "sevenrocks-mt19937/1"


#: Settlements made so far, by seat and pips: a frozen value is shared, not rebuilt
#: (a compiled frozen dataclass is built through Python-level ``__init__`` code).
#: Bounded: 4 seats times the pips a hand can hold.
_SETTLEMENTS: dict[tuple[int, int], Settlement] = {}


def _settlement(seat: int, pips: int) -> Settlement:
    """Seven Rocks' debit of ``seat`` holding ``pips`` at a round's end (a shared frozen value)."""
    key = (seat, pips)
    s = _SETTLEMENTS.get(key)
    if s is None:
        s = _SETTLEMENTS[key] = Settlement(seat, pips, -round5(pips))
    return s


class Phase(StrEnum):
    """Where a match is: a seat must move only in ``TURN``."""

    NOT_STARTED = "not_started"
    TURN = "turn"
    ROUND_OVER = "round_over"
    MATCH_OVER = "match_over"


def draw_deal(
    rng: random.Random, ruleset: Ruleset, needs_lot: bool
) -> tuple[list[list[Tile]], list[Tile], int | None]:
    """Shuffle and deal one round from ``rng``; then draw the lot if one is needed.

    Returns the sorted hands, the boneyard in drawing order, and the lot's seat.
    """
    masks, bones, lot = deal_bits(rng, ruleset, needs_lot)
    tiles = TILE_OBJ
    return (
        [mask_tiles(m) for m in masks], cast("list[Tile]", [tiles[i] for i in bones]), None if lot < 0 else lot,
    )


def deal_bits(rng: random.Random, ruleset: Ruleset, needs_lot: bool) -> tuple[list[int], list[int], int]:
    """:func:`draw_deal` as numbers (:mod:`.bits`): hand masks, boneyard tile indices, the lot (-1: none).

    The very same draws: shuffling the 28 tile indices permutes them as shuffling the
    28 tiles in canonical order does (the shuffle looks only at the length), and a
    mask needs no sorting.
    """
    order = list(range(N_TILES))
    shuffle(rng, order)
    n, size = ruleset.players, ruleset.hand_size
    bit = TILE_BIT
    masks: list[int] = []
    for s in range(n):
        m = 0
        for i in order[s * size:(s + 1) * size]:
            m |= bit[i]
        masks.append(m)
    lot = rng.randrange(n) if needs_lot else -1
    return masks, order[n * size:], lot


def forfeit_winner(ruleset: Ruleset, scores: list[int] | tuple[int, ...], seat: int) -> int:
    """The team that wins when ``seat`` forfeits with the teams at ``scores``.

    Seven Rocks: the other partnership. Fives: the best-scoring other seat, the first
    clockwise from the offender on a tie.
    """
    if ruleset.partnerships:
        return 1 - ruleset.team_of(seat)
    order = [(seat + k) % ruleset.players for k in range(1, ruleset.players)]
    winner = order[0]
    for s in order[1:]:
        if scores[s] > scores[winner]:
            winner = s
    return winner


class GameState:
    """One match: call :meth:`start`, then :meth:`play` a legal move while :attr:`phase` is TURN.

    Its attributes are the omniscient state (every hand, the boneyard): a bot gets one
    only through ``SeatView.state_with``, filled with its own guesses. The main ones:
    ``phase``, ``round``, ``turn`` (the seat to move), ``hands``, ``boneyard``,
    ``layout``, ``scores`` (by team), and once the match is over ``winner``,
    ``end_reason`` and ``offender``.

    Inside, each hand is a 28-bit mask (``hand_masks``, see :mod:`.bits`) and the
    boneyard a list of tile indices; ``hands`` and ``boneyard`` read and write them as
    tiles. Search code may use the number-level methods (:meth:`legal_codes`,
    :meth:`play_code`, which can skip building events), the same rules without the
    objects.

    >>> from sevenrocks.sdk.rules import make_ruleset
    >>> g = GameState(make_ruleset(), seed=7)
    >>> events = g.start()
    >>> while g.phase is not Phase.MATCH_OVER:
    ...     events += g.play(g.legal_moves()[0])
    >>> events[-1].reason.value in ("target", "round_cap")
    True
    """

    __slots__ = (
        "ruleset", "rng", "auto_deal", "phase", "round", "scores", "hand_masks", "bones",
        "layout", "turn", "leader", "leader_by", "passes", "winner", "end_reason",
        "offender", "last_round_reason", "last_dominoer",
    )

    def __init__(
        self, ruleset: Ruleset, seed: int | None = None, *,
        rng: random.Random | None = None, auto_deal: bool = True,
    ) -> None:
        self.ruleset = ruleset
        #: The match's one random source (deals, lots). None for a state that never deals.
        self.rng = rng if rng is not None else (random.Random(seed) if seed is not None else None)
        #: Deal the next round as soon as a round ends (the referee); search bots turn it off.
        self.auto_deal = auto_deal
        self.phase = Phase.NOT_STARTED
        self.round = 0
        self.scores = [0] * ruleset.teams
        #: Each seat's hand as a mask of tile indices (bits).
        self.hand_masks: list[int] = [0] * ruleset.players
        #: The boneyard as tile indices, in drawing order.
        self.bones: list[int] = []
        self.layout = Layout()
        self.turn = 0
        self.leader = 0
        self.leader_by = LeaderBy.LOT
        self.passes = 0
        self.winner: int | None = None
        self.end_reason: MatchEndReason | None = None
        self.offender: Offender | None = None
        self.last_round_reason: RoundEndReason | None = None
        self.last_dominoer: int | None = None

    # ------------------------------------------------------------------ queries

    @property
    def over(self) -> bool:
        return self.phase is Phase.MATCH_OVER

    @property
    def hands(self) -> list[list[Tile]]:
        """Every seat's hand, sorted (a new list: assign ``hands`` to change them)."""
        return [mask_tiles(m) for m in self.hand_masks]

    @hands.setter
    def hands(self, value: list[list[Tile]]) -> None:
        self.hand_masks = [tiles_mask(h) for h in value]

    @property
    def boneyard(self) -> list[Tile]:
        """The tiles left to draw (fives), in drawing order (a new list)."""
        return [ALL_TILES[i] for i in self.bones]

    @boneyard.setter
    def boneyard(self, value: list[Tile]) -> None:
        self.bones = [TILE_INDEX[t] for t in value]

    def legal_moves(self) -> list[Move]:
        """The moves the seat to move may make (never empty while the phase is TURN)."""
        if self.phase is not Phase.TURN:
            return []
        return [MOVE_OF[c] for c in self.layout.legal_codes(self.hand_masks[self.turn])]  # type: ignore[misc]

    def legal_codes(self) -> list[int]:
        """:meth:`legal_moves` as move numbers (:mod:`.bits`; ``layout.move_of`` turns one into a Move)."""
        if self.phase is not Phase.TURN:
            return []
        return self.layout.legal_codes(self.hand_masks[self.turn])

    def copy(self) -> GameState:
        """An independent copy, cheap enough for search (the random source is copied too)."""
        # Through the constructor, not GameState.__new__: a class compiled by mypyc runs
        # __init__ from __new__ too. Every field is overwritten below.
        new = GameState(self.ruleset)
        if self.rng is not None:
            new.rng = random.Random()
            new.rng.setstate(self.rng.getstate())
        else:
            new.rng = None
        new.auto_deal = self.auto_deal
        new.phase = self.phase
        new.round = self.round
        new.scores = self.scores.copy()
        new.hand_masks = self.hand_masks.copy()
        new.bones = self.bones.copy()
        new.layout = self.layout.copy()
        new.turn = self.turn
        new.leader = self.leader
        new.leader_by = self.leader_by
        new.passes = self.passes
        new.winner = self.winner
        new.end_reason = self.end_reason
        new.offender = self.offender
        new.last_round_reason = self.last_round_reason
        new.last_dominoer = self.last_dominoer
        return new

    # ------------------------------------------------------------------ rounds

    def start(self) -> list[Event]:
        """Deal round 1 (lot for the leader) and return its events."""
        if self.phase is not Phase.NOT_STARTED:
            raise RulesError("the match has already started")
        return self.next_round()

    def next_leader(self) -> tuple[int | None, LeaderBy]:
        """Who leads the next round, and why; ``None`` means a lot decides."""
        if self.round == 0:
            return None, LeaderBy.LOT
        if self.ruleset.draws:
            return (self.leader + 1) % self.ruleset.players, LeaderBy.ROTATION
        if self.last_round_reason is RoundEndReason.DOMINO and self.last_dominoer is not None:
            return self.last_dominoer, LeaderBy.DOMINO
        return None, LeaderBy.LOT

    def next_round(self) -> list[Event]:
        """Deal the next round from the match's random source and return its events."""
        if self.rng is None:
            raise RulesError("this state has no random source, so it cannot deal; use start_round()")
        leader, leader_by = self.next_leader()
        masks, bones, lot = deal_bits(self.rng, self.ruleset, leader is None)
        chosen = lot if leader is None else leader
        # deal_bits deals the 28 tiles once each by construction: no need to check them.
        return self._begin_round(masks, bones, chosen, leader_by)

    def start_round(
        self, hands: list[list[Tile]], boneyard: list[Tile], leader: int, leader_by: LeaderBy
    ) -> list[Event]:
        """Start the next round with a given deal (the verifier replays recorded deals)."""
        if self.phase not in (Phase.NOT_STARTED, Phase.ROUND_OVER):
            raise RulesError(f"cannot start a round while the match is in phase {self.phase.value}")
        self._check_deal(hands, boneyard, leader)
        return self._begin_round([tiles_mask(h) for h in hands], tile_indices(boneyard), leader, leader_by)

    def _begin_round(self, masks: list[int], bones: list[int], leader: int, leader_by: LeaderBy) -> list[Event]:
        """:meth:`start_round` for a deal as numbers, not checked: a whole deal (deal_bits', or checked)."""
        if self.phase not in (Phase.NOT_STARTED, Phase.ROUND_OVER):
            raise RulesError(f"cannot start a round while the match is in phase {self.phase.value}")
        self.round += 1
        self.hand_masks = masks
        self.bones = bones
        self.layout = Layout()
        self.leader = self.turn = leader
        self.leader_by = leader_by
        self.passes = 0
        self.phase = Phase.TURN
        tiles = TILE_OBJ
        return [RoundStart(
            self.round, leader, leader_by, tuple([tuple(mask_tiles(m)) for m in masks]),
            cast("tuple[Tile, ...]", tuple([tiles[i] for i in bones])),
        )]

    def _check_deal(self, hands: list[list[Tile]], boneyard: list[Tile], leader: int) -> None:
        rs = self.ruleset
        if len(hands) != rs.players:
            raise RulesError(f"the deal has {len(hands)} hands; {rs.name} with {rs.players} players needs {rs.players}")
        for seat, h in enumerate(hands):
            if len(h) != rs.hand_size:
                raise RulesError(f"seat {seat} was dealt {len(h)} tiles; {rs.name} deals {rs.hand_size}")
        dealt = [t for h in hands for t in h] + list(boneyard)
        if sorted(dealt) != list(ALL_TILES):
            seen: set[Tile] = set()
            dup = [fmt(t) for t in dealt if t in seen or seen.add(t)]  # type: ignore[func-returns-value]
            missing = [fmt(t) for t in ALL_TILES if t not in set(dealt)]
            raise RulesError(
                "the deal is not the 28 tiles once each"
                + (f"; duplicated: {', '.join(dup)}" if dup else "")
                + (f"; missing: {', '.join(missing)}" if missing else "")
            )
        if not 0 <= leader < rs.players:
            raise RulesError(f"leader {leader} is not a seat (0..{rs.players - 1})")

    # ------------------------------------------------------------------ moves

    def check(self, move: Move) -> None:
        """Raise :class:`IllegalMoveError`, naming the reason, unless ``move`` is legal now."""
        if self.phase is not Phase.TURN:
            raise IllegalMoveError(f"no move is expected: the {'match' if self.over else 'round'} is over")
        hand = self.hands[self.turn]
        if move.tile not in hand:
            raise IllegalMoveError(f"seat {self.turn} does not hold {fmt(move.tile)}")
        try:
            self.layout.check(move)
        except IllegalMoveError as e:
            raise IllegalMoveError(f"seat {self.turn}: {e}") from None

    def play(self, move: Move) -> list[Event]:
        """Place ``move`` for the seat to move; return its events through the next decision.

        Raises :class:`IllegalMoveError` (naming the reason) for an illegal move.
        """
        code = code_of(move)
        if code < 0 or not self._legal(code):
            self.check(move)  # raises, naming the reason
            raise IllegalMoveError(f"seat {self.turn}: {move} is not a legal move")  # pragma: no cover
        return self._play(code, True)

    def play_code(self, code: int, record: bool = True) -> list[Event]:
        """:meth:`play` for a move number (from :meth:`legal_codes`).

        With ``record=False`` placements, passes and draws build no events (a search's
        rollouts read the state, not the events); a round's or the match's end still does.
        """
        if not self._legal(code):
            move = MOVE_OF[code] if 0 <= code < len(MOVE_OF) else None
            if move is None:
                raise IllegalMoveError(f"{code} is not a move number")
            self.check(move)
            raise IllegalMoveError(f"seat {self.turn}: {move} is not a legal move")  # pragma: no cover
        return self._play(code, record)

    def _legal(self, code: int) -> bool:
        return (
            self.phase is Phase.TURN
            and self.hand_masks[self.turn] >> (code & 31) & 1 == 1
            and self.layout.legal_code(code)
        )

    def _play(self, code: int, record: bool) -> list[Event]:
        seat = self.turn
        ti = code & 31
        masks = self.hand_masks
        hand = masks[seat] ^ TILE_BIT[ti]
        masks[seat] = hand
        layout = self.layout
        total = layout.place_code(code)
        award = total if total > 0 and total % 5 == 0 else 0
        rs = self.ruleset
        team = seat % 2 if rs.partnerships else seat
        scores = self.scores
        if award:
            scores[team] += award
        events: list[Event] = []
        if record:
            pid = code >> 5
            port = None if pid == NO_PORT else PORT_OF[pid]
            events.append(tuple.__new__(Play, (self.round, seat, TILE_OBJ[ti], port, total, award, tuple(scores))))
        self.passes = 0
        if award and scores[team] >= rs.target:
            self._end_match(MatchEndReason.TARGET, team, events)
        elif not hand:
            self._end_round(RoundEndReason.DOMINO, seat, events)
        else:
            nxt = self.turn = (seat + 1) % rs.players
            if not masks[nxt] & layout.playable:
                self._advance(events, record)
        return events

    def _advance(self, events: list[Event], record: bool = True) -> None:
        """Perform forced passes and fives draws until a seat has a choice or the round ends."""
        rs = self.ruleset
        layout = self.layout
        masks = self.hand_masks
        while True:
            seat = self.turn
            if masks[seat] & layout.playable:
                return
            if rs.draws:
                bones = self.bones
                while bones:
                    ti = bones.pop(0)
                    masks[seat] |= TILE_BIT[ti]
                    if record:
                        events.append(tuple.__new__(Draw, (self.round, seat, TILE_OBJ[ti])))
                    if TILE_BIT[ti] & layout.playable:
                        return
            if record:
                events.append(tuple.__new__(Pass, (self.round, seat)))  # not Pass(): its __new__ is Python code
            self.passes += 1
            if self.passes == rs.players:
                self._end_round(RoundEndReason.BLOCKED, None, events)
                return
            self.turn = (seat + 1) % rs.players

    def _end_round(self, reason: RoundEndReason, by: int | None, events: list[Event]) -> None:
        rs = self.ruleset
        pips = [mask_pips(m) for m in self.hand_masks]
        settlement: tuple[Settlement, ...] = ()
        bonus: Bonus | None = None
        winner: int | None = None
        if rs.partnerships:
            settlement = tuple([_settlement(s, p) for s, p in enumerate(pips)])
            for s in settlement:
                self.scores[rs.team_of(s.seat)] += s.points
        else:
            if reason is RoundEndReason.DOMINO:
                winner = by
            else:
                low = min(pips)
                lowest = [s for s, p in enumerate(pips) if p == low]
                winner = lowest[0] if len(lowest) == 1 else None
            if winner is not None:
                bonus = Bonus(winner, round5(sum(pips) - pips[winner]))
                self.scores[winner] += bonus.points
        events.append(RoundEnd(
            self.round, reason, by, tuple([tuple(mask_tiles(m)) for m in self.hand_masks]), settlement, bonus,
            tuple(self.scores), rs.partnerships,
        ))
        self.last_round_reason = reason
        self.last_dominoer = by
        if bonus is not None and bonus.points > 0 and self.scores[bonus.seat] >= rs.target:
            self._end_match(MatchEndReason.TARGET, bonus.seat, events)
        elif self.round >= rs.round_cap:
            self._adjudicate(events)
        else:
            self.phase = Phase.ROUND_OVER
            if self.auto_deal and self.rng is not None:
                events.extend(self.next_round())

    def _adjudicate(self, events: list[Event]) -> None:
        top = max(self.scores)
        leaders = [t for t, s in enumerate(self.scores) if s == top]
        self._end_match(MatchEndReason.ROUND_CAP, leaders[0] if len(leaders) == 1 else None, events)

    def adjudicate(self) -> list[Event]:
        """End the match between rounds as the round cap does: the higher score wins, a tie draws.

        The engine does this itself after round ``ruleset.round_cap``; the verifier calls
        it when a record that states no cap shows the match was capped after this round.
        """
        if self.phase is not Phase.ROUND_OVER:
            raise RulesError(f"the round cap ends a match only between rounds, not in phase {self.phase.value}")
        events: list[Event] = []
        self._adjudicate(events)
        return events

    def _end_match(
        self, reason: MatchEndReason, winner: int | None, events: list[Event], offender: Offender | None = None
    ) -> None:
        self.phase = Phase.MATCH_OVER
        self.winner = winner
        self.end_reason = reason
        self.offender = offender
        events.append(MatchEnd(reason, winner, tuple(self.scores), self.round, offender))

    def forfeit(self, seat: int, cause: FaultCause | str, detail: str) -> list[Event]:
        """End the match because ``seat`` broke the protocol (docs/rules.md, harness rules).

        Seven Rocks: the other partnership wins. Fives: the best-scoring other seat
        wins, the first clockwise from the offender on a tie.
        """
        if self.over:
            raise RulesError("the match is already over")
        rs = self.ruleset
        if not 0 <= seat < rs.players:
            raise RulesError(f"seat {seat} is not in this match")
        events: list[Event] = []
        winner = forfeit_winner(rs, self.scores, seat)
        self._end_match(MatchEndReason.FORFEIT, winner, events, Offender(seat, FaultCause(cause), detail))
        return events

    def final_ranks(self) -> list[int]:
        """Rank of each team at the end (0 is best; ties share a rank).

        The offender of a forfeit ranks last; the others rank by score, except that
        the declared winner always ranks first.
        """
        n = self.ruleset.teams
        key = [float(s) for s in self.scores]
        if self.offender is not None:
            key[self.ruleset.team_of(self.offender.seat)] = float("-inf")
        if self.winner is not None:
            key[self.winner] = float("inf")
        distinct = sorted(set(key), reverse=True)
        return [distinct.index(key[t]) for t in range(n)]
