"""The result of one scheduled match, as plain data: what the store keeps and ratings read.

Executors produce a :class:`MatchOutcome` however they played the match (the
embedded referee, a cluster worker, in process); it pickles, so it can come
back from another machine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from sevenrocks.sdk.rules import GameState, Offender, Ruleset

from .schedule import MatchTask


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    task: MatchTask
    #: ``target``, ``forfeit`` or ``round_cap`` (match_end.reason).
    reason: str
    winner: int | None
    scores: tuple[int, ...]
    #: Rank of each team (0 best, ties share), as :meth:`GameState.final_ranks`.
    ranks: tuple[int, ...]
    rounds: int
    #: Who broke the protocol and ended the match (the record's ``offender``), if anyone.
    fault: Offender | None
    #: Seat -> decision times in ms, as the referee measured them.
    decision_ms: dict[int, list[float]] = field(default_factory=dict)
    record_lines: tuple[str, ...] = ()
    duration_s: float = 0.0
    #: Each seat's entrant identity digest (filled in by the tournament before storing).
    identities: tuple[str, ...] = ()
    #: The end of the offender's log when the fault was its process dying.
    fault_log: str = ""
    #: When the offender's unanswered turn was sent (perf_counter, this machine), if its stream was lost.
    lost_turn_sent_at: float | None = None
    #: Where and how it ran (stored with the match, not in its record): the cluster worker or this
    #: host, the sandbox mode the bots actually had, the engine build (``compiled`` or ``pure``).
    worker: str = ""
    sandbox: str = ""
    engine: str = ""


@dataclass(frozen=True, slots=True)
class Voided:
    """A match lost to an infrastructure fault (the harness stopping, a bot killed from outside,
    a referee shutting down): never charged to a bot, played again later."""

    task: MatchTask
    reason: str
    #: Counted toward :data:`~.executor.MAX_VOIDS`. Not when the death that voided it was charged
    #: to another match: the crash rules (restarts, withdrawal) bound those already, and a bot
    #: must not stop the event by crashing in the same match again and again.
    counted: bool = True


@dataclass(frozen=True, slots=True)
class Withdrawn:
    """An entrant removed for the rest of the event (its process kept crashing)."""

    entrant: str
    reason: str


@dataclass(frozen=True, slots=True)
class Skipped:
    """A scheduled match not played because one of its entrants was withdrawn."""

    task: MatchTask


#: What an executor reports: a finished match, or a lifecycle event the tournament records.
Report = MatchOutcome | Voided | Withdrawn | Skipped


@dataclass
class FaultStreaks:
    """Forfeits by its own fault each entrant has in a row; the one at ``limit`` is withdrawn.

    Why: the process rules (``[bots].max_crashes_in_row``) see only a process that dies.
    A bot whose SDK reports its error and plays on, or that times out or plays illegally
    every match, never dies and would forfeit for ever. Counted on stored matches, whatever
    the process did: a match played out with no fault resets every seat's count; another
    seat's forfeit leaves an innocent entrant's count as it was (it had no result).
    """

    #: ``[bots].max_faults_in_row``.
    limit: int
    #: Where a fixed bot comes back: "a new version" (a league) or "a new event".
    fix: str = "a new event"
    in_row: dict[str, int] = field(default_factory=dict)

    def replay(self, matches: Iterable[tuple[tuple[str, ...], Offender | None]]) -> None:
        """Count stored matches (seats, fault) again, in order, on resuming (their withdrawals are stored)."""
        for seats, fault in matches:
            self.add(seats, fault)

    def add(self, seats: tuple[str, ...], fault: Offender | None) -> Withdrawn | None:
        """Count one stored match; the withdrawal it makes due, if any."""
        if fault is None:
            for s in seats:
                self.in_row.pop(s, None)
            return None
        name = seats[fault.seat]
        n = self.in_row[name] = self.in_row.get(name, 0) + 1
        if n != self.limit:
            return None
        return Withdrawn(name, f"withdrawn after {n} forfeits in a row by its own fault (the last: "
                               f"{fault.cause.value}: {_short(fault.detail)}); a fixed bot plays only as {self.fix} ([bots].max_faults_in_row = {self.limit})")


def _short(text: str, limit: int = 160) -> str:
    """One line of at most ``limit`` characters (a bot's error message can be anything)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 1] + "…"


def final_ranks(
    ruleset: Ruleset, scores: tuple[int, ...], winner: int | None, offender: Offender | None
) -> tuple[int, ...]:
    """Team ranks by the engine's own rule (offender last, winner first, others by score)."""
    state = GameState(ruleset)
    state.scores = list(scores)
    state.winner = winner
    state.offender = offender
    return tuple(state.final_ranks())
