"""Every worked example of docs/rules.md, one test each.

Seven Rocks: each figure lists tiles, connections, legal continuation ports, counted
contributions and the placement award; we build the layout through the listed
connections and compare all of them exactly. Fives: the examples of matching,
terminal doubles, branch activation and bonus rounding. docs/rules.md draws the
same layouts; keep the two in step.
"""

from __future__ import annotations

import pytest

from sevenrocks.sdk.rules import Layout, round5

from .helpers import award, contributions, place, ports


def doubles_layout() -> Layout:
    """[1|4], [1|1] on its low end (the spinner), [4|4] on its high end."""
    lay = Layout()
    place(lay, (1, 4))
    place(lay, (1, 1), (1, 4), "low")
    place(lay, (4, 4), (1, 4), "high")
    return lay


# --- "Doubles at an end and inside the layout" -----------------------------------

def test_placed_4_4_terminal_doubles_score_both_halves() -> None:
    lay = Layout()
    place(lay, (1, 4))
    place(lay, (1, 1), (1, 4), "low")
    total = place(lay, (4, 4), (1, 4), "high")
    assert lay.spinner == (1, 1)
    assert total == 10 and award(total) == 10
    assert ports(lay) == {((1, 1), "line_b", 1), ((4, 4), "line_b", 4)}
    assert contributions(lay) == [((1, 1), 2), ((4, 4), 8)]


def test_placed_3_4_continued_double_becomes_internal() -> None:
    lay = doubles_layout()
    total = place(lay, (3, 4), (4, 4), "line_b")
    assert lay.connections[-1].side.value == "high"  # [3|4] attaches by its high end
    assert total == 5 and award(total) == 5
    assert ports(lay) == {((1, 1), "line_b", 1), ((3, 4), "low", 3)}
    assert contributions(lay) == [((1, 1), 2), ((3, 4), 3)]


def test_placed_2_2_opening_double_is_the_spinner_and_scores_nothing() -> None:
    lay = Layout()
    total = place(lay, (2, 2))
    assert lay.spinner == (2, 2)
    assert total == 4 and award(total) == 0
    assert ports(lay) == {((2, 2), "line_a", 2), ((2, 2), "line_b", 2)}
    assert contributions(lay) == [((2, 2), 4)]


# --- "The single spinner": the opening-[5|5] walk-through -------------------------

def test_opening_5_5_walk_through() -> None:
    lay = Layout()
    assert place(lay, (5, 5)) == 10                            # opening scores 10
    assert place(lay, (0, 5), (5, 5), "line_a") == 10          # spinner 10 + new end 0
    assert place(lay, (2, 5), (5, 5), "line_b") == 2           # spinner internal: 0 + 2
    assert ports(lay) >= {((5, 5), "branch_a", 5), ((5, 5), "branch_b", 5)}
    assert place(lay, (3, 5), (5, 5), "branch_a") == 5         # 0 + 2 + 3
    assert award(5) == 5


# --- "Opening spinner branches" --------------------------------------------------

def spinner_layout() -> Layout:
    lay = doubles_layout()
    place(lay, (3, 4), (4, 4), "line_b")
    return lay


def test_placed_1_2_fills_the_second_line_side_and_opens_branches() -> None:
    lay = spinner_layout()
    total = place(lay, (1, 2), (1, 1), "line_b")
    assert total == 5 and award(total) == 5
    assert ports(lay) == {
        ((1, 1), "branch_a", 1), ((1, 1), "branch_b", 1), ((1, 2), "high", 2), ((3, 4), "low", 3),
    }
    assert contributions(lay) == [((1, 2), 2), ((3, 4), 3)]


def test_placed_1_5_a_begun_branch_is_an_outer_end() -> None:
    lay = spinner_layout()
    place(lay, (1, 2), (1, 1), "line_b")
    total = place(lay, (1, 5), (1, 1), "branch_a")
    assert total == 10 and award(total) == 10
    assert ports(lay) == {
        ((1, 1), "branch_b", 1), ((1, 2), "high", 2), ((1, 5), "high", 5), ((3, 4), "low", 3),
    }
    assert contributions(lay) == [((1, 2), 2), ((1, 5), 5), ((3, 4), 3)]


def test_placed_0_5_through_an_ordinary_double() -> None:
    lay = spinner_layout()
    place(lay, (1, 2), (1, 1), "line_b")
    place(lay, (1, 5), (1, 1), "branch_a")
    assert place(lay, (5, 5), (1, 5), "high") == 2 + 10 + 3   # [5|5] is an ordinary double
    assert lay.spinner == (1, 1)
    total = place(lay, (0, 5), (5, 5), "line_b")
    assert lay.connections[-1].side.value == "high"
    assert total == 5 and award(total) == 5
    assert ports(lay) == {
        ((0, 5), "low", 0), ((1, 1), "branch_b", 1), ((1, 2), "high", 2), ((3, 4), "low", 3),
    }
    assert contributions(lay) == [((0, 5), 0), ((1, 2), 2), ((3, 4), 3)]


def test_placed_1_3_second_branch_total_8_scores_nothing() -> None:
    lay = spinner_layout()
    place(lay, (1, 2), (1, 1), "line_b")
    place(lay, (1, 5), (1, 1), "branch_a")
    place(lay, (5, 5), (1, 5), "high")
    place(lay, (0, 5), (5, 5), "line_b")
    total = place(lay, (1, 3), (1, 1), "branch_b")
    assert total == 8 and award(total) == 0
    assert ports(lay) == {((0, 5), "low", 0), ((1, 2), "high", 2), ((1, 3), "high", 3), ((3, 4), "low", 3)}
    assert contributions(lay) == [((0, 5), 0), ((1, 2), 2), ((1, 3), 3), ((3, 4), 3)]


# --- "From end total to points" --------------------------------------------------

def test_placed_1_4_opening_non_double_scores_both_ends() -> None:
    lay = Layout()
    total = place(lay, (1, 4))
    assert total == 5 and award(total) == 5
    assert ports(lay) == {((1, 4), "high", 4), ((1, 4), "low", 1)}
    assert contributions(lay) == [((1, 4), 1), ((1, 4), 4)]


def test_placed_1_1_total_6_scores_nothing() -> None:
    lay = Layout()
    place(lay, (1, 4))
    total = place(lay, (1, 1), (1, 4), "low")
    assert total == 6 and award(total) == 0
    assert lay.spinner == (1, 1)
    assert ports(lay) == {((1, 1), "line_b", 1), ((1, 4), "high", 4)}
    assert contributions(lay) == [((1, 1), 2), ((1, 4), 4)]


def test_placed_6_6_terminal_double_counts_12() -> None:
    lay = Layout()
    place(lay, (3, 6))
    total = place(lay, (6, 6), (3, 6), "high")
    assert total == 15 and award(total) == 15
    assert lay.spinner == (6, 6)
    assert ports(lay) == {((3, 6), "low", 3), ((6, 6), "line_b", 6)}
    assert contributions(lay) == [((3, 6), 3), ((6, 6), 12)]


def test_placed_0_0_zero_scores_nothing() -> None:
    lay = Layout()
    total = place(lay, (0, 0))
    assert total == 0 and award(total) == 0
    assert ports(lay) == {((0, 0), "line_a", 0), ((0, 0), "line_b", 0)}
    assert contributions(lay) == [((0, 0), 0)]


# --- The maxima: 36 in all, 35 the greatest scoring total -------------------------

def four_arms_of_doubles() -> Layout:
    lay = Layout()
    place(lay, (2, 2))
    place(lay, (2, 6), (2, 2), "line_a")
    place(lay, (6, 6), (2, 6), "high")
    place(lay, (2, 5), (2, 2), "line_b")
    place(lay, (5, 5), (2, 5), "high")
    place(lay, (2, 4), (2, 2), "branch_a")
    place(lay, (4, 4), (2, 4), "high")
    place(lay, (2, 3), (2, 2), "branch_b")
    return lay


def test_the_largest_total_is_36() -> None:
    lay = four_arms_of_doubles()
    assert place(lay, (3, 3), (2, 3), "high") == 12 + 10 + 8 + 6 == 36
    assert award(36) == 0


def test_the_largest_scoring_total_is_35() -> None:
    lay = four_arms_of_doubles()
    total = place(lay, (3, 5), (2, 3), "high")
    assert total == 35 and award(total) == 35


# --- Fives examples ---------------------------------------------------------------

def test_fives_matching_chain_5_1_1_3_3_2() -> None:
    lay = Layout()
    place(lay, (1, 5))
    place(lay, (1, 3), (1, 5), "low")
    place(lay, (2, 3), (1, 3), "high")
    assert ports(lay) == {((1, 5), "high", 5), ((2, 3), "low", 2)}


@pytest.mark.parametrize("double, points", [((6, 6), 12), ((5, 5), 10)])
def test_fives_terminal_double_counts_twice(double: tuple[int, int], points: int) -> None:
    lay = Layout()
    place(lay, (0, double[0]))
    assert place(lay, double, (0, double[0]), "high") == points + 0


def test_fives_two_ends_total_5_with_1_1_counting_2() -> None:
    lay = Layout()
    place(lay, (1, 3))
    total = place(lay, (1, 1), (1, 3), "low")
    assert total == 2 + 3 == 5 and award(total) == 5


def test_fives_branch_on_3_3_spinner_activates_its_arm() -> None:
    lay = Layout()
    place(lay, (3, 3))
    place(lay, (1, 3), (3, 3), "line_a")
    place(lay, (3, 4), (3, 3), "line_b")
    assert lay.total == 1 + 4  # spinner internal once both line sides are taken
    total = place(lay, (3, 5), (3, 3), "branch_a")
    assert total == 10 and award(total) == 10


@pytest.mark.parametrize("pips, points", [(21, 20), (22, 20), (23, 25), (24, 25)])
def test_fives_round_bonus_rounding(pips: int, points: int) -> None:
    assert round5(pips) == points


def test_seven_rocks_two_hands_of_3_round_separately() -> None:
    assert round5(3) + round5(3) == 10
    assert round5(3 + 3) == 5  # what combining first would wrongly give
