"""Rulesets as data: one engine plays Seven Rocks and the 2-4 player fives game."""

from __future__ import annotations

from dataclasses import dataclass
from .picklable import picklable

SEVEN_ROCKS = "seven-rocks"
FIVES = "fives"
RULESET_NAMES = (SEVEN_ROCKS, FIVES)


@dataclass(frozen=True, slots=True)
class Ruleset:
    """The static facts of a game: who plays, how many tiles, what wins.

    Build one with :func:`make_ruleset`, which checks the combination.

    Attributes:
        name: ``"seven-rocks"`` or ``"fives"``.
        players: Seats at the table (4 in Seven Rocks, 2-4 in fives).
        hand_size: Tiles dealt to each seat (7; 5 in fives with 3 or 4 players).
        partnerships: Seven Rocks: seats 0 and 2 against 1 and 3. Fives: every seat
            for itself.
        target: Points that win the match.
        round_cap: Rounds after which the match is adjudicated on score.
    """

    name: str
    players: int
    hand_size: int
    #: Seven Rocks: seats 0 and 2 against 1 and 3. Fives: every seat for itself.
    partnerships: bool
    target: int = 250
    round_cap: int = 200

    @property
    def teams(self) -> int:
        """How many scores there are: 2 in Seven Rocks, one per seat in fives."""
        return 2 if self.partnerships else self.players

    def team_of(self, seat: int) -> int:
        """The team (index into the scores) that ``seat`` plays for."""
        return seat % 2 if self.partnerships else seat

    @property
    def draws(self) -> bool:
        """Fives deals a boneyard and draws from it; Seven Rocks deals all 28 tiles."""
        return not self.partnerships


def make_ruleset(
    name: str = SEVEN_ROCKS, players: int | None = None, target: int = 250, round_cap: int = 200
) -> Ruleset:
    """Return the ruleset ``name`` for ``players`` seats.

    >>> make_ruleset("fives", players=3).hand_size
    5
    """
    if target <= 0:
        raise ValueError(f"target must be positive, got {target}")
    if round_cap <= 0:
        raise ValueError(f"round cap must be positive, got {round_cap}")
    if name == SEVEN_ROCKS:
        if players not in (None, 4):
            raise ValueError(f"seven-rocks is for exactly 4 players, got {players}")
        return Ruleset(SEVEN_ROCKS, 4, 7, True, target, round_cap)
    if name == FIVES:
        n = 4 if players is None else players
        if n not in (2, 3, 4):
            raise ValueError(f"fives is for 2 to 4 players, got {n}")
        return Ruleset(FIVES, n, 7 if n == 2 else 5, False, target, round_cap)
    raise ValueError(f"unknown ruleset {name!r}; choose one of {', '.join(RULESET_NAMES)}")


picklable(Ruleset)  # compiled frozen dataclasses: see picklable.py
