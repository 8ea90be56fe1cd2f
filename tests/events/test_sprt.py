"""The duel's SPRT: its error rates over many seeded synthetic duels, and a real duel over gRPC."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from sevenrocks.server.cli import cli
from sevenrocks.server.stats.sprt import ACCEPTED, CONTINUE, REJECTED, SPRT, expected_score


def duel(test: SPRT, true_elo: float, rng: random.Random, look_every: int = 4, cap: int = 4000) -> str:
    """Pairs of two independent games at ``true_elo``, the test checked every few pairs."""
    s = expected_score(true_elo)
    scores: list[float] = []
    while len(scores) < cap:
        for _ in range(look_every):
            scores.append(((rng.random() < s) + (rng.random() < s)) / 2)
        status = test.status(scores)
        if status != CONTINUE:
            return status
    return CONTINUE


@pytest.mark.parametrize("alpha,beta", [(0.05, 0.05), (0.1, 0.2)])
def test_sprt_errors_are_within_its_stated_rates(alpha: float, beta: float) -> None:
    test = SPRT(0, 60, alpha, beta)
    runs = 300
    rng = random.Random(2024)
    at_h0 = [duel(test, 0, rng) for _ in range(runs)]
    at_h1 = [duel(test, 60, rng) for _ in range(runs)]
    assert CONTINUE not in at_h0 + at_h1
    false_accept = at_h0.count(ACCEPTED) / runs
    false_reject = at_h1.count(REJECTED) / runs
    # The stated rate plus about two binomial standard errors of a 300-run estimate.
    assert false_accept <= alpha + 2 * (alpha * (1 - alpha) / runs) ** 0.5, false_accept
    assert false_reject <= beta + 2 * (beta * (1 - beta) / runs) ** 0.5, false_reject


def test_sprt_decides_clear_cases_quickly_and_checks_its_arguments() -> None:
    test = SPRT(0, 10)
    assert test.status([1.0] * 60) == ACCEPTED
    assert test.status([0.0] * 60) == REJECTED
    assert test.status([0.5, 0.5]) == CONTINUE
    with pytest.raises(ValueError, match="elo1"):
        SPRT(10, 0)


def test_duel_command_plays_over_grpc_until_the_test_decides(tmp_path: Path) -> None:
    r = CliRunner().invoke(cli, ["duel", "greedy", "random", "--elo1", "50", "--max-matches", "40", "--round", "4",
                                 "--db", str(tmp_path / "d.db"), "--out", str(tmp_path / "out")])
    assert r.exit_code == 0, r.output
    assert "H1 accepted: greedy is better than random" in r.output
    assert (tmp_path / "out" / "leaderboard.json").exists()
    bad = CliRunner().invoke(cli, ["duel", "greedy", "random", "--elo0", "5", "--elo1", "0"])
    assert bad.exit_code == 2 and "elo1" in bad.output
