"""A league's spectator feed follows the one deal guard, as an event's does.

A league with duplicate deals plays each deal twice with the seats exchanged; a
spectator who watched one match of a deal while its twin is still to play would
know every hand of the twin. The league arena's referee feed now asks the
league's :class:`~sevenrocks.server.referee.dealguard.DealGuard` (fed by the
league loop as ``sevenrocks league`` feeds it): a duplicate match is shown only
once every other match of its deal is stored. Before, the arena's feed had no
guard and showed no duplicate match at all, ever (closed, not leaking, but the
league's live pages and Spectator stream had nothing to show).

Real league loop, real gRPC referee, real subprocess bots, real SQLite.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sevenrocks.server.cli.league_run import _deal_guard
from sevenrocks.server.league.runner import League, load_league, run_league
from sevenrocks.server.league.arena import LeagueArena
from sevenrocks.server.events.outcome import MatchOutcome, Report
from sevenrocks.server.events.schedule import MatchTask
from sevenrocks.server.events.store import Store

FIELD = "".join(f'[[entrants]]\nname = "{n}"\nbot = "{b}"\n'
                for n, b in [("a", "greedy"), ("b", "random"), ("c", "defensive"), ("d", "random")])
TOML = """[event]
name = "watched"
duplicate = true
concurrency = 2
target = 60
[time]
per_move_ms = 10000
connect_timeout_s = 60
[bots]
fresh_process = "never"
[league]
round_matches = 4
stop_after = 12
poll_s = 0.2
idle_s = 0.2
""" + FIELD


class WatchedArena(LeagueArena):
    """The real arena; after every report it looks at what the feed shows, as a spectator would."""

    groups: dict[str, str]
    stored: set[str]
    leaks: list[str]
    seen: set[str]

    async def run(self, tasks: Iterable[MatchTask], on_result: Any) -> None:
        tasks = list(tasks)
        self.groups.update({t.match_id: t.group for t in tasks})
        self.look()

        def report(r: Report) -> None:
            on_result(r)
            if isinstance(r, MatchOutcome):
                self.stored.add(r.task.match_id)
            self.look()

        await super().run(tasks, report)

    def look(self) -> None:
        for entry in self.referee.feed.shown(True):
            if not entry.hidden:
                continue
            self.seen.add(entry.match_id)
            group = self.groups.get(entry.match_id)
            twins = [m for m, g in self.groups.items() if g == group and m != entry.match_id]
            if group is None or any(m not in self.stored for m in twins):
                self.leaks.append(entry.match_id)


def test_the_league_feed_shows_a_duplicate_match_only_once_its_deal_is_done(tmp_path: Path) -> None:
    cfg_path = tmp_path / "league.toml"
    cfg_path.write_text(TOML)
    config, settings = load_league(cfg_path)
    with Store(tmp_path / "league.db", writer=True) as store:
        game = League(cfg_path, config, settings, store, None)  # type: ignore[arg-type]
        guard = _deal_guard(game)
        arena = WatchedArena(config, tmp_path / "logs", config.concurrency, guard=guard)
        arena.groups, arena.stored, arena.leaks, arena.seen = {}, set(), [], set()

        async def to_arena(entrants: Any) -> None:
            if arena.referee is None:
                await arena.open(entrants)
            else:
                await arena.update(entrants)

        game.executor, game.update_executor, game.available = arena, to_arena, arena.available

        async def go() -> None:
            try:
                await asyncio.wait_for(run_league(game), 600)
                arena.look()  # after the last round's end
            finally:
                await arena.close()

        asyncio.run(go())
        played = store.matches(["watched"])
    assert len(played) >= 12
    groups = {}
    for m in played:
        groups.setdefault(arena.groups[m.match_id], []).append(m.match_id)
    assert any(len(g) > 1 for g in groups.values()), "no duplicate deal was played"
    # Never a duplicate match shown while a twin of it was unplayed ...
    assert arena.leaks == [], arena.leaks
    # ... and once their deals were done, they were shown (the feed keeps the last 200 finished).
    assert arena.seen, "the feed never showed a duplicate match"
    assert {m for g in groups.values() if len(g) > 1 for m in g} <= arena.seen, (groups, arena.seen)
