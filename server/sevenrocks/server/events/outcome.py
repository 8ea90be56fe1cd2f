"""The result of one scheduled match, as plain data: what the store keeps and ratings read.

Executors produce a :class:`MatchOutcome` however they played the match (the
embedded referee, a cluster worker, in process); it pickles, so it can come
back from another machine.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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


def final_ranks(
    ruleset: Ruleset, scores: tuple[int, ...], winner: int | None, offender: Offender | None
) -> tuple[int, ...]:
    """Team ranks by the engine's own rule (offender last, winner first, others by score)."""
    state = GameState(ruleset)
    state.scores = list(scores)
    state.winner = winner
    state.offender = offender
    return tuple(state.final_ranks())
