"""Matches played by ``sevenrocks serve``, stored as an event so they can be published.

``serve`` seats its entrants by rotation rather than by an event schedule, so this
module writes its own schedule (one task per match, every match its own deal group)
into the same database tables a tournament uses; ``sevenrocks publish`` and
``sevenrocks leaderboard`` then read it like any event.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from sevenrocks.sdk.rules import Ruleset

from ..referee.faults import FaultPolicy, TimeControl
from .config import Entrant, EventConfig, FaultSettings, TimeSettings
from .executor import outcome_of
from .schedule import MatchTask, RulesetSpec, fingerprint
from .store import Store


def _seating(names: Sequence[str], players: int, index: int) -> tuple[str, ...]:
    return tuple(names[(index + k) % len(names)] for k in range(players))


@dataclass
class ServedEvent:
    store: Store
    event_id: str
    tasks: list[MatchTask]

    @classmethod
    def open(cls, db: Path, event_id: str, ruleset: Ruleset, names: Sequence[str], seed: int, matches: int,
             tc: TimeControl, policy: FaultPolicy) -> ServedEvent:
        """Register (or reopen, with the same settings) the event ``event_id`` in ``db``."""
        config = EventConfig(
            name=event_id, entrants=tuple(Entrant(n) for n in names), ruleset=ruleset.name,
            players=ruleset.players, target=ruleset.target, round_cap=ruleset.round_cap, format="pairings",
            deals=max(matches, 1), duplicate=False, seed=seed,
            time=TimeSettings(tc.per_move_ms, tc.bank_ms, tc.connect_timeout_s),
            faults=FaultSettings(policy.kind, policy.max_strikes), source="<serve>",
        )
        spec = RulesetSpec(ruleset.name, ruleset.players, ruleset.target, ruleset.round_cap)
        tasks = [MatchTask(event_id, f"serve-{seed}-{i:04d}", spec, seed + i, _seating(names, ruleset.players, i),
                           i, i, f"serve-{seed}-{i:04d}") for i in range(matches)]
        store = Store(db)
        store.open_event(config, fingerprint(tasks), len(tasks))
        return cls(store, event_id, tasks)

    def store_match(self, index: int, m: Any, duration_s: float) -> None:
        """Store match ``index`` (a finished referee match) with its record."""
        self.store.record_match(outcome_of(self.tasks[index], m, duration_s))
        if len(self.store.done_ids(self.event_id)) == len(self.tasks):
            self.store.finish_event(self.event_id)

    def close(self) -> None:
        self.store.close()
