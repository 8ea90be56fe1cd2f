"""Perfect records settle, the verdict is monotone in the evidence, and an order's claims hold together.

The fit's interval alone breaks under complete separation (Hauck–Donner: 160 wins of
160 head to head read "open" while 36 of 40 read "ahead"); the pair's own head-to-head
record, an always-valid betting test (:mod:`sevenrocks.server.stats.record`), mends it.
Fast: synthetic results, no matches played.
"""

from __future__ import annotations

import math
import random

import pytest

from sevenrocks.server.stats.fit import BETA, Fit, Phi, Result, fit
from sevenrocks.server.stats.record import STAKES, Record, records
from sevenrocks.server.stats.verdict import Evidence, holm, verdict


def head_to_head(wins: int, n: int, table: int = 0) -> list[Result]:
    """``n`` head-to-head matches of a against b, a winning the first ``wins``; both seat orders per table."""
    out = []
    for i in range(n):
        seats = ("a", "b", "a", "b") if i % 2 == 0 else ("b", "a", "b", "a")
        a_wins = i < wins
        out.append(Result(seats, (0, 1) if a_wins == (seats[0] == "a") else (1, 0), f"r{i // 2}t{table}o{i % 2}"))
    return out


def top(results: list[Result], **kw: object) -> str:
    return verdict(fit(results, True), records=records(results), **kw).neighbours[0].state  # type: ignore[arg-type]


def test_a_pair_that_wins_every_match_is_ahead() -> None:
    """160/160 was "open" (interval −5.9 … 32.4) under the fit alone; the record settles it."""
    perfect = head_to_head(160, 160)
    alone = verdict(fit(perfect, True)).neighbours[0]
    assert alone.state == "open" and alone.low < 0  # the Hauck–Donner blind spot, still there without the record
    judged = verdict(fit(perfect, True), records=records(perfect)).neighbours[0]
    assert (judged.upper, judged.state) == ("a", "ahead") and judged.low > 0
    assert top(head_to_head(36, 40)) == "ahead"
    assert top(head_to_head(40, 40)) == "ahead"
    assert top(head_to_head(12, 12)) == "ahead"  # six tables won outright are proof at 95%


@pytest.mark.parametrize("n", [16, 40, 160])
def test_more_wins_never_unsettle_a_pair(n: int) -> None:
    """Monotone in the evidence: once w of n is "ahead", so is every w' > w of n."""
    states = [top(head_to_head(w, n)) for w in range(n // 2, n + 1)]
    first = states.index("ahead")
    assert states[first:] == ["ahead"] * (n + 1 - n // 2 - first), states


def test_twins_with_a_seat_advantage_are_rarely_called_ahead_at_any_look() -> None:
    """Exact twins, the first seat winning 65%, looked at after every table (2 matches) up to 160
    matches: a claim at ANY look in at most 5% of events (Ville: the record alone errs ≤ 5%).
    The record bets on both seat orders of a table together, so the seat's edge cancels."""
    rng = random.Random(29)
    wrong = 0
    events = 80
    for _ in range(events):
        results: list[Result] = []
        for t in range(80):
            for seats in (("a", "b", "a", "b"), ("b", "a", "b", "a")):
                first = rng.random() < 0.65
                results.append(Result(seats, (0, 1) if first else (1, 0), f"r{t}t0o{len(results) % 2}"))
            if t % 4 == 3 and verdict(fit(results, True), records=records(results)).neighbours[0].settled:
                wrong += 1
                break
    assert wrong <= events * 0.05, wrong


def test_a_record_bets_only_on_whole_tables() -> None:
    """A table missing a seat order is left out; a duplicate deal is one bet on the table's mean."""
    lone = [Result(("a", "b", "a", "b"), (0, 1), "r0t0o0")]
    assert records(lone) == {}
    both = head_to_head(2, 2)
    assert records(both)[("a", "b")].counts == {1.0: 2}  # separate deals: two bets
    duplicate = [Result(s, r, "r0t0o0") for s, r, _ in ((x.seats, x.ranks, x.group) for x in both)]
    assert records(duplicate)[("a", "b")].counts == {1.0: 1}  # one deal: one bet on the mean
    split = head_to_head(1, 2)
    assert records(split)[("a", "b")].counts == {1.0: 1, 0.0: 1}


def test_the_record_is_a_mixture_of_bets_on_both_sides() -> None:
    """n straight wins: half the mean of (1 + c)^n over the stakes (the other bettor lost ∏(1 − c))."""
    for n in (1, 5, 12):
        expected = (sum((1 + c) ** n for c in STAKES) + sum((1 - c) ** n for c in STAKES)) / (2 * len(STAKES))
        assert Record({1.0: n}).evalue() == pytest.approx(expected, rel=1e-9)
    assert Record().evalue() == 1.0
    assert Record({1.0: 3, 0.0: 3}).evalue() < 1  # an even record is evidence of nothing
    assert Record({1.0: 4}).flipped().counts == {0.0: 4}


def evidence_of(log_e: float) -> Evidence:
    """A pair whose evidence against "not ahead" is e^log_e (and whose interval then lies above 0)."""
    return Evidence(log_e, -math.inf, (0.0, 1.0), (log_e, 0.0))


def test_holm_splits_alpha_across_the_pairs_of_the_order() -> None:
    """Three pairs each past 1/α = 20 on its own but none past 3/α = 60: nothing is claimed
    (per pair, each would be "ahead", and the order could be wrong with probability up to 15%)."""
    each = [evidence_of(math.log(25))] * 3
    assert holm(each, 0.95, 0.0) == pytest.approx([1 - 0.05 / 3] * 3)
    # Step down: 100 ≥ 3/α, 45 ≥ 2/α, 25 ≥ 1/α: all three claimed, each at its own level.
    levels = holm([evidence_of(math.log(25)), evidence_of(math.log(100)), evidence_of(math.log(45))], 0.95, 0.0)
    assert levels == pytest.approx([0.95, 1 - 0.05 / 3, 1 - 0.05 / 2])
    # The first that fails stops the descent: 100 passes, 35 < 40 fails, 30 is held to 2/α too.
    levels = holm([evidence_of(math.log(100)), evidence_of(math.log(35)), evidence_of(math.log(30))], 0.95, 0.0)
    assert levels == pytest.approx([1 - 0.05 / 3, 1 - 0.05 / 2, 1 - 0.05 / 2])
    # With a tie margin every pair could claim "tied" as well: the family doubles.
    assert holm(each, 0.95, 1.0) == pytest.approx([1 - 0.05 / 6] * 3)


def a_chain(gap: float, se: float, n: int) -> Fit:
    """n bots, each ``gap`` above the next, with independent errors: every neighbour's se is ``se``."""
    var = se * se / 2
    cov = tuple(tuple(var if i == j else 0.0 for j in range(n)) for i in range(n))
    return Fit(tuple(f"b{i}" for i in range(n)), tuple(-gap * i for i in range(n)), cov, cov, 1)


def test_order_settled_needs_every_pair_at_its_holm_level() -> None:
    """A pair that is "ahead" alone is not settled inside an order of four pairs that all look alike."""
    lone = verdict(a_chain(3.3, 1.0, 2))
    assert lone.settled  # 3.3 is past its own 95% half-width (about 3.2 at se 1)
    chain = verdict(a_chain(3.3, 1.0, 5))
    assert not chain.settled and all(n.state == "open" for n in chain.neighbours)
    assert all(n.judged_at == pytest.approx(1 - 0.05 / 4) for n in chain.neighbours)
    assert verdict(a_chain(4.2, 1.0, 5)).settled  # past the half-width at α/4
    # top_k: only the first k pairs are the family; the pairs below are judged on their own.
    topped = verdict(a_chain(3.3, 1.0, 5), top_k=1)
    assert topped.neighbours[0].judged_at == pytest.approx(0.95) and topped.decided and topped.top_settled
    assert not topped.settled  # the pairs below the prize were judged each alone: no claim on the whole order


def test_twins_in_a_synthetic_head_to_head_league_stay_open() -> None:
    """A sanity check on the combined evidence: equal bots drawn from the fit's own model."""
    rng = random.Random(3)
    p = Phi(0.0 / BETA)
    results = []
    for t in range(100):
        for k, seats in enumerate((("a", "b", "a", "b"), ("b", "a", "b", "a"))):
            first = rng.random() < p
            results.append(Result(seats, (0, 1) if first else (1, 0), f"r{t}t0o{k}"))
    assert top(results) == "open"


def test_the_planner_and_until_settled_read_the_record_too() -> None:
    """judge_field (what the planner and --until-settled read) weighs the record in a head-to-head format."""
    from sevenrocks.server.events.config import parse_config
    from sevenrocks.server.events.planner import judge_field

    cfg = parse_config({"event": {"name": "s", "format": "self"}, "schedule": {"mode": "adaptive"},
                        "entrants": [{"name": n, "command": "true"} for n in ("a", "b")]}, "<test>")
    _, v = judge_field(cfg, ["a", "b"], head_to_head(40, 40))
    assert v.neighbours[0].state == "ahead" and v.settled


def test_a_drawn_match_is_half_a_win_for_either_side() -> None:
    """A draw (equal ranks) scores ½ from both sides: a record of draws is evidence of nothing."""
    drawn = [Result(s, (0, 0), g) for s, _, g in ((x.seats, x.ranks, x.group) for x in head_to_head(0, 4))]
    rec = records(drawn)[("a", "b")]
    assert rec.counts == {0.5: 4}
    assert rec.flipped().counts == {0.5: 4}
    assert rec.evalue() == pytest.approx(1.0)  # results at the mean: every bet returns its stake
    mixed = head_to_head(2, 4)[:2] + [Result(x.seats, (0, 0), x.group) for x in head_to_head(2, 4)[2:]]
    assert records(mixed)[("a", "b")].counts == {1.0: 2, 0.5: 2}


def test_a_pair_is_read_from_either_side_and_an_unmet_pair_has_no_record() -> None:
    from sevenrocks.server.stats.record import record_of

    table = records(head_to_head(3, 4))  # keyed ("a", "b"): a won 3 of 4
    assert record_of(table, "a", "b").counts == {1.0: 3, 0.0: 1}
    assert record_of(table, "b", "a").counts == {0.0: 3, 1.0: 1}  # the same record, from b's side
    assert record_of(table, "c", "a") == Record() and record_of(table, "a", "c") == Record()


def test_the_record_is_finite_at_the_edges_of_the_means_the_verdict_asks_about() -> None:
    """The verdict asks about Φ(d / β) over its grid, which is exactly 0 or 1 far out: never inf or nan."""
    import numpy as np

    for rec in (Record({1.0: 10}), Record({0.0: 10}), Record({0.5: 3, 1.0: 2})):
        out = rec.log_evalues(np.array([0.0, 1e-300, 0.5, 1.0 - 1e-17, 1.0]))
        assert np.all(np.isfinite(out)), (rec, out)


def test_a_record_cannot_be_changed_once_made() -> None:
    """One record is read by every verdict of a round (and the planner's): it must be a value."""
    import dataclasses

    rec = Record({1.0: 2})
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.counts = {0.0: 2}  # type: ignore[misc]


@pytest.mark.parametrize("fmt, head_to_head_pairings, partnerships, expected", [
    ("self", False, True, True), ("duel", False, True, True), ("gauntlet", False, True, True),
    ("pairings", True, True, True), ("pairings", False, True, False),
    ("self", False, False, False), ("pairings", True, False, False),
])
def test_which_events_weigh_a_pairs_record(fmt: str, head_to_head_pairings: bool, partnerships: bool,
                                          expected: bool) -> None:
    """Only partnership events that seat pairs head to head (A A against B B); fives never does."""
    from sevenrocks.server.stats.record import plays_head_to_head

    assert plays_head_to_head(fmt, head_to_head_pairings, partnerships) is expected


def test_only_head_to_head_matches_count_whatever_comes_before_them() -> None:
    """Pairings tables (A B C D, and A B C B with B A B C), a bot partnered with itself against itself, and
    crossed seats (A B B A) are not head to head; each is skipped, and the matches after it still count."""
    others = [Result(("a", "b", "c", "d"), (0, 1), "p0t0o0"), Result(("a", "a", "a", "a"), (0, 1), "p0t1o0"),
              Result(("a", "b", "b", "a"), (0, 1), "p0t2o0"), Result(("a", "b", "a"), (0, 1), "p0t3o0"),
              Result(("a", "b", "c", "b"), (0, 1), "p0t4o0"), Result(("b", "a", "b", "c"), (0, 1), "p0t4o1")]
    assert records(others) == {}
    assert records(others + head_to_head(3, 4))[("a", "b")].counts == {1.0: 3, 0.0: 1}


def test_an_incomplete_table_is_skipped_and_the_tables_after_it_still_count() -> None:
    """A table with one seat order only (a round the budget cut) is left out, and only it."""
    cut = [Result(("a", "b", "a", "b"), (0, 1), "r0t0o0")]  # sorts before every table below
    rest = head_to_head(4, 4, table=1)
    assert records(cut + rest)[("a", "b")].counts == {1.0: 4}
