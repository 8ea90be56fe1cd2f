"""The verdict and the fit, value by value (fast: no matches are played).

test_fit_verdict.py shows the verdict is right often enough on synthetic events;
these pin the arithmetic those statistics rest on, so that a slip (a wrong degree of
freedom, the model's error where the robust one belongs, a boundary off by one, a
derivative with the wrong sign) fails here instead of shifting a rate by a little.
"""

from __future__ import annotations

import math

import pytest

from sevenrocks.server.stats.fit import Fit, Phi, Result, fit, phi
from sevenrocks.server.stats.verdict import Verdict, half_width, order_of, p_ahead, student_t_cdf, verdict


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
    # The other way round it is the mirror image (it read 0.5 before: "d <= 0" taken as no information).
    assert p_ahead(f, "b", "a") == pytest.approx(Phi(-0.6), abs=1e-12)
    # No error of either kind: nothing is known.
    assert p_ahead(a_fit((1.0, 0.4, 0.0), 0.0, 0.0, 4), "a", "b") == 0.5


def test_order_of_breaks_exact_ties_by_name() -> None:
    assert order_of(a_fit((0.0, 2.0, 0.0), 1.0, 1.0, 1)) == ("b", "a", "c")


def test_contrast() -> None:
    f = a_fit((1.0, 0.4, 0.0), model=0.25, robust=1.0, clusters=3)
    assert f.contrast({"a": 1.0, "b": -1.0}, robust=False) == pytest.approx((0.6, math.sqrt(0.5)))
    assert f.contrast({"a": 1.0, "b": -1.0}) == pytest.approx((0.6, math.sqrt(2.0)))
    assert f.contrast({"a": 2.0}) == pytest.approx((2.0, 2.0))


def test_half_width_of_an_exact_and_of_an_unknown_estimate() -> None:
    # An estimate with no error at all is exact (width 0); one whose error is not a number is unknown.
    assert half_width(0.0) == 0.0
    assert half_width(float("nan")) == math.inf and half_width(-1.0) == math.inf
    assert 0 < half_width(0.1) < half_width(0.2) < math.inf  # wider with more error


def test_phi_is_the_density_of_phi() -> None:
    # phi (the baseline fit of bench/events/baseline_fit.py uses it) is the derivative of Phi.
    assert phi(0.0) == pytest.approx(1 / math.sqrt(2 * math.pi), rel=1e-12)
    for z in (-2.0, -0.7, 0.3, 1.5):
        h = 1e-5
        assert phi(z) == pytest.approx((Phi(z + h) - Phi(z - h)) / (2 * h), rel=1e-6), z


def test_a_field_with_no_match_shown_yet_has_no_claim_and_no_error() -> None:
    """The live site builds the leaderboard of what the deal guard shows, which may be nothing yet:
    an empty family of pairs is judged at no level (it divided by zero, and the live page stalled)."""
    from sevenrocks.server.stats.verdict import holm

    assert holm([], 0.95, 0.0) == [] and holm([], 0.95, 0.02) == []


def test_a_tie_margin_is_asked_as_a_win_rate_from_a_half_up_to_one() -> None:
    from sevenrocks.server.stats.verdict import margin_of_win_rate, win_rate_of_margin

    assert margin_of_win_rate(0.5) == 0.0
    assert win_rate_of_margin(margin_of_win_rate(0.55)) == pytest.approx(0.55)
    assert win_rate_of_margin(margin_of_win_rate(0.55, False), False) == pytest.approx(0.55)
    for bad in (0.49, 0.0, -0.2, 1.0, 1.5):
        with pytest.raises(ValueError, match=r"in \[0.5, 1\)"):
            margin_of_win_rate(bad)


def test_one_pair_without_a_record_reads_the_fits_own_interval() -> None:
    """Judged alone, a pair's interval is d̂ ± half_width(se) on the evidence grid: bounded on both
    sides (a grid narrower than the interval would report it as unbounded)."""
    f = a_fit((1.0, 0.4, 0.0), model=0.01, robust=0.0, clusters=1)
    n = verdict(f, order=("a", "b")).neighbours[0]
    w = half_width(math.sqrt(0.02))
    assert math.isfinite(n.low) and math.isfinite(n.high)
    step = 2 * w * 1.05 / 200  # the grid's spacing
    assert n.low == pytest.approx(0.6 - w, abs=step) and n.high == pytest.approx(0.6 + w, abs=step)


def test_the_boundary_widths_the_docstring_states() -> None:
    """stats/verdict.py says the always-valid boundary is 3.04 se at its tightest (se ≈ 0.6), at most
    3.25 se from se 0.2 to 1.2, and 3.44 se at se 0.1: the product's RHO gives exactly that."""
    from sevenrocks.server.stats.verdict import half_width

    ratios = {se: half_width(se) / se for se in (0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.2)}
    assert round(min(ratios.values()), 2) == 3.04 and min(ratios, key=lambda k: ratios[k]) == 0.6
    assert max(r for se, r in ratios.items() if se >= 0.2) <= 3.25 and round(ratios[0.1], 2) == 3.44
