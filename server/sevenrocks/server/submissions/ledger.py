"""The submissions table: one row per upload, one state per pipeline step, kept in the league's database.

States, in order: ``received`` (the upload is on disk) → ``unpacked`` → ``built`` →
``validated`` (the conformance check passed on the snapshot) → ``active`` (a
version of its entrant in the league's field). Off the path: ``rejected`` (with
the reason and the logs), ``retired`` (a newer version of the same entrant became
active; its matches and its row stay) and ``disqualified`` (by the organiser).

A state is written only once its step is complete, so after ``kill -9`` a row in
a middle state is simply done again from its upload (:func:`unfinished`); only
``active`` puts a bot in the field, and it is set together with the snapshot it
runs. Each change of the field bumps a counter in ``meta`` that the running league
watches (:func:`generation`), so an ``active`` row or a disqualification made by
another process (the CLI) is seen within seconds.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..events.store import Transaction
from .authors import ensure_tables

STEPS = ("received", "unpacked", "built", "validated", "active")
ENDED = ("rejected", "retired", "disqualified")
#: States in which the pipeline still has work to do.
UNFINISHED = ("received", "unpacked", "built", "validated")
DAY_S = 24 * 3600.0
_GENERATION = "submissions_generation"


@dataclass(frozen=True, slots=True)
class Submission:
    id: int
    author: str
    entrant: str
    state: str
    reason: str | None
    upload: str
    folder: str | None
    manifest: dict[str, Any] | None
    build_log: str | None
    check_log: str | None
    received_at: float
    updated_at: float

    def to_json(self, logs: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "author": self.author, "entrant": self.entrant, "state": self.state,
                               "reason": self.reason, "received_at": self.received_at, "updated_at": self.updated_at}
        if logs:
            out.update(build_log=self.build_log or "", check_log=self.check_log or "")
        return out


_COLUMNS = "id, author, entrant, state, reason, upload, folder, manifest, build_log, check_log, received_at, updated_at"


def _row(r: tuple[Any, ...]) -> Submission:
    values = list(r)
    values[7] = json.loads(values[7]) if values[7] else None
    return Submission(*values)


def create(db: sqlite3.Connection, author: str, entrant: str, upload: Path) -> int:
    """A new submission in state ``received`` (call once ``upload`` is safely on disk)."""
    ensure_tables(db)
    now = time.time()
    cur = db.execute("INSERT INTO submissions (author, entrant, state, upload, received_at, updated_at) "
                     "VALUES (?, ?, 'received', ?, ?, ?)", (author, entrant, str(upload), now, now))
    assert cur.lastrowid is not None
    db.execute("INSERT INTO submission_states (id, state, at) VALUES (?, 'received', ?)", (cur.lastrowid, now))
    return cur.lastrowid


def advance(db: sqlite3.Connection, sid: int, state: str, **fields: Any) -> None:
    """Record that submission ``sid`` reached ``state`` (with what the step produced)."""
    assert state in STEPS or state in ENDED, state
    sets = ["state = ?", "updated_at = ?"]
    values: list[Any] = [state, time.time()]
    for key, value in fields.items():
        assert key in ("reason", "folder", "manifest", "build_log", "check_log"), key
        sets.append(f"{key} = ?")
        values.append(json.dumps(value) if key == "manifest" and value is not None else value)
    db.execute(f"UPDATE submissions SET {', '.join(sets)} WHERE id = ?", (*values, sid))
    db.execute("INSERT INTO submission_states (id, state, at) VALUES (?, ?, ?)", (sid, state, values[1]))


def history(db: sqlite3.Connection, sid: int) -> list[tuple[str, float]]:
    """Every state submission ``sid`` passed, in order, with when: a client polling now and then
    missed the quick ones (``validated`` a moment before ``active``), so the league keeps them."""
    ensure_tables(db)
    return [(str(s), float(at)) for s, at in
            db.execute("SELECT state, at FROM submission_states WHERE id = ? ORDER BY rowid", (sid,))]


def get(db: sqlite3.Connection, sid: int) -> Submission | None:
    ensure_tables(db)
    r = db.execute(f"SELECT {_COLUMNS} FROM submissions WHERE id = ?", (sid,)).fetchone()
    return None if r is None else _row(r)


def of_author(db: sqlite3.Connection, author: str) -> list[Submission]:
    ensure_tables(db)
    return [_row(r) for r in db.execute(f"SELECT {_COLUMNS} FROM submissions WHERE author = ? ORDER BY id",
                                        (author,))]


def unfinished(db: sqlite3.Connection) -> list[Submission]:
    ensure_tables(db)
    marks = ", ".join("?" * len(UNFINISHED))
    return [_row(r) for r in db.execute(f"SELECT {_COLUMNS} FROM submissions WHERE state IN ({marks}) ORDER BY id",
                                        UNFINISHED)]


def active(db: sqlite3.Connection) -> list[Submission]:
    ensure_tables(db)
    return [_row(r) for r in db.execute(f"SELECT {_COLUMNS} FROM submissions WHERE state = 'active' ORDER BY id")]


def count_since(db: sqlite3.Connection, author: str, since: float) -> int:
    ensure_tables(db)
    return int(db.execute("SELECT COUNT(*) FROM submissions WHERE author = ? AND received_at >= ?",
                          (author, since)).fetchone()[0])


#: States of a submission that passed its check: only these claim an entrant name for their author.
ACCEPTED = ("active", "retired", "disqualified")


def owner_of(db: sqlite3.Connection, entrant: str) -> str | None:
    """The author whose accepted submission first took ``entrant`` (an entrant belongs to one author).

    Only an accepted submission claims a name: a rejected upload (a 0-byte one, say) claims nothing, or
    anyone could squat every name with junk."""
    ensure_tables(db)
    r = db.execute("SELECT author FROM submissions WHERE entrant = ? AND state IN (?, ?, ?) ORDER BY id LIMIT 1",
                   (entrant, *ACCEPTED)).fetchone()
    return None if r is None else str(r[0])


def activate(db: sqlite3.Connection, sid: int, entrant: str, keep: int) -> bool:
    """Make ``sid`` active and retire all but the newest ``keep`` active submissions of its entrant (a
    submission of files already active retires its twin instead), at once. False (and ``sid`` rejected)
    when another author's submission took the name while this one was worked: the first accepted wins."""
    with Transaction(db):
        author = db.execute("SELECT author FROM submissions WHERE id = ?", (sid,)).fetchone()
        owner = owner_of(db, entrant)
        registered = db.execute("SELECT 1 FROM authors WHERE name = ?", (entrant,)).fetchone() is not None
        if author is None or (owner is not None and owner != author[0]) or (registered and entrant != author[0]):
            advance(db, sid, "rejected", reason=f"name: the entrant name {entrant!r} was taken meanwhile "
                                                "(another author's accepted submission, or an author registered "
                                                "under it); submit with another --name")
            return False
        advance(db, sid, "active")
        rows = db.execute("SELECT id, folder FROM submissions WHERE entrant = ? AND state = 'active' "
                          "ORDER BY id DESC", (entrant,)).fetchall()
        kept: list[str] = []
        for old, folder in rows:  # the same files submitted again are one version: the newer row stands for it
            if folder in kept or len(kept) >= keep:
                advance(db, old, "retired", reason=f"replaced by submission {sid}")
            else:
                kept.append(folder)
        bump(db)
    return True


def bump(db: sqlite3.Connection) -> None:
    """Tell the running league that the submitted field changed."""
    db.execute("INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT(key) DO UPDATE SET "
               "value = CAST(value AS INTEGER) + 1", (_GENERATION,))


def generation(db: sqlite3.Connection) -> int:
    r = db.execute("SELECT value FROM meta WHERE key = ?", (_GENERATION,)).fetchone()
    return 0 if r is None else int(r[0])
