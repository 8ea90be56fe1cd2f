"""Awkward positions for ``sevenrocks check``, found with the engine.

A scenario is a seeded match and an *opening*: the first moves of that match, which
the referee plays itself (``Referee.play_match(opening=...)``) before it asks any
seat. The opening is found by playing random legal moves in the one engine until a
position of the wanted kind arises with a seat to move, so the bot under check is
asked exactly there, whatever it would have played before: right after a forced
pass, after a fives draw, with the spinner's arms open, holding its last tile, or at
the first turn after a blocked round. No rule is restated here: every predicate
reads the engine's own state and events.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sevenrocks.sdk.rules import (
    Draw, Event, GameState, Move, Pass, Phase, RoundEnd, RoundEndReason, Ruleset, Side,
)

__all__ = ["Scenario", "SCENARIOS", "opening_for"]

#: A position test: the state with a seat to move, and the events of the last step.
Predicate = Callable[[GameState, Sequence[Event]], bool]


@dataclass(frozen=True)
class Scenario:
    """One awkward position: where it arises, and how to recognise it."""

    name: str
    ruleset: str
    players: int
    #: What the bot faces, in words, for the report.
    about: str
    test: Predicate


def _spinner_arm(g: GameState, events: Sequence[Event]) -> bool:
    return any(m.port is not None and m.port.side in (Side.BRANCH_A, Side.BRANCH_B) for m in g.legal_moves())


def _after_pass(g: GameState, events: Sequence[Event]) -> bool:
    return any(isinstance(e, Pass) for e in events)


def _after_own_draw(g: GameState, events: Sequence[Event]) -> bool:
    return any(isinstance(e, Draw) and e.seat == g.turn for e in events)


def _last_tile(g: GameState, events: Sequence[Event]) -> bool:
    return len(g.hands[g.turn]) == 1


def _after_block(g: GameState, events: Sequence[Event]) -> bool:
    return any(isinstance(e, RoundEnd) and e.reason is RoundEndReason.BLOCKED for e in events)


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("spinner arms", "seven-rocks", 4, "a turn where a legal move attaches to a spinner arm", _spinner_arm),
    Scenario("forced pass", "seven-rocks", 4, "the first turn after a seat was forced to pass", _after_pass),
    Scenario("fives draws", "fives", 2, "a turn right after the seat drew from the boneyard", _after_own_draw),
    Scenario("last tile", "fives", 3, "a turn with one tile left in hand (the move dominoes)", _last_tile),
    Scenario("blocked round", "seven-rocks", 4, "the first turn after a blocked round", _after_block),
)


def opening_for(scenario: Scenario, ruleset: Ruleset, seed: int, tries: int = 5000) -> list[Move]:
    """Moves of the match seeded ``seed`` that lead to a position ``scenario`` wants.

    Deterministic for a given seed. Raises LookupError if no random line of play within
    ``tries`` reaches it (never seen for the built-in scenarios: they take a few tries).
    """
    rng = random.Random(f"{scenario.name}/{seed}")
    for _ in range(tries):
        game = GameState(ruleset, seed=seed)
        events: Sequence[Event] = game.start()
        opening: list[Move] = []
        while not game.over:
            if game.phase is Phase.TURN and scenario.test(game, events):
                return opening
            move = rng.choice(game.legal_moves())
            opening.append(move)
            events = game.play(move)
    raise LookupError(f"no line of play of seed {seed} reaches the position {scenario.name!r}")
