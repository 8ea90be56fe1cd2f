"""Time control and fault policy: what the referee does when a seat breaks the protocol.

The referee never decides a fault's consequence inline: it builds a :class:`Fault`
(who, which cause, what happened) and asks :class:`StrikeBook` whether the seat
forfeits now or the referee plays for it (the ``strike`` policy). The forfeit itself
is the engine's (:meth:`GameState.forfeit`), so the record says who, why and when.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from sevenrocks.sdk.rules import FaultCause


@dataclass(frozen=True)
class TimeControl:
    """Clocks measured at the referee, per seat.

    A decision may take ``per_move_ms``; with a bank, time beyond that is taken from
    the seat's ``bank_ms`` for the match, so the deadline is per-move plus bank left.
    An entrant that has not connected ``connect_timeout_s`` after its match needs it
    makes its seats fault with cause ``disconnect``.
    """

    per_move_ms: int = 1000
    bank_ms: int | None = None
    connect_timeout_s: float = 20.0

    def __post_init__(self) -> None:
        if self.per_move_ms <= 0:
            raise ValueError(f"per-move time must be positive, got {self.per_move_ms} ms")
        if self.bank_ms is not None and self.bank_ms < 0:
            raise ValueError(f"the bank cannot be negative, got {self.bank_ms} ms")
        if self.connect_timeout_s < 0:
            raise ValueError(f"the connect timeout cannot be negative, got {self.connect_timeout_s} s")


@dataclass(frozen=True)
class FaultPolicy:
    """``forfeit``: the offender's side loses at once. ``strike``: the referee plays the
    first legal move for the offender and counts a strike; strike ``max_strikes`` forfeits."""

    kind: Literal["forfeit", "strike"] = "forfeit"
    max_strikes: int = 3

    def __post_init__(self) -> None:
        if self.kind not in ("forfeit", "strike"):
            raise ValueError(f"fault policy must be 'forfeit' or 'strike', got {self.kind!r}")
        if self.max_strikes < 1:
            raise ValueError(f"max strikes must be at least 1, got {self.max_strikes}")


@dataclass(frozen=True, slots=True)
class Fault:
    """One protocol breach by one seat, in the words the record will carry."""

    seat: int
    cause: FaultCause
    detail: str

    def __str__(self) -> str:
        return f"seat {self.seat}: {self.cause.value}: {self.detail}"


@dataclass(slots=True)
class StrikeBook:
    """Counts strikes per seat of one match and decides each fault's outcome."""

    policy: FaultPolicy
    strikes: dict[int, int] = field(default_factory=dict)

    def forfeits(self, fault: Fault) -> bool:
        """Count ``fault``; True if it makes its seat forfeit under the policy."""
        if self.policy.kind == "forfeit":
            return True
        n = self.strikes.get(fault.seat, 0) + 1
        self.strikes[fault.seat] = n
        return n >= self.policy.max_strikes

    def label(self, fault: Fault) -> str:
        """The fault's detail with the strike count, for the record and the notice."""
        if self.policy.kind == "forfeit":
            return fault.detail
        return f"{fault.detail} (strike {self.strikes.get(fault.seat, 0)} of {self.policy.max_strikes})"
