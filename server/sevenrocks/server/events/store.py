"""The event database: SQLite (WAL), one transaction per finished match.

Why this shape: a tournament may be killed at any moment, so the only durable
step is "this match is finished", written with its record and the ratings it
leads to in one transaction, keyed by the match id (an insert of an id already
stored is ignored). Resuming is then "play what is not stored". Several events
may share one file (a league); each keeps its schedule fingerprint so an event
cannot be resumed with a different schedule by mistake.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import os
import secrets
import socket
import sqlite3
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from sevenrocks.sdk.rules import FaultCause, Offender

from .config import EventConfig
from .identity import differences, digest
from .outcome import MatchOutcome
from .schedule import seed_commitment, seed_key

SCHEMA_VERSION = 3
#: What every SQLite file starts with.
SQLITE_HEADER = b"SQLite format 3\x00"

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
    identity TEXT,                         -- JSON (identity.py): command, content hashes, settings
    digest TEXT,                           -- digest of identity, stored with each of its matches
    version INTEGER NOT NULL DEFAULT 1,    -- raised by --replay NAME
    withdrawn_reason TEXT,                 -- set when the entrant was withdrawn (crashes in a row)
    withdrawn_at REAL,
    not_played INTEGER,                    -- a withdrawn entrant's scheduled matches not played
    base TEXT,                             -- league: the [[entrants]] name this version belongs to
    joined_at REAL,                        -- league: when this version joined the field
    retired_at REAL,                       -- league: when it left the field (kept in history, not scheduled)
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
    identities TEXT,                       -- JSON list: each seat's entrant digest
    fault_log TEXT,                        -- the tail of a crashed bot's log
    UNIQUE (event_id, idx)
);
CREATE TABLE IF NOT EXISTS records (
    match_id TEXT PRIMARY KEY REFERENCES matches(match_id),
    lines TEXT NOT NULL                    -- the JSONL record (docs/records.md)
);
CREATE TABLE IF NOT EXISTS ratings (
    event_id TEXT NOT NULL REFERENCES events(event_id),
    kind TEXT NOT NULL,                    -- bot | pair
    subject TEXT NOT NULL,
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    PRIMARY KEY (event_id, kind, subject)
);
CREATE TABLE IF NOT EXISTS voided (
    event_id TEXT NOT NULL REFERENCES events(event_id),
    match_id TEXT NOT NULL,
    reason TEXT NOT NULL,                  -- an infrastructure fault: never charged to a bot
    at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS match_history (
    match_id TEXT NOT NULL,                -- a match replayed by --replay: the old result, kept
    event_id TEXT NOT NULL,
    entrant TEXT NOT NULL,                 -- the replayed entrant
    version INTEGER NOT NULL,              -- its version when this result was played
    row TEXT NOT NULL,                     -- the matches row as JSON
    lines TEXT NOT NULL,                   -- its record
    replaced_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS league (
    event_id TEXT PRIMARY KEY REFERENCES events(event_id),
    rounds INTEGER NOT NULL,               -- rounds planned so far (the planner's round counter)
    frozen_at REAL,                        -- set by --final: entries stopped
    final_matches INTEGER,                 -- more matches each active entrant plays after the freeze
    final_counts TEXT,                     -- JSON {entrant: matches stored at the freeze}
    final_at REAL                          -- when the final standings were published
);
CREATE TABLE IF NOT EXISTS rating_progress (
    event_id TEXT PRIMARY KEY REFERENCES events(event_id),
    applied INTEGER NOT NULL               -- schedule indexes below this are in the ratings
);
CREATE TABLE IF NOT EXISTS verdict_looks (
    event_id TEXT PRIMARY KEY REFERENCES events(event_id),
    looks TEXT NOT NULL                    -- JSON: the largest evidence each claim reached (stats/places.py)
);
CREATE TABLE IF NOT EXISTS playoffs (
    event_id TEXT PRIMARY KEY REFERENCES events(event_id),
    statement TEXT NOT NULL,               -- JSON: contenders, open pairs, likely cost (events/playoff.py)
    stated_at REAL NOT NULL                -- before the play-off's first match
);
"""

#: Tables added to an existing database when a writer opens it (additive, like ADDED_COLUMNS).
ADDED_TABLES = ["""CREATE TABLE IF NOT EXISTS verdict_looks (
    event_id TEXT PRIMARY KEY REFERENCES events(event_id),
    looks TEXT NOT NULL
)""", """CREATE TABLE IF NOT EXISTS playoffs (
    event_id TEXT PRIMARY KEY REFERENCES events(event_id),
    statement TEXT NOT NULL,
    stated_at REAL NOT NULL
)"""]


#: Commitments to each event's deal seed (added in schema 3 without a migration: a writer creates it).
SEEDS_TABLE = """
CREATE TABLE IF NOT EXISTS seeds (
    event_id TEXT NOT NULL,                -- committed before the event is registered
    stage TEXT NOT NULL,                   -- event | final (a league's final plays on a fresh seed)
    seed INTEGER NOT NULL,                 -- the deals' secret until revealed_at
    salt TEXT NOT NULL,                    -- random hex: the commitment cannot be searched seed by seed
    commitment TEXT NOT NULL,              -- SHA-256 hex of "SEED:SALT", shown before the first match
    given INTEGER NOT NULL,                -- 1: the config's own seed; 0: generated by the harness
    committed_at REAL NOT NULL,
    revealed_at REAL,                      -- when the seed was published (the event ended, the final froze)
    PRIMARY KEY (event_id, stage)
);
"""


MIGRATE_1_TO_2 = [
    "ALTER TABLE entrants ADD COLUMN identity TEXT",
    "ALTER TABLE entrants ADD COLUMN digest TEXT",
    "ALTER TABLE entrants ADD COLUMN version INTEGER NOT NULL DEFAULT 1",
    "ALTER TABLE entrants ADD COLUMN withdrawn_reason TEXT",
    "ALTER TABLE entrants ADD COLUMN withdrawn_at REAL",
    "ALTER TABLE entrants ADD COLUMN not_played INTEGER",
    "ALTER TABLE matches ADD COLUMN identities TEXT",
    "ALTER TABLE matches ADD COLUMN fault_log TEXT",
]


#: Schema 3 adds the league: versions and retirement of entrants, the league's own row.
MIGRATE_2_TO_3 = [
    "ALTER TABLE entrants ADD COLUMN base TEXT",
    "ALTER TABLE entrants ADD COLUMN joined_at REAL",
    "ALTER TABLE entrants ADD COLUMN retired_at REAL",
]


#: Columns added to an existing database when it is opened (additive: the schema version stays,
#: an older sevenrocks ignores them). Where and how each match ran: the cluster worker (or this
#: host), the sandbox mode its bots actually had, the engine build that refereed it.
ADDED_COLUMNS = [
    ("matches", "worker", "TEXT"),
    ("matches", "sandbox", "TEXT"),
    ("matches", "engine", "TEXT"),
]

#: A league's author page asks for one entrant's newest matches: an index on each seat
#: (seven-rocks has four; fewer-seat rulesets leave the later ones NULL) keeps that
#: query to the rows it returns, however many matches the league holds.
SEAT_INDEXES = [f"CREATE INDEX IF NOT EXISTS matches_seat{k} ON matches (event_id, json_extract(seats, '$[{k}]'), idx)"
                for k in range(4)]


class StoreError(RuntimeError):
    """The database cannot be used as asked (another schema, another schedule, another writer)."""


class IdentityChanged(StoreError):
    """An entrant or the event's settings differ from what the stored matches were played with."""


def explain(e: sqlite3.Error, path: Path) -> str:
    """A one-line, actionable message for an SQLite failure on ``path``."""
    text = str(e)
    low = text.lower()
    if "malformed" in low or "not a database" in low or "corrupt" in low:
        return (f"{path} is damaged ({text}); nothing more was written. Restore it from a copy, "
                f"or give --db a new file")
    if "disk is full" in low or "database or disk is full" in low:
        return (f"{path}: the disk is full ({text}); the match in progress was not stored. Free space and "
                f"run the same command again: it resumes from the stored matches")
    if "readonly" in low or "read-only" in low:
        return f"{path}: cannot write ({text}); give --db a file on a writable file system"
    if "unable to open" in low:
        return f"{path}: cannot open the database ({text}); check the folder exists and is writable"
    if "locked" in low or "busy" in low:
        return f"{path} is locked by another program ({text}); stop it or use another --db file"
    return f"{path}: database error: {text}"


def check_db_path(path: Path, writer: bool = True) -> None:
    """Refuse, before anything is created, a --db that cannot be a sevenrocks database.

    A missing or read-only folder, a folder given as the file, a read-only file, and
    a non-empty file that is not a sevenrocks database (another program's SQLite
    file is left untouched: opening it read-write would switch it to WAL).
    """
    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise StoreError(f"--db {path}: is a folder; give a file name, e.g. {path / 'sevenrocks.db'}")
    if not folder.is_dir():
        raise StoreError(f"--db {path}: the folder {folder} does not exist; create it or choose another path")
    if not path.exists():
        if writer and not os.access(folder, os.W_OK | os.X_OK):
            raise StoreError(f"--db {path}: cannot create a file in {folder} (not writable); choose a writable folder")
        return
    if writer and (not os.access(path, os.R_OK | os.W_OK) or not os.access(folder, os.W_OK | os.X_OK)):
        raise StoreError(f"--db {path}: the file or its folder is read-only (SQLite needs to write both); "
                         "copy it somewhere writable to resume, or use `sevenrocks leaderboard` to read it")
    if path.stat().st_size == 0:
        return
    with path.open("rb") as f:
        head = f.read(len(SQLITE_HEADER))
    if head != SQLITE_HEADER:
        raise StoreError(f"--db {path}: not an SQLite database (it starts with {head[:8]!r}); it was left "
                         "untouched; give --db a new file or a sevenrocks database")
    try:
        ro = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5.0)
    except sqlite3.Error as e:
        raise StoreError(explain(e, path)) from None
    try:
        tables = {r[0] for r in ro.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        ours = "meta" in tables and ro.execute("SELECT 1 FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.Error as e:
        raise StoreError(explain(e, path)) from None
    finally:
        ro.close()
    if tables and not ours:
        raise StoreError(f"--db {path}: an SQLite database of another application (tables: "
                         f"{', '.join(sorted(tables)[:6])}); it was left untouched; give --db a new file")


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
class EntrantState:
    """What the store knows of one entrant of an event."""

    name: str
    identity: dict[str, Any] | None
    digest: str | None
    version: int
    withdrawn: str | None


@dataclass(frozen=True, slots=True)
class LeagueEntrant:
    """One version of a league entrant as stored (``name`` is ``base`` or ``base@N``)."""

    name: str
    base: str
    version: int
    kind: str
    command: tuple[str, ...] | None
    digest: str | None
    joined_at: float | None
    retired_at: float | None
    withdrawn: str | None


@dataclass(frozen=True, slots=True)
class LeagueState:
    rounds: int
    frozen_at: float | None
    final_matches: int | None
    final_counts: dict[str, int]
    final_at: float | None


@dataclass(frozen=True, slots=True)
class Resumed:
    """What the loop needs to know of a stored event when a run starts (:meth:`Store.resume_event`)."""

    finished: bool
    #: Matches stored.
    stored: int
    withdrawn: frozenset[str]
    #: Entrants replayed by this run, with their new version.
    replayed: dict[str, int]


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

    def __init__(self, path: Path | str, *, writer: bool = False) -> None:
        """Open (or create) the database; ``writer`` also takes the one-writer lock and checks pages.

        A writer is what plays an event: only one per file, because two would each
        play every match and rate them in their own order.
        """
        self.path = Path(path)
        self._lock_fd: int | None = None
        check_db_path(self.path, writer)
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
        except sqlite3.Error as e:
            raise StoreError(explain(e, self.path)) from None
        try:
            if writer:
                self._lock()
            self._setup(writer)
        except sqlite3.Error as e:
            self.close()
            raise StoreError(explain(e, self.path)) from None
        except BaseException:
            self.close()
            raise

    @classmethod
    def reader(cls, path: Path | str) -> Store:
        """A read-only connection to an existing database, for the thread or process that opens it.

        The live site reads from its own thread and its page process while the event
        writes: each opens its own reader (an SQLite connection belongs to one thread),
        which never writes and never takes the writer's lock.
        """
        self = cls.__new__(cls)
        self.path = Path(path)
        self._lock_fd = None
        try:
            uri = f"file:{urllib.parse.quote(str(self.path.resolve()))}?mode=ro"
            self.db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=30.0)
            self.db.execute("PRAGMA query_only=ON")
        except sqlite3.Error as e:
            raise StoreError(explain(e, self.path)) from None
        return self

    def _setup(self, writer: bool) -> None:
        self.db.execute("PRAGMA journal_mode=WAL")
        # WAL with synchronous=NORMAL survives a killed process (not a power cut) and is fast.
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        version = self._schema_version()
        if version is None:
            with self.transaction():
                for statement in _statements(SCHEMA):
                    self.db.execute(statement)
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        elif version in (1, 2):
            steps = (MIGRATE_1_TO_2 if version == 1 else []) + MIGRATE_2_TO_3
            with self.transaction():
                for statement in steps + _statements(SCHEMA):
                    self.db.execute(statement)
                self.db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION),))
        elif version != SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} has schema version {version}; this sevenrocks writes version "
                f"{SCHEMA_VERSION}. Use a new database file (--db) or the matching sevenrocks."
            )
        self._add_columns()
        try:  # new in schema 3 without a migration: every database gets it (a read-only one reads around it)
            self.db.execute(SEEDS_TABLE)
        except sqlite3.OperationalError as e:
            if "readonly" not in str(e):
                raise
        if writer:
            for statement in ADDED_TABLES:
                self.db.execute(statement)
            for statement in SEAT_INDEXES:  # a database from before them gets them once, here
                self.db.execute(statement)
            bad = self.db.execute("PRAGMA quick_check").fetchone()[0]
            if bad != "ok":
                raise StoreError(f"{self.path} is damaged (integrity check: {bad}); nothing was written. "
                                 "Restore it from a copy, or give --db a new file")
            with self.transaction():
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('writer', ?)", (_holder(),))

    def _lock(self) -> None:
        """The one-writer lock: flock on the database file itself, released by the kernel with its holder.

        flock and SQLite's own (fcntl) locks do not interact on Linux, so readers
        (``sevenrocks leaderboard``) are never blocked. The holder's pid and host
        are kept in ``meta`` for the message a second writer gets.
        """
        fd = os.open(self.path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            try:
                row = self.db.execute("SELECT value FROM meta WHERE key = 'writer'").fetchone()
            except sqlite3.Error:
                row = None
            holder = row[0] if row else "another process"
            raise StoreError(f"{self.path} is in use by another sevenrocks tournament ({holder}); one process "
                             "writes an event database at a time: wait for it to finish or stop it "
                             "(its lock goes with it), or use another --db file") from None
        self._lock_fd = fd

    def _add_columns(self) -> None:
        """Add the :data:`ADDED_COLUMNS` a database made by an earlier sevenrocks lacks."""
        for table, column, kind in ADDED_COLUMNS:
            have = {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}
            if column not in have:
                try:
                    with self.transaction():
                        self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
                except sqlite3.OperationalError as e:
                    # Another process added it meanwhile, or a read-only reader (it reads around them).
                    if "duplicate column" not in str(e) and "readonly" not in str(e):
                        raise

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
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def transaction(self) -> Transaction:
        return Transaction(self.db)

    # ------------------------------------------------------------------ events

    def open_event(self, config: EventConfig, fingerprint: str, total: int,
                   identities: dict[str, dict[str, Any]] | None = None) -> None:
        """Register an event, or check that a stored one has the same schedule (to resume it).

        ``identities`` (entrant name -> :func:`~.identity.entrant_identity`) is stored
        with a new event; a stored event's are checked by :meth:`check_identities`.
        """
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
                 json.dumps(_stored_config(config)), time.time()),
            )
            ids = identities or {}
            self.db.executemany(
                "INSERT INTO entrants (event_id, name, kind, command, identity, digest) VALUES (?, ?, ?, ?, ?, ?)",
                [(config.name, e.name, "remote" if e.remote else "launched",
                  None if e.command is None else json.dumps(list(e.command)),
                  json.dumps(ids[e.name], sort_keys=True) if e.name in ids else None,
                  digest(ids[e.name]) if e.name in ids else None) for e in config.entrants],
            )
            self.db.execute("INSERT INTO rating_progress VALUES (?, 0)", (config.name,))

    def resume_event(self, config: EventConfig, fingerprint: str, total: int,
                     identities: dict[str, dict[str, Any]], replay: Sequence[str] = ()) -> Resumed:
        """Register the event, or check the stored one may be resumed (schedule, settings, entrants).

        Entrants named in ``replay`` have their stored matches moved to history first.
        One call for everything the loop's start needs to know from the store.
        """
        known = self.db.execute("SELECT 1 FROM events WHERE event_id = ?", (config.name,)).fetchone() is not None
        self.open_event(config, fingerprint, total, identities)
        replayed: dict[str, int] = {}
        if known:
            self.check_identities(config, identities, replay)
            for name in replay:
                replayed[name] = self.replay_entrant(config.name, name, identities[name])
        finished, stored = self.db.execute(
            "SELECT finished_at IS NOT NULL, (SELECT COUNT(*) FROM matches WHERE event_id = ?) FROM events "
            "WHERE event_id = ?", (config.name, config.name)).fetchone()
        withdrawn = frozenset(n for n, st in self.entrant_states(config.name).items() if st.withdrawn)
        return Resumed(bool(finished), int(stored), withdrawn, replayed)

    # ------------------------------------------------------------------ league

    def open_league(self, config: EventConfig, fingerprint: str) -> LeagueState:
        """Register the league (an event with no schedule) or reopen it; returns where it stands."""
        self.open_event(dataclasses.replace(config, entrants=()), fingerprint, 0)
        with self.transaction():
            self.db.execute("INSERT OR IGNORE INTO league (event_id, rounds) VALUES (?, 0)", (config.name,))
        return self.league_state(config.name)

    def league_state(self, event_id: str) -> LeagueState:
        row = self.db.execute("SELECT rounds, frozen_at, final_matches, final_counts, final_at FROM league "
                              "WHERE event_id = ?", (event_id,)).fetchone()
        if row is None:
            raise StoreError(f"event {event_id!r} in {self.path} is not a league")
        return LeagueState(row[0], row[1], row[2], json.loads(row[3]) if row[3] else {}, row[4])

    def league_listen(self, event_id: str) -> str | None:
        """The HOST:PORT the league's referee last listened on (remote entrants keep dialling it)."""
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (f"listen:{event_id}",)).fetchone()
        return None if row is None else str(row[0])

    def keep_league_listen(self, event_id: str, address: str) -> None:
        """Remember where the league's referee listens, for the next run of the same league."""
        with self.transaction():
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"listen:{event_id}", address))

    def is_league(self, event_id: str) -> bool:
        return self.db.execute("SELECT 1 FROM league WHERE event_id = ?", (event_id,)).fetchone() is not None

    def next_round(self, event_id: str, total: int) -> int:
        """Count one more planned round (never reused, even if the process dies); returns its number."""
        with self.transaction():
            n = self.db.execute("SELECT rounds FROM league WHERE event_id = ?", (event_id,)).fetchone()[0]
            self.db.execute("UPDATE league SET rounds = ? WHERE event_id = ?", (n + 1, event_id))
            self.db.execute("UPDATE events SET total = ? WHERE event_id = ?", (total, event_id))
        return int(n)

    def league_entrants(self, event_id: str) -> list[LeagueEntrant]:
        """Every version that ever joined the league, oldest first."""
        rows = self.db.execute(
            "SELECT name, COALESCE(base, name), version, kind, command, digest, joined_at, retired_at, "
            "withdrawn_reason FROM entrants WHERE event_id = ? ORDER BY COALESCE(joined_at, 0), rowid", (event_id,))
        return [LeagueEntrant(r[0], r[1], r[2], r[3], None if r[4] is None else tuple(json.loads(r[4])), r[5],
                              r[6], r[7], r[8]) for r in rows]

    def join(self, event_id: str, name: str, base: str, version: int, remote: bool,
             command: Sequence[str] | None, identity: dict[str, Any]) -> None:
        """A new entrant, or a new version of one, joins the league's field."""
        with self.transaction():
            self.db.execute(
                "INSERT INTO entrants (event_id, name, kind, command, identity, digest, version, base, joined_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (event_id, name, "remote" if remote else "launched",
                 None if command is None else json.dumps(list(command)),
                 json.dumps(identity, sort_keys=True), digest(identity), version, base, time.time()))

    def retire(self, event_id: str, name: str, retired: bool = True) -> None:
        """Take a version out of the field (its matches and row stay), or bring it back."""
        with self.transaction():
            self.db.execute("UPDATE entrants SET retired_at = ? WHERE event_id = ? AND name = ?",
                            (time.time() if retired else None, event_id, name))

    def freeze(self, event_id: str, final_matches: int, counts: dict[str, int]) -> None:
        """Stop entries: each active entrant plays ``final_matches`` more from ``counts``."""
        with self.transaction():
            self.db.execute("UPDATE league SET frozen_at = ?, final_matches = ?, final_counts = ? "
                            "WHERE event_id = ? AND frozen_at IS NULL",
                            (time.time(), final_matches, json.dumps(counts, sort_keys=True), event_id))

    def final_published(self, event_id: str) -> None:
        with self.transaction():
            self.db.execute("UPDATE league SET final_at = ? WHERE event_id = ?", (time.time(), event_id))
            self.db.execute("UPDATE events SET finished_at = ? WHERE event_id = ?", (time.time(), event_id))
            self._reveal(event_id)

    def keep_final_standings(self, event_id: str, standings: dict[str, Any]) -> None:
        """Keep a league's final standings as published (``{"lines": [...], "json": {...}}``): a
        finished league run again prints them from here, and the published site shows them."""
        with self.transaction():
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                            (f"final_standings:{event_id}", json.dumps(standings)))

    def final_standings_kept(self, event_id: str) -> dict[str, Any] | None:
        """What :meth:`keep_final_standings` kept, or None (no final published, or one published before
        they were kept)."""
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (f"final_standings:{event_id}",)).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def match_counts(self, event_id: str) -> dict[str, int]:
        """Entrant -> stored matches it played (a seat or two in one match count once)."""
        counts: dict[str, int] = {}
        for (seats,) in self.db.execute("SELECT seats FROM matches WHERE event_id = ?", (event_id,)):
            for name in set(json.loads(seats)):
                counts[name] = counts.get(name, 0) + 1
        return counts

    def max_index(self, event_id: str) -> int:
        return int(self.db.execute("SELECT COALESCE(MAX(idx), -1) FROM matches WHERE event_id = ?",
                                   (event_id,)).fetchone()[0])

    # ------------------------------------------------------------------ identity and lifecycle

    def entrant_states(self, event_id: str) -> dict[str, EntrantState]:
        rows = self.db.execute(
            "SELECT name, identity, digest, version, withdrawn_reason FROM entrants WHERE event_id = ?", (event_id,))
        return {r[0]: EntrantState(r[0], None if r[1] is None else json.loads(r[1]), r[2], r[3], r[4])
                for r in rows}

    def check_identities(self, config: EventConfig, identities: dict[str, dict[str, Any]],
                         replay: Sequence[str] = ()) -> None:
        """Refuse to resume when an entrant or the settings differ from the stored event.

        Entrants named in ``replay`` may differ (they are about to be replayed). An
        event stored before identities were kept adopts the current ones.
        """
        states = self.entrant_states(config.name)
        settings: list[str] = []
        changed: dict[str, list[str]] = {}
        for name, ident in identities.items():
            st = states.get(name)
            if st is None or st.identity is None:
                continue
            diff = differences(st.identity, ident)
            ours = [d for d in diff if not d.startswith(("[time]", "[faults]", "[ratings]"))]
            settings = settings or [d for d in diff if d.startswith(("[time]", "[faults]", "[ratings]"))]
            if ours and name not in replay:
                changed[name] = ours
        if settings:
            raise IdentityChanged(
                f"event {config.name!r} in {self.path} was played with other settings: {'; '.join(settings)}. "
                "Every stored match depends on them: resume with the stored settings, or give the changed "
                "event another [event] name")
        if changed:
            parts = [f"{name}: {'; '.join(d)}" for name, d in changed.items()]
            if config.schedule.mode == "adaptive":  # --replay is refused there (rounds were planned from them)
                remedy = ("An adaptive event cannot replay them (--replay is refused: its later rounds were "
                          "planned from their results): restore what changed to resume this event, or play the "
                          "changed field as a new event (another [event] name)")
            else:
                names = " ".join(f"--replay {n}" for n in changed)
                remedy = (f"Run again with {names} to play their matches again under the new identity (the old "
                          "results are kept as history), or restore what changed")
            raise IdentityChanged(
                f"entrant(s) of event {config.name!r} changed since their matches were stored: {' | '.join(parts)}. "
                + remedy)
        missing = [n for n, st in states.items() if st.identity is None and n in identities]
        if missing:
            with self.transaction():
                for n in missing:
                    self.db.execute("UPDATE entrants SET identity = ?, digest = ? WHERE event_id = ? AND name = ?",
                                    (json.dumps(identities[n], sort_keys=True), digest(identities[n]),
                                     config.name, n))

    def replay_entrant(self, event_id: str, name: str, identity: dict[str, Any]) -> int:
        """Move ``name``'s stored matches of the event to history and give it a new version.

        Returns the new version. The event is open again (not finished), its ratings
        are recomputed from what is left, and a withdrawal is lifted.
        """
        st = self.entrant_states(event_id).get(name)
        if st is None:
            raise StoreError(f"--replay {name}: no entrant {name!r} in event {event_id!r}; entrants: "
                             f"{', '.join(sorted(self.entrant_states(event_id)))}")
        now = time.time()
        with self.transaction():
            cols = [r[1] for r in self.db.execute("PRAGMA table_info(matches)")]
            rows = self.db.execute(
                "SELECT m.*, r.lines FROM matches m LEFT JOIN records r USING (match_id) WHERE m.event_id = ?",
                (event_id,)).fetchall()
            gone = []
            for row in rows:
                data = dict(zip(cols, row[:len(cols)]))
                if name not in json.loads(data["seats"]):
                    continue
                gone.append(data["match_id"])
                self.db.execute("INSERT INTO match_history VALUES (?, ?, ?, ?, ?, ?, ?)",
                                (data["match_id"], event_id, name, st.version, json.dumps(data),
                                 row[len(cols)] or "", now))
            self.db.executemany("DELETE FROM records WHERE match_id = ?", [(m,) for m in gone])
            self.db.executemany("DELETE FROM matches WHERE match_id = ?", [(m,) for m in gone])
            self.db.execute("UPDATE entrants SET identity = ?, digest = ?, version = version + 1, "
                            "withdrawn_reason = NULL, withdrawn_at = NULL, not_played = NULL "
                            "WHERE event_id = ? AND name = ?",
                            (json.dumps(identity, sort_keys=True), digest(identity), event_id, name))
            self.db.execute("DELETE FROM ratings WHERE event_id = ?", (event_id,))
            self.db.execute("UPDATE rating_progress SET applied = 0 WHERE event_id = ?", (event_id,))
            self.db.execute("UPDATE events SET finished_at = NULL WHERE event_id = ?", (event_id,))
        return st.version + 1

    def withdraw(self, event_id: str, name: str, reason: str) -> None:
        with self.transaction():
            self.db.execute("UPDATE entrants SET withdrawn_reason = ?, withdrawn_at = ? WHERE event_id = ? AND name = ?",
                            (reason, time.time(), event_id, name))

    def set_not_played(self, event_id: str, name: str, count: int) -> None:
        with self.transaction():
            self.db.execute("UPDATE entrants SET not_played = ? WHERE event_id = ? AND name = ?", (count, event_id, name))

    def withdrawals(self, event_ids: Sequence[str] | None = None) -> list[tuple[str, str, str, int]]:
        """(event, entrant, reason, matches not played) of every withdrawn entrant."""
        sql = ("SELECT event_id, name, withdrawn_reason, COALESCE(not_played, 0) FROM entrants "
               "WHERE withdrawn_reason IS NOT NULL" + (_where(event_ids, "").replace(" WHERE", " AND")))
        return [(r[0], r[1], r[2], r[3]) for r in self.db.execute(sql, tuple(event_ids or ()))]

    def void(self, event_id: str, match_id: str, reason: str) -> None:
        """Note a match voided by an infrastructure fault (it is played again, never charged)."""
        with self.transaction():
            self.db.execute("INSERT INTO voided VALUES (?, ?, ?, ?)", (event_id, match_id, reason, time.time()))

    def voided(self, event_ids: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
        """(event, match id, reason) of every voided attempt, oldest first."""
        sql = "SELECT event_id, match_id, reason FROM voided" + _where(event_ids, "") + " ORDER BY at"
        return [(r[0], r[1], r[2]) for r in self.db.execute(sql, tuple(event_ids or ()))]

    def history_count(self, event_id: str) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM match_history WHERE event_id = ?", (event_id,)).fetchone()[0])

    def save_all_ratings(self, event_id: str, ratings: Iterable[tuple[str, str, float, float]], applied: int) -> None:
        """Replace the event's stored ratings (after a replay took matches out)."""
        with self.transaction():
            self.db.execute("DELETE FROM ratings WHERE event_id = ?", (event_id,))
            self._save_ratings(event_id, ratings, applied)

    def verdict_looks(self, event_id: str) -> str | None:
        """What the verdict's earlier looks at the event proved (JSON, :class:`..stats.places.Looks`), or None."""
        try:
            row = self.db.execute("SELECT looks FROM verdict_looks WHERE event_id = ?", (event_id,)).fetchone()
        except sqlite3.OperationalError:  # a database no writer of this version has opened yet
            return None
        return None if row is None else str(row[0])

    def save_verdict_looks(self, event_id: str, looks: str) -> None:
        """Keep the verdict's running evidence, so a resumed event's settled pairs stay settled."""
        with self.transaction():
            self.db.execute("INSERT OR REPLACE INTO verdict_looks VALUES (?, ?)", (event_id, looks))

    def playoff(self, event_id: str) -> str | None:
        """The play-off's statement (JSON, :class:`.playoff.Statement`) once it has begun, or None."""
        try:
            row = self.db.execute("SELECT statement FROM playoffs WHERE event_id = ?", (event_id,)).fetchone()
        except sqlite3.OperationalError:  # a database no writer of this version has opened yet
            return None
        return None if row is None else str(row[0])

    def save_playoff(self, event_id: str, statement: str) -> None:
        """Keep what the play-off was said to be and cost, before its first match (the first statement stays)."""
        with self.transaction():
            self.db.execute("INSERT OR IGNORE INTO playoffs VALUES (?, ?, ?)", (event_id, statement, time.time()))

    def finish_event(self, event_id: str) -> None:
        with self.transaction():
            self.db.execute("UPDATE events SET finished_at = ? WHERE event_id = ?", (time.time(), event_id))
            self._reveal(event_id)

    # ------------------------------------------------------------------ the deals' seed, committed

    def commit_seed(self, event_id: str, stage: str, seed: int | None) -> SeedCommitment:
        """The commitment to ``event_id``'s seed for ``stage`` (kept if there is one already).

        ``seed`` None: a secret one is generated (63 random bits). Either way a random salt is
        added, so that a public or small seed still binds and a secret one cannot be searched."""
        row = self.seed_of(event_id, stage)
        if row is not None:
            return row
        value = secrets.randbits(63) if seed is None else seed
        salt = secrets.token_hex(16)
        with self.transaction():
            self.db.execute("INSERT OR IGNORE INTO seeds VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
                            (event_id, stage, value, salt, seed_commitment(seed_key(value, salt)),
                             int(seed is not None), time.time()))
        row = self.seed_of(event_id, stage)
        assert row is not None
        return row

    def seed_of(self, event_id: str, stage: str) -> SeedCommitment | None:
        row = self.db.execute(_SEED_COLUMNS + " WHERE event_id = ? AND stage = ?", (event_id, stage)).fetchone()
        return None if row is None else SeedCommitment(*row)

    def seeds(self, event_ids: Sequence[str] | None = None) -> list[SeedCommitment]:
        """Every commitment of ``event_ids`` (all: None), event by event, the event's before its final's."""
        have = self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'seeds'").fetchone()
        if have is None:  # a database no writer of this sevenrocks has opened yet
            return []
        rows = self.db.execute(_SEED_COLUMNS + " ORDER BY event_id, stage = 'final'").fetchall()
        return [SeedCommitment(*r) for r in rows if not event_ids or r[0] in event_ids]

    def reveal_seed(self, event_id: str, stage: str) -> None:
        with self.transaction():
            self._reveal(event_id, stage)

    def _reveal(self, event_id: str, stage: str | None = None) -> None:
        self.db.execute("UPDATE seeds SET revealed_at = ? WHERE event_id = ? AND revealed_at IS NULL"
                        + (" AND stage = ?" if stage else ""), (time.time(), event_id, *((stage,) if stage else ())))

    def set_total(self, event_id: str, total: int, reopen: bool = False) -> None:
        """Record an adaptive event's budget in force; ``reopen`` marks a finished event as running again."""
        with self.transaction():
            self.db.execute("UPDATE events SET total = ? WHERE event_id = ?", (total, event_id))
            if reopen:
                self.db.execute("UPDATE events SET finished_at = NULL WHERE event_id = ?", (event_id,))

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
            "INSERT OR IGNORE INTO matches (match_id, event_id, idx, deal, grp, seed, seats, status, reason, winner, "
            "scores, ranks, rounds, fault_seat, fault_cause, fault_detail, decisions, duration_s, finished_at, "
            "identities, fault_log, worker, sandbox, engine) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, 'done', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (t.match_id, t.event_id, t.index, t.deal, t.group, t.seed, json.dumps(list(t.seats)),
             outcome.reason, outcome.winner, json.dumps(list(outcome.scores)),
             json.dumps(list(outcome.ranks)), outcome.rounds,
             None if f is None else f.seat, None if f is None else f.cause.value, None if f is None else f.detail,
             json.dumps({str(k): [round(x, 3) for x in v] for k, v in outcome.decision_ms.items()}),
             outcome.duration_s, time.time(),
             json.dumps(list(outcome.identities)) if outcome.identities else None, outcome.fault_log or None,
             outcome.worker or None, outcome.sandbox or None, outcome.engine or None),
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

    def results(self, event_ids: Sequence[str] | None = None
                ) -> Iterator[tuple[str, int, list[str], list[int], int | None]]:
        """(event, index, seats, ranks, fault seat) of every stored match in league order: what ratings need."""
        sql = ("SELECT m.event_id, m.idx, m.seats, m.ranks, m.fault_seat FROM matches m JOIN events e USING (event_id)"
               + _where(event_ids) + " ORDER BY e.ordinal, m.idx")
        for ev, idx, seats, ranks, fault_seat in self.db.execute(sql, tuple(event_ids or ())):
            yield ev, idx, json.loads(seats), json.loads(ranks), fault_seat

    def matches(self, event_ids: Sequence[str] | None = None) -> list[StoredMatch]:
        """Every stored match with its stats, in league order."""
        sql = (_MATCH_COLUMNS + "FROM matches m JOIN events e USING (event_id)" + _where(event_ids)
               + " ORDER BY e.ordinal, m.idx")
        return [_stored(r) for r in self.db.execute(sql, tuple(event_ids or ()))]

    def seat_matches(self, event_id: str, name: str, before: int | None = None, limit: int = 30) -> list[StoredMatch]:
        """``name``'s newest matches of one event (schedule index below ``before``), newest first.

        Each seat's index (:data:`SEAT_INDEXES`) gives its newest ``limit`` rows
        directly, so the cost is that of the rows returned, not of the event.
        """
        below = before if before is not None else 2**62
        seats = " UNION ALL ".join(
            f"SELECT * FROM (SELECT match_id, idx FROM matches WHERE event_id = ? AND json_extract(seats, '$[{k}]') = ? "
            "AND idx < ? ORDER BY idx DESC LIMIT ?)" for k in range(4))
        ids = [r[0] for r in self.db.execute(f"SELECT DISTINCT match_id, idx FROM ({seats}) ORDER BY idx DESC LIMIT ?",
                                             (event_id, name, below, limit) * 4 + (limit,))]
        if not ids:
            return []
        sql = _MATCH_COLUMNS + f"FROM matches m WHERE m.match_id IN ({','.join('?' * len(ids))}) ORDER BY m.idx DESC"
        return [_stored(r) for r in self.db.execute(sql, ids)]

    def where_run(self, event_ids: Sequence[str] | None = None) -> dict[str, tuple[str | None, str | None, str | None]]:
        """Match id -> (worker, sandbox mode, engine build) as stored (None where a match predates them)."""
        have = {row[1] for row in self.db.execute("PRAGMA table_info(matches)")}
        if "worker" not in have:  # a database no writer of this sevenrocks has opened yet
            return {mid: (None, None, None) for mid in self.match_ids(event_ids)}
        sql = "SELECT m.match_id, m.worker, m.sandbox, m.engine FROM matches m" + _where(event_ids)
        return {r[0]: (r[1], r[2], r[3]) for r in self.db.execute(sql, tuple(event_ids or ()))}

    def match(self, match_id: str) -> StoredMatch | None:
        """One stored match by its id (None: not stored)."""
        row = self.db.execute(_MATCH_COLUMNS + "FROM matches m WHERE m.match_id = ?", (match_id,)).fetchone()
        return None if row is None else _stored(row)

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


def _stored_config(config: EventConfig) -> dict[str, Any]:
    """The config as the events table keeps it: a secret seed (none in the config) stays in ``seeds`` only."""
    out = config.to_json()
    if not config.seed_given:
        out["seed"] = "secret"
    return out


_SEED_COLUMNS = ("SELECT event_id, stage, seed, salt, commitment, given, committed_at, revealed_at FROM seeds")


@dataclass(frozen=True, slots=True)
class SeedCommitment:
    """An event's (or a league final's) deal seed: committed before its first match, revealed at its end."""

    event_id: str
    stage: str
    seed: int
    salt: str
    commitment: str
    given: int
    committed_at: float
    revealed_at: float | None

    @property
    def key(self) -> str:
        """What ``sevenrocks verify --seed`` takes once it is revealed: ``SEED:SALT``."""
        return seed_key(self.seed, self.salt)


_MATCH_COLUMNS = ("SELECT m.event_id, m.idx, m.match_id, m.deal, m.grp, m.seats, m.reason, m.winner, m.scores, "
                  "m.ranks, m.rounds, m.fault_seat, m.fault_cause, m.fault_detail, m.decisions ")


def _stored(r: Sequence[Any]) -> StoredMatch:
    fault = None if r[11] is None else Offender(r[11], FaultCause(r[12]), r[13] or "")
    return StoredMatch(r[0], r[1], r[2], r[3], r[4], tuple(json.loads(r[5])), r[6], r[7],
                       tuple(json.loads(r[8])), tuple(json.loads(r[9])), r[10], fault,
                       {int(k): v for k, v in json.loads(r[14]).items()})


def _holder() -> str:
    return f"pid {os.getpid()} on host {socket.gethostname()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}"


def _where(event_ids: Sequence[str] | None, prefix: str = "m.") -> str:
    if not event_ids:
        return ""
    return f" WHERE {prefix}event_id IN ({','.join('?' * len(event_ids))})"


def _statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


class Transaction:
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
