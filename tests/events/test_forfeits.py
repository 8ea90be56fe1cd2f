"""A forfeit is rated for its faulting entrant only, and k forfeits in a row withdraw it.

Once, a bot that raised in every match forfeited 888 times, each a rated
loss for its *partner* too, and was never withdrawn (its process lived on). These are
the fast checks on the pieces: the fit, TrueSkill, the leaderboard's counts and the
streak rule. ``tests/league/test_league_forfeits.py`` plays the whole thing.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from sevenrocks.sdk.rules import FaultCause, Offender
from sevenrocks.server.events.outcome import FaultStreaks
from sevenrocks.server.events.store import Store
from sevenrocks.server.stats.fit import Result, fit, fit_pairs
from sevenrocks.server.stats.ratings import RatingBook

from ..fresh_env import fresh_env

FIELD = ["a", "b", "c", "x"]


def played(n: int, seed: int = 3) -> list[Result]:
    """n pairings matches among FIELD, the stronger side (by a fixed order) winning 70%."""
    rng = random.Random(seed)
    strength = {"a": 3, "b": 2, "c": 1, "x": 0}
    out = []
    for k in range(n):
        s = rng.sample(FIELD, 4)
        side0 = strength[s[0]] + strength[s[2]]
        side1 = strength[s[1]] + strength[s[3]]
        first = (side0 > side1) == (rng.random() < 0.7)
        out.append(Result(tuple(s), (0, 1) if first else (1, 0), f"g{k}"))
    return out


def forfeits_by_x(n: int) -> list[Result]:
    """x forfeits n matches partnered with a against b and c (x's side ranked last)."""
    return [Result(("x", "b", "a", "c"), (1, 0), f"f{k}", fault_seat=0) for k in range(n)]


def test_forfeits_move_nobody_in_the_fit_but_the_faulting_bot() -> None:
    clean = played(120)
    before = fit(clean, True, FIELD)
    after = fit(clean + forfeits_by_x(40), True, FIELD)
    for name in ("a", "b", "c"):  # a is x's partner in every forfeit; b and c its opponents
        assert after.rating(name) == before.rating(name)
        for other in ("a", "b", "c"):
            i, j = after.index(name), after.index(other)
            assert after.robust[i][j] == before.robust[i][j]
    assert after.rating("x").mu < before.rating("x").mu - 1  # x is charged its forfeits
    assert after.rating("x").sigma < before.rating("x").sigma
    # A forfeit is never a rated result for a partnership.
    assert fit_pairs(clean + forfeits_by_x(40)) == fit_pairs(clean)


def test_a_bot_that_only_forfeits_is_rated_below_the_prior_and_its_partner_not_at_all() -> None:
    f = fit(forfeits_by_x(30), True, FIELD)
    assert f.rating("x").mu < 25 - 5
    for name in ("a", "b", "c"):
        assert f.rating(name).mu == pytest.approx(25.0) and f.rating(name).sigma == pytest.approx(25 / 3)


def test_fives_forfeit_charges_the_faulting_seat_only() -> None:
    clean = [Result(("a", "b", "c"), tuple(random.Random(k).sample(range(3), 3)), f"g{k}") for k in range(30)]
    forfeit = [Result(("a", "x", "b"), (0, 2, 1), f"f{k}", fault_seat=1) for k in range(10)]
    before, after = fit(clean, False, ["a", "b", "c", "x"]), fit(clean + forfeit, False, ["a", "b", "c", "x"])
    assert all(after.rating(n) == before.rating(n) for n in "abc")
    assert after.rating("x").mu < before.rating("x").mu


def test_trueskill_moves_only_the_faulting_bot_on_a_forfeit() -> None:
    book = RatingBook(True)
    for r in played(40):
        book.apply(r.seats, r.ranks)
    bots, pairs = book.bots(), book.pairs()
    book.rows(only_changed=True)
    book.apply(("x", "b", "a", "c"), (1, 0), fault_seat=0)
    after = book.bots()
    assert {n: after[n] for n in "abc"} == {n: bots[n] for n in "abc"}
    assert after["x"].mu < bots["x"].mu
    assert book.pairs() == pairs
    assert [row[1] for row in book.rows(only_changed=True)] == ["x"]  # only x's row is stored again


def test_k_forfeits_in_a_row_withdraw_the_faulting_entrant_with_one_line() -> None:
    streaks = FaultStreaks(3, "a new version")
    crash = Offender(0, FaultCause.CRASH, "the bot reported an error: ValueError: boom\nTraceback ...")
    seats = ("x", "b", "a", "c")
    assert streaks.add(seats, crash) is None
    assert streaks.add(seats, None) is None  # a match played out: the count starts again
    assert streaks.add(seats, crash) is None and streaks.add(seats, crash) is None
    # Another seat's forfeit is no result for x: its count neither grows nor resets.
    assert streaks.add(("b", "x", "c", "a"), Offender(0, FaultCause.TIMEOUT, "slow")) is None
    due = streaks.add(seats, crash)
    assert due is not None and due.entrant == "x"
    assert "\n" not in due.reason and due.reason.startswith("withdrawn after 3 forfeits in a row by its own fault")
    assert "a new version" in due.reason and "max_faults_in_row = 3" in due.reason
    assert streaks.add(seats, crash) is None  # withdrawn once


def test_a_one_sitting_tournament_withdraws_a_bot_that_raises_every_match(tmp_path: Path) -> None:
    """The same rule in ``sevenrocks tournament``: the rest of the raiser's schedule is skipped, not forfeited."""
    raising = Path(__file__).parent / "bots" / "raising_bot.py"
    (tmp_path / "event.toml").write_text(
        '[event]\nname = "cup"\ndeals = 3\nduplicate = false\n[time]\nper_move_ms = 10000\nconnect_timeout_s = 60\n'
        '[bots]\nfresh_process = "never"\nmax_faults_in_row = 3\n'
        + "".join(f'[[entrants]]\nname = "{n}"\nbot = "{b}"\n' for n, b in [("a", "greedy"), ("b", "random"),
                                                                            ("c", "greedy")])
        + f'[[entrants]]\nname = "broken"\ncommand = {json.dumps([sys.executable, str(raising)])}\n')
    done = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "tournament", str(tmp_path / "event.toml"),
                           "--db", str(tmp_path / "e.db"), "--out", str(tmp_path / "out"), "--quiet"],
                          capture_output=True, text=True, env=fresh_env(), timeout=600)
    assert done.returncode == 0, done.stderr
    with Store.reader(tmp_path / "e.db") as store:
        (withdrawn,) = store.withdrawals(["cup"])
        played = [m for m in store.matches(["cup"]) if "broken" in m.seats]
    assert withdrawn[1] == "broken" and withdrawn[2].startswith("withdrawn after 3 forfeits in a row by its own fault")
    assert 3 <= len(played) <= 3 + 2 and withdrawn[3] > 0  # the rest of its schedule was not played
    assert "WITHDRAWN broken: withdrawn after 3 forfeits in a row" in (tmp_path / "out" / "leaderboard.txt").read_text()
