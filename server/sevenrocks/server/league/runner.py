"""A league: the one loop (:mod:`..events.tournament`) played until stopped, with a field that changes.

An event is a league that stops at its budget and admits no one; a league plans
round after round with the field planner (:func:`.planner.plan_round`) and, between
rounds, reads its config again when the file changed (or on SIGHUP):

* a new ``[[entrants]]`` block joins the field;
* a removed block is **retired**: its matches and its row stay, it is no longer scheduled;
* a block whose command, code or environment changed (:mod:`..events.identity`) is a **new
  version**, ``name@2``, that replaces the old one in the field; the old version's
  results stay on their own row;
* a config that fails to parse is reported and ignored: the last good one plays on.

Remote entrants that are not connected are not scheduled (never forfeited for being
away) and are seated again once they dial in. ``final`` freezes the field (no more
entries), plays N more matches per active entrant, and publishes the final standings
(:func:`final_standings`). Everything a restart needs is in the store: the versions,
who is retired, the round counter, the freeze; so Ctrl-C, SIGTERM or ``kill -9`` and
the same command resume.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..events.adaptive import result_of
from ..events.config import ConfigError, Entrant, EventConfig
from ..events.executor import Executor
from ..events.outcome import Withdrawn
from ..events.identity import digest, entrant_identity
from ..events.planner import judge_field, plan_round
from ..events.schedule import MatchTask
from .settings import LeagueSettings, load_league
from .status import State, write_status
from ..versions.snapshots import SnapshotError, tree_digest
from ..events.store import LeagueEntrant, Store
from ..versions.pinning import Versions
from ..events.tournament import EventPlan, Progress, Run, SkippingInOrder, fault_streaks, run_loop, seal_seed
from ..stats.fit import Result, fit
from ..stats.ratings import RatingBook
from ..stats.record import plays_head_to_head, records
from ..stats.places import Looks, place_text
from ..stats.verdict import verdict

#: The most matches one table of any format can be (every seat order of a deal, both ways round).
MAX_TABLE_MATCHES = 64


def league_fingerprint(config: EventConfig) -> str:
    """What may not change under a running league: the game its matches are of, and the seed."""
    return f"league-{config.ruleset}-{config.players}-{config.target}-{config.round_cap}-{config.seed}"


def bot_identity(config: EventConfig, entrant: Entrant) -> dict[str, Any]:
    """Who an entrant is for versioning: what it runs (not the league's settings, which apply to all)."""
    ident = entrant_identity(config, entrant)
    ident.pop("settings", None)
    return ident


def version_name(base: str, version: int) -> str:
    return base if version == 1 else f"{base}@{version}"


#: How a disqualification starts its entrants row's withdrawal reason (``sevenrocks league disqualify``).
DISQUALIFIED = "disqualified"


def disqualified(row: LeagueEntrant) -> bool:
    """Disqualified by the organiser: never rejoins the field, whatever the config says (its matches stay)."""
    return (row.withdrawn or "").startswith(DISQUALIFIED)


def sync_field(store: Store, config: EventConfig, frozen: bool) -> list[str]:
    """Bring the stored field in line with ``config``'s entrants; returns what changed, in words.

    Entrants of one name are versions of one bot, oldest first: a config block is one, a submitted
    entrant may be several (``[submissions] active_versions``). Each is matched by its identity to a
    stored version in play (or the newest one stored, which may rejoin); an unknown identity joins as
    the next version, ``name@k``; a version in play that no entrant is any more is retired (its matches
    and its row stay) — unless entries are closed, when the frozen field plays on as it is."""
    event = config.name
    stored: dict[str, list[LeagueEntrant]] = {}
    for row in store.league_entrants(event):
        stored.setdefault(row.base, []).append(row)
    blocks: dict[str, list[Entrant]] = {}
    for e in config.entrants:
        blocks.setdefault(e.name, []).append(e)
    said: list[str] = []
    for base, versions in blocks.items():
        rows = stored.get(base, [])
        matched: set[str] = set()
        joined: list[str] = []
        for e in versions:
            ident = bot_identity(config, e)
            latest = max(rows, key=lambda r: r.version) if rows else None
            same = next((r for r in rows if r.digest == digest(ident) and r.name not in matched and
                         (r is latest or (r.retired_at is None and not disqualified(r)))), None)
            if same is not None:
                matched.add(same.name)
                if same.retired_at is not None and not frozen and not disqualified(same):
                    store.retire(event, same.name, retired=False)
                    said.append(f"{same.name} rejoined the field")
                continue
            if frozen:
                said.append(f"{e.name}: entries are closed (final standings); not admitted")
                continue
            name = version_name(e.name, 1 if latest is None else latest.version + 1)
            store.join(event, name, e.name, 1 if latest is None else latest.version + 1, e.remote, e.command, ident)
            rows = [r for r in store.league_entrants(event) if r.base == base]
            matched.add(name)
            joined.append(name)
        out = [] if frozen else [r.name for r in rows if r.name not in matched and r.retired_at is None]
        for old in out:
            store.retire(event, old)
        if len(joined) == 1 and len(out) == 1:
            said.append(f"{joined[0]} replaces {out[0]} (a new version)")
            continue
        said += [f"{n} joined the field" + (" (a new version)" if "@" in n else "") for n in joined]
        said += [f"{n} retired (a newer version took its place; its matches and its row stay)" for n in out]
    for base, rows in stored.items():
        if base not in blocks:
            for row in rows:
                if row.retired_at is None:
                    store.retire(event, row.name)
                    said.append(f"{row.name} retired (kept in the standings, no longer scheduled)")
    return said


def active_field(store: Store, config: EventConfig) -> list[Entrant]:
    """The versions in the field now, as entrants (named ``base`` or ``base@N``): each stored version in
    play with the entrant of its identity (or, in a frozen field whose config moved on, its name's newest)."""
    blocks: dict[str, Entrant] = {}
    by_digest: dict[tuple[str, str], Entrant] = {}
    for e in config.entrants:
        blocks[e.name] = e
        by_digest[(e.name, digest(bot_identity(config, e)))] = e
    out = []
    for row in store.league_entrants(config.name):
        if row.retired_at is None and row.base in blocks and not disqualified(row):
            e = by_digest.get((row.base, row.digest or ""), blocks[row.base])
            out.append(dataclasses.replace(e, name=row.name))
    return out


def league_ratings(config: EventConfig, store: Store) -> SkippingInOrder:
    """The league's live ratings from its stored results, in index order (rounds may leave gaps)."""
    book = RatingBook(config.make_ruleset().partnerships, config.ratings.tau, config.ratings.draw_probability)
    order = SkippingInOrder(book)
    for _event, _index, seats, ranks, fault_seat in store.results([config.name]):
        book.apply(seats, ranks, fault_seat)
    order.next = store.max_index(config.name) + 1
    return order


# ---------------------------------------------------------------------- final standings


@dataclass(frozen=True, slots=True)
class Standing:
    #: The places the final verdict allows, printed ``1``, ``2–3`` (:func:`..stats.places.place_text`).
    place: str
    name: str
    mu: float
    sigma: float
    matches: int
    #: P(ahead of the next entrant); None for the last.
    p_ahead: float | None
    settled: bool | None
    #: The place interval as numbers: [1 + entrants settled ahead, n − entrants settled behind].
    place_best: int = 1
    place_worst: int = 1


@dataclass(frozen=True, slots=True)
class Standings:
    rows: tuple[Standing, ...]
    settled: bool
    level: float
    matches: int
    #: Pairs judged as one family (every pair of the field), and how many of them are settled.
    pairs: int = 0
    pairs_settled: int = 0

    def lines(self) -> list[str]:
        out = [f"{'place':>5}  {'entrant':<24} {'mu':>7} {'sigma':>6} {'matches':>7}  against the next"]
        for r in self.rows:
            p = "" if r.settled is None else "ahead (settled)" if r.settled else "open (NOT settled)"
            out.append(f"{r.place:>5}  {r.name:<24} {r.mu:7.2f} {r.sigma:6.2f} {r.matches:7d}  {p}")
        verdict_line = ("the final order is settled" if self.settled else
                        f"the final order is NOT settled at level {self.level:g}: a place such as 2–3 is every "
                        "place the settled pairs allow")
        family = (f"every pair judged: {self.pairs_settled} of {self.pairs} pairs settled, every claim holding at "
                  f"once at level {self.level:g}")
        return out + [verdict_line, family]

    def to_json(self) -> dict[str, Any]:
        return {"settled": self.settled, "level": self.level, "matches": self.matches,
                "pairs": self.pairs, "pairs_settled": self.pairs_settled,
                "standings": [dataclasses.asdict(r) for r in self.rows]}


def final_standings(store: Store, config: EventConfig, active: Sequence[str]) -> Standings:
    """The active field ranked by a fit of every stored result, with the settled verdict.

    Every match of the league counts (earlier versions' and retired entrants' too: they
    measure the opponents); only the active versions that played are ranked. Every pair
    of them is judged at ``[ratings].level`` as one family, and each gets the places the
    claims allow (``2–3``: :mod:`..stats.places`).
    """
    matches = store.matches([config.name])
    results = [Result(m.seats, m.ranks, m.group, m.fault.seat if m.fault else None) for m in matches]
    counts = store.match_counts(config.name)
    active = [n for n in active if counts.get(n)]  # an entrant that never played has nothing to rank
    partnerships = config.make_ruleset().partnerships
    f = fit(results, partnerships, list(active))
    order = sorted(active, key=lambda n: (-f.rating(n).mu, n))
    h2h = records(results) if plays_head_to_head(config.format, config.head_to_head, partnerships) else None
    v = verdict(f, config.ratings.level, order, records=h2h, partnerships=partnerships,
                looks=Looks.from_json(store.verdict_looks(config.name)))
    rows: list[Standing] = []
    for i, (name, (best, worst)) in enumerate(zip(order, v.places)):
        nb = v.neighbours[i] if i < len(v.neighbours) else None
        r = f.rating(name)
        rows.append(Standing(place_text(best, worst), name, r.mu, r.sigma, counts.get(name, 0),
                             None if nb is None else nb.p_ahead, None if nb is None else nb.settled, best, worst))
    pairs = len(order) * (len(order) - 1) // 2
    return Standings(tuple(rows), v.settled and len(order) > 1, config.ratings.level, len(matches),
                     pairs, len(v.ahead))


def keep_final(store: Store, event: str, standings: Standings) -> None:
    """Keep the final standings as published (their lines and JSON) in the database.

    Why: a finished league run again prints them from there, at once, without fitting,
    pinning bots or starting a referee (:func:`finished_league`); and the published site
    shows the same final the console printed."""
    store.keep_final_standings(event, {"lines": standings.lines(), "json": standings.to_json()})


def finished_league(store: Store, config: EventConfig) -> list[str] | None:
    """The final standings' lines of a league whose final was published; None while it is not finished.

    A league finished before they were kept has them fitted again from its stored results (the
    versions in play when it closed: not retired, not withdrawn)."""
    if not store.is_league(config.name):
        return None
    if store.league_state(config.name).final_at is None:
        return None
    kept = store.final_standings_kept(config.name)
    if kept is not None:
        return [str(line) for line in kept["lines"]]
    active = [r.name for r in store.league_entrants(config.name) if r.retired_at is None and not r.withdrawn]
    standings = final_standings(store, config, active)
    keep_final(store, config.name, standings)
    return standings.lines()


# ---------------------------------------------------------------------- the league's rounds


@dataclass
class League:
    """The state of one league run: its config file, settings and where its matches play."""

    path: Path | None
    config: EventConfig
    settings: LeagueSettings
    store: Store
    executor: Executor
    say: Callable[[str], None] = lambda text: None
    #: ``--final N`` from the command line (else ``[league].final_matches``).
    final: int | None = None
    #: A config without ``[event].seed`` plays on a secret seed, committed to before the first match
    #: (``sevenrocks league`` sets this; :func:`..events.tournament.seal_seed`).
    generate_seed: bool = False
    #: Set by SIGHUP: re-read the config before the next round.
    reload: asyncio.Event = field(default_factory=asyncio.Event)
    #: Told each planned round (the live site's deal guard registers its duplicate groups).
    on_planned: Callable[[Sequence[MatchTask]], None] | None = None
    #: Told when a round is over (the guard may show all of its matches).
    on_round_end: Callable[[Sequence[MatchTask]], None] | None = None
    #: How to change the field of the executor (the arena's ``update``); None: a new executor per field.
    update_executor: Callable[[Sequence[Entrant]], Awaitable[None]] | None = None
    #: Who can be seated now; None: the whole active field.
    available: Callable[[], set[str]] | None = None
    #: Launched entrants whose process died outside a match (the arena's ``dead``), and how to restart
    #: them, withdrawing those that keep dying (the arena's ``revive``); None: nothing to revive.
    dead: Callable[[], list[str]] | None = None
    revive: Callable[[], Awaitable[list[tuple[str, str]]]] | None = None
    #: The snapshot store (:mod:`..versions.pinning`): each launched entrant runs a copy of its files, and a
    #: change of its live files is a new version, seen before the next round. None: not pinned.
    versions: Versions | None = None
    #: Entrants that came in through submissions (:mod:`..submissions`), added to the config's own.
    submitted: Callable[[], Sequence[Entrant]] | None = None
    submitted_names: set[str] = field(default_factory=set)
    #: Played at the start of each planning step, before the ranked round (an author's unranked challenges,
    #: :mod:`..submissions.challenges`): given how to record a withdrawal and who is withdrawn.
    between_rounds: Callable[[Callable[[Withdrawn], None], set[str]], Awaitable[int]] | None = None
    #: Submitted entrant (base name) -> its author (:meth:`..submissions.desk.Desk.authors_of`): the planner
    #: never seats two entrants or versions of one author at one table. None: any may share a table.
    authors_of: Callable[[], dict[str, str]] | None = None
    field_: list[Entrant] = field(default_factory=list)
    #: Version name -> identity digest (shared with the run's plan).
    digests: dict[str, str] = field(default_factory=dict)
    final_standings: Standings | None = None
    #: The state last recorded (:mod:`.status`): (state, detail).
    status: tuple[State, str] | None = None
    _mtime: float = 0.0
    _next_index: int = 0
    _round: list[MatchTask] = field(default_factory=list)
    _final_done: bool = False

    def _file_changed(self) -> bool:
        if self.path is None:
            return False
        try:
            mtime = os.stat(self.path).st_mtime_ns
        except OSError:
            return False
        changed = mtime != self._mtime
        self._mtime = mtime
        return changed

    async def refresh(self, force: bool = False) -> None:
        """Re-read the config if it changed (or on SIGHUP), and look for changed bot files; apply the
        field changes."""
        changed = self._file_changed()
        if not (force or changed or self.reload.is_set() or self._files_changed()):
            return
        self.reload.clear()
        if self.path is not None and (changed or not force):
            try:
                config, settings = load_league(self.path)
            except ConfigError as bad:
                self.say(f"config not applied, the league plays on with the last good one: {bad}")
                return
            if not config.seed_given:  # the committed seed plays on
                config = dataclasses.replace(config, seed=self.config.seed, seed_given=self.config.seed_given)
            if league_fingerprint(config) != league_fingerprint(self.config) or config.name != self.config.name:
                self.say(f"{self.path}: the league's [event] name, ruleset, target, round_cap and seed cannot "
                         "change while it runs; only [[entrants]] and [league] changes are applied")
                return
            # What the command line set (concurrency, sandbox) stays as it was.
            config = dataclasses.replace(config, concurrency=self.config.concurrency, sandbox=self.config.sandbox)
            try:
                self.config = self._pinned(config)
            except SnapshotError as bad:
                self.say(f"config not applied, the league plays on with the last good one: {bad}")
                return
            self.settings = settings
        elif force:
            self.config = self._pinned(self.config)
        if self.submitted is not None:
            own = tuple(e for e in self.config.entrants if e.name not in self.submitted_names)
            extra = [e for e in self.submitted() if e.name not in {o.name for o in own}]
            self.submitted_names = {e.name for e in extra}
            self.config = dataclasses.replace(self.config, entrants=(*own, *extra))
        if self.store.league_entrants(self.config.name):  # the final closes entries before they are read
            self._freeze_if_asked()
        state = self.store.league_state(self.config.name)
        for line in sync_field(self.store, self.config, state.frozen_at is not None):
            self.say(line)
        self.field_ = active_field(self.store, self.config)
        self._freeze_if_asked()
        for e in self.field_:  # stored with each match: which program played it
            self.digests[e.name] = digest(entrant_identity(self.config, e))
        if self.update_executor is not None:
            await self.update_executor(self.field_)

    def _pinned(self, config: EventConfig) -> EventConfig:
        return self.versions.pin_config(config) if self.versions is not None else config

    def _files_changed(self) -> bool:
        """Has a launched entrant's live file changed since it was pinned? Then ``config`` holds the new
        pin (a cheap scan of sizes and times; files are copied only when one moved)."""
        if self.versions is None:
            return False
        try:
            config = self.versions.pin_config(self.config)
        except (SnapshotError, OSError) as bad:
            self.say(f"a bot's files cannot be copied, its version is unchanged: {bad}")
            return False
        moved = [e.name for e, old in zip(config.entrants, self.config.entrants) if e.pin != old.pin]
        self.config = config
        return bool(moved)

    def final_matches(self) -> int:
        return self.final if self.final is not None else self.settings.final_matches

    def _freeze_if_asked(self) -> None:
        n = self.final_matches()
        state = self.store.league_state(self.config.name)
        if n > 0 and state.frozen_at is None:
            counts = self.store.match_counts(self.config.name)
            active = active_field(self.store, self.config)
            self.store.freeze(self.config.name, n, {e.name: counts.get(e.name, 0) for e in active})
            self.say(f"entries closed: each of the {len(active)} active entrants plays {n} more matches, "
                     "then the final standings are published")
            self._final_seed()

    def _final_seed(self) -> None:
        """At the freeze: reveal the league's seed, and commit to a fresh secret one for the final's deals
        (nobody could know them before the field was frozen)."""
        name = self.config.name
        if self.store.seed_of(name, "final") is not None:
            return
        self.store.reveal_seed(name, "event")
        league = self.store.seed_of(name, "event")
        if league is not None:
            self.say(f"deal seed revealed: {league.key} (sha256 {league.commitment}); check the league's records "
                     f"with `sevenrocks verify --seed {league.key} RECORDS`")
        final = self.store.commit_seed(name, "final", None)
        self.say(f"the final's deals: a fresh secret seed, committed: sha256 {final.commitment} "
                 "(revealed with the final standings)")

    def deal_config(self, run: Run) -> EventConfig:
        """The config the next round's deals come from: the final's own seed once the field is frozen."""
        name = self.config.name
        frozen = self.store.league_state(name).frozen_at is not None
        row = self.store.seed_of(name, "final") if frozen else None
        if frozen and row is None:
            self._final_seed()
            row = self.store.seed_of(name, "final")
        row = row or self.store.seed_of(name, "event")
        if row is None:
            return self.config
        run.commitment = row.commitment
        return dataclasses.replace(self.config, seed=row.seed)

    def _final_left(self, active: Sequence[str]) -> dict[str, int] | None:
        """Matches each active entrant still owes the final (None: no final under way)."""
        state = self.store.league_state(self.config.name)
        if state.frozen_at is None or state.final_matches is None:
            return None
        counts = self.store.match_counts(self.config.name)
        return {n: state.final_counts.get(n, 0) + state.final_matches - counts.get(n, 0) for n in active}

    async def plan(self, run: Run) -> list[MatchTask] | None:
        """Step 1: the next round of the field planner over whoever can be seated now.

        When no table can be seated (too few entrants connected or not withdrawn, or none
        the format allows among them) the league is *waiting*: it says why once, records it
        (:mod:`.status`), and sleeps until the field changes (:meth:`_wait_for_change`)
        — it never plans the same empty round again and again."""
        rules = self.config.make_ruleset()
        need = 2 if rules.partnerships else rules.players
        challenged = False
        while True:
            await self.refresh()
            stop = self.settings.stop_after
            if stop and run.done >= stop:
                self._status("finished", f"stop_after = {stop} matches stored")
                return None
            for name, reason in self.tampered(run.plan.withdrawn):
                run.record(Withdrawn(name, reason))
            if self.revive is not None:
                if hasattr(self.executor, "withdrawn"):  # those withdrawn earlier are not revived
                    self.executor.withdrawn = set(run.plan.withdrawn)
                for name, reason in await self.revive():
                    run.record(Withdrawn(name, reason))
            if self.between_rounds is not None and not challenged:  # once per ranked round, waiting or not
                challenged = True
                await self.between_rounds(run.record, run.plan.withdrawn)
            active = [e.name for e in self.field_ if e.name not in run.plan.withdrawn]
            ready = self.available() if self.available is not None else set(active)
            seatable = sorted(set(active) & ready)
            left = self._final_left(active)
            if left is not None and all(left[n] <= 0 for n in seatable):
                self._final_done = True  # who is away now is ranked with what it played, or not at all
                self._status("finished", "the final standings are published")
                return None
            if len(seatable) >= need:
                tasks = self._plan_tables(run, seatable)
                if tasks:
                    playing: State = "frozen" if left is not None else "playing"
                    self._status(playing, f"{len(seatable)} entrants seated: {', '.join(seatable)}")
                    return tasks
                why = (f"the field planner finds no table for {', '.join(seatable)} in format "
                       f"{self.config.format!r}")
            else:
                why = self._shortfall(active, seatable, need, run.plan.withdrawn)
            self._status("waiting", f"{why}; waiting for an entrant to join or reconnect, a fixed version, "
                                    "a config change or SIGHUP")
            await self._wait_for_change(ready)

    def tampered(self, withdrawn: set[str]) -> list[tuple[str, str]]:
        """Launched entrants whose snapshot no longer has its digest (its files were changed after it was
        registered: the version that would play is not the one that was checked): each with the line that
        withdraws it. Asked before every round, before a process is started or revived from its snapshot."""
        out = []
        for e in self.field_:
            if e.pin is None or e.name in withdrawn:
                continue
            try:
                actual = tree_digest(Path(e.pin.workdir))
            except OSError:
                actual = ""
            if actual != e.pin.digest:
                out.append((e.name, f"withdrawn: its snapshot {e.pin.digest[:12]} no longer matches its digest "
                                    "(its files were changed after it was registered); it plays again only as "
                                    "a new version"))
        return out

    def _shortfall(self, active: Sequence[str], seatable: Sequence[str], need: int, withdrawn: set[str]) -> str:
        """Why fewer than ``need`` entrants can be seated, naming who is out and why."""
        out = []
        gone = sorted(e.name for e in self.field_ if e.name in withdrawn)
        away = sorted(set(active) - set(seatable))
        if gone:
            out.append(f"{', '.join(gone)} withdrawn (back only as a new version)")
        if away:
            out.append(f"{', '.join(away)} not connected")
        return (f"only {len(seatable)} of {len(self.field_)} active entrants can be seated and a table needs {need}"
                + (f" ({'; '.join(out)})" if out else ""))

    def _plan_tables(self, run: Run, seatable: Sequence[str]) -> list[MatchTask]:
        assert run.results is not None
        round_no = self.store.next_round(self.config.name, run.done + self.settings.round_matches)
        results = list(run.results.values())
        # A round smaller than one table (a duplicate pairings table is four matches) plans nothing:
        # grow it to the smallest that holds a table rather than ask again for ever.
        size = self.settings.round_matches
        judged = None
        if results:  # each round is a look: what it proves is kept (settled pairs stay settled)
            _, judged = judge_field(self.config, seatable, results,
                                    Looks.from_json(self.store.verdict_looks(self.config.name)))
            if judged.looks is not None:
                self.store.save_verdict_looks(self.config.name, judged.looks.to_json())
        groups = self.author_groups(seatable)
        dealt = self.deal_config(run)
        planned = plan_round(dealt, seatable, results, round_no, size, groups=groups, judged=judged)
        while not planned and size < MAX_TABLE_MATCHES:
            size *= 2
            planned = plan_round(dealt, seatable, results, round_no, size, groups=groups, judged=judged)
        tasks = []
        for t in planned:
            if t.match_id in run.results:
                continue
            tasks.append(dataclasses.replace(t, event_id=self.config.name, index=self._next_index))
            self._next_index += 1
        self._round = tasks
        if tasks and self.on_planned is not None:
            self.on_planned(tasks)
        return tasks

    def author_groups(self, seatable: Sequence[str]) -> dict[str, str]:
        """Version name -> its author, for the seatable versions of submitted entrants (siblings: never at
        one table); empty when the organiser lets them share tables."""
        if self.authors_of is None:
            return {}
        authors = self.authors_of()
        bases = {r.name: r.base for r in self.store.league_entrants(self.config.name)}
        return {name: authors[base] for name in seatable
                if (base := bases.get(name, name)) in self.submitted_names and base in authors}

    def _status(self, state: State, detail: str) -> None:
        """Record the league's state; say it on the console when it starts or stops waiting
        (not on every round)."""
        if (state, detail) == self.status:
            return
        if state == "waiting" or (self.status is not None and self.status[0] == "waiting"):
            self.say(f"{state}: {detail}")
        self.status = (state, detail)
        write_status(self.store.db, self.config.name, state, detail)

    async def _wait_for_change(self, ready: set[str]) -> None:
        """Sleep until the field may have changed: SIGHUP, the config file or a bot's files changed, or
        the set of entrants that can be seated moved (a join, a reconnect, a restarted process).

        Only cheap checks, every ``poll_s`` (file times) and ``idle_s`` (who is connected): no planning."""
        loop = asyncio.get_running_loop()
        next_look = loop.time() + self.settings.idle_s
        while True:
            if await self._wait(min(self.settings.poll_s, self.settings.idle_s)):
                return
            if loop.time() >= next_look:
                next_look = loop.time() + self.settings.idle_s
                now = self.available() if self.available is not None else ready
                if now != ready or (self.dead is not None and self.dead()):
                    return

    async def _wait(self, seconds: float) -> bool:
        """Sleep, but wake early (True) when SIGHUP asks for a reload, or the config or a bot's file changes."""
        end = asyncio.get_running_loop().time() + seconds
        while (left := end - asyncio.get_running_loop().time()) > 0:
            try:
                await asyncio.wait_for(self.reload.wait(), min(left, self.settings.poll_s))
                return True
            except TimeoutError:
                if self._file_changed():
                    self._mtime = 0.0  # let refresh() see the change
                    return True
                if self._files_changed():  # a bot's file: refresh() re-reads it (a new version)
                    self.reload.set()
                    return True
        return False

    def fit(self, run: Run) -> None:
        """Step 4: the round is over; the field planner fits the stored results when it plans the next."""
        for t in self._round:  # a table never played (an entrant withdrawn) no longer holds the ratings back
            if t.index >= run.order.next and t.index not in run.order.pending:
                run.order.add(t.index, (), ())
        if self.on_round_end is not None:
            self.on_round_end(self._round)
        self._round = []

    def finish(self, run: Run) -> None:
        if self._final_done:
            active = [e.name for e in self.field_ if e.name not in run.plan.withdrawn]
            self.final_standings = final_standings(self.store, self.config, active)
            keep_final(self.store, self.config.name, self.final_standings)
            self.store.final_published(self.config.name)


async def run_league(league: League, observe: Callable[[Progress], None] | None = None) -> EventPlan:
    """Open (or resume) the league in its store and run the loop until it stops or its final is published."""
    cfg, sealed = seal_seed(league.config, league.store, league.generate_seed)
    league.config = cfg
    store = league.store
    if store.seed_of(cfg.name, "final") is None:
        league.say(f"deal seed committed: sha256 {sealed.commitment} ("
                   + ("the config's public seed" if sealed.given else "secret") + "; revealed when the final is frozen)")
    state = store.open_league(cfg, league_fingerprint(cfg))
    league._file_changed()
    await league.refresh(force=True)
    done_before = sum(1 for _ in store.results([cfg.name]))
    order = league_ratings(cfg, store)
    league._next_index = order.next
    withdrawn = {r.name for r in store.league_entrants(cfg.name) if r.withdrawn}
    plan = EventPlan(0, done_before, withdrawn=withdrawn, digests=league.digests, was_finished=state.final_at is not None)
    results = {m.match_id: result_of(m.seats, m.ranks, m.group, m.fault) for m in store.matches([cfg.name])}
    run = Run(cfg, store, league.executor, observe, plan, order, results, done_before,
              streaks=fault_streaks(cfg, store, "a new version (a changed file or a new submission)"))
    if plan.was_finished:
        active = [e.name for e in league.field_ if e.name not in withdrawn]
        league.final_standings = final_standings(store, cfg, active)
        return plan
    return await run_loop(run, _Rounds(league))


class _Rounds:
    """The league as :class:`~.tournament.Rounds` (the one loop's steps 1 and 4)."""

    def __init__(self, league: League) -> None:
        self.league = league

    async def plan(self, run: Run) -> list[MatchTask] | None:
        return await self.league.plan(run)

    def fit(self, run: Run) -> None:
        self.league.fit(run)

    def finish(self, run: Run) -> None:
        self.league.finish(run)
