"""What a league is doing now — playing, waiting (and for what), frozen, finished — kept in its database.

Why: a league runs unattended for weeks. When it cannot seat a table (a withdrawal
left too few entrants, every remote entrant is away) it must say so, on the console
and wherever the organiser looks (the live site, ``sevenrocks leaderboard --db``),
instead of looking busy. The league writes its state here each time it changes; any
reader of the database shows it.

The table is created on first write (``CREATE TABLE IF NOT EXISTS``), so a database
of an earlier version needs no upgrade and a reader of one finds no state (None).
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Literal

__all__ = ["LeagueStatus", "STATES", "read_status", "write_status"]

State = Literal["playing", "waiting", "frozen", "finished"]
STATES: tuple[State, ...] = ("playing", "waiting", "frozen", "finished")

_TABLE = """CREATE TABLE IF NOT EXISTS league_status (
    event_id TEXT PRIMARY KEY,
    state TEXT NOT NULL,        -- playing | waiting | frozen | finished
    detail TEXT NOT NULL,       -- waiting: what for; otherwise who plays
    since REAL NOT NULL         -- when the league entered this state (epoch seconds)
)"""


@dataclass(frozen=True, slots=True)
class LeagueStatus:
    state: State
    detail: str
    since: float

    def line(self) -> str:
        """``league: waiting since 2026-12-03 12:01 UTC: only 1 of 3 ...``, for a console or a page."""
        when = datetime.fromtimestamp(self.since, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        return f"league: {self.state} since {when}" + (f": {self.detail}" if self.detail else "")


def write_status(db: sqlite3.Connection, event_id: str, state: State, detail: str) -> None:
    """Record the league's state (``since`` kept while the state itself does not change)."""
    db.execute(_TABLE)
    db.execute("INSERT INTO league_status (event_id, state, detail, since) VALUES (?, ?, ?, ?) "
               "ON CONFLICT(event_id) DO UPDATE SET detail = excluded.detail, "
               "since = CASE WHEN league_status.state = excluded.state THEN league_status.since ELSE excluded.since END, "
               "state = excluded.state", (event_id, state, detail, time.time()))


def read_status(db: sqlite3.Connection, event_id: str) -> LeagueStatus | None:
    """The league's last recorded state, or None (not a league, or one that never recorded it)."""
    try:
        row = db.execute("SELECT state, detail, since FROM league_status WHERE event_id = ?", (event_id,)).fetchone()
    except sqlite3.OperationalError:  # no such table: nothing recorded
        return None
    if row is None or row[0] not in STATES:
        return None
    return LeagueStatus(row[0], row[1], row[2])
