"""The field planner: each round's tables drawn for a field of any size, never enumerating matchups.

A round is a list of *tables*: four seats in two partnerships (A+B against C+D),
head to head (A+A against B+B) where the format has it, two fixed teams, or a
fives group of ``players``. Each table is played in a balanced set of seatings
(both cyclic orders of a partnership table, both seat orders head to head, every
rotation of a fives group), so no entrant's seat decides its result.

- **Round 0** (nothing played yet) is whole *matchdays*: every entrant sits at
  exactly one table per matchday (a few matchdays when the field does not divide
  into tables), so every entrant plays the same number of matches.
- **Later rounds** spend most of the round (:data:`FOCUS`) on neighbour pairs of
  the fit's order that the verdict has not decided (head to head where the
  format has it: A+A against B+B measures A − B four times as sharply as a
  pairings match), those closest to a decision first; the rest explores: the
  least-exposed entrants at tables with the partners and opponents they met
  least.
- **Siblings apart**: entrants given one *group* (a league's submitted entrants and versions of one
  author) never sit at one table, as partners or as opponents: an author's second entrant cannot throw
  its matches to lift the first.
- **Equal exposure**: an entrant is never given a table that would take it above
  :data:`CAP` times the mean number of matches, and entrants below :data:`FLOOR`
  times the mean are seated first, so every entrant stays within 0.5x–2x of the
  mean whatever it is called or where it is listed (ties are broken by a seeded
  hash of the name, never by list order).

Deterministic: a round is a pure function of the config (its seed), the active
field, the stored results and the round number, so a resumed event (or one run on
a Dask cluster) replans exactly the rounds it played. Planning costs O(matches in
the round) plus one fit of the results.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

from .config import EventConfig
from .schedule import MatchTask, RulesetSpec, deal_seed, ruleset_spec
from ..stats.fit import Fit, Result, fit
from ..stats.intervals import derive_seed
from ..stats.places import Looks
from ..stats.record import plays_head_to_head, records
from ..stats.verdict import Neighbour, Verdict, match_information, verdict

#: Share of a later round's matches spent on undecided neighbour pairs; the rest explores.
FOCUS = 2 / 3
#: No table takes an entrant above CAP x the mean matches (the promise is 2x), and each round is
#: ordered so that a budget cutting it anywhere keeps that (:func:`capped_order`) ...
CAP = 1.85
#: ... and entrants below FLOOR x the mean are seated first (the promise is 0.5x).
FLOOR = 0.52
#: How far ahead in the queue a table looks for partners and opponents met least.
WINDOW = 6

Side = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Table:
    """One table of a round: its sides (partnerships or teams) or, in fives, one player per side.

    ``kind``: ``pairs`` (two partnerships of distinct entrants), ``h2h`` (A+A against
    B+B), ``teams`` (two fixed teams) or ``group`` (fives).
    """

    kind: str
    sides: tuple[Side, ...]

    @property
    def members(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(n for side in self.sides for n in side))


def _rotate(seats: Sequence[str], k: int = 1) -> tuple[str, ...]:
    n = len(seats)
    return tuple(seats[(i - k) % n] for i in range(n))


def seatings(table: Table, duplicate: bool) -> list[list[tuple[str, ...]]]:
    """The matches of a table, grouped by deal: each inner list shares one deal (a duplicate group).

    Partnerships: both cyclic orders (A C B D and A D B C), each a deal of its own,
    replayed with every player moved one seat (duplicate). Head to head: both seat
    orders (A B A B, B A B A), one deal replayed with duplicates, two deals without.
    Fives: every rotation of the group's order, one deal with duplicates, one each without.
    Every member plays every match of its table.
    """
    if table.kind == "group":
        order = tuple(side[0] for side in table.sides)
        rotations = [_rotate(order, k) for k in range(len(order))]
        return [rotations] if duplicate else [[r] for r in rotations]
    (a, b), (c, d) = table.sides
    if table.kind == "h2h":
        both: list[tuple[str, ...]] = [(a, c, a, c), (c, a, c, a)]
        return [both] if duplicate else [[s] for s in both]
    orders: list[tuple[str, ...]] = [(a, c, b, d), (a, d, b, c)]
    return [[o, _rotate(o)] if duplicate else [o] for o in orders]


def table_matches(kind: str, players: int, duplicate: bool) -> int:
    """Matches in one table of ``kind`` (every member plays all of them)."""
    if kind == "group":
        return players
    if kind == "h2h":
        return 2
    return 4 if duplicate else 2


def tasks_of(config: EventConfig, tables: Sequence[Table], round_no: int, start: int,
             spec: RulesetSpec | None = None) -> list[MatchTask]:
    """The tables of round ``round_no`` as match tasks, indexed from ``start``.

    Ids and groups name the round and the table (``<event>-r007t012-a.b.c.d``), so
    rounds never collide, whatever field played them; every task of the round has
    ``deal = round_no`` (the executor's fresh-process batches are per round).
    """
    spec = spec or ruleset_spec(config)
    out: list[MatchTask] = []
    for t, table in enumerate(tables):
        for k, group_seats in enumerate(seatings(table, config.duplicate)):
            group = f"r{round_no}t{t}o{k}"
            seed = deal_seed(config.seed, round_no, group)
            for seats in group_seats:
                mid = f"{config.name}-r{round_no:03d}t{t:03d}-{'.'.join(seats)}"
                out.append(MatchTask(config.name, mid, spec, seed, seats, start + len(out), round_no, group))
    return out


# ---------------------------------------------------------------------- the field


@dataclass
class _Format:
    """What a table may look like in this event's format."""

    #: Table kinds that explore, taken in turn.
    explore: tuple[str, ...]
    #: The kind that separates an undecided neighbour pair (or "" when none can).
    focus: str
    #: Seats per table per kind, counted in units (entrants, or teams).
    size: dict[str, int]
    players: int


def _format_of(config: EventConfig) -> _Format:
    rs = config.make_ruleset()
    if not rs.partnerships:
        return _Format(("group",), "group", {"group": rs.players}, rs.players)
    if config.format in ("self", "duel"):
        return _Format(("h2h",), "h2h", {"h2h": 2}, 4)
    if config.format == "teams":
        return _Format(("teams",), "teams", {"teams": 2}, 4)
    if config.format == "gauntlet":
        return _Format(("pairs", "h2h"), "h2h", {"pairs": 3, "h2h": 1}, 4)  # field units besides a candidate
    if config.head_to_head:
        return _Format(("pairs", "h2h"), "h2h", {"pairs": 4, "h2h": 2}, 4)
    return _Format(("pairs",), "pairs", {"pairs": 4}, 4)


class _Field:
    """The state a round is planned from: who played how much, and with whom."""

    def __init__(self, config: EventConfig, entrants: Sequence[str], results: Iterable[Result], round_no: int,
                 groups: Mapping[str, str] | None = None) -> None:
        self.config = config
        #: Entrant -> its group: no two of one group at one table (an entrant without one is its own).
        self.group = dict(groups or {})
        self.form = _format_of(config)
        self.rng = random.Random(derive_seed("sevenrocks-planner", config.seed, round_no))
        self.names = list(entrants)
        active = set(self.names)
        self.teams: dict[str, Side] = {}
        if config.format == "teams":
            self.teams = {"+".join(t): t for t in config.teams if set(t) <= active}
        self.candidates = [c for c in config.candidates if c in active] if config.format == "gauntlet" else []
        field = [n for n in self.names if n not in self.candidates]
        self.units = list(self.teams) if self.teams else field
        if self.form.explore == ("pairs",) and len(self.units) < 4:
            # Too few for two partnerships of four entrants (a league's field after a withdrawal):
            # each entrant partners itself, head to head, rather than nobody playing.
            self.form = _Format(("h2h",), "h2h", {"h2h": 2}, 4)
        #: A seeded tie-break per unit: list order and names never decide who plays.
        self.lot = {u: derive_seed("sevenrocks-lot", config.seed, round_no, u) for u in self.units + self.candidates}
        self.exposure: Counter[str] = Counter({n: 0 for n in self.names})
        self.met: Counter[tuple[str, str]] = Counter()
        for r in results:
            seats = [s for s in dict.fromkeys(r.seats) if s in active]
            for s in seats:
                self.exposure[s] += 1
            for i, a in enumerate(seats):
                for b in seats[i + 1:]:
                    self.met[(a, b) if a < b else (b, a)] += 1
        self.tables: list[Table] = []
        #: The active field by fitted strength (set when a round focuses).
        self.order: list[str] = []
        self.planned = 0
        self.turn = 0

    # -- exposure ------------------------------------------------------------------

    def unit_exposure(self, unit: str) -> int:
        return self.exposure[self.teams[unit][0]] if self.teams else self.exposure[unit]

    @property
    def field_size(self) -> int:
        """Entrants the exposure promise covers (a gauntlet's candidates aside)."""
        return max(1, sum(n not in self.candidates for n in self.names))

    def field_total(self) -> int:
        """Entrant-matches of the field (a gauntlet's candidates aside)."""
        return sum(self.exposure[n] for n in self.names if n not in self.candidates)

    def mean(self, extra: float = 0.0) -> float:
        """Mean matches per field entrant once ``extra`` more entrant-matches are played."""
        return (self.field_total() + extra) / self.field_size

    def met_with(self, unit: str, others: Iterable[str]) -> int:
        return sum(self.met[(unit, o) if unit < o else (o, unit)] for o in others)

    def add(self, table: Table) -> None:
        per = table_matches(table.kind, self.form.players, self.config.duplicate)
        members = table.members
        for m in members:
            self.exposure[m] += per
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                self.met[(a, b) if a < b else (b, a)] += per
        self.tables.append(table)
        self.planned += per

    # -- tables --------------------------------------------------------------------

    def next_kind(self) -> str:
        kind = self.form.explore[self.turn % len(self.form.explore)]
        self.turn += 1
        return kind

    def clash(self, unit: str, others: Sequence[str]) -> bool:
        """Can ``unit`` not sit at a table with ``others``: it is one of them, or of one's group?"""
        if unit in others:
            return True
        g = self.group.get(unit)
        return g is not None and any(self.group.get(o) == g for o in others)

    def take(self, queue: list[str], size: int) -> list[str] | None:
        """``size`` units from the front of ``queue``, no two of one group: the first, then those it met least."""
        if not queue:
            return None
        chosen = [queue.pop(0)]
        while len(chosen) < size:
            window = [(i, u) for i, u in enumerate(queue[:WINDOW]) if not self.clash(u, chosen)]
            if not window and self.group:  # siblings ahead in the queue: look further for another
                window = [(i, u) for i, u in enumerate(queue) if not self.clash(u, chosen)][:1]
            if not window:
                queue[:0] = chosen
                return None
            i, u = min(window, key=lambda iu: (self.met_with(iu[1], chosen), iu[0]))
            chosen.append(queue.pop(i))
        return chosen

    def build(self, kind: str, units: list[str]) -> Table:
        """A table of ``kind`` for ``units`` (plus a candidate in a gauntlet), partners met least."""
        if self.teams:
            return Table("teams", tuple(self.teams[u] for u in units))
        if self.form.explore == ("group",):
            return Table("group", tuple((u,) for u in units))
        if self.candidates:
            cand = min(self.candidates, key=lambda c: (self.exposure[c], self.lot[c]))
            units = [cand, *units]
        if kind == "h2h":
            a, b = units
            return Table("h2h", ((a, a), (b, b)))
        a, b, c, d = units
        # The split of four into two partnerships whose partners met least; a candidate keeps a partner.
        splits = [((a, b), (c, d)), ((a, c), (b, d)), ((a, d), (b, c))]
        p, q = min(splits, key=lambda s: self.met_with(s[0][0], [s[0][1]]) + self.met_with(s[1][0], [s[1][1]]))
        if self.rng.random() < 0.5:
            p = (p[1], p[0]) if not self.candidates else p
        return Table("pairs", (p, q))

    def queue(self, limit: float = math.inf) -> list[str]:
        """Units by exposure (least first), a seeded lot breaking ties; those at ``limit`` left out."""
        units = [u for u in self.units if self.unit_exposure(u) < limit]
        return sorted(units, key=lambda u: (self.unit_exposure(u), self.lot[u]))

    def matchdays(self, matches: int) -> None:
        """Round 0: whole matchdays, each seating every unit exactly as often as every other."""
        n = len(self.units)
        while True:
            kind = self.next_kind()
            size = self.form.size[kind]
            passes = size // math.gcd(n, size)
            before = (len(self.tables), self.planned, Counter(self.exposure), Counter(self.met))
            queue: list[str] = []
            for _ in range(passes):
                perm = sorted(self.units, key=lambda u: self.lot[u])
                self.rng.shuffle(perm)
                queue += perm
            complete = self._seat_all(kind, queue, size)
            if not complete:  # a field too small for this kind: undo, try the other
                del self.tables[before[0]:]
                self.planned, self.exposure, self.met = before[1], before[2], before[3]
                if len(self.form.explore) == 1 or self.turn > 4:
                    return
                continue
            if self.planned > matches and before[0] > 0:  # one matchday too many: the round ends before it
                del self.tables[before[0]:]
                self.planned, self.exposure, self.met = before[1], before[2], before[3]
                return
            if self.planned == matches:
                return

    def _seat_all(self, kind: str, queue: list[str], size: int) -> bool:
        tables: list[list[str]] = []
        while queue:
            units = self.take(queue, size)
            if units is None:
                units = self._repair(tables, queue[:size], size, self.clash)
                del queue[:size]
                if units is None:
                    return False
            tables.append(units)
        for units in tables:
            self.add(self.build(kind, units))
        return True

    @staticmethod
    def _repair(tables: list[list[str]], last: list[str], size: int,
                clash: Callable[[str, Sequence[str]], bool] = lambda u, others: u in others) -> list[str] | None:
        """``last`` repeats a unit (or, with ``clash``, a group): swap the repeats with members of tables
        already drawn."""
        if len(last) < size:
            return None
        for i in range(len(last)):
            if not clash(last[i], last[:i]):
                continue
            for t in tables:
                for j, u in enumerate(t):
                    rest = [x for k, x in enumerate(last) if k != i]
                    if not clash(u, rest) and not clash(last[i], [x for x in t if x != u]):
                        t[j], last[i] = last[i], u
                        break
                else:
                    continue
                break
            else:
                return None
        return last

    def explore(self, matches: int, limit: float = math.inf, below: float | None = None) -> None:
        """Tables for the least-exposed units until ``matches`` are planned.

        With ``below``, only until no unit is under ``below`` matches (those behind play first).
        """
        while self.planned < matches:
            queue = self.queue(limit)
            if below is not None and not any(self.unit_exposure(u) < below for u in queue):
                return
            added = False
            while self.planned < matches:
                if below is not None and (not queue or self.unit_exposure(queue[0]) >= below):
                    break
                kind = self.next_kind()
                if self.planned + table_matches(kind, self.form.players, self.config.duplicate) > matches:
                    kind = min(self.form.explore, key=lambda k: table_matches(k, self.form.players,
                                                                              self.config.duplicate))
                    if self.planned + table_matches(kind, self.form.players, self.config.duplicate) > matches:
                        return
                units = self.take(queue, self.form.size[kind])
                if units is None:
                    break
                self.add(self.build(kind, units))
                added = True
            if not added:
                return


def _targets(v: Verdict, top_k: int | None) -> list[Neighbour]:
    """Undecided pairs that matter, closest to a decision first; with top_k, then the pairs below it."""
    def distance(n: Neighbour) -> float:
        d, w = (n.low + n.high) / 2, (n.high - n.low) / 2
        room = max(abs(d), v.margin - abs(d))
        return w / room if room > 0 else math.inf

    undecided = [n for n in v.considered if not n.decided]
    out = sorted(undecided, key=lambda n: (distance(n), n.upper, n.lower))
    if top_k is not None:
        out += [n for n in v.neighbours[top_k:top_k + top_k] if not n.decided]
    return out


def judge_field(config: EventConfig, entrants: Sequence[str], results: Sequence[Result],
                looks: Looks | None = None) -> tuple[Fit, Verdict]:
    """The fit of every result and the verdict on the active field's order (every pair judged).

    ``looks``: what the verdict's earlier looks proved (:class:`..stats.places.Looks`); the
    verdict carries them on (``.looks``), so a pair once settled stays settled.
    """
    partnerships = config.make_ruleset().partnerships
    f = fit(results, partnerships, list(entrants))
    active = set(entrants)
    order = [n for n in sorted(f.names, key=lambda n: (-f.theta[f.index(n)], n)) if n in active]
    s = config.schedule
    h2h = records(results) if plays_head_to_head(config.format, config.head_to_head, partnerships) else None
    return f, verdict(f, config.ratings.level, order, s.tie_within, s.top_k or None, h2h, partnerships, looks=looks)


def plan_round(config: EventConfig, entrants: Sequence[str], results: Sequence[Result],
               round_no: int, matches: int, *, start_index: int | None = None,
               judged: Verdict | None = None, groups: Mapping[str, str] | None = None) -> list[MatchTask]:
    """The tables of round ``round_no`` for the active field ``entrants``, as match tasks; no two
    entrants of one of ``groups`` (entrant -> group) at one table.

    Pure and deterministic: the same config, field, results (in any order) and
    round number give the same tasks. ``matches`` is the size of the round: at most
    that many tasks, except that round 0 (no result of the field yet) is whole
    matchdays, at least one, so that every entrant plays equally often. Indexes
    start at ``start_index`` (default ``len(results)``). ``judged`` is the verdict
    on ``results`` when the caller has it already (:func:`judge_field`).
    """
    fld = _Field(config, entrants, results, round_no, groups)
    start = len(results) if start_index is None else start_index
    if len(fld.units) < 2 or matches <= 0:
        return []
    if all(fld.exposure[n] == 0 for n in fld.names):
        fld.matchdays(matches)
        if not fld.tables and fld.group:  # siblings too many for whole matchdays: the least-exposed first
            fld.explore(matches)
        return tasks_of(config, fld.tables, round_no, start)
    v = judged
    # The floor is FLOOR x the mean at the end of this round, which depends on the round's own
    # mix (a head-to-head match adds 2 entrant-matches, a partnership table 4). Guess the least
    # (every match head to head), plan, and plan again with what the round actually added until
    # the guess covers it; the pessimistic guess (every match at the widest table) as a last resort.
    # A budget that cuts the round only lowers the mean: those behind are seated first.
    widest = max(fld.form.players if k == "group" else 4 for k in fld.form.explore)
    extra = 2 * matches
    for attempt in range(5):
        fld = _Field(config, entrants, results, round_no, groups) if attempt else fld
        if attempt == 4:
            extra = widest * matches
        before = fld.field_total()
        v, behind = _plan_later(fld, config, entrants, results, matches, extra, v)
        added = fld.field_total() - before
        if added <= extra:
            break
        extra = added
    # Those behind first, the rest in a seeded order: a budget that cuts the round keeps its mix.
    rest = fld.tables[behind:]
    fld.rng.shuffle(rest)
    ordered = capped_order(_Field(config, entrants, results, round_no), fld.tables[:behind] + rest)
    return tasks_of(config, ordered, round_no, start)


def capped_order(start: _Field, tables: Sequence[Table]) -> list[Table]:
    """``tables`` reordered so that every prefix keeps each entrant within :data:`CAP` x the mean.

    The cap of a round is checked against the mean at the round's end; a budget that
    cuts the last round ends it at a prefix, whose mean is lower, and a prefix heavy with
    focus tables took one event of 128 entrants to 2.02x. Taking, at each step, the first
    table that keeps the prefix within the cap (else the one that strays least) keeps
    the promise wherever the budget cuts, and leaves the order alone when it already
    holds. Pure: it depends on the round, never on the budget (a resumed event with a
    larger budget replans the same round).
    """
    exposure = Counter(start.exposure)
    total, size = start.field_total(), start.field_size
    left, out = list(tables), []
    while left:
        best_i, best_ratio = 0, math.inf
        for i, table in enumerate(left):
            per = table_matches(table.kind, start.form.players, start.config.duplicate)
            members = [m for m in table.members if m not in start.candidates]
            mean = (total + per * len(members)) / size
            top = max([exposure[m] + per for m in members], default=0)
            ratio = top / mean if mean > 0 else 0.0
            if ratio <= CAP:
                best_i = i
                break
            if ratio < best_ratio:
                best_i, best_ratio = i, ratio
        table = left.pop(best_i)
        per = table_matches(table.kind, start.form.players, start.config.duplicate)
        for m in table.members:
            exposure[m] += per
        total += per * sum(m not in start.candidates for m in table.members)
        out.append(table)
    return out


def _plan_later(fld: _Field, config: EventConfig, entrants: Sequence[str], results: Sequence[Result],
                matches: int, extra: int, v: Verdict | None) -> tuple[Verdict | None, int]:
    """A later round's tables into ``fld``, the floor taken at the mean after ``extra`` more
    entrant-matches; returns the verdict used and how many tables seat those behind."""
    form = fld.form
    per_focus = table_matches(form.focus, form.players, config.duplicate) if form.focus else 0
    # The cap uses the least the round can add to the field (every match head to head; in a
    # gauntlet one field entrant per match, the candidates not counted), so it is never crossed.
    cap = CAP * fld.mean((1 if fld.candidates else 2) * matches)
    floor = FLOOR * fld.mean(extra)
    # 1. Whoever fell behind plays first.
    fld.explore(matches, cap, floor)
    behind = len(fld.tables)
    # 2. The undecided neighbour pairs, closest to a decision first, round robin.
    if per_focus and fld.planned < matches:
        v = v if v is not None else judge_field(config, entrants, results)[1]
        _focus(fld, v, matches, cap, config.schedule.top_k or None)
    # 3. The rest explores.
    fld.explore(matches, cap)
    return v, behind


def _focus(fld: _Field, v: Verdict, matches: int, cap: float, top_k: int | None) -> None:
    """Focus tables on the verdict's targets, round robin, up to FOCUS of the round's matches.

    Exploring is for the open pairs the focus does not look at (below the top k's
    reach); when the targets are every open neighbour pair (a four-bot field), the
    whole round goes to them: exploring there only takes matches from the open pair.
    """
    per = table_matches(fld.form.focus, fld.form.players, fld.config.duplicate)
    fld.order = list(v.order)
    aims = _targets(v, top_k)
    tables = {(n.upper, n.lower): _focus_table(fld, n) for n in aims}
    targets = [(t, _weight(fld, n)) for n in aims if (t := tables[(n.upper, n.lower)]) is not None]
    unseen = any(not n.decided and tables.get((n.upper, n.lower)) is None for n in v.neighbours)
    until = min(matches, fld.planned + math.ceil(FOCUS * matches)) if unseen else matches
    # Every target gets a table, then more in proportion to what a match teaches about it
    # (stride scheduling: the next table goes to the target with the least tables per weight).
    given = [0] * len(targets)
    blocked: set[int] = set()
    while fld.planned + per <= until and len(blocked) < len(targets):
        i = min((i for i in range(len(targets)) if i not in blocked), key=lambda i: (given[i] / targets[i][1], i))
        table = targets[i][0]
        # A gauntlet's candidates meet the whole field: only the field is held to the cap.
        if all(fld.exposure[m] + per <= cap for m in table.members if m not in fld.candidates):
            fld.add(table)
            given[i] += 1
        else:
            blocked.add(i)


def _weight(fld: _Field, pair: Neighbour) -> float:
    """How much one focus table teaches about ``pair`` (1 for an even pair), from the fit's estimate."""
    estimate = (pair.low + pair.high) / 2 if math.isfinite(pair.low + pair.high) else 0.0
    return max(0.01, match_information(estimate, fld.form.explore != ("group",)))


def _focus_table(fld: _Field, pair: Neighbour) -> Table | None:
    """The table that separates ``pair`` most directly in this format, or None."""
    a, b = pair.upper, pair.lower
    form = fld.form
    if form.focus == "teams":
        ta = next((u for u, t in fld.teams.items() if a in t), None)
        tb = next((u for u, t in fld.teams.items() if b in t), None)
        return None if ta is None or tb is None or ta == tb else Table("teams", (fld.teams[ta], fld.teams[tb]))
    if fld.candidates and a not in fld.candidates and b not in fld.candidates:
        return None
    if fld.clash(a, [b]):  # siblings: never at one table
        return None
    if form.focus == "h2h":
        return Table("h2h", ((a, a), (b, b)))
    # Pairings without head to head, or fives: the pair plus the entrants ranked nearest to it.
    near: list[str] = []
    for n in _nearest(pair, [n for n in fld.names if n not in (a, b)], fld):
        if not fld.clash(n, [a, b, *near]):
            near.append(n)
    if form.focus == "group":
        need = form.players - 2
        if len(near) < need:
            return None
        members = [a, b, *near[:need]]
        fld.rng.shuffle(members)
        return Table("group", tuple((m,) for m in members))
    if len(near) < 2:
        return None
    return Table("pairs", ((a, near[0]), (b, near[1])))


def _nearest(pair: Neighbour, others: list[str], fld: _Field) -> list[str]:
    """Other entrants by how close their rank in the fit's order is to the pair's."""
    rank = {n: i for i, n in enumerate(fld.order)}
    centre = (rank.get(pair.upper, 0) + rank.get(pair.lower, 0)) / 2
    return sorted(others, key=lambda n: (abs(rank.get(n, 0) - centre), fld.lot.get(n, 0)))
