"""The leaderboard: ratings and statistics rebuilt from a database, as plain data.

Everything here is recomputed from stored results (never from memory of a run),
so any leaderboard can be rebuilt, for one event or for a league of events in
one file. :mod:`sevenrocks.server.publish.render` renders it as a table, JSON, CSV,
Markdown or a self-contained HTML page.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

from ..stats.fit import Fit, Result, fit, fit_pairs
from ..stats.ratings import RatingBook, pair_name
from ..stats.verdict import DEFAULT_LEVEL, Verdict, verdict, win_rate_of_margin
from ..stats.intervals import percentile, wilson
from ..stats.places import Looks, place_text
from ..stats.record import plays_head_to_head, records
from ..events.playoff import Statement
from ..events.store import EventInfo, Store, StoredMatch


#: The matrix is drawn up to this many subjects a side (eight bots' 28 partnerships, or 32 fives
#: bots); past that its cells are too many to read, and each bot's page lists its partners
#: and opponents instead.
MATRIX_LIMIT = 32
#: The chart of live TrueSkill ratings over the event replays every match through TrueSkill
#: in schedule order (about a millisecond a match, pure Python): it is drawn up to this many
#: matches and bots, and left out beyond (256 lines could not be told apart anyway).
HISTORY_MATCHES = 10_000
HISTORY_BOTS = 16


class LeaderboardError(ValueError):
    """The selection cannot make one leaderboard (no such event, mixed rulesets)."""


@dataclass(slots=True)
class Row:
    """One rated subject: a bot, or a partnership pairing."""

    rank: int
    name: str
    mu: float
    sigma: float
    conservative: float
    matches: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    win_rate: float = math.nan
    win_low: float = math.nan
    win_high: float = math.nan
    points_per_match: float = math.nan
    margin_per_match: float = math.nan
    forfeits: dict[str, int] = field(default_factory=dict)
    #: Matches another seat forfeited by its fault: no result for this subject (not in matches,
    #: wins or losses, nor in its rating; docs/tournament.md, "Forfeits").
    excused: int = 0
    decision_p50_ms: float = math.nan
    decision_p95_ms: float = math.nan
    #: P(this row is really ahead of the next row down) as if the event had looked once (NaN on the
    #: last row): the JSON and CSV keep it; the verdict below is what to read.
    p_ahead: float = math.nan
    #: Whether that order is settled at the leaderboard's level (None on the last row).
    settled: bool | None = None
    #: The verdict on this row against the next: "ahead", "tied" (within δ) or "open" (None on the last row).
    verdict: str | None = None
    #: The always-valid interval on (this row's μ − the next row's μ) behind that verdict.
    gap_low: float = math.nan
    gap_high: float = math.nan
    #: The places the verdict's claims on every pair allow: [1 + bots settled ahead, n − bots settled
    #: behind], printed ``place`` (``1``, ``2–3``); partnerships' rows keep their rank (no verdict).
    place: str = ""
    place_best: int = 0
    place_worst: int = 0


@dataclass(frozen=True, slots=True)
class DuplicateRow:
    """Two partnerships compared deal by deal: each played the deal from both sides."""

    first: str
    second: str
    deals: int
    first_both: int
    split: int
    second_both: int
    #: Mean over deals of the first side's score margin summed over both seatings.
    margin_per_deal: float
    margin_low: float
    margin_high: float
    #: Deals in which either match ended by a forfeit (their margins are the forfeit's scores).
    forfeited: int = 0


@dataclass(frozen=True, slots=True)
class Withdrawal:
    """An entrant withdrawn from an event (its process kept crashing) and what it did not play."""

    event: str
    name: str
    reason: str
    not_played: int


@dataclass(slots=True)
class Leaderboard:
    events: list[str]
    ruleset: str
    players: int
    matches: int
    scheduled: int
    bots: list[Row]
    pairs: list[Row]
    #: Row subject -> column subject -> (row's wins + half draws, matches).
    matrix: dict[str, dict[str, tuple[float, int]]]
    matrix_kind: str
    duplicates: list[DuplicateRow]
    #: (matches applied, {bot: conservative rating}) through the event: the live TrueSkill
    #: rating in schedule order, as the progress bar showed it (the table uses the fit). Empty
    #: past :data:`HISTORY_MATCHES` matches or :data:`HISTORY_BOTS` bots.
    history: list[tuple[int, dict[str, float]]]
    tau: float
    #: Entrants withdrawn for the rest of their event.
    withdrawn: list[Withdrawal] = field(default_factory=list)
    #: Voided attempts by reason: infrastructure faults, played again and charged to nobody.
    voided: dict[str, int] = field(default_factory=dict)
    #: The level at which the verdict's claims on the pairs that matter hold, all at once.
    level: float = 0.95
    #: Every neighbour pair of bots settled: the bots' order is settled.
    settled: bool = False
    #: Matrix subjects that can never meet (partnerships sharing a bot), as sorted pairs.
    cannot_meet: list[tuple[str, str]] = field(default_factory=list)
    #: Subjects the matrix would have: past :data:`MATRIX_LIMIT` it is left out (``matrix`` empty).
    matrix_subjects: int = 0
    #: δ of the verdict's ties, in rating points (0: a tie is never claimed), as the event set it.
    tie_within: float = 0.0
    #: Only the first ``top_k`` places are judged (prizes); None: the whole order.
    top_k: int | None = None
    #: Every pair that matters is ahead or tied within δ: the event had nothing left to learn.
    decided: bool = False
    #: Every pair that matters (the first ``top_k``, or all) is ahead: their order is settled.
    top_settled: bool = False
    #: Claims judged as one family (every pair of bots, or with ``top_k`` the neighbour pairs that
    #: matter) and the pairs of bots it settled, which the places follow from.
    family: int = 0
    pairs_settled: int = 0
    #: The deals' seed commitments: {event, stage, commitment, seed (``SEED:SALT`` once revealed, else None)}.
    seeds: list[dict[str, Any]] = field(default_factory=list)
    #: Each event's play-off as stated before its first match (:class:`..events.playoff.Statement`'s
    #: fields, plus ``event`` and ``played``: the matches it has played so far).
    playoffs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def tie_win_rate(self) -> float:
        """δ as a head-to-head win rate (NaN when no tie margin is set)."""
        return win_rate_of_margin(self.tie_within, self.partnerships) if self.tie_within > 0 else math.nan

    def judged(self, row: Row) -> bool:
        """Whether the verdict on ``row`` against the next one counts (within the top k)."""
        return row.verdict is not None and (self.top_k is None or row.rank <= self.top_k)

    @property
    def partnerships(self) -> bool:
        return self.ruleset == "seven-rocks"

    @property
    def matrix_shown(self) -> bool:
        return self.matrix_subjects <= MATRIX_LIMIT

    def meets(self, a: str, b: str) -> bool:
        """Whether matrix subjects ``a`` and ``b`` can meet at all (partnerships sharing a bot cannot)."""
        return a != b and tuple(sorted((a, b))) not in set(self.cannot_meet)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["matrix"] = {r: {c: {"score": s, "matches": n} for c, (s, n) in cols.items()} for r, cols in self.matrix.items()}
        out["history"] = [{"matches": n, "conservative": v} for n, v in self.history]
        out["tie_win_rate"] = self.tie_win_rate
        cleaned: dict[str, Any] = _clean(out)
        return cleaned


def _clean(x: Any) -> Any:
    """JSON has no NaN: missing statistics become null."""
    if isinstance(x, float):
        return None if math.isnan(x) else round(x, 4)
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def select_events(store: Store, event: str | None) -> list[EventInfo]:
    infos = store.events()
    if not infos:
        raise LeaderboardError(f"{store.path} holds no events yet; run `sevenrocks tournament --db {store.path}` first")
    if event is not None:
        chosen = [e for e in infos if e.event_id == event]
        if not chosen:
            raise LeaderboardError(f"no event {event!r} in {store.path}; events: {', '.join(e.event_id for e in infos)}")
        return chosen
    kinds = {(e.ruleset, e.players) for e in infos}
    if len(kinds) > 1:
        raise LeaderboardError(
            f"{store.path} holds events of different rulesets ({', '.join(sorted(f'{r}/{p}' for r, p in kinds))}); "
            f"choose one with --event NAME (events: {', '.join(e.event_id for e in infos)})"
        )
    return infos


def judge_events(store: Store, infos: Sequence[EventInfo], matches: Sequence[StoredMatch]) -> tuple[Fit, Verdict]:
    """The fit of ``matches`` and the verdict the event itself ran on: its level, tie margin δ and
    top k (the last event's, in a league), every pair judged, carrying on from its stored looks."""
    ids = [e.event_id for e in infos]
    level = float(infos[-1].config.get("ratings", {}).get("level", DEFAULT_LEVEL))
    schedule_cfg = infos[-1].config.get("schedule", {})
    margin = float(schedule_cfg.get("tie_within", 0.0) or 0.0)
    top_k = int(schedule_cfg.get("top_k", 0) or 0) or None
    partnerships = infos[0].ruleset == "seven-rocks"
    entrants = sorted({s for m in matches for s in m.seats})
    results = [Result(m.seats, m.ranks, f"{m.event_id}/{m.group}", m.fault.seat if m.fault else None)
               for m in matches]
    bot_fit = fit(results, partnerships, entrants)
    top_k = top_k if top_k is not None and top_k < len(entrants) else None
    event_cfg = infos[-1].config
    h2h = (records(results) if plays_head_to_head(str(event_cfg.get("format", "")), bool(event_cfg.get("head_to_head")),
                                                  partnerships) else None)
    # A single event's verdict carries on from the looks its rounds made (settled pairs stay settled).
    looks = Looks.from_json(store.verdict_looks(ids[0])) if len(ids) == 1 else None
    return bot_fit, verdict(bot_fit, level, margin=margin, top_k=top_k, records=h2h, partnerships=partnerships,
                            looks=looks)


def standing_places(store: Store, event: str) -> tuple[dict[str, str], int]:
    """Each bot's place in ``event`` as the leaderboard prints it (``2–3``), and how many bots are ranked:
    the verdict alone, without the leaderboard's other statistics (the author's page asks for it)."""
    infos = select_events(store, event)
    _, judged = judge_events(store, infos, store.matches([e.event_id for e in infos]))
    return dict(zip(judged.order, judged.place_texts())), len(judged.order)


def build_leaderboard(store: Store, event: str | None = None, history_points: int = 120) -> Leaderboard:
    """The leaderboard of one event, or of every event in the file (a league) in creation order."""
    infos = select_events(store, event)
    ids = [e.event_id for e in infos]
    ratings_cfg = infos[-1].config.get("ratings", {})
    tau = float(ratings_cfg.get("tau", 0.0))
    draw = float(ratings_cfg.get("draw_probability", 0.01))
    level = float(ratings_cfg.get("level", DEFAULT_LEVEL))
    margin = float(infos[-1].config.get("schedule", {}).get("tie_within", 0.0) or 0.0)
    partnerships = infos[0].ruleset == "seven-rocks"
    matches = store.matches(ids)
    results = [Result(m.seats, m.ranks, f"{m.event_id}/{m.group}") for m in matches]
    bot_fit, judged = judge_events(store, infos, matches)
    history: list[tuple[int, dict[str, float]]] = []
    if len(matches) <= HISTORY_MATCHES and len(bot_fit.names) <= HISTORY_BOTS:
        book = RatingBook(partnerships, tau, draw)
        every = max(1, math.ceil(len(matches) / history_points))
        history.append((0, {}))
        for n, m in enumerate(matches, start=1):
            book.apply(m.seats, m.ranks, m.fault.seat if m.fault else None)
            if n % every == 0 or n == len(matches):
                history.append((n, {k: r.conservative for k, r in book.bots().items()}))
    bots = _rows(bot_fit.ratings(), _bot_stats(matches, partnerships))
    for row, pair in zip(bots, judged.neighbours):
        row.p_ahead, row.settled, row.verdict = pair.p_ahead, pair.settled, pair.state
        row.gap_low, row.gap_high = pair.low, pair.high
    for row, (best, worst) in zip(bots, judged.places):
        row.place, row.place_best, row.place_worst = place_text(best, worst), best, worst
    pairs = _rows(fit_pairs(results), _pair_stats(matches)) if partnerships and matches else []
    subjects = len(pairs) if partnerships else len(bots)
    shown = subjects <= MATRIX_LIMIT
    if partnerships:
        matrix, kind = _pair_matrix(matches) if shown else {}, "partnerships"
        names = [r.name for r in pairs] if shown else []
        apart = [(a, b) for a, b in itertools.combinations(sorted(names), 2) if set(a.split("+")) & set(b.split("+"))]
    else:
        matrix, kind, apart = _bot_matrix(matches) if shown else {}, "bots", []
    withdrawn = [Withdrawal(*w) for w in store.withdrawals(ids)]
    voided = Counter(_void_kind(reason) for _e, _m, reason in store.voided(ids))
    seeds = [{"event": c.event_id, "stage": c.stage, "commitment": c.commitment,
              "seed": c.key if c.revealed_at is not None else None} for c in store.seeds(ids)]
    board = Leaderboard(
        ids, infos[0].ruleset, infos[0].players, len(matches), sum(e.total for e in infos),
        bots, pairs, matrix, kind, _duplicates(matches) if partnerships else [], history, tau,
        withdrawn, dict(sorted(voided.items())), level, judged.settled and len(bots) > 1, apart, subjects,
        margin, judged.top_k, judged.decided and len(bots) > 1, judged.top_settled and len(bots) > 1,
        family=judged.family, pairs_settled=len(judged.ahead),
    )
    board.seeds = seeds
    for e in ids:
        stated = store.playoff(e)
        if stated is not None:
            said = Statement.from_json(stated)
            played = sum(m.event_id == e and m.index >= said.start for m in matches)
            board.playoffs.append({"event": e, **asdict(said), "played": played})
    return board


def _void_kind(reason: str) -> str:
    """Voided reasons grouped for the table (the database keeps each one in full)."""
    if "from outside the harness" in reason:
        return "bot stopped by a signal from outside"
    if "crash is charged to another match" in reason or "already adjudicated" in reason:
        return "lost with a bot's crash charged to another match"
    if "referee shut down" in reason:
        return "referee shut down"
    if "stopped by the harness" in reason:
        return "stopped by the harness"
    return reason


# ---------------------------------------------------------------------- statistics

@dataclass(slots=True)
class _Acc:
    matches: int = 0
    wins: int = 0
    draws: int = 0
    points: float = 0.0
    margin: float = 0.0
    forfeits: Counter[str] = field(default_factory=Counter)
    excused: int = 0
    decisions: list[float] = field(default_factory=list)

    def add(self, m: StoredMatch, seat: int, partnerships: bool) -> None:
        """Count match ``m`` for the team of ``seat``."""
        outcome, points, margin = _seat_result(m, seat, partnerships)
        self.matches += 1
        self.wins += outcome == 1
        self.draws += outcome == 0
        self.points += points
        self.margin += margin


def _seat_result(m: StoredMatch, seat: int, partnerships: bool) -> tuple[int, float, float]:
    """(+1 win / 0 draw / -1 loss, points, margin) of the team of ``seat``."""
    team = seat % 2 if partnerships else seat
    if m.winner is None:
        outcome = 0
    else:
        outcome = 1 if m.winner == team else -1
    own = m.scores[team]
    others = [s for t, s in enumerate(m.scores) if t != team]
    return outcome, float(own), own - sum(others) / len(others)


def _bot_stats(matches: Sequence[StoredMatch], partnerships: bool) -> dict[str, _Acc]:
    acc: dict[str, _Acc] = defaultdict(_Acc)
    for m in matches:
        # A bot holding both seats of a partnership plays the match once.
        seen: set[str] = set()
        for seat, name in enumerate(m.seats):
            a = acc[name]
            a.decisions.extend(m.decision_ms.get(seat, ()))
            if name in seen:
                continue
            seen.add(name)
            if m.fault is not None and m.seats[m.fault.seat] != name:
                a.excused += 1  # another seat's forfeit: no result for this bot
                continue
            a.add(m, seat, partnerships)
        if m.fault is not None:
            acc[m.seats[m.fault.seat]].forfeits[m.fault.cause] += 1
    return acc


def _pair_stats(matches: Sequence[StoredMatch]) -> dict[str, _Acc]:
    acc: dict[str, _Acc] = defaultdict(_Acc)
    for m in matches:
        for team in (0, 1):
            name = pair_name(m.seats[team], m.seats[team + 2])
            a = acc[name]
            if m.fault is not None:
                a.excused += 1  # partnerships are never rated on a forfeit (one of the two is innocent)
            else:
                a.add(m, team, True)
            for seat in (team, team + 2):
                a.decisions.extend(m.decision_ms.get(seat, ()))
            if m.fault is not None and m.fault.seat % 2 == team:
                a.forfeits[m.fault.cause] += 1
    return acc


def _rows(ratings: dict[str, Any], acc: dict[str, _Acc]) -> list[Row]:
    """Rows ranked by μ, the fitted strength (with μ − 3σ, equal σ would hide nothing, but
    unequal σ would rank a well-measured strong subject below a barely-measured one)."""
    order = sorted(ratings, key=lambda k: (-ratings[k].mu, k))
    rows = []
    for rank, name in enumerate(order, start=1):
        r = ratings[name]
        a = acc.get(name, _Acc())
        row = Row(rank, name, r.mu, r.sigma, r.conservative, a.matches, a.wins, a.draws,
                  a.matches - a.wins - a.draws, forfeits=dict(sorted(a.forfeits.items())), excused=a.excused)
        if a.matches:
            score = a.wins + a.draws / 2
            row.win_rate = score / a.matches
            row.win_low, row.win_high = wilson(score, a.matches)
            row.points_per_match = a.points / a.matches
            row.margin_per_match = a.margin / a.matches
        if a.decisions:
            row.decision_p50_ms = percentile(a.decisions, 50)
            row.decision_p95_ms = percentile(a.decisions, 95)
        rows.append(row)
    return rows


def _pair_matrix(matches: Sequence[StoredMatch]) -> dict[str, dict[str, tuple[float, int]]]:
    cells: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0]))
    for m in matches:
        if m.fault is not None:
            continue  # a forfeit rates no partnership
        p, q = pair_name(m.seats[0], m.seats[2]), pair_name(m.seats[1], m.seats[3])
        score = 0.5 if m.winner is None else float(m.winner == 0)
        cells[p][q][0] += score
        cells[p][q][1] += 1
        cells[q][p][0] += 1 - score
        cells[q][p][1] += 1
    return {r: {c: (v[0], int(v[1])) for c, v in cols.items()} for r, cols in cells.items()}


def _bot_matrix(matches: Sequence[StoredMatch]) -> dict[str, dict[str, tuple[float, int]]]:
    """Fives: how often the row bot finished ahead of the column bot (ties count half)."""
    cells: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0]))
    for m in matches:
        for i, a in enumerate(m.seats):
            for j, b in enumerate(m.seats):
                if m.fault is not None and m.fault.seat not in (i, j):
                    continue  # a forfeit counts only against its faulting bot
                if i != j and a != b:
                    ri, rj = m.ranks[i], m.ranks[j]
                    cells[a][b][0] += 1.0 if ri < rj else 0.5 if ri == rj else 0.0
                    cells[a][b][1] += 1
    return {r: {c: (v[0], int(v[1])) for c, v in cols.items()} for r, cols in cells.items()}


def _duplicates(matches: Sequence[StoredMatch]) -> list[DuplicateRow]:
    """Seven Rocks: per duplicate group (a deal and its seat exchange), each side's summed margin."""
    groups: dict[str, list[StoredMatch]] = defaultdict(list)
    for m in matches:
        groups[m.group].append(m)
    per_matchup: dict[tuple[str, str], list[tuple[float, int]]] = defaultdict(list)
    forfeited: Counter[tuple[str, str]] = Counter()
    for ms in groups.values():
        if len(ms) != 2:
            continue  # the twin is not played yet
        first = sorted({pair_name(ms[0].seats[0], ms[0].seats[2]), pair_name(ms[0].seats[1], ms[0].seats[3])})
        if first[0] == first[1]:
            continue
        p, q = first
        margin = 0.0
        wins = 0
        for m in ms:
            team = 0 if pair_name(m.seats[0], m.seats[2]) == p else 1
            margin += m.scores[team] - m.scores[1 - team]
            wins += 1 if m.winner == team else 0
        per_matchup[(p, q)].append((margin, wins))
        forfeited[(p, q)] += any(m.reason == "forfeit" for m in ms)
    rows = []
    for (p, q), deals in sorted(per_matchup.items()):
        margins = [d[0] for d in deals]
        mean = statistics.fmean(margins)
        half = 1.96 * statistics.stdev(margins) / math.sqrt(len(margins)) if len(margins) > 1 else math.nan
        rows.append(DuplicateRow(
            p, q, len(deals), sum(1 for d in deals if d[1] == 2), sum(1 for d in deals if d[1] == 1),
            sum(1 for d in deals if d[1] == 0), mean, mean - half, mean + half, forfeited[(p, q)],
        ))
    return rows
