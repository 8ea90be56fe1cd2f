"""What an author sees on the published pages: one "ranked by μ", a chart labelled as the live
TrueSkill in play order, a match title that fits a 400 px screen, a live page that says the event ended."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sevenrocks.bots.greedy import GreedyBot
from sevenrocks.sdk.local import play_local
from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.server.cli import cli
from sevenrocks.server.events.store import Store
from sevenrocks.server.publish.leaderboard import build_leaderboard
from sevenrocks.server.publish.render import render_html
from sevenrocks.server.web.server import LiveSite

from .conftest import open_page, screenshot


def test_the_intro_says_ranked_by_mu_once_and_the_chart_says_what_it_draws(site_db: Path) -> None:
    with Store(site_db) as store:
        html = render_html(build_leaderboard(store))
    intro = html.split('<p class="sub">', 1)[1].split("</p>", 1)[0]
    assert intro.lower().count("ranked by") == 1 and "ranked by μ" in intro
    assert '<h2 id="chart-title">Live TrueSkill rating, in play order</h2>' in html
    assert "the table is the result" in html


@pytest.mark.browser
def test_a_long_match_title_does_not_overflow_at_400_px(browser: Any, tmp_path: Path) -> None:
    long_id = "league-d000017-defensive.greedy.random1.random2"  # as the site names matches
    lines = list(play_local([GreedyBot(seed=i) for i in range(4)], make_ruleset("seven-rocks"), 3,
                            match_id=long_id).record_lines())
    record = tmp_path / "long.jsonl"
    record.write_text("\n".join(lines) + "\n")
    page_file = tmp_path / "long.html"
    assert CliRunner().invoke(cli, ["replay", str(record), "--out", str(page_file)]).exit_code == 0
    w = open_page(browser, width=400, height=800)
    w.page.goto(page_file.as_uri())
    sizes = w.page.evaluate("""() => { const h = document.querySelector("h1");
        return {h1: h.scrollWidth, box: h.clientWidth, page: document.documentElement.scrollWidth,
                text: h.textContent}; }""")
    screenshot(w.page, "replay-title-400px")
    assert long_id in sizes["text"]
    assert sizes["h1"] <= sizes["box"] and sizes["page"] <= 400, sizes
    w.page.close()


@pytest.mark.browser
def test_the_live_page_says_when_the_event_has_ended(browser: Any) -> None:
    loop = asyncio.new_event_loop()
    site = LiveSite(lambda: None)
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        port = asyncio.run_coroutine_threadsafe(site.start("127.0.0.1", 0), loop).result(30)
        w = open_page(browser, allow=("http://127.0.0.1", "ws://127.0.0.1", "data:", "about:"))
        w.page.goto(f"http://127.0.0.1:{port}/live.html")
        w.page.wait_for_selector("body[data-ready='1']")
        w.page.wait_for_function("document.querySelector('#running li') && "
                                 "document.querySelector('#running li').textContent !== 'connecting…'")
        assert w.page.is_hidden("#ended")
        asyncio.run_coroutine_threadsafe(site.stop("The event has ended: no more matches will be played."),
                                         loop).result(30)
        w.page.wait_for_selector("body[data-ended='1']", timeout=30_000)
        assert w.page.is_visible("#ended")
        assert w.page.inner_text("#ended") == "The event has ended: no more matches will be played."
        assert "(connection closed)" not in w.page.inner_text("#watching")
        screenshot(w.page, "live-ended")
        w.page.close()
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
