"""The store and the ratings: idempotent writes, resumable events, ratings rebuilt from the file."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
import trueskill

from sevenrocks.server.events.executor import InProcessExecutor
from sevenrocks.sdk.rules import FaultCause, Offender
from sevenrocks.server.events.outcome import MatchOutcome, final_ranks
from sevenrocks.server.stats.ratings import InOrder, RatingBook, rebuild
from sevenrocks.server.events.schedule import MatchTask, build_schedule, schedule_fingerprint
from sevenrocks.server.events.store import Store, StoreError
from sevenrocks.server.events.tournament import resume_ratings, run_event

from .conftest import bots, config_of, play_in_process


def outcomes_of(cfg, tasks: list[MatchTask]) -> list[MatchOutcome]:
    got: list[MatchOutcome] = []

    async def go() -> None:
        await InProcessExecutor(cfg).run(tasks, got.append)

    asyncio.run(go())
    return got


def test_ratings_rebuilt_from_the_database_equal_the_stored_ones(ladder_db: Path) -> None:
    with Store(ladder_db) as store:
        stored = store.stored_ratings("t")
        book = rebuild(store.results(["t"]), partnerships=True)
        assert store.rating_progress("t") == len(store.match_ids())
    rebuilt = {(kind, subject): (mu, sigma) for kind, subject, mu, sigma in book.rows()}
    assert rebuilt == stored  # exactly: same results, same order, same floats
    assert {s for k, s in stored if k == "pair"} == {
        "defensive+greedy", "defensive+random1", "defensive+random2", "greedy+random1",
        "greedy+random2", "random1+random2"}


def test_order_of_completion_does_not_change_ratings(tmp_path: Path) -> None:
    cfg = config_of(bots("a", "b", "c", "d"), deals=2)
    outs = outcomes_of(cfg, build_schedule(cfg))
    shuffled = outs[:]
    random.Random(5).shuffle(shuffled)
    books = []
    for order in (outs, shuffled):
        book = RatingBook(True)
        feed = InOrder(book)
        for o in order:
            feed.add(o.task.index, o.task.seats, o.ranks)
        books.append(book.rows())
    assert books[0] == books[1]


def test_a_match_is_stored_once(tmp_path: Path) -> None:
    cfg = config_of(bots("a", "b", "c", "d"), deals=1)
    tasks = build_schedule(cfg)
    out = outcomes_of(cfg, tasks[:1])[0]
    with Store(tmp_path / "e.db") as store:
        store.open_event(cfg, "fp", len(tasks))
        assert store.record_match(out) is True
        assert store.record_match(replace(out, winner=1 - (out.winner or 0))) is False
        assert store.match_ids() == [out.task.match_id]
        assert store.matches()[0].winner == out.winner
        assert store.record(out.task.match_id) == "".join(line + "\n" for line in out.record_lines)


def test_rerunning_a_finished_event_plays_nothing(tmp_path: Path) -> None:
    cfg = config_of(bots("a", "b", "c", "d"), deals=1)
    play_in_process(cfg, tmp_path / "e.db").close()

    class Refuse(InProcessExecutor):
        async def run(self, tasks, on_result):  # type: ignore[no-untyped-def]
            assert not tasks, "a finished event must not play again"

    with Store(tmp_path / "e.db") as store:
        before = store.stored_ratings("t")
        asyncio.run(run_event(cfg, store, Refuse(cfg)))
        assert store.stored_ratings("t") == before
        assert store.events()[0].finished


def test_resume_applies_the_stored_prefix_then_the_rest(tmp_path: Path) -> None:
    cfg = config_of(bots("a", "b", "c", "d"), deals=2)
    tasks = build_schedule(cfg)
    outs = outcomes_of(cfg, tasks)
    with Store(tmp_path / "whole.db") as whole:
        asyncio.run(run_event(cfg, whole, InProcessExecutor(cfg)))
        expected = whole.stored_ratings("t")
    # An interrupted run stored a scattered subset (as concurrent matches finish).
    with Store(tmp_path / "part.db") as part:
        part.open_event(cfg, schedule_fingerprint(cfg), len(tasks))
        for i in (0, 1, 2, 5, 7):
            part.record_match(outs[i])
        order = resume_ratings(cfg, part)
        assert order.next == 3 and sorted(order.pending) == [5, 7]
        asyncio.run(run_event(cfg, part, InProcessExecutor(cfg)))
        assert part.stored_ratings("t") == expected
        assert len(part.match_ids()) == len(tasks)


def test_a_league_holds_several_events_and_refuses_a_changed_schedule(tmp_path: Path) -> None:
    db = tmp_path / "league.db"
    play_in_process(config_of(bots("a", "b", "c", "d"), deals=1, name="spring"), db).close()
    play_in_process(config_of(bots("a", "b", "c", "d"), deals=1, name="autumn", seed=9), db).close()
    with Store(db) as store:
        assert [e.event_id for e in store.events()] == ["spring", "autumn"]
        assert len(store.match_ids(["spring"])) == len(store.match_ids(["autumn"])) == 12
        with pytest.raises(StoreError, match="different schedule"):
            asyncio.run(run_event(config_of(bots("a", "b", "c", "d"), deals=2, name="spring"), store,
                                  InProcessExecutor(config_of(bots("a", "b", "c", "d")))))


def test_schema_version_is_checked(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    Store(db).close()
    con = sqlite3.connect(db)
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="schema version 99"):
        Store(db)
    other = tmp_path / "other.db"
    other.write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreError, match="not an SQLite database .* left untouched"):
        Store(other)
    assert other.read_bytes() == b"not a database at all" * 100


def test_ratings_match_bare_trueskill() -> None:
    env = trueskill.TrueSkill(tau=0.0, draw_probability=0.01)
    book = RatingBook(True, tau=0.0, draw_probability=0.01)
    book.apply(["a", "c", "b", "d"], [1, 0])
    (a, b), (c, d) = env.rate([(env.create_rating(), env.create_rating()), (env.create_rating(), env.create_rating())],
                              [1, 0])
    assert book.bot("a").mu == a.mu and book.bot("c").sigma == c.sigma
    assert book.bot("c").conservative == pytest.approx(c.mu - 3 * c.sigma)
    fives = RatingBook(False)
    fives.apply(["x", "y", "z"], [2, 0, 0])
    assert fives.bot("y").mu == pytest.approx(fives.bot("z").mu, abs=1e-3) and fives.bot("y").mu > fives.bot("x").mu


def test_fives_ranks_follow_the_engine() -> None:
    from sevenrocks.sdk.rules import make_ruleset

    rs = make_ruleset("fives", 3)
    # Offender last, declared winner first, others by score, ties share.
    assert final_ranks(rs, (40, 90, 10), 0, Offender(1, FaultCause.TIMEOUT, "")) == (0, 2, 1)
    assert final_ranks(rs, (150, 60, 60), 0, None) == (0, 1, 1)
