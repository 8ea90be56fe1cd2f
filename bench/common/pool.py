"""The pool of real reference-bot matches and the events bootstrapped from it, shared by the ranking studies.

``bench/ranking/ranking.py`` compares event designs on it, ``claims.py`` reproduces the
default event's figures and ``verdict.py`` checks the verdict at every margin; the pool
(``bench/ranking/data/ranking_pool.csv``) is built by ``bench/ranking/ranking_pool.py``.
An event's deal of a matchup is a pool group of that matchup drawn at random (with
replacement): two matches of one deal with the seats exchanged; without duplicates, the
same number of matches each from a group of its own.
"""

from __future__ import annotations

import csv
import random
import statistics
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

from sevenrocks.server.events.adaptive import AdaptivePlan
from sevenrocks.server.events.config import EventConfig, ScheduleSettings, parse_config
from sevenrocks.server.events.planner import judge_field
from sevenrocks.server.events.schedule import MatchTask
from sevenrocks.server.stats.fit import Result, fit
from sevenrocks.server.stats.intervals import wilson
from sevenrocks.server.stats.verdict import verdict

#: The cached pool, beside the ranking studies (bench/ranking/data/).
POOL = Path(__file__).resolve().parents[1] / "ranking" / "data" / "ranking_pool.csv"
#: The reference bots' true order: the ladder's, and the pool's own.
TRUTH = ("search", "defensive", "greedy", "random")
LEVEL = 0.95
Side = tuple[str, ...]
Key = tuple[frozenset[Side], int]


def load_pool(path: Path) -> dict[Key, list[list[tuple[tuple[str, ...], tuple[int, ...]]]]]:
    """Complete groups of each pool unit, keyed by its two sides and cyclic order."""
    raw: dict[tuple[str, int], dict[int, tuple[tuple[str, ...], tuple[int, ...]]]] = defaultdict(dict)
    with path.open(newline="") as f:
        for r in csv.DictReader(f):
            w = r["winner"]
            ranks = (0, 0) if w == "" else (0, 1) if w == "0" else (1, 0)
            raw[(r["unit"], int(r["group"]))][int(r["seating"])] = (tuple(r["seats"].split(".")), ranks)
    pool: dict[Key, list[list[tuple[tuple[str, ...], tuple[int, ...]]]]] = defaultdict(list)
    for (unit, _group), seatings in sorted(raw.items()):
        if len(seatings) != 2:
            continue
        kind, _, rest = unit.partition(":")
        if kind == "h2h":
            a, b = rest.split("~")
            key: Key = (frozenset({(a, a), (b, b)}), 0)
        else:
            sides, _, o = rest.rpartition(":")
            p, q = (tuple(sorted(s.split("."))) for s in sides.split("~"))
            key = (frozenset({p, q}), int(o[1:]))
        pool[key].append([seatings[0], seatings[1]])
    return pool


class Dealer:
    """Plays an event's scheduled matches from the pool, one duplicate group at a time."""

    def __init__(self, pool: dict[Key, list[list[tuple[tuple[str, ...], tuple[int, ...]]]]],
                 rng: random.Random) -> None:
        self.pool, self.rng = pool, rng
        self.unit = {cycle(s): key for key, groups in pool.items() for g in groups for s, _ in g}

    def play(self, tasks: Sequence[MatchTask]) -> list[Result]:
        """A result for every task: a duplicate group of two is one pool group (both seatings);
        a match of its own (no duplicates) is one seating of a pool group drawn for it alone."""
        groups: dict[str, list[MatchTask]] = {}
        for t in tasks:
            groups.setdefault(t.group, []).append(t)
        out: list[Result] = []
        for name, ts in groups.items():
            drawn = self.rng.choice(self.pool[self.unit[cycle(ts[0].seats)]])
            if len(ts) == 2:
                out.extend(Result(s, r, name) for s, r in drawn)
            else:
                s, r = self.rng.choice(drawn)
                out.append(Result(s, r, name))
        return out


def cycle(seats: Sequence[str]) -> tuple[str, ...]:
    """The seating up to rotation: a matchup and its cyclic order (what the pool's units are)."""
    return min(tuple(seats[i:]) + tuple(seats[:i]) for i in range(len(seats)))


@dataclass(frozen=True, slots=True)
class Event:
    """What one bootstrapped event concluded."""

    matches: int
    order: tuple[str, ...]
    #: (upper, lower, settled) for each neighbour pair.
    claims: tuple[tuple[str, str, bool], ...]

    @property
    def settled(self) -> bool:
        return all(s for _, _, s in self.claims)


def config(fmt: str, head_to_head: bool = False, duplicate: bool = True, **schedule: object) -> EventConfig:
    cfg = parse_config({"event": {"name": "bench", "format": fmt, "head_to_head": head_to_head,
                                  "duplicate": duplicate},
                        "entrants": [{"name": n, "bot": n} for n in sorted(TRUTH)]},  # as default_config()
                       "<bench>")
    return replace(cfg, schedule=ScheduleSettings(**schedule)) if schedule else cfg  # type: ignore[arg-type]


def judge_fit(results: Sequence[Result]) -> Event:
    v = verdict(fit(results, True, TRUTH), LEVEL)
    return Event(len(results), v.order, tuple((n.upper, n.lower, n.settled) for n in v.neighbours))


def adaptive_event(cfg: EventConfig, dealer: Dealer) -> Event:
    """The adaptive planner, its rounds played from the pool instead of over gRPC."""
    plan = AdaptivePlan(cfg)
    results: list[Result] = []
    tasks = plan.first_round()
    while tasks:
        results.extend(dealer.play(tasks))
        tasks = plan.next_round(results)
    return judge_fit(results)


# ---------------------------------------------------------------------- today's default event and its pool

#: Real matches of the default event's own bots (``bench/ranking/default_pool.py build``).
DEFAULT_POOL = Path(__file__).resolve().parents[1] / "ranking" / "data" / "default_pool.csv"


def pool_results(pool: dict) -> list[Result]:  # type: ignore[type-arg]
    return [Result(s, r, f"g{k}-{i}") for k, groups in enumerate(pool.values()) for i, g in enumerate(groups)
            for s, r in g]


def truth(pool: dict) -> tuple[str, ...]:  # type: ignore[type-arg]
    """The pool's own order: the fit of every pool match (what a very long event would find)."""
    results = pool_results(pool)
    names = sorted({n for r in results for n in r.seats})
    return verdict(fit(results, True, names), LEVEL).order


def summary(label: str, evs: list[Event], order: tuple[str, ...]) -> str:
    n = len(evs)
    right = sum(e.order == order for e in evs)
    settled = [e for e in evs if e.settled]
    lo, hi = wilson(right, n)
    slo, shi = wilson(len(settled), n)
    true_settled = sum(e.order == order for e in settled)
    pairs = statistics.fmean(sum(s for _, _, s in e.claims) for e in evs)
    return (f"| {label} | {statistics.fmean(e.matches for e in evs):.0f} | {right / n:.3f} ({lo:.2f}–{hi:.2f}) | "
            f"{len(settled) / n:.3f} ({slo:.2f}–{shi:.2f}) | {pairs:.2f} of {len(order) - 1} | "
            + (f"{true_settled}/{len(settled)}" if settled else "–") + " |")


def default_event(cfg: EventConfig, dealer: Dealer, order: tuple[str, ...]) -> Event:
    """One default event played from the pool: the product's planner, and its verdict (``judge_field``:
    the fit plus the head-to-head records, the verdict the event stops on and closes with)."""
    plan = AdaptivePlan(cfg)
    results: list[Result] = []
    tasks = plan.first_round()
    while tasks:
        results.extend(dealer.play(tasks))
        tasks = plan.next_round(results)
    _, v = judge_field(cfg, [e.name for e in cfg.entrants], results)
    return Event(len(results), v.order, tuple((n.upper, n.lower, n.settled) for n in v.neighbours))
