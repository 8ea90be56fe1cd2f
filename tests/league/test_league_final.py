"""The league's field and final, guard by guard (fast: a store and the field's bookkeeping, or an
in-process league of five): a retired entrant does not rejoin once entries are closed, a new
version takes the old one's seat, the final waits for *every* active entrant to play its N,
and each entrant's place is the interval every pair's claims allow (``2–3``)."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from pathlib import Path
from typing import Any

from sevenrocks.server.events.config import EventConfig, parse_config
from sevenrocks.server.events.executor import InProcessExecutor
from sevenrocks.server.league.runner import (League, active_field, league_fingerprint, load_league, run_league,
                                             sync_field)
from sevenrocks.server.events.store import Store
from sevenrocks.server.stats.fit import Result, fit
from sevenrocks.server.stats.places import Looks, place_intervals, place_text
from sevenrocks.server.stats.record import records
from sevenrocks.server.stats.verdict import verdict


def league_config(folder: Path, names: list[str]) -> EventConfig:
    """Entrants run from files in ``folder`` (a file's content is its version)."""
    entrants = []
    for n in names:
        path = folder / f"{n}.py"
        if not path.exists():
            path.write_text("print('v1')\n")
        entrants.append({"name": n, "command": [sys.executable, str(path)]})
    return parse_config({"event": {"name": "lg"}, "entrants": entrants}, "<test>")


def names_of(store: Store, config: EventConfig) -> list[str]:
    return sorted(e.name for e in active_field(store, config))


def test_a_retired_entrant_does_not_rejoin_once_entries_are_closed(tmp_path: Path) -> None:
    five = league_config(tmp_path, ["a", "b", "c", "d", "e"])
    four = league_config(tmp_path, ["a", "b", "c", "d"])
    with Store(tmp_path / "l.db", writer=True) as store:
        store.open_league(five, league_fingerprint(five))
        sync_field(store, five, frozen=False)
        assert any("e retired" in line for line in sync_field(store, four, frozen=False))
        # Its block comes back after the freeze: still retired, the final's field is closed.
        sync_field(store, five, frozen=True)
        assert names_of(store, five) == ["a", "b", "c", "d"]
        # Before a freeze the same block brings it back.
        assert "e rejoined the field" in sync_field(store, five, frozen=False)
        assert names_of(store, five) == ["a", "b", "c", "d", "e"]


def test_a_new_version_replaces_the_old_one_in_the_active_field(tmp_path: Path) -> None:
    config = league_config(tmp_path, ["a", "b", "c", "d"])
    with Store(tmp_path / "l.db", writer=True) as store:
        store.open_league(config, league_fingerprint(config))
        sync_field(store, config, frozen=False)
        (tmp_path / "a.py").write_text("print('v2')\n")  # the author saves a fixed bot
        assert "a@2 replaces a (a new version)" in sync_field(store, config, frozen=False)
        assert names_of(store, config) == ["a@2", "b", "c", "d"]  # the old version no longer plays
        # Entries closed: a third version is not admitted, and the second keeps its seat.
        (tmp_path / "a.py").write_text("print('v3')\n")
        assert any("not admitted" in line for line in sync_field(store, config, frozen=True))
        assert names_of(store, config) == ["a@2", "b", "c", "d"]


FIVE = "".join(f'[[entrants]]\nname = "{n}"\nbot = "{b}"\n'
               for n, b in [("a", "greedy"), ("b", "random"), ("c", "greedy"), ("d", "random"), ("e", "greedy")])


def test_the_final_ends_only_when_every_active_entrant_has_played_its_n(tmp_path: Path) -> None:
    """Five entrants at tables of four: someone sits out each table, so the first to reach N is
    not the last; the final must wait for the last."""
    path = tmp_path / "l.toml"
    path.write_text('[event]\nname = "x"\n[league]\nround_matches = 4\nstop_after = 16\n' + FIVE)
    config, settings = load_league(path)
    executor = InProcessExecutor(config)

    async def update(entrants: Any) -> None:
        executor.config = dataclasses.replace(config, entrants=tuple(entrants))

    def league() -> League:
        config, settings = load_league(path)
        return League(path, config, settings, store, executor, lambda line: None, update_executor=update)

    with Store(tmp_path / "l.db", writer=True) as store:
        asyncio.run(run_league(league()))  # round 0: whole matchdays, everyone equal
        before = store.match_counts("x")
        path.write_text('[event]\nname = "x"\n[league]\nround_matches = 4\nfinal_matches = 6\n' + FIVE)
        game = league()
        asyncio.run(run_league(game))
        played = {n: store.match_counts("x")[n] - before[n] for n in "abcde"}
        assert game.final_standings is not None
        assert min(played.values()) >= 6, played
        assert max(played.values()) > min(played.values()), played  # the test's point: someone got there first
        # The published places are the intervals the final verdict's claims on *every* pair allow,
        # with what the league's rounds proved (its stored looks): recomputed here from the store.
        final = game.final_standings
        rows = final.rows
        results = [Result(m.seats, m.ranks, m.group) for m in store.matches(["x"])]
        order = [r.name for r in rows]
        v = verdict(fit(results, True, order), 0.95, order, records=records(results),
                    looks=Looks.from_json(store.verdict_looks("x")))
        assert v.family == 10  # five entrants: 10 pairs, one Holm family
        assert [(r.place_best, r.place_worst) for r in rows] == place_intervals(order, v.ahead) == v.places
        assert [r.place for r in rows] == [place_text(b, w) for b, w in v.places]
        assert all(r.place_best <= i + 1 <= r.place_worst for i, r in enumerate(rows))
        assert final.pairs == 10 and final.pairs_settled == len(v.ahead)
        assert f"{final.pairs_settled} of 10 pairs settled" in final.lines()[-1]
        assert final.to_json()["standings"][0]["place"] == rows[0].place


def test_a_retired_entrants_process_is_stopped(tmp_path: Path) -> None:
    """The arena (where a league's launched bots run) stops a retired entrant's real process."""
    from sevenrocks.server.league.arena import LeagueArena

    config = parse_config({"event": {"name": "r"}, "entrants": [{"name": n, "bot": "random"} for n in "abcd"]},
                          "<test>")

    async def go() -> tuple[Any, Any]:
        arena = LeagueArena(config, tmp_path / "logs")
        await arena.open(config.entrants)
        try:
            kept, leaving = arena.supervisor.process("a"), arena.supervisor.process("c")
            assert kept is not None and leaving is not None and leaving.returncode is None
            await arena.update([e for e in config.entrants if e.name != "c"])
            for _ in range(100):
                if leaving.returncode is not None:
                    break
                await asyncio.sleep(0.1)
            assert "c" not in arena.available()
            return kept.returncode, leaving.returncode
        finally:
            await arena.close()

    kept, leaving = asyncio.run(go())
    assert leaving is not None, "the retired entrant's process is still running"
    assert kept is None  # the others play on


def test_a_disqualified_entrant_never_rejoins_whatever_is_appended_to_its_reason(tmp_path: Path) -> None:
    """``sevenrocks league disqualify`` stores "disqualified by the organiser: REASON"; a reason that grew
    afterwards (a note appended by hand or by a later tool) still keeps the entrant out."""
    config = league_config(tmp_path, ["a", "b", "c", "d", "e"])
    with Store(tmp_path / "l.db", writer=True) as store:
        store.open_league(config, league_fingerprint(config))
        sync_field(store, config, frozen=False)
        store.retire("lg", "e")
        store.withdraw("lg", "e", "disqualified by the organiser: read the referee's files; appealed, refused")
        assert not any("rejoined" in line for line in sync_field(store, config, frozen=False))
        assert names_of(store, config) == ["a", "b", "c", "d"]


def test_the_league_never_seats_two_entrants_of_one_author_at_one_table(tmp_path: Path) -> None:
    """Once, one author's entrants held all four seats of a third of a league's matches. With the
    desk's author map (``authors_of``), a and b (both mallory's) never share a table; c, d, e play on."""
    path = tmp_path / "l.toml"
    path.write_text('[event]\nname = "x"\n[league]\nround_matches = 8\nstop_after = 24\n' + FIVE)
    config, settings = load_league(path)
    executor = InProcessExecutor(config)

    async def update(entrants: Any) -> None:
        executor.config = dataclasses.replace(config, entrants=tuple(entrants))

    with Store(tmp_path / "l.db", writer=True) as store:
        game = League(path, config, settings, store, executor, lambda line: None, update_executor=update,
                      authors_of=lambda: {"a": "mallory", "b": "mallory"}, submitted_names={"a", "b"})
        asyncio.run(run_league(game))
        seats = [set(m.seats) for m in store.matches(["x"])]
    assert len(seats) >= 24
    assert not [s for s in seats if {"a", "b"} <= s]
    assert all(any(n in s for s in seats) for n in "abcde")  # everyone still plays
