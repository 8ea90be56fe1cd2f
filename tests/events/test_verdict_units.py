"""The verdict and the fit, value by value (fast: no matches are played).

test_fit_verdict.py shows the verdict is right often enough on synthetic events;
these pin the arithmetic those statistics rest on, so that a slip (a wrong degree of
freedom, the model's error where the robust one belongs, a boundary off by one, a
derivative with the wrong sign) fails here instead of shifting a rate by a little.
"""

from __future__ import annotations

import math

import pytest

from sevenrocks.server.stats.fit import BETA, SIGMA0, Fit, Phi, Result, comparisons, fit, solve_map
from sevenrocks.server.stats.verdict import Verdict, order_of, p_ahead, student_t_cdf, verdict


def a_fit(theta: tuple[float, float, float], model: float, robust: float, clusters: int) -> Fit:
    """Three bots a, b, c with independent errors of the given variances."""
    diag = lambda v: tuple(tuple(v if i == j else 0.0 for j in range(3)) for i in range(3))  # noqa: E731
    return Fit(("a", "b", "c"), theta, diag(model), diag(robust), clusters)


def test_one_group_uses_the_models_normal_tail() -> None:
    f = a_fit((1.0, 0.4, 0.0), model=0.25, robust=9.0, clusters=1)
    assert p_ahead(f, "a", "b") == pytest.approx(Phi(0.6 / math.sqrt(0.5)), abs=1e-12)
    assert p_ahead(f, "b", "a") == pytest.approx(1 - Phi(0.6 / math.sqrt(0.5)), abs=1e-12)
    assert p_ahead(a_fit((1.0, 0.4, 0.0), 0.0, 0.0, 1), "a", "b") == 0.5  # no information at all


@pytest.mark.parametrize("clusters", [2, 3, 7])
def test_the_larger_doubt_wins_with_t_on_groups_minus_one(clusters: int) -> None:
    d = 0.6  # a - b, with b's own strength not zero: the contrast weighs it -1
    # The robust error is the larger: Student's t with clusters - 1 degrees of freedom.
    f = a_fit((1.0, 0.4, 0.0), model=0.02, robust=0.5, clusters=clusters)
    assert p_ahead(f, "a", "b") == pytest.approx(student_t_cdf(d / 1.0, clusters - 1), abs=1e-12)
    assert p_ahead(f, "b", "a") == pytest.approx(student_t_cdf(-d / 1.0, clusters - 1), abs=1e-12)
    # The model's error is the larger: its normal tail.
    g = a_fit((1.0, 0.4, 0.0), model=0.5, robust=0.0001, clusters=clusters)
    assert p_ahead(g, "a", "b") == pytest.approx(Phi(d / 1.0), abs=1e-12)


def test_correlated_errors_count_with_the_contrasts_signs() -> None:
    """var(a - b) = var a + var b - 2 cov(a, b): a positive covariance narrows the difference."""
    cov = ((1.0, 0.8), (0.8, 1.0))
    f = Fit(("a", "b"), (0.5, 0.0), cov, cov, 1)
    assert p_ahead(f, "a", "b") == pytest.approx(Phi(0.5 / math.sqrt(0.4)), abs=1e-12)
    g = Fit(("a", "b"), (0.5, 0.0), ((0.01, 0.0), (0.0, 0.01)), cov, 6)
    assert p_ahead(g, "a", "b") == pytest.approx(student_t_cdf(0.5 / math.sqrt(0.4), 5), abs=1e-12)


def test_degenerate_errors() -> None:
    # No robust spread but a model error: the model decides, in either direction.
    f = a_fit((1.0, 0.4, 0.0), model=0.5, robust=0.0, clusters=4)
    assert p_ahead(f, "a", "b") == pytest.approx(Phi(0.6), abs=1e-12)
    # The other way round the robust side gives 0.5 today (it reads "d <= 0" as no information);
    # the model's Phi(-0.6) would be the mirror image. Either is conservative.
    q = p_ahead(f, "b", "a")
    assert q == 0.5 or abs(q - Phi(-0.6)) < 1e-12, q
    # No error of either kind: nothing is known.
    assert p_ahead(a_fit((1.0, 0.4, 0.0), 0.0, 0.0, 4), "a", "b") == 0.5


def test_settled_at_exactly_the_level_and_not_below() -> None:
    f = a_fit((1.0, 0.4, 0.0), model=0.25, robust=0.25, clusters=1)
    p = p_ahead(f, "a", "b")
    v = verdict(f, p)
    assert v.order == ("a", "b", "c") and v.neighbours[0].settled and v.neighbours[0].p_ahead == p
    assert not verdict(f, math.nextafter(p, 1.0)).neighbours[0].settled
    assert [(n.upper, n.lower) for n in v.neighbours] == [("a", "b"), ("b", "c")]
    assert v.level == p


def test_verdict_settled_and_weakest() -> None:
    f = a_fit((1.0, 0.4, 0.0), model=0.25, robust=0.25, clusters=1)
    v = verdict(f, 0.5)
    assert v.settled and v.weakest() == min(v.neighbours, key=lambda n: n.p_ahead)
    assert not verdict(f, 0.99).settled
    assert not Verdict(("a",), (), 0.95).settled and Verdict(("a",), (), 0.95).weakest() is None
    # A given order is judged as given: the lower bot placed above gets P < 0.5.
    w = verdict(f, 0.95, order=("b", "a", "c"))
    assert w.order == ("b", "a", "c") and w.neighbours[0].p_ahead < 0.5 and not w.neighbours[0].settled
    # Ties in P go to the name first in the alphabet.
    even = a_fit((0.0, 0.0, 0.0), model=1.0, robust=1.0, clusters=1)
    assert verdict(even).weakest() is not None and verdict(even).weakest().upper == "a"  # type: ignore[union-attr]


def test_order_of_breaks_exact_ties_by_name() -> None:
    assert order_of(a_fit((0.0, 2.0, 0.0), 1.0, 1.0, 1)) == ("b", "a", "c")


def test_comparisons_of_partnerships_and_of_seats() -> None:
    index = {"a": 0, "b": 1, "c": 2, "d": 3}
    comps, clusters = comparisons([Result(("a", "b", "c", "d"), (0, 1), "g2"),
                                   Result(("a", "b", "a", "b"), (1, 1), "g1")], True, index)
    assert clusters == 2
    # Sorted by group: g1 (a+a vs b+b, a draw) first.
    assert comps[0].x == ((0, 2.0), (1, -2.0)) and comps[0].y == 0.5 and comps[0].cluster == 0
    assert comps[1].x == ((0, 1.0), (1, -1.0), (2, 1.0), (3, -1.0)) and comps[1].y == 1.0 and comps[1].cluster == 1
    assert comps[0].s == comps[1].s == 2 * BETA
    lost, _ = comparisons([Result(("a", "b", "c", "d"), (1, 0), "g")], True, index)
    assert lost[0].y == 0.0
    # Free for all: every pair of distinct seats, the better rank winning.
    seats, n = comparisons([Result(("a", "b", "a"), (2, 0, 1), "g")], False, index)
    assert n == 1 and [(c.x, c.y) for c in seats] == [(((0, 1.0), (1, -1.0)), 0.0), (((0, 1.0), (0, -1.0)), 0.0)][:1] \
        + [(((1, 1.0), (0, -1.0)), 1.0)]
    assert all(c.s == math.sqrt(2) * BETA for c in seats)


def log_posterior(theta: list[float], comps: list, prior: list[float]) -> float:  # type: ignore[type-arg]
    total = -sum(t * t / (2 * v) for t, v in zip(theta, prior))
    for c in comps:
        z = sum(v * theta[k] for k, v in c.x) / c.s
        total += c.y * math.log(Phi(z)) + (1 - c.y) * math.log(Phi(-z))
    return total


def test_the_fit_is_the_posteriors_maximum_and_its_curvature() -> None:
    results = [Result(("a", "b", "a", "b"), (0, 1), "g1"), Result(("b", "a", "b", "a"), (1, 0), "g1"),
               Result(("a", "c", "a", "c"), (1, 1), "g2"), Result(("c", "b", "c", "b"), (0, 1), "g3"),
               Result(("a", "c", "a", "c"), (0, 1), "g4"), Result(("b", "c", "b", "c"), (1, 0), "g5")]
    f = fit(results, True)
    assert f.names == ("a", "b", "c") and f.clusters == 5
    comps, _ = comparisons(results, True, {"a": 0, "b": 1, "c": 2})
    prior = [SIGMA0 ** 2] * 3
    theta, h = list(f.theta), 1e-4
    # The gradient of the log posterior vanishes at θ ...
    for i in range(3):
        up, down = theta[:], theta[:]
        up[i] += h
        down[i] -= h
        assert (log_posterior(up, comps, prior) - log_posterior(down, comps, prior)) / (2 * h) == pytest.approx(0, abs=1e-6)
    # ... and the covariance is the inverse of its negative Hessian.
    def second(i: int, j: int) -> float:
        def at(di: float, dj: float) -> float:
            t = theta[:]
            t[i] += di
            t[j] += dj
            return log_posterior(t, comps, prior)
        return (at(h, h) - at(h, -h) - at(-h, h) + at(-h, -h)) / (4 * h * h)

    hess = [[-second(i, j) for j in range(3)] for i in range(3)]
    for i in range(3):
        for j in range(3):
            assert sum(f.cov[i][k] * hess[k][j] for k in range(3)) == pytest.approx(float(i == j), abs=1e-4)
    # The estimate moves the right way: a beat b twice, c beat b twice.
    assert f.theta[0] > f.theta[1] and f.theta[2] > f.theta[1]


def test_the_robust_covariance_is_the_sandwich_over_groups() -> None:
    results = [Result(("a", "b", "a", "b"), (0, 1), "g1"), Result(("b", "a", "b", "a"), (0, 1), "g1"),
               Result(("a", "b", "a", "b"), (0, 1), "g2"), Result(("a", "b", "a", "b"), (1, 0), "g3")]
    comps, clusters = comparisons(results, True, {"a": 0, "b": 1})
    prior = [SIGMA0 ** 2] * 2
    theta, cov, robust = solve_map(comps, prior, clusters)
    # One score vector per group, from the test's own derivative of the log likelihood.
    h = 1e-5
    scores: dict[int, list[float]] = {}
    for c in comps:
        acc = scores.setdefault(c.cluster, [0.0, 0.0])
        for i in range(2):
            up, down = list(theta), list(theta)
            up[i] += h
            down[i] -= h
            acc[i] += (log_posterior(up, [c], [math.inf] * 2) - log_posterior(down, [c], [math.inf] * 2)) / (2 * h)
    meat = [[sum(s[i] * s[j] for s in scores.values()) * clusters / (clusters - 1) for j in range(2)] for i in range(2)]
    expect = [[sum(cov[i][k] * meat[k][m] * cov[m][j] for k in range(2) for m in range(2)) for j in range(2)]
              for i in range(2)]
    for i in range(2):
        for j in range(2):
            assert robust[i][j] == pytest.approx(expect[i][j], rel=1e-4, abs=1e-9)
    assert solve_map([], [], 0) == ([], [], [])
    # With one group the small-sample factor is 1, not a division by zero.
    one, n1 = comparisons(results[:2], True, {"a": 0, "b": 1})
    assert n1 == 1 and all(math.isfinite(x) for row in solve_map(one, prior, n1)[2] for x in row)


def test_contrast() -> None:
    f = a_fit((1.0, 0.4, 0.0), model=0.25, robust=1.0, clusters=3)
    assert f.contrast({"a": 1.0, "b": -1.0}, robust=False) == pytest.approx((0.6, math.sqrt(0.5)))
    assert f.contrast({"a": 1.0, "b": -1.0}) == pytest.approx((0.6, math.sqrt(2.0)))
    assert f.contrast({"a": 2.0}) == pytest.approx((2.0, 2.0))
