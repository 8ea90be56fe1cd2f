"""The live site says what a league is doing: playing, or waiting and for what (headless chromium)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from sevenrocks.server.league.runner import league_fingerprint
from sevenrocks.server.league.settings import parse_league
from sevenrocks.server.league.status import write_status
from sevenrocks.server.events.store import Store

from .conftest import open_page, screenshot, serving

WAITING = "only 1 of 2 active entrants can be seated and a table needs 2 (alpha@2 withdrawn (back only as a new version))"


def wait_page(page: Any, check: str, what: str, deadline_s: float = 30) -> None:
    deadline = time.monotonic() + deadline_s
    while not page.evaluate(check):
        assert time.monotonic() < deadline, f"the page did not show {what} within {deadline_s:g} s"
        page.wait_for_timeout(50)


@pytest.mark.browser
def test_the_live_page_shows_a_waiting_league_and_why_then_that_it_plays(browser: Any, tmp_path: Path) -> None:
    config, _ = parse_league({"event": {"name": "spring"},
                              "entrants": [{"name": "greedy", "bot": "greedy"}]}, "<test>")
    db = tmp_path / "league.db"
    with Store(db, writer=True) as league:
        league.open_league(config, league_fingerprint(config))
        write_status(league.db, "spring", "waiting", WAITING)
    with serving(db, "spring") as port:  # the site's own reader, as `--web` has
        w = open_page(browser, allow=("http://127.0.0.1", "ws://127.0.0.1", "data:", "about:"))
        w.page.goto(f"http://127.0.0.1:{port}/live.html")
        wait_page(w.page, "document.body.dataset.league === 'waiting'", "the league waiting")
        text = w.page.inner_text("#league-state")
        assert text.startswith("league: waiting since ") and WAITING in text, text
        screenshot(w.page, "live-league-waiting")
        # The site reads the same database: the league's next state reaches the open page.
        with Store(db, writer=True) as league:
            write_status(league.db, "spring", "playing", "3 entrants seated: alpha@3, greedy, random")
        wait_page(w.page, "document.body.dataset.league === 'playing'", "the league playing again")
        assert "3 entrants seated" in w.page.inner_text("#league-state")
        assert w.problems() == []
