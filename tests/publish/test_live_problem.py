"""A live page whose server-side task fails says so, and the failure is logged (headless chromium).

Before: an exception in one of an open page's tasks (the one that sends the running
matches, the standings and the league's state) ended it without a word, and the page
went on showing what it last had, as if live; a failed standings build blanked the
table ("0 of 0 matches played"). The failures here are real: rows of the real SQLite
file that the code cannot read (a league state's time that is not a number; a
match's scores that are not JSON), read by the real :class:`LiveSite`.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from sevenrocks.server.league.runner import league_fingerprint
from sevenrocks.server.league.settings import parse_league
from sevenrocks.server.league.status import write_status
from sevenrocks.server.events.store import Store

from .conftest import event_config, open_page, play_in_process, screenshot, serving
from .test_live_league_state import wait_page

ALLOW = ("http://127.0.0.1", "ws://127.0.0.1", "data:", "about:")


@pytest.mark.browser
def test_a_page_whose_updates_fail_says_it_stopped_and_the_failure_is_logged(
        browser: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    config, _ = parse_league({"event": {"name": "spring"}, "entrants": [{"name": "greedy", "bot": "greedy"}]},
                             "<test>")
    db = tmp_path / "league.db"
    with Store(db, writer=True) as league:
        league.open_league(config, league_fingerprint(config))
        write_status(league.db, "spring", "waiting", "for a second entrant")
    caplog.set_level(logging.ERROR, logger="sevenrocks.server.web.pagetasks")
    with serving(db, "spring") as port:
        w = open_page(browser, allow=ALLOW)
        w.page.goto(f"http://127.0.0.1:{port}/live.html")
        wait_page(w.page, "document.body.dataset.league === 'waiting'", "the league waiting")
        assert w.page.is_hidden("#problems")
        # A row the page's task cannot read: its time is not a number.
        with sqlite3.connect(db) as bad:
            bad.execute("UPDATE league_status SET state = 'playing', since = 'soon'")
        wait_page(w.page, "document.body.dataset.problems === 'lists'", "that it stopped updating")
        text = w.page.inner_text("#problems")
        assert "This page has stopped updating" in text and "Reload the page" in text, text
        assert w.page.is_visible("#problems")
        screenshot(w.page, "live-problem-lists")
        assert w.problems() == []
    failed = [r for r in caplog.records if "a live page's lists task failed" in r.getMessage()]
    assert failed and failed[0].exc_info is not None, caplog.text  # with its traceback, for the organiser


@pytest.mark.browser
def test_standings_that_cannot_be_built_are_said_so_not_blanked(browser: Any, tmp_path: Path) -> None:
    db = play_in_process(event_config(name="spoilt"), tmp_path / "spoilt.db")
    with sqlite3.connect(db) as bad:  # one stored match whose scores are not JSON: no leaderboard can be built
        bad.execute("UPDATE matches SET scores = 'not json' WHERE rowid = (SELECT MIN(rowid) FROM matches)")
    with serving(db, "spoilt") as port:
        w = open_page(browser, allow=ALLOW)
        w.page.goto(f"http://127.0.0.1:{port}/live.html")
        wait_page(w.page, "document.body.dataset.problems === 'standings'", "that the standings failed")
        assert "The standings could not be built" in w.page.inner_text("#problems")
        assert w.page.inner_text("#progress") == ""  # never "0 of 0 matches played", as if nothing were
        assert w.problems() == []
