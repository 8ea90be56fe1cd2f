"""The replay page and the event site in headless chromium (Playwright, Debian's chromium).

One browser for the module; small records. Screenshots land in test-artifacts/.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sevenrocks.sdk.local import play_local
from sevenrocks.sdk.registry import load_bot
from sevenrocks.sdk.rules import Layout, Move, Port, Side, make_ruleset
from sevenrocks.server.cli import cli
from sevenrocks.server.events.store import Store
from sevenrocks.server.publish.leaderboard import build_leaderboard
from sevenrocks.server.publish.render import render_html

from .conftest import open_page, screenshot

pytestmark = pytest.mark.browser


def write_record(tmp_path: Path, ruleset: str = "seven-rocks", players: int | None = None, seed: int = 4) -> tuple[Path, list[dict[str, Any]]]:
    rs = make_ruleset(ruleset, players)
    bots = [load_bot("greedy" if i % 2 == 0 else "random")(seed=seed + i) for i in range(rs.players)]
    names = ["north", "east", "south", "west"][:rs.players]
    lines = list(play_local(bots, rs, seed, match_id=f"demo-{seed}", names=names).record_lines())
    path = tmp_path / f"demo-{ruleset}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path, [json.loads(x) for x in lines]


def replay_page(tmp_path: Path, record: Path) -> Path:
    out = tmp_path / (record.stem + ".html")
    result = CliRunner().invoke(cli, ["replay", str(record), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def final_open_ends(lines: list[dict[str, Any]]) -> tuple[list[int], int]:
    """The engine's open port values and ends total after the last play of the last round."""
    last_round = max(d["round"] for d in lines if d["event"] == "round_start")
    layout = Layout()
    ends = 0
    for d in lines:
        if d["event"] == "play" and d["round"] == last_round:
            port = None if d["port"] is None else Port(tuple(d["port"]["tile"]), Side(d["port"]["side"]))
            layout.place(Move(tuple(d["tile"]), port))
            ends = d["ends"]
    return list(layout.open_ports().values()), ends


def test_replay_steps_to_the_end_and_matches_the_record(browser: Any, tmp_path: Path) -> None:
    record, lines = write_record(tmp_path)
    w = open_page(browser)
    page = w.page
    page.goto(replay_page(tmp_path, record).as_uri())
    page.wait_for_selector("body[data-ready='1']")
    steps = len(lines) - 1
    assert page.get_attribute("#viewer", "data-step") == "-1"
    page.focus("body")
    for i in range(steps):
        page.keyboard.press("ArrowRight")
    assert page.get_attribute("#viewer", "data-step") == str(steps - 1)
    end = lines[-1]
    assert end["event"] == "match_end"
    shown = [int(page.inner_text(f".score[data-team='{t}']")) for t in (0, 1)]
    assert shown == end["scores"]
    open_values, ends = final_open_ends(lines)
    assert page.get_attribute(".open-ends", "data-open") == ",".join(map(str, open_values))
    assert int(page.inner_text(".ends-total")) == ends
    last_round = max(d["round"] for d in lines if d["event"] == "round_start")
    placed = [d["tile"] for d in lines if d["event"] == "play" and d["round"] == last_round]
    drawn = page.eval_on_selector_all(".board .ltile", "els => els.map(e => e.getAttribute('data-tile'))")
    assert drawn == [f"{a}-{b}" for a, b in placed]
    assert "Match over" in page.inner_text(".log li.current")
    screenshot(page, "replay-end")
    # Buttons: back one step, the round menu, and play at 10 steps a second.
    page.click("[data-act=prev]")
    assert page.get_attribute("#viewer", "data-step") == str(steps - 2)
    page.select_option("[data-role=round]", index=1)
    second = next(i for i, d in enumerate(lines[1:]) if d["event"] == "round_start" and d["round"] == 2)
    assert page.get_attribute("#viewer", "data-step") == str(second)
    page.select_option("[data-role=speed]", "100")
    page.click("[data-act=play]")
    page.wait_for_function(f"Number(document.getElementById('viewer').dataset.step) >= {second + 3}", timeout=5000)
    page.click("[data-act=play]")
    page.keyboard.press("Home")
    assert page.get_attribute("#viewer", "data-step") == "-1"
    assert w.problems() == []


@pytest.mark.parametrize("ruleset,players", [("seven-rocks", None), ("fives", 3)])
def test_a_seat_view_holds_no_other_seats_tile(browser: Any, tmp_path: Path, ruleset: str, players: int | None) -> None:
    record, lines = write_record(tmp_path, ruleset, players, seed=6)
    w = open_page(browser)
    page = w.page
    page.goto(replay_page(tmp_path, record).as_uri())
    page.wait_for_selector("body[data-ready='1']")
    n = len(lines[0]["seats"])
    # Go to the middle of round 1 (after some plays and, in fives, draws).
    body = lines[1:]
    end1 = next(i for i, d in enumerate(body) if d["event"] in ("round_end", "match_end"))
    target = max(1, end1 // 2)
    page.focus("body")
    for _ in range(target + 1):
        page.keyboard.press("ArrowRight")
    hands = [set(map(tuple, h)) for h in body[0]["hands"]]
    for d in body[1:target + 1]:
        if d["event"] == "play":
            hands[d["seat"]].discard(tuple(d["tile"]))
        elif d["event"] == "draw":
            hands[d["seat"]].add(tuple(d["tile"]))
    me = 1
    page.select_option("[data-role=view]", str(me))
    assert page.get_attribute("#viewer", "data-view") == str(me)
    in_dom = page.eval_on_selector_all(".hand [data-tile]", "els => els.map(e => [e.dataset.seat, e.dataset.tile])")
    assert sorted(in_dom) == sorted([str(me), f"{a}-{b}"] for a, b in hands[me])
    for s in range(n):
        backs = page.eval_on_selector_all(f".hand[data-seat='{s}'] .tile.back", "els => els.length")
        assert backs == (0 if s == me else len(hands[s]))
    # No element anywhere shows another seat's unplayed tile, not even as text.
    text = page.inner_text("body")
    hidden = {t for s in range(n) if s != me for t in hands[s]}
    assert hidden
    for a, b in hidden:
        assert f"[{a}|{b}]" not in text
        assert page.query_selector(f"[data-tile='{a}-{b}']") is None
    screenshot(page, f"replay-seat-view-{ruleset}")
    page.select_option("[data-role=view]", "all")
    assert len(page.query_selector_all(".hand [data-tile]")) == sum(len(h) for h in hands)
    assert w.problems() == []


def published(browser: Any, db: Path, tmp_path: Path, file: str, ready: str) -> Any:
    """``sevenrocks publish`` the database, open one of its pages and wait for ``body[data-<ready>='1']``."""
    out = tmp_path / "site"
    assert CliRunner().invoke(cli, ["publish", "--db", str(db), "--out", str(out)]).exit_code == 0
    w = open_page(browser)
    w.page.goto((out / file).as_uri())
    w.page.wait_for_selector(f"body[data-{ready}='1']")
    return w


def test_the_site_from_file_list_replay_back(browser: Any, site_db: Path, tmp_path: Path) -> None:
    w = published(browser, site_db, tmp_path, "index.html", "ready")
    page, out = w.page, tmp_path / "site"
    screenshot(page, "site-leaderboard")
    page.click("nav.site >> text=Matches")
    page.wait_for_selector("body[data-loaded='1']")
    assert page.url.endswith("/matches.html")
    rows = page.query_selector_all("#match-list tbody tr")
    assert len(rows) == 12
    page.select_option("form.filters [name=pair]", "defensive+greedy")
    page.select_option("form.filters [name=deal]", "0")
    seats = page.eval_on_selector_all("#match-list tbody tr td:nth-child(3)", "els => els.map(e => e.textContent)")
    assert len(seats) == 4  # 12 matches, two of the six pairings in each
    for text in seats:
        names = text.split(", ")
        assert {names[0], names[2]} == {"defensive", "greedy"} or {names[1], names[3]} == {"defensive", "greedy"}
    screenshot(page, "site-matches")
    first = page.inner_text("#match-list tbody tr td a")
    page.click("#match-list tbody tr td a")
    page.wait_for_selector("body[data-ready='1']")
    assert first in page.inner_text("h1")
    page.keyboard.press("End")
    screenshot(page, "site-replay")
    assert page.get_attribute("a[download]", "href").endswith(".jsonl")
    page.go_back()
    page.wait_for_selector("body[data-loaded='1']")
    assert page.url.endswith("/matches.html")
    page.goto((out / "bots" / "greedy.html").as_uri())
    page.wait_for_selector("body[data-ready='1']")
    screenshot(page, "site-bot")
    assert w.problems() == []


def test_no_table_overflows_at_900_or_1280_px(browser: Any, site_db: Path, tmp_path: Path) -> None:
    with Store(site_db) as store:
        lb = build_leaderboard(store)
    # The long forfeits cell that overflowed at 1280 px.
    lb.bots[0].forfeits = {"crash": 3, "disconnect": 11, "illegal": 2, "malformed": 5, "timeout": 17}
    lb.pairs[0].forfeits = dict(lb.bots[0].forfeits)
    page_path = tmp_path / "lb.html"
    page_path.write_text(render_html(lb))
    for width in (900, 1280):
        w = open_page(browser, width=width)
        w.page.goto(page_path.as_uri())
        w.page.wait_for_selector("body[data-ready='1']")
        overflow = w.page.evaluate("""() => {
            const width = document.documentElement.clientWidth;
            return Array.from(document.querySelectorAll('table')).filter(t =>
                t.getBoundingClientRect().right > width + 0.5 || t.scrollWidth > t.parentElement.clientWidth + 0.5
            ).map(t => t.id + ': ' + Math.round(t.getBoundingClientRect().right) + ' > ' + width);
        }""")
        assert overflow == [], f"at {width} px: {overflow}"
        assert w.page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        if width == 900:
            screenshot(w.page, "leaderboard-900px")
        assert w.problems() == []
        w.page.close()


def test_past_the_matrix_limit_the_match_list_filters_by_partner_and_opponent(browser: Any, tmp_path: Path) -> None:
    """Ten entrants have 45 partnerships (past the 32 a list can show): the filters name bots instead."""
    from sevenrocks.server.events.config import parse_config
    from sevenrocks.server.publish.leaderboard import MATRIX_LIMIT

    from .conftest import play_in_process

    names = [f"r{i}" for i in range(10)]
    cfg = parse_config({"event": {"name": "nine", "format": "pairings", "seed": 3},
                        "schedule": {"mode": "adaptive", "budget": 240},
                        "entrants": [{"name": n, "bot": "random"} for n in names]}, "<test>")
    db = play_in_process(cfg, tmp_path / "nine.db")
    with Store(db) as store:
        assert len(build_leaderboard(store).pairs) > MATRIX_LIMIT
        stored = store.matches(["nine"])
    w = published(browser, db, tmp_path, "matches.html", "loaded")
    page = w.page
    assert page.query_selector("form.filters [name=pair]") is None
    options = page.eval_on_selector_all("form.filters [name=partner] option", "els => els.map(e => e.value)")
    assert options == ["", *names]
    # A bot, its partner and an opponent of a stored match (which ones met depends on the planner).
    bot, opponent, partner = stored[0].seats[:3]
    page.select_option("form.filters [name=bot]", bot)
    page.select_option("form.filters [name=partner]", partner)
    page.select_option("form.filters [name=opponent]", opponent)
    # Every match with bot and partner on one side and the opponent on the other, as the database says.
    want = sum(1 for m in stored if bot in m.seats and partner in m.seats and opponent in m.seats
               and m.seats.index(bot) % 2 == m.seats.index(partner) % 2 != m.seats.index(opponent) % 2)
    total = page.inner_text("#match-count") if page.query_selector("#match-count") else None
    shown = page.eval_on_selector_all("#match-list tbody tr td:nth-child(3)", "els => els.map(e => e.textContent)")
    for text in shown:
        seats = text.split(", ")
        assert seats.index(bot) % 2 == seats.index(partner) % 2 != seats.index(opponent) % 2, seats
    assert len(shown) == min(want, 50), (len(shown), want, total)
    assert want > 0 and w.problems() == []
