"""The published site of a large field, in headless chromium from file://: no unreadable matrix,
tables that sort all their rows and show them a page at a time, bot pages with partners and opponents.

The event: 24 entrants at random tables of four, 160 stored matches (real records of
matches played in process by the engine, stored under this field's seatings; only the
replay pages would show the records' own names).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sevenrocks.sdk.local import play_local
from sevenrocks.sdk.registry import load_bot
from sevenrocks.sdk.rules import make_ruleset
from sevenrocks.server.cli import cli
from sevenrocks.server.events.config import Entrant, EventConfig
from sevenrocks.server.events.outcome import MatchOutcome, final_ranks
from sevenrocks.server.events.schedule import MatchTask, RulesetSpec, fingerprint
from sevenrocks.server.events.store import Store
from sevenrocks.server.publish.leaderboard import MATRIX_LIMIT, build_leaderboard

from .conftest import open_page, screenshot

ENTRANTS = [f"bot-{i:02d}" for i in range(24)]


@pytest.fixture(scope="module")
def field_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rs = make_ruleset()
    spec = RulesetSpec(rs.name, rs.players, rs.target, rs.round_cap)
    played = [play_local([load_bot("greedy" if i % 2 else "random")(seed=k * 4 + i) for i in range(4)], rs, 500 + k,
                         match_id="x", names=["a", "b", "c", "d"]) for k in range(8)]
    rng = random.Random(3)
    tasks, outcomes = [], []
    for i in range(160):
        seats = tuple(rng.sample(ENTRANTS, 4))
        task = MatchTask("field", f"field-{i:04d}", spec, 500 + i % 8, seats, i, i // 2, f"g{i // 2}")
        m = played[i % 8]
        lines = list(m.record_lines())
        head = json.loads(lines[0])
        head["match_id"] = task.match_id
        lines[0] = json.dumps(head)
        end = m.end
        tasks.append(task)
        outcomes.append(MatchOutcome(task, end.reason.value, end.winner, tuple(end.scores),
                                     final_ranks(rs, tuple(end.scores), end.winner, None), end.rounds, None,
                                     {s: [1.0 + s] for s in range(4)}, tuple(lines), 0.1))
    db = tmp_path_factory.mktemp("field") / "field.db"
    with Store(db) as store:
        store.open_event(EventConfig(name="field", entrants=tuple(Entrant(n, bot="random") for n in ENTRANTS)),
                         fingerprint(tasks), len(tasks))
        store.record_matches(outcomes)
    return db


def test_a_large_field_leaves_the_matrix_out(field_db: Path) -> None:
    with Store(field_db) as store:
        lb = build_leaderboard(store)
    assert len(lb.pairs) > MATRIX_LIMIT and lb.matrix == {} and not lb.matrix_shown and lb.cannot_meet == []
    assert lb.matrix_subjects == len(lb.pairs)


def test_the_large_field_site_sorts_and_pages_from_file(browser: Any, field_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    result = CliRunner().invoke(cli, ["publish", "--db", str(field_db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    with Store(field_db) as store:
        lb = build_leaderboard(store)
    w = open_page(browser)
    page = w.page
    page.goto((out / "index.html").as_uri())
    page.wait_for_selector("body[data-ready='1']")
    assert page.query_selector("#matrix") is None
    assert str(len(lb.pairs)) in page.inner_text("#no-matrix")
    body = "#pairs tbody tr"
    names = lambda: page.eval_on_selector_all(body + " td.name", "els => els.map(e => e.textContent)")  # noqa: E731
    first_page = names()
    assert len(first_page) == 50 and first_page == [r.name for r in lb.pairs[:50]]
    pager = page.locator("#pairs").locator("xpath=ancestor::div[contains(@class,'table-wrap')]/following-sibling::div[1]")
    assert f"rows 1–50 of {len(lb.pairs)}" in pager.inner_text()
    pager.locator("button.next").click()
    assert names() == [r.name for r in lb.pairs[50:100]]
    assert page.get_attribute("#pairs", "data-page") == "2"
    screenshot(page, "site-large-field")
    # Sorting sorts every row, not the page shown: by name, the first page is the 50 smallest names.
    page.click("#pairs thead th.name")
    assert names() == sorted(r.name for r in lb.pairs)[:50]
    assert page.get_attribute("#pairs", "data-page") == "1"
    page.click("#pairs thead th.name")
    assert names() == sorted((r.name for r in lb.pairs), reverse=True)[:50]
    # A bot page: its partners (with the partnership's rating) and its opponents.
    bot = lb.bots[0].name
    page.goto((out / "bots" / f"{bot}.html").as_uri())
    page.wait_for_selector("body[data-ready='1']")
    partners = page.eval_on_selector_all("#by-partner tbody tr", "els => els.map(e => e.innerText)")
    mine = {r.name: r for r in lb.pairs if bot in r.name.split("+")}
    assert len(partners) == min(50, len(mine)) and len(mine) > 0
    for text in partners:
        partner = text.split("\t")[0]
        row = mine["+".join(sorted((bot, partner)))]
        assert f"{row.mu:.2f}" in text and str(row.rank) in text
    assert page.query_selector_all("#by-opponent tbody tr")
    assert w.problems() == []
