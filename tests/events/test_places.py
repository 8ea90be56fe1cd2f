"""Places from every pair, and claims that never flicker. Fast: no match is played.

- A field whose neighbour pairs are all open still has pairs far apart that are
  settled: every pair is judged (one Holm family of n(n − 1)/2 claims) and each entrant
  gets the places those claims allow, not a place shared by the whole field.
- A pair settled at one look stays settled at the next even when the new evidence
  alone would not say so (the running maximum of an always-valid e-process), unless
  the field changed (a new fit); the store keeps the looks for a resumed event.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest

from sevenrocks.server.events.config import Entrant, EventConfig
from sevenrocks.server.events.store import Store
from sevenrocks.server.stats.fit import BETA, Fit, Phi, Result, fit
from sevenrocks.server.stats.places import Looks, place_intervals, place_text
from sevenrocks.server.stats.verdict import _far_pairs, _widen, evidence, holm, holm_levels, verdict


def league_like(seed: int, matches: int = 735, n: int = 9, gap: float = 3.0) -> tuple[list[str], list[Result]]:
    """``n`` entrants ``gap`` rating points apart at random tables of four, results from the fit's model."""
    rng = random.Random(seed)
    names = [f"b{i}" for i in range(n)]
    theta = {x: gap * (n - 1 - i) for i, x in enumerate(names)}
    out = []
    for k in range(matches):
        a, b, c, d = rng.sample(names, 4)
        won = rng.random() < Phi((theta[a] + theta[c] - theta[b] - theta[d]) / (2 * BETA))
        out.append(Result((a, b, c, d), (0, 1) if won else (1, 0), f"g{k}"))
    return names, out


def test_pairs_far_apart_are_settled_when_every_neighbour_pair_is_open() -> None:
    """The organiser's league: nine entrants, 735 matches. Neighbours 3 points apart stay open, so the
    neighbour rule joined all nine at one place; pairs 6 or more apart settle, and the places say so."""
    names, results = league_like(3)
    v = verdict(fit(results, True, names), 0.95)
    assert v.order == tuple(names)
    assert not any(nb.settled for nb in v.neighbours)  # the neighbour chain alone would tie the field
    assert v.family == 36
    texts = v.place_texts()
    assert texts[0] in ("1", "1–2", "1–3") and texts[-1] in ("9", "8–9", "7–9"), texts
    assert max(w - b for b, w in v.places) <= 4, texts
    # With neighbour pairs only (the old family) nothing is settled, so every place is 1–9.
    alone = verdict(fit(results, True, names), 0.95, every_pair=False)
    assert alone.place_texts() == ["1–9"] * 9


def test_place_intervals_follow_the_claims_and_what_they_imply() -> None:
    order = ["a", "b", "c", "d", "e"]
    # a > c and c > e imply a > e: a is behind nobody and ahead of two.
    assert place_intervals(order, [("a", "c"), ("c", "e"), ("b", "d")]) == [(1, 3), (1, 4), (2, 4), (2, 5), (3, 5)]
    assert place_intervals(order, []) == [(1, 5)] * 5
    every = [(x, y) for i, x in enumerate(order) for y in order[i + 1:]]
    assert place_intervals(order, every) == [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5)]
    assert [place_text(b, w) for b, w in place_intervals(order, [("a", "b"), ("a", "c"), ("a", "d"), ("d", "e")])] == \
        ["1", "2–5", "2–5", "2–4", "3–5"]


def test_the_vectorised_far_pairs_read_the_same_evidence_as_one_pair_at_a_time() -> None:
    names, results = league_like(5, matches=300)
    f = fit(results, True, names)
    widen = _widen(f.clusters, 0.95)
    i, j, fwd, bwd = _far_pairs(f, names, widen)
    for a, b, x, y in list(zip(i.tolist(), j.tolist(), fwd.tolist(), bwd.tolist()))[::5]:
        ev = evidence(f, names[a], names[b], 0.95, 0.0, widen)
        assert x == pytest.approx(ev.log_ahead, abs=1e-6) and y == pytest.approx(ev.log_behind, abs=1e-6)


def test_holm_for_a_large_family_is_holm() -> None:
    rng = np.random.default_rng(2)
    for _ in range(50):
        logs = rng.exponential(3.0, size=8)
        evs = [type("E", (), {"log_ahead": float(x), "log_tied": -math.inf})() for x in logs]
        assert list(holm_levels(logs, 0.95, 8)) == pytest.approx(holm(evs, 0.95, 0.0))  # type: ignore[arg-type]


def two(d: float, se: float, names: tuple[str, str, str] = ("a", "b", "c")) -> Fit:
    """A fit of three entrants: a is d above b, b is 20 above c, each contrast with standard error ``se``."""
    var = se * se / 2
    cov = tuple(tuple(var if r == c else 0.0 for c in range(3)) for r in range(3))
    return Fit(names, (d, 0.0, -20.0), cov, cov, 1)


def test_a_settled_pair_stays_settled_at_later_looks_of_the_same_field() -> None:
    first = verdict(two(4.0, 0.8))
    assert first.neighbours[0].settled and first.looks is not None
    # A later look whose evidence alone is weaker (the estimate fell back): still settled.
    later = two(1.0, 0.7)
    assert not verdict(later).neighbours[0].settled
    again = verdict(later, looks=first.looks)
    assert again.neighbours[0].settled and ("a", "b") in again.ahead
    assert again.place_texts() == ["1", "2", "3"]
    # Through the store, as a resumed event reads them.
    assert Looks.from_json(first.looks.to_json()) == first.looks
    # A change of field is a new fit: the looks start again.
    other = Fit(("a", "b", "z"), later.theta, later.cov, later.robust, 1)
    assert not verdict(other, looks=first.looks).neighbours[0].settled


def test_the_store_keeps_the_looks_of_an_event(tmp_path: Path) -> None:
    looks = verdict(two(4.0, 0.8)).looks
    assert looks is not None
    config = EventConfig(name="e", entrants=tuple(Entrant(n, bot="random") for n in "abc"))
    with Store(tmp_path / "e.db", writer=True) as store:
        store.open_event(config, "fp", 10)
        assert store.verdict_looks("e") is None
        store.save_verdict_looks("e", looks.to_json())
    with Store(tmp_path / "e.db") as store:
        assert Looks.from_json(store.verdict_looks("e")) == looks


def test_an_adaptive_event_replayed_from_its_results_has_the_same_looks() -> None:
    """A resumed event replans its rounds from the stored results, and each replanned round is a look:
    its looks come back exactly as they were (and the store has them for the leaderboard)."""
    from sevenrocks.server.events.adaptive import AdaptivePlan, replay_rounds
    from sevenrocks.server.events.config import parse_config

    config = parse_config({"event": {"name": "f", "format": "self", "seed": 2},
                           "schedule": {"mode": "adaptive", "budget": 160},
                           "entrants": [{"name": n, "command": "true"} for n in ("a", "b", "c", "d")]}, "<test>")
    theta = {"a": 9.0, "b": 3.0, "c": 2.0, "d": -6.0}
    rng = random.Random(1)
    plan = AdaptivePlan(config)
    stored: dict[str, Result] = {}
    tasks = plan.first_round()
    while tasks:
        for t in tasks:
            s = t.seats
            won = rng.random() < Phi((theta[s[0]] + theta[s[2]] - theta[s[1]] - theta[s[3]]) / (2 * BETA))
            stored[t.match_id] = Result(s, (0, 1) if won else (1, 0), t.group)
        tasks = plan.next_round([stored[t.match_id] for t in plan.tasks if t.match_id in stored])
    replayed, rest = replay_rounds(config, stored.get)
    assert rest == [] and replayed.looks == plan.looks and plan.looks is not None and plan.looks.ahead
