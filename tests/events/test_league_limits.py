"""A league reload with an out-of-range [league] value is refused and the last good config plays on.

The attack run saved ``round_matches = 200000``: the reload accepted it, planned a
round of 200,000 matches and read no config again until it ended.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from sevenrocks.server.events.league import run_league
from sevenrocks.server.events.tournament import Progress

from .test_league import FIELD, in_process_league


def test_a_reload_with_200000_matches_a_round_is_refused_and_the_league_plays_on(tmp_path: Path) -> None:
    head = '[event]\nname = "x"\n[league]\nstop_after = 16\nround_matches = 4\n'
    game, store, said = in_process_league(tmp_path, head + FIELD)
    with store:
        path = game.path
        assert path is not None

        def edit(p: Progress) -> None:
            if p.done == 4:
                path.write_text(head.replace("round_matches = 4", "round_matches = 200000") + FIELD)

        # (Before the bound, the 200,000-match round never ended: the deadline fails the test instead.)
        asyncio.run(asyncio.wait_for(run_league(game, edit), 120))
        assert sum(1 for _ in store.results(["x"])) >= 16
    assert any("round_matches: 200000 is out of range" in line and "at most 10000" in line for line in said), said
    assert game.settings.round_matches == 4
