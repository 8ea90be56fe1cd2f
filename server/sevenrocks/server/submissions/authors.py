"""The league's authors: who may submit, each with a token the organiser hands out once.

Why hashed: the database is copied around (backups, ``sevenrocks publish`` on
another machine); a token read from it must not open anyone's author page or let
anyone submit. A token is 32 random bytes, so one SHA-256 of it is enough (no
password stretching is needed for a secret nobody chose); tokens are compared
with :func:`hmac.compare_digest` so the time an answer takes says nothing about
how much of a guess was right.

Authors live in the league's SQLite file, in tables of their own
(:data:`TABLES`), so the organiser can add one with ``sevenrocks league authors
add NAME --db FILE`` while the league runs.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import sqlite3
import time
from dataclasses import dataclass

#: The submission tables (created on first use, beside the event store's own).
TABLES = """
CREATE TABLE IF NOT EXISTS authors (
    name TEXT PRIMARY KEY,
    token_sha256 TEXT NOT NULL,            -- hex SHA-256 of the token (the token itself is never stored)
    source TEXT NOT NULL,                  -- cli | config ([[authors]] in the league's TOML)
    created_at REAL NOT NULL,
    disqualified_at REAL,
    disqualified_reason TEXT
);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    author TEXT NOT NULL REFERENCES authors(name),
    entrant TEXT NOT NULL,                 -- the entrant (base name) this becomes a version of
    state TEXT NOT NULL,                   -- received unpacked built validated active | rejected retired disqualified
    reason TEXT,                           -- why it was rejected or disqualified
    upload TEXT NOT NULL,                  -- the stored upload (archive) it came from
    folder TEXT,                           -- the unpacked (then built) bundle
    manifest TEXT,                         -- sevenrocks-bot.toml as JSON
    build_log TEXT,
    check_log TEXT,
    received_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS submissions_by_author ON submissions (author, received_at);
CREATE TABLE IF NOT EXISTS submission_states (
    id INTEGER NOT NULL,                   -- the submission
    state TEXT NOT NULL,                   -- each state it passed, in order (``submit`` prints every one)
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS submission_states_by_id ON submission_states (id);
"""

#: Names an author (and an entrant) may have: they appear in URLs, file names and HTML.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")


class AuthorError(ValueError):
    """An author cannot be added or found; the message says what to do."""


def ensure_tables(db: sqlite3.Connection) -> None:
    for statement in TABLES.split(";"):
        if statement.strip():
            db.execute(statement)


def check_name(name: str, what: str = "author") -> str:
    if not NAME.fullmatch(name) or "@" in name:
        raise AuthorError(f"{what} name {name!r}: use 1-40 letters, digits, '.', '_' or '-', starting with a "
                          "letter or digit")
    return name


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Author:
    name: str
    source: str
    created_at: float
    disqualified_at: float | None
    disqualified_reason: str | None


def add_author(db: sqlite3.Connection, name: str, source: str = "cli", token_sha256: str | None = None) -> str | None:
    """Register ``name``; returns its new token (shown once), or None when ``token_sha256`` was given."""
    check_name(name)
    ensure_tables(db)
    token = None
    if token_sha256 is None:
        token = "sr_" + secrets.token_urlsafe(32)
        token_sha256 = hash_token(token)
    elif not re.fullmatch(r"[0-9a-f]{64}", token_sha256):
        raise AuthorError(f"author {name!r}: token_sha256 must be 64 lowercase hex digits (sevenrocks league "
                          "authors add prints a token; `sha256sum` of it gives this)")
    taken = db.execute("SELECT author FROM submissions WHERE entrant = ? AND author != ? AND state IN "
                       "('active', 'retired', 'disqualified') LIMIT 1", (name, name)).fetchone()
    if taken is not None:
        raise AuthorError(f"author {name!r}: an entrant of {taken[0]!r} already plays under that name; choose "
                          "another name")
    try:
        db.execute("INSERT INTO authors (name, token_sha256, source, created_at) VALUES (?, ?, ?, ?)",
                   (name, token_sha256, source, time.time()))
    except sqlite3.IntegrityError:
        raise AuthorError(f"author {name!r} is already registered; choose another name") from None
    return token


def sync_config_authors(db: sqlite3.Connection, authors: dict[str, str]) -> None:
    """The ``[[authors]]`` of the league's TOML (name -> token hash): added, or their hash updated."""
    ensure_tables(db)
    for name, token_sha256 in authors.items():
        row = db.execute("SELECT token_sha256 FROM authors WHERE name = ?", (name,)).fetchone()
        if row is None:
            add_author(db, name, "config", token_sha256)
        elif row[0] != token_sha256:
            db.execute("UPDATE authors SET token_sha256 = ? WHERE name = ?", (token_sha256, name))


def author_for(db: sqlite3.Connection, token: str) -> str | None:
    """The author whose token this is (every hash compared, in constant time each), or None."""
    if not token:
        return None
    ensure_tables(db)
    given = hash_token(token)
    found = None
    for name, stored in db.execute("SELECT name, token_sha256 FROM authors"):
        if hmac.compare_digest(given, stored):
            found = name
    return found


def get_author(db: sqlite3.Connection, name: str) -> Author | None:
    ensure_tables(db)
    row = db.execute("SELECT name, source, created_at, disqualified_at, disqualified_reason FROM authors "
                     "WHERE name = ?", (name,)).fetchone()
    return None if row is None else Author(*row)


def list_authors(db: sqlite3.Connection) -> list[Author]:
    ensure_tables(db)
    return [Author(*r) for r in db.execute("SELECT name, source, created_at, disqualified_at, disqualified_reason "
                                           "FROM authors ORDER BY created_at, name")]


def disqualify_author(db: sqlite3.Connection, name: str, reason: str) -> None:
    ensure_tables(db)
    db.execute("UPDATE authors SET disqualified_at = ?, disqualified_reason = ? WHERE name = ?",
               (time.time(), reason, name))
