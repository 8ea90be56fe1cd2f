"""The submission desk of one running league: settings, the pipeline, and the field it adds to the league.

Read from the league's TOML (docs/league.md)::

    [submissions]
    submissions_per_day = 5     # uploads per author in any 24 hours (rejected ones count)
    active_versions = 1         # the newest N accepted versions of each entrant play (name, name@2, ...)
    entrants_per_author = 1     # the entrants (names) of one author in play at once
    siblings_at_one_table = false   # true: two entrants or versions of one author may share a table
    challenges_per_day = 3      # unranked challenges per author in any 24 hours
    challenge_matches = 4       # the most matches one challenge plays
    challenge_matches_per_round = 2   # challenge matches played between two ranked rounds (0: none)
    max_upload_mb = 16          # the request body
    max_files = 2000            # members of the archive
    max_unpacked_mb = 64        # the archive's files once unpacked
    build_time_s = 300          # the build step, in its sandbox
    build_memory_mb = 2048      # all the build's processes together (a memory cgroup)
    build_processes = 256       # processes and threads of the build at once (a pids cgroup)
    build_cpu_cores = 1         # CPU of the whole build (a cgroup quota)
    build_disk_mb = 256
    workers = 2                 # submissions worked at once, at most one per author
    allow_uncontained = false   # take submissions without bubblewrap (then: root, a uid per build and bot)

    [[authors]]                 # or: sevenrocks league authors add NAME --db FILE
    name = "alice"
    token_sha256 = "..."        # the SHA-256 of her token (the file holds no secret)

The desk gives the league its submitted entrants (:meth:`Desk.entrants`, the
newest active submission of each) and tells it when they change — also when the
change was made by another process, such as ``sevenrocks league disqualify``
(:meth:`Desk.watch` polls a counter in the database).
"""

from __future__ import annotations

import asyncio
import math
import os
import sqlite3
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..events.config import ConfigError, Entrant
from ..league.runner import League
from ..sandbox.sandbox import Sandbox, SandboxError, SandboxSettings
from . import ledger
from .authors import AuthorError, check_name, ensure_tables, get_author, list_authors, sync_config_authors
from .build import BuildLimits
from .challenges import Challenges
from .pipeline import Pipeline, SubmitSettings, entrant_of
from .unpack import UnpackLimits

#: [submissions] key -> (default, smallest value).
KEYS: dict[str, tuple[float, float]] = {
    "submissions_per_day": (5, 0), "max_upload_mb": (16, 1), "max_files": (2000, 1), "max_unpacked_mb": (64, 1),
    "build_time_s": (300, 1), "build_memory_mb": (2048, 64), "build_disk_mb": (256, 1),
    "active_versions": (1, 1), "challenges_per_day": (3, 0), "challenge_matches": (4, 1),
    "challenge_matches_per_round": (2, 0), "build_processes": (256, 8), "build_cpu_cores": (1, 0.1),
    "workers": (2, 1), "entrants_per_author": (1, 1),
}
#: [submissions] keys that take true or false, and their default.
FLAGS: dict[str, bool] = {"allow_uncontained": False, "siblings_at_one_table": False}
#: Keys that take a whole number, and their largest value (each active version is a bot process of its own
#: and a row the field planner seats: a handful per author, never a flood).
WHOLE: dict[str, int] = {"active_versions": 10, "challenges_per_day": 100, "challenge_matches": 20,
                         "challenge_matches_per_round": 20, "build_processes": 100_000, "workers": 8,
                         "entrants_per_author": 10}
#: How often the database is asked whether another process changed the submitted field.
WATCH_S = 1.0


def parse_submissions(data: dict[str, Any], source: str) -> tuple[SubmitSettings, dict[str, str]]:
    """``[submissions]`` and ``[[authors]]`` of a league TOML: the settings, and author -> token hash."""
    raw = data.get("submissions", {})
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: [submissions] must be a table")
    unknown = sorted(set(raw) - set(KEYS) - set(FLAGS))
    if unknown:
        raise ConfigError(f"{source}: [submissions]: unknown key {unknown[0]!r}; valid: "
                          f"{', '.join(sorted([*KEYS, *FLAGS]))}")
    flags: dict[str, bool] = {}
    for name, default_flag in FLAGS.items():
        flag = raw.get(name, default_flag)
        if not isinstance(flag, bool):
            raise ConfigError(f"{source}: [submissions].{name}: expected true or false, got {flag!r}")
        flags[name] = flag
    v: dict[str, float] = {}
    for key, (default, low) in KEYS.items():
        value = raw.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < low:
            raise ConfigError(f"{source}: [submissions].{key}: expected a number >= {low:g}, got {value!r}")
        if key in WHOLE and (value != int(value) or value > WHOLE[key]):
            raise ConfigError(f"{source}: [submissions].{key}: expected a whole number from {low:g} to "
                              f"{WHOLE[key]}, got {value!r}")
        v[key] = value
    settings = SubmitSettings(
        submissions_per_day=int(v["submissions_per_day"]), max_upload_mb=int(v["max_upload_mb"]),
        active_versions=int(v["active_versions"]), challenges_per_day=int(v["challenges_per_day"]),
        entrants_per_author=int(v["entrants_per_author"]), siblings_at_one_table=flags["siblings_at_one_table"],
        challenge_matches=int(v["challenge_matches"]),
        challenge_matches_per_round=int(v["challenge_matches_per_round"]),
        unpack=UnpackLimits(int(v["max_files"]), int(v["max_unpacked_mb"] * 2**20)),
        build=BuildLimits(float(v["build_time_s"]), int(v["build_memory_mb"]), int(v["build_disk_mb"]),
                          int(v["build_processes"]), float(v["build_cpu_cores"])),
        workers=int(v["workers"]), allow_uncontained=flags["allow_uncontained"],
        declared="submissions" in data or bool(data.get("authors")))
    authors: dict[str, str] = {}
    listed = data.get("authors", [])
    if not isinstance(listed, list):
        raise ConfigError(f"{source}: [[authors]] must be an array of tables (write [[authors]], twice brackets)")
    for i, entry in enumerate(listed):
        if not isinstance(entry, dict) or set(entry) != {"name", "token_sha256"}:
            raise ConfigError(f"{source}: [[authors]] #{i + 1}: give exactly name and token_sha256")
        try:
            authors[check_name(str(entry["name"]))] = str(entry["token_sha256"])
        except AuthorError as e:
            raise ConfigError(f"{source}: [[authors]] #{i + 1}: {e}") from None
    return settings, authors


def contained_door(mode: str, settings: SubmitSettings, source: str) -> bool:
    """May this league open its door to authors, and does bubblewrap hold their builds and bots?

    True: bubblewrap runs here (the sandbox ``mode`` resolves to it). False: it does not, and the
    organiser said ``allow_uncontained = true``, and the league is root, so every build and bot runs
    under a uid of its own. Anything else is refused with one line (a stranger's build would otherwise
    run as the league's own user: it read /etc/shadow, the database and the author tokens)."""
    try:
        with Sandbox(SandboxSettings(mode=mode)) as probe:  # type: ignore[arg-type]
            resolved = probe.mode
    except SandboxError as e:
        raise ConfigError(f"{source}: [submissions]: {e}") from None
    if resolved == "bwrap":
        return True
    if not settings.allow_uncontained:
        raise ConfigError(
            f"{source}: [submissions]: refused: the sandbox here is {resolved!r}, not bubblewrap, so authors' "
            "builds and bots would not be contained; install bubblewrap (apt-get install bubblewrap), or write "
            "allow_uncontained = true in [submissions] to take submissions under resource limits and a uid "
            "of their own (as root)")
    if resolved == "off":
        raise ConfigError(f"{source}: [submissions]: refused with --sandbox off (every bot would run as the "
                          "league's own user, without limits): choose --sandbox rlimits or bwrap")
    if os.geteuid() != 0:
        raise ConfigError(f"{source}: [submissions].allow_uncontained: the league must run as root to give each "
                          "build and bot a uid of its own; run it as root or install bubblewrap")
    return False


def read_submissions(path: Path) -> tuple[SubmitSettings, dict[str, str]]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise ConfigError(f"{path}: cannot read [submissions] and [[authors]]: {e}") from None
    return parse_submissions(data, str(path))


def submitted_field(db: sqlite3.Connection, settings: SubmitSettings) -> list[Entrant]:
    """The league's submitted field: the newest ``active_versions`` active submissions of each entrant,
    oldest first, unless its author is disqualified (whatever state the disqualification left their rows
    in); of each author, only the first ``entrants_per_author`` entrants (names) to become active. Several
    of one entrant share its name: the league tells them apart by their snapshots and plays each as a
    version of its own (``name@k``)."""
    keep = settings.active_versions
    out: list[Entrant] = []
    subs = ledger.active(db)
    names: dict[str, list[str]] = {}  # author -> their entrants in play, first active first
    for sub in subs:
        mine = names.setdefault(sub.author, [])
        if sub.entrant not in mine and len(mine) < settings.entrants_per_author:
            mine.append(sub.entrant)
    for i, sub in enumerate(subs):
        author = get_author(db, sub.author)
        newer = sum(1 for s in subs[i + 1:] if s.entrant == sub.entrant)
        same = any(s.entrant == sub.entrant and s.folder == sub.folder for s in subs[i + 1:])
        if author is not None and author.disqualified_at is None and newer < keep and not same and \
                sub.entrant in names[sub.author]:
            out.append(entrant_of(sub))
    return out


class Desk:
    """Submissions of one league: the pipeline, the quota, the entrants they make."""

    def __init__(self, league: League, db_path: Path, config_path: Path | None, settings: SubmitSettings,
                 authors: dict[str, str], say: Callable[[str], None], hidden: Sequence[Path] = ()) -> None:
        self.league = league
        self.db = league.store.db
        self.config_path = config_path
        self.settings = settings
        self.say = say
        ensure_tables(self.db)
        #: The door is open (the config declares submissions, or the database holds authors): it must hold.
        self.door_open = settings.declared or bool(list_authors(self.db))
        contained = True
        if self.door_open:
            contained = contained_door(league.config.sandbox.mode, settings, str(config_path or db_path))
            if not contained:
                say("warning: [submissions] allow_uncontained = true: authors' builds and bots run WITHOUT "
                    "bubblewrap, under resource limits and a uid of their own each")
        try:
            sync_config_authors(self.db, authors)
        except AuthorError as e:
            raise ConfigError(str(e)) from None
        self.pipeline = Pipeline(db_path, settings, league.config.sandbox.mode, league.config.time.per_move_ms,
                                 self._changed, say, league.config.sandbox.read_only, league.config.sandbox.limits)
        self.pipeline.uncontained = not contained
        self.pipeline.hidden = tuple(Path(os.path.abspath(h)) for h in hidden)
        self._generation = ledger.generation(self.db)
        self._tasks: list[asyncio.Task[None]] = []
        self.challenges = Challenges(league, settings, say)

    @classmethod
    def open(cls, league: League, db_path: Path, config_path: Path | None, say: Callable[[str], None],
             hidden: Sequence[Path] = ()) -> Desk:
        """``hidden``: the league's own files (database, config, output folder), never shown to a build."""
        settings, authors = read_submissions(config_path) if config_path is not None else (SubmitSettings(), {})
        return cls(league, db_path, config_path, settings, authors, say, hidden)

    def entrants(self) -> list[Entrant]:
        """The league's submitted field (:func:`submitted_field`)."""
        return submitted_field(self.db, self.settings)

    def entries_open(self, db: sqlite3.Connection) -> bool:
        """False once the final closed entries (read on the caller's connection: the pipeline's thread)."""
        if self.league.final_matches() > 0:
            return False
        row = db.execute("SELECT frozen_at FROM league WHERE event_id = ?", (self.league.config.name,)).fetchone()
        return row is None or row[0] is None

    def authors_of(self) -> dict[str, str]:
        """Entrant name (base) -> its author, for every submitted entrant that is accepted: the league seats
        no two of one author at one table (``siblings_at_one_table``)."""
        rows = self.db.execute("SELECT entrant, author FROM submissions WHERE state IN (?, ?, ?) ORDER BY id",
                               ledger.ACCEPTED).fetchall()
        return {str(entrant): str(author) for entrant, author in rows}

    def entrants_of(self, author: str) -> list[str]:
        """The entrants (names) of ``author`` with an active submission, first active first."""
        return list(dict.fromkeys(s.entrant for s in ledger.active(self.db) if s.author == author))

    def version_of(self, sub: ledger.Submission) -> str | None:
        """The league's name for a submission that joined the field (``NAME`` or ``NAME@N``)."""
        if sub.folder is None or sub.state not in ("active", "retired", "disqualified"):
            return None
        rows = [r for r in self.league.store.league_entrants(self.league.config.name) if r.base == sub.entrant]
        for row in rows:
            if row.command and any(sub.folder in word for word in row.command):
                return row.name
        if sub.state != "active":
            return None
        # Active, not in the field yet (it joins at the league's next round): the next version's name.
        newest = max((r.version for r in rows), default=0)
        return sub.entrant if newest == 0 else f"{sub.entrant}@{newest + 1}"

    def config_names(self) -> set[str]:
        """Entrant names the organiser's config holds (no author may submit under one)."""
        return {e.name for e in self.league.config.entrants} - self.league.submitted_names

    def _changed(self) -> None:
        self._generation = ledger.generation(self.db)
        self.league.reload.set()

    async def start(self) -> None:
        self.league.between_rounds = self.challenges.between_rounds  # unranked challenges, between rounds
        self.pipeline.entries_open = self.entries_open
        if not self.settings.siblings_at_one_table:
            self.league.authors_of = self.authors_of  # no two entrants of one author at one table
        for sid in self.pipeline.resume(self.db):
            self.say(f"submission {sid}: the league stopped while it was being worked; it is done again")
        self.pipeline.start()
        self._tasks.append(asyncio.create_task(self.watch()))

    async def watch(self) -> None:
        """Wake the league when another process changed the submitted field (a disqualification)."""
        while True:
            await asyncio.sleep(WATCH_S)
            if ledger.generation(self.db) != self._generation:
                self._changed()

    async def stop(self) -> None:
        await self.pipeline.stop()
        for task in self._tasks:
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
