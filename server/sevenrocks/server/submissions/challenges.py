"""Unranked challenges: an author asks for a few matches of their newest version against named entrants.

Why a table of its own: a challenge match is never rated. It is stored in
``challenge_matches``, not in ``matches``, so nothing that reads matches for ratings,
standings, the leaderboard, the site or another author's page can count it, and the
match record format (docs/records.md) is unchanged. The league plays challenges
between two ranked rounds (:meth:`Challenges.between_rounds`, called from the
league's planning step), at most ``challenge_matches_per_round`` matches each time, so
a queue of challenges can delay a ranked round by a bounded amount and never starve it.

What an author sees of a challenge match is its result (seats, scores, ranks, how it
ended), never its record: the record holds every hand, and a challenge must not show
an author any tile their own seat did not see. Each match is dealt from a fresh random
seed, never a ranked deal, and its id (``challenge.ID.N``: an event id holds no dot)
is one the deal guard never shows (``referee/dealguard.py``), so spectators
and the live site never see it either.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..events.executor import PRIVATE_PREFIX
from ..events.outcome import MatchOutcome, Report, Withdrawn
from ..events.schedule import MatchTask, ruleset_spec
from . import ledger

SCHEMA = """
CREATE TABLE IF NOT EXISTS challenges (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    author TEXT NOT NULL,
    challenger TEXT NOT NULL,              -- the author's version that plays (NAME or NAME@k)
    opponents TEXT NOT NULL,               -- JSON list of the versions it meets
    matches INTEGER NOT NULL,              -- how many were asked for
    state TEXT NOT NULL,                   -- queued | done | cancelled
    reason TEXT,                           -- why it was cancelled
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS challenges_by_author ON challenges (author, created_at);
CREATE TABLE IF NOT EXISTS challenge_matches (
    challenge INTEGER NOT NULL REFERENCES challenges(id),
    n INTEGER NOT NULL,                    -- 1, 2, ... within the challenge
    match_id TEXT NOT NULL,
    seed INTEGER NOT NULL,
    seats TEXT NOT NULL,                   -- JSON list of versions in seat order
    scores TEXT NOT NULL,
    ranks TEXT NOT NULL,
    reason TEXT NOT NULL,                  -- target | forfeit | round_cap
    rounds INTEGER NOT NULL,
    fault_seat INTEGER,
    fault_cause TEXT,
    fault_detail TEXT,
    record TEXT NOT NULL,                  -- the match record (docs/records.md), for the organiser only
    played_at REAL NOT NULL,
    PRIMARY KEY (challenge, n)
);
"""
OPEN = "queued"
#: Opponents one challenge may name.
MAX_OPPONENTS = 8


class ChallengeError(ValueError):
    """A challenge that cannot be made; the text is for the author."""


@dataclass(frozen=True, slots=True)
class Challenge:
    id: int
    author: str
    challenger: str
    opponents: tuple[str, ...]
    matches: int
    state: str
    reason: str | None
    created_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class Played:
    """One challenge match as its author sees it: the result, not the record."""

    n: int
    seats: tuple[str, ...]
    scores: tuple[int, ...]
    ranks: tuple[int, ...]
    reason: str
    rounds: int
    fault_seat: int | None
    fault_cause: str | None
    fault_detail: str | None
    played_at: float

    def to_json(self, mine: str) -> dict[str, Any]:
        # A fault's detail may name a tile of the seat that made it: shown only for the author's own seat.
        own = self.fault_seat is not None and self.seats[self.fault_seat] == mine
        return {"n": self.n, "seats": list(self.seats), "scores": list(self.scores), "ranks": list(self.ranks),
                "end": self.reason, "rounds": self.rounds, "played_at": self.played_at,
                "fault": None if self.fault_seat is None else {
                    "entrant": self.seats[self.fault_seat], "cause": self.fault_cause,
                    **({"detail": self.fault_detail} if own else {})}}


def ensure_tables(db: sqlite3.Connection) -> None:
    for statement in SCHEMA.split(";"):
        if statement.strip():
            db.execute(statement)


_COLUMNS = "id, author, challenger, opponents, matches, state, reason, created_at, updated_at"


def _challenge(r: Sequence[Any]) -> Challenge:
    return Challenge(r[0], r[1], r[2], tuple(json.loads(r[3])), r[4], r[5], r[6], r[7], r[8])


def create(db: sqlite3.Connection, author: str, challenger: str, opponents: Sequence[str], matches: int) -> int:
    ensure_tables(db)
    now = time.time()
    cur = db.execute("INSERT INTO challenges (author, challenger, opponents, matches, state, created_at, updated_at)"
                     " VALUES (?, ?, ?, ?, ?, ?, ?)", (author, challenger, json.dumps(list(opponents)), matches,
                                                       OPEN, now, now))
    assert cur.lastrowid is not None
    return cur.lastrowid


def get(db: sqlite3.Connection, cid: int) -> Challenge | None:
    ensure_tables(db)
    r = db.execute(f"SELECT {_COLUMNS} FROM challenges WHERE id = ?", (cid,)).fetchone()
    return None if r is None else _challenge(r)


def of_author(db: sqlite3.Connection, author: str) -> list[Challenge]:
    ensure_tables(db)
    return [_challenge(r) for r in db.execute(f"SELECT {_COLUMNS} FROM challenges WHERE author = ? ORDER BY id",
                                              (author,))]


def open_challenges(db: sqlite3.Connection) -> list[Challenge]:
    ensure_tables(db)
    return [_challenge(r) for r in db.execute(f"SELECT {_COLUMNS} FROM challenges WHERE state = ? ORDER BY id",
                                              (OPEN,))]


def count_since(db: sqlite3.Connection, author: str, since: float) -> int:
    ensure_tables(db)
    return int(db.execute("SELECT COUNT(*) FROM challenges WHERE author = ? AND created_at >= ?",
                          (author, since)).fetchone()[0])


def played(db: sqlite3.Connection, cid: int) -> list[Played]:
    ensure_tables(db)
    return [Played(r[0], tuple(json.loads(r[1])), tuple(json.loads(r[2])), tuple(json.loads(r[3])), *r[4:])
            for r in db.execute("SELECT n, seats, scores, ranks, reason, rounds, fault_seat, fault_cause, "
                                "fault_detail, played_at FROM challenge_matches WHERE challenge = ? ORDER BY n",
                                (cid,))]


def _end(db: sqlite3.Connection, cid: int, state: str, reason: str | None = None) -> None:
    db.execute("UPDATE challenges SET state = ?, reason = ?, updated_at = ? WHERE id = ?",
               (state, reason, time.time(), cid))


def store(db: sqlite3.Connection, cid: int, n: int, outcome: MatchOutcome) -> None:
    """Keep one played challenge match (once: a match reported twice is stored once)."""
    t, f = outcome.task, outcome.fault
    db.execute("INSERT OR IGNORE INTO challenge_matches (challenge, n, match_id, seed, seats, scores, ranks, reason, "
               "rounds, fault_seat, fault_cause, fault_detail, record, played_at) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (cid, n, t.match_id, t.seed, json.dumps(list(t.seats)), json.dumps(list(outcome.scores)),
                json.dumps(list(outcome.ranks)), outcome.reason, outcome.rounds,
                None if f is None else f.seat, None if f is None else f.cause.value,
                None if f is None else f.detail, "\n".join(outcome.record_lines), time.time()))


def seats_of(challenger: str, opponents: Sequence[str], n: int, players: int, partnerships: bool = False) -> tuple[str, ...]:
    """The table of match ``n`` (0-based): the challenger and one side per other team from the opponents,
    taken in turn, the challenger moving one side on each match so that it plays every position. In a
    partnership game each entrant fills both seats of its team (as in the league's own matches).

    >>> seats_of("me", ["a", "b"], 0, 2), seats_of("me", ["a", "b"], 1, 2), seats_of("me", ["a", "b"], 2, 2)
    (('me', 'a'), ('b', 'me'), ('me', 'a'))
    >>> seats_of("me", ["a", "b"], 0, 4, True), seats_of("me", ["a", "b"], 1, 4, True)
    (('me', 'a', 'me', 'a'), ('b', 'me', 'b', 'me'))
    """
    teams = 2 if partnerships else players
    k = teams - 1
    sides = [challenger, *(opponents[(n * k + j) % len(opponents)] for j in range(k))]
    shift = n % teams
    sides = sides[-shift:] + sides[:-shift] if shift else sides
    return tuple(sides[seat % teams] for seat in range(players))


def sides(ruleset: Any) -> int:
    """Entrants one table seats: its teams (a partnership game seats two, each in two seats)."""
    return 2 if ruleset.partnerships else int(ruleset.players)


def match_id(cid: int, n: int) -> str:
    return f"{PRIVATE_PREFIX}{cid}.{n}"


class Challenges:
    """The league's challenges: asked for through the API, played between ranked rounds."""

    def __init__(self, league: Any, settings: Any, say: Any) -> None:
        self.league = league
        self.db: sqlite3.Connection = league.store.db
        self.settings = settings
        self.say = say
        ensure_tables(self.db)

    # ------------------------------------------------------------------ asking (on the referee's loop)

    def active_version(self, author: str, version_of: Any) -> str:
        """The author's newest version in the field: what their challenges play."""
        field = {e.name for e in self.league.field_}
        for sub in reversed(ledger.of_author(self.db, author)):
            name = version_of(sub) if sub.state == "active" else None
            if name is not None and name in field:
                return str(name)
        raise ChallengeError(f"{author} has no version in the league's field yet: a challenge plays your newest "
                             "active version (sevenrocks submit PATH first, and wait until it is active)")

    def resolve(self, names: Sequence[str], challenger: str) -> list[str]:
        """Entrant names as the author typed them -> versions in the field (a bare name: its newest version)."""
        field = [e.name for e in self.league.field_]
        if not names:
            raise ChallengeError("name at least one entrant to challenge")
        if len(names) > MAX_OPPONENTS:
            raise ChallengeError(f"at most {MAX_OPPONENTS} opponents in one challenge")
        out = []
        for name in names:
            if name in field:
                version = name
            else:
                versions = [f for f in field if f.partition("@")[0] == name]
                if not versions:
                    raise ChallengeError(f"{name!r} is not an active entrant of this league; the leaderboard "
                                         "lists them")
                version = max(versions, key=lambda v: int(v.partition("@")[2] or 1))
            if version == challenger:
                raise ChallengeError(f"{version} is the version that plays your challenge; name its opponents")
            if version not in out:
                out.append(version)
        need = sides(self.league.config.make_ruleset()) - 1
        if len(out) < need:
            raise ChallengeError(f"a table of this league seats {need + 1} entrants: name at least {need} different "
                                 "opponents")
        return out

    def quota(self, author: str) -> str | None:
        per_day = self.settings.challenges_per_day
        if count_since(self.db, author, time.time() - ledger.DAY_S) < per_day:
            return None
        return (f"quota reached: {author} has asked for {per_day} challenges in the last 24 hours "
                f"(challenges_per_day = {per_day})")

    def ask(self, author: str, names: Sequence[str], matches: int | None, version_of: Any) -> Challenge:
        """A new challenge of ``author``'s newest version against ``names``; ChallengeError says why not."""
        cap = self.settings.challenge_matches
        n = cap if matches is None else matches
        if not 1 <= n <= cap:
            raise ChallengeError(f"a challenge plays 1 to {cap} matches (challenge_matches = {cap}); asked {n}")
        challenger = self.active_version(author, version_of)
        opponents = self.resolve(names, challenger)
        cid = create(self.db, author, challenger, opponents, n)
        got = get(self.db, cid)
        assert got is not None
        return got

    # ------------------------------------------------------------------ playing (the league's planning step)

    def _next(self, budget: int, withdrawn: set[str]) -> list[tuple[int, int, MatchTask]]:
        """Up to ``budget`` matches of the open challenges, oldest first; a challenge whose versions left
        the field is cancelled, one whose versions are not connected now waits."""
        field = {e.name for e in self.league.field_} - withdrawn
        ready = self.league.available() if self.league.available is not None else field
        config = self.league.config
        rules = config.make_ruleset()
        out: list[tuple[int, int, MatchTask]] = []
        for c in open_challenges(self.db):
            versions = (c.challenger, *c.opponents)
            gone = [v for v in versions if v not in field]
            if gone:
                _end(self.db, c.id, "cancelled", f"{', '.join(gone)} left the field (a newer version, retired, "
                                                  "disqualified or withdrawn) before every match was played")
                continue
            if any(v not in ready for v in versions):
                continue
            # The numbers not stored yet (not a count: a match voided before a later one was stored, or one in
            # play when the league was killed, is played again under its own number; a stored one never is).
            done = {p.n for p in played(self.db, c.id)}
            for n in (n for n in range(c.matches) if n + 1 not in done):
                if len(out) >= budget:
                    return out
                seats = seats_of(c.challenger, c.opponents, n, rules.players, rules.partnerships)
                task = MatchTask(config.name, match_id(c.id, n + 1), ruleset_spec(config),
                                 secrets.randbits(62), seats, -1, 0, match_id(c.id, n + 1))
                out.append((c.id, n + 1, task))
        return out

    async def between_rounds(self, record_withdrawal: Any, withdrawn: set[str]) -> int:
        """Play up to ``challenge_matches_per_round`` challenge matches now; returns how many were stored."""
        budget = self.settings.challenge_matches_per_round
        planned = self._next(budget, withdrawn) if budget > 0 else []
        if not planned:
            return 0
        which = {t.match_id: (cid, n) for cid, n, t in planned}
        reports: list[Report] = []
        await self.league.executor.run([t for _, _, t in planned], reports.append)
        stored = 0
        for report in reports:
            if isinstance(report, MatchOutcome) and report.task.match_id in which:
                cid, n = which[report.task.match_id]
                store(self.db, cid, n, report)
                stored += 1
            elif isinstance(report, Withdrawn):  # a bot that broke down in a challenge, as in a ranked match
                record_withdrawal(report)
        for cid in {cid for cid, _, _ in planned}:
            c = get(self.db, cid)
            every = set(range(1, c.matches + 1)) if c is not None else set()
            if c is not None and c.state == OPEN and {p.n for p in played(self.db, cid)} >= every:
                _end(self.db, cid, "done")
        return stored
