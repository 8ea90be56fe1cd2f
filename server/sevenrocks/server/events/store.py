"""The event database: SQLite (WAL), one transaction per finished match.

Why this shape: a tournament may be killed at any moment, so the only durable
step is "this match is finished", written with its record and the ratings it
leads to in one transaction, keyed by the match id (an insert of an id already
stored is ignored). Resuming is then "play what is not stored". Several events
may share one file (a league); each keeps its schedule fingerprint so an event
cannot be resumed with a different schedule by mistake.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from sevenrocks.sdk.rules import FaultCause, Offender

from .config import EventConfig
from .outcome import MatchOutcome

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    event_id TEXT PRIMARY KEY,
    ordinal INTEGER NOT NULL UNIQUE,       -- league order: the order events were created
    fingerprint TEXT NOT NULL,             -- digest of the schedule (schedule.fingerprint)
    ruleset TEXT NOT NULL,
    players INTEGER NOT NULL,
    total INTEGER NOT NULL,                -- matches in the schedule
    config TEXT NOT NULL,                  -- the config as JSON, tokens withheld
    created_at REAL NOT NULL,
    finished_at REAL
);
CREATE TABLE IF NOT EXISTS entrants (
    event_id TEXT NOT NULL REFERENCES events(event_id),
    name TEXT NOT NULL,
    kind TEXT NOT NULL,                    -- launched | remote
    command TEXT,
    PRIMARY KEY (event_id, name)
);
CREATE TABLE IF NOT EXISTS matches (
    match_id TEXT PRIMARY KEY,
    event_id TEXT NOT NULL REFERENCES events(event_id),
    idx INTEGER NOT NULL,                  -- schedule order
    deal INTEGER NOT NULL,
    grp TEXT NOT NULL,                     -- duplicate group: same deal, seats exchanged
    seed INTEGER NOT NULL,
    seats TEXT NOT NULL,                   -- JSON list of entrant names in seat order
    status TEXT NOT NULL,                  -- done
    reason TEXT NOT NULL,                  -- target | forfeit | round_cap
    winner INTEGER,
    scores TEXT NOT NULL,                  -- JSON list by team
    ranks TEXT NOT NULL,                   -- JSON list by team, 0 best
    rounds INTEGER NOT NULL,
    fault_seat INTEGER,
    fault_cause TEXT,
    fault_detail TEXT,
    decisions TEXT NOT NULL,               -- JSON {seat: [ms, ...]}
    duration_s REAL NOT NULL,
    finished_at REAL NOT NULL,
    UNIQUE (event_id, idx)
);
CREATE TABLE IF NOT EXISTS records (
    match_id TEXT PRIMARY KEY REFERENCES matches(match_id),
    lines TEXT NOT NULL                    -- the JSONL record (RECORDS.md)
);
CREATE TABLE IF NOT EXISTS ratings (
    event_id TEXT NOT NULL REFERENCES events(event_id),
    kind TEXT NOT NULL,                    -- bot | pair
    subject TEXT NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    PRIMARY KEY (event_id, kind, subject)
);
CREATE TABLE IF NOT EXISTS rating_progress (
    event_id TEXT PRIMARY KEY REFERENCES events(event_id),
    applied INTEGER NOT NULL               -- schedule indexes below this are in the ratings
);
"""


class StoreError(RuntimeError):
    """The database cannot be used as asked (another schema, another schedule)."""


@dataclass(frozen=True, slots=True)
class StoredMatch:
    """A finished match as the leaderboard reads it."""

    event_id: str
    index: int
    match_id: str
    deal: int
    group: str
    seats: tuple[str, ...]
    reason: str
    winner: int | None
    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    rounds: int
    fault: Offender | None
    decision_ms: dict[int, list[float]]


@dataclass(frozen=True, slots=True)
class EventInfo:
    event_id: str
    ordinal: int
    ruleset: str
    players: int
    total: int
    done: int
    config: dict[str, Any]
    finished: bool


class Store:
    """One SQLite file. Use as a context manager, or call :meth:`close`."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.db = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
        except sqlite3.DatabaseError as e:
            self.db.close()
            raise StoreError(f"{self.path} is not a sevenrocks database: {e}") from None
        # WAL with synchronous=NORMAL survives a killed process (not a power cut) and is fast.
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        version = self._schema_version()
        if version is None:
            with self.transaction():
                for statement in _statements(SCHEMA):
                    self.db.execute(statement)
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        elif version != SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} has schema version {version}; this sevenrocks writes version "
                f"{SCHEMA_VERSION}. Use a new database file (--db) or the matching sevenrocks."
            )

    def _schema_version(self) -> int | None:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        except sqlite3.DatabaseError as e:
            if "no such table" in str(e):
                return None
            raise StoreError(f"{self.path} is not a sevenrocks database: {e}") from None
        return None if row is None else int(row[0])

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def transaction(self) -> _Transaction:
        return _Transaction(self.db)

    # ------------------------------------------------------------------ events

    def open_event(self, config: EventConfig, fingerprint: str, total: int) -> None:
        """Register an event, or check that a stored one has the same schedule (to resume it)."""
        row = self.db.execute("SELECT fingerprint FROM events WHERE event_id = ?", (config.name,)).fetchone()
        if row is not None:
            if row[0] != fingerprint:
                raise StoreError(
                    f"{self.path} already holds an event named {config.name!r} with a different schedule; "
                    "to resume it, use the same entrants, ruleset, format, deals and seed; to start "
                    "another event in this league, give it another [event] name"
                )
            return
        with self.transaction():
            ordinal = self.db.execute("SELECT COALESCE(MAX(ordinal), -1) + 1 FROM events").fetchone()[0]
            self.db.execute(
                "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                (config.name, ordinal, fingerprint, config.ruleset, config.players, total,
                 json.dumps(config.to_json()), time.time()),
            )
            self.db.executemany(
                "INSERT INTO entrants VALUES (?, ?, ?, ?)",
                [(config.name, e.name, "remote" if e.remote else "launched",
                  None if e.command is None else json.dumps(list(e.command))) for e in config.entrants],
            )
            self.db.execute("INSERT INTO rating_progress VALUES (?, 0)", (config.name,))

    def finish_event(self, event_id: str) -> None:
        with self.transaction():
            self.db.execute("UPDATE events SET finished_at = ? WHERE event_id = ?", (time.time(), event_id))

    def events(self) -> list[EventInfo]:
        rows = self.db.execute(
            "SELECT e.event_id, e.ordinal, e.ruleset, e.players, e.total, e.config, e.finished_at, "
            "(SELECT COUNT(*) FROM matches m WHERE m.event_id = e.event_id) FROM events e ORDER BY e.ordinal"
        ).fetchall()
        return [EventInfo(r[0], r[1], r[2], r[3], r[4], r[7], json.loads(r[5]), r[6] is not None) for r in rows]

    # ------------------------------------------------------------------ matches

    def done_ids(self, event_id: str) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT match_id FROM matches WHERE event_id = ?", (event_id,))}

    def record_match(
        self, outcome: MatchOutcome, ratings: Iterable[tuple[str, str, float, float]] = (), applied: int | None = None
    ) -> bool:
        """Store a finished match, its record and the ratings it leads to, atomically.

        Returns False (and changes nothing) when the match was already stored.
        """
        with self.transaction():
            if not self._insert(outcome):
                return False
            self._save_ratings(outcome.task.event_id, ratings, applied)
        return True

    def record_matches(self, outcomes: Iterable[MatchOutcome]) -> int:
        """Store a batch of finished matches in one transaction (no ratings); returns how many were new."""
        with self.transaction():
            return sum(self._insert(o) for o in outcomes)

    def _insert(self, outcome: MatchOutcome) -> bool:
        t = outcome.task
        f = outcome.fault
        cur = self.db.execute(
            "INSERT OR IGNORE INTO matches VALUES (?, ?, ?, ?, ?, ?, ?, 'done', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (t.match_id, t.event_id, t.index, t.deal, t.group, t.seed, json.dumps(list(t.seats)),
             outcome.reason, outcome.winner, json.dumps(list(outcome.scores)),
             json.dumps(list(outcome.ranks)), outcome.rounds,
             None if f is None else f.seat, None if f is None else f.cause.value, None if f is None else f.detail,
             json.dumps({str(k): [round(x, 3) for x in v] for k, v in outcome.decision_ms.items()}),
             outcome.duration_s, time.time()),
        )
        if cur.rowcount == 0:
            return False
        self.db.execute("INSERT INTO records VALUES (?, ?)",
                        (t.match_id, "".join(line + "\n" for line in outcome.record_lines)))
        return True

    def _save_ratings(self, event_id: str, ratings: Iterable[tuple[str, str, float, float]], applied: int | None) -> None:
        self.db.executemany(
            "INSERT OR REPLACE INTO ratings VALUES (?, ?, ?, ?, ?)",
            [(event_id, kind, subject, mu, sigma) for kind, subject, mu, sigma in ratings],
        )
        if applied is not None:
            self.db.execute("UPDATE rating_progress SET applied = ? WHERE event_id = ?", (applied, event_id))

    def stored_ratings(self, event_id: str) -> dict[tuple[str, str], tuple[float, float]]:
        return {(r[0], r[1]): (r[2], r[3]) for r in self.db.execute(
            "SELECT kind, subject, mu, sigma FROM ratings WHERE event_id = ?", (event_id,))}

    def rating_progress(self, event_id: str) -> int:
        row = self.db.execute("SELECT applied FROM rating_progress WHERE event_id = ?", (event_id,)).fetchone()
        return 0 if row is None else int(row[0])

    def results(self, event_ids: Sequence[str] | None = None) -> Iterator[tuple[str, int, list[str], list[int]]]:
        """(event, index, seats, ranks) of every stored match in league order: what ratings need."""
        sql = ("SELECT m.event_id, m.idx, m.seats, m.ranks FROM matches m JOIN events e USING (event_id)"
               + _where(event_ids) + " ORDER BY e.ordinal, m.idx")
        for ev, idx, seats, ranks in self.db.execute(sql, tuple(event_ids or ())):
            yield ev, idx, json.loads(seats), json.loads(ranks)

    def matches(self, event_ids: Sequence[str] | None = None) -> list[StoredMatch]:
        """Every stored match with its stats, in league order."""
        sql = ("SELECT m.event_id, m.idx, m.match_id, m.deal, m.grp, m.seats, m.reason, m.winner, m.scores, "
               "m.ranks, m.rounds, m.fault_seat, m.fault_cause, m.fault_detail, m.decisions "
               "FROM matches m JOIN events e USING (event_id)" + _where(event_ids) + " ORDER BY e.ordinal, m.idx")
        out = []
        for r in self.db.execute(sql, tuple(event_ids or ())):
            fault = None if r[11] is None else Offender(r[11], FaultCause(r[12]), r[13] or "")
            out.append(StoredMatch(
                r[0], r[1], r[2], r[3], r[4], tuple(json.loads(r[5])), r[6], r[7],
                tuple(json.loads(r[8])), tuple(json.loads(r[9])), r[10], fault,
                {int(k): v for k, v in json.loads(r[14]).items()},
            ))
        return out

    def record(self, match_id: str) -> str | None:
        row = self.db.execute("SELECT lines FROM records WHERE match_id = ?", (match_id,)).fetchone()
        return None if row is None else str(row[0])

    def iter_records(self, event_ids: Sequence[str] | None = None) -> Iterator[tuple[str, str]]:
        """(match id, record text) of every stored match, in league order, one at a time."""
        sql = ("SELECT r.match_id, r.lines FROM records r JOIN matches m USING (match_id) JOIN events e USING (event_id)"
               + _where(event_ids) + " ORDER BY e.ordinal, m.idx")
        for match_id, lines in self.db.execute(sql, tuple(event_ids or ())):
            yield str(match_id), str(lines)

    def match_ids(self, event_ids: Sequence[str] | None = None) -> list[str]:
        sql = "SELECT m.match_id FROM matches m" + _where(event_ids, "m.") + " ORDER BY m.match_id"
        return [r[0] for r in self.db.execute(sql, tuple(event_ids or ()))]


def _where(event_ids: Sequence[str] | None, prefix: str = "m.") -> str:
    if not event_ids:
        return ""
    return f" WHERE {prefix}event_id IN ({','.join('?' * len(event_ids))})"


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception (including KeyboardInterrupt)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: type[BaseException] | None, *rest: object) -> None:
        if exc_type is None:
            self.db.execute("COMMIT")
        else:
            self.db.execute("ROLLBACK")
