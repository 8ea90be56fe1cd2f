"""Publishing: every format from the database, the CLI, and the HTML page in a real browser."""

from __future__ import annotations

import csv
import io
import json
import re
import http.server
import subprocess
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from sevenrocks.server.cli import cli
from sevenrocks.server.publish.leaderboard import build_leaderboard
from sevenrocks.server.events.config import parse_config
from sevenrocks.server.publish.render import render, write_all
from sevenrocks.server.stats.verdict import margin_of_win_rate
from sevenrocks.server.events.store import Store

from ..browser import chromium_path
from .conftest import bots, config_of, play_in_process


def leaderboard_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["leaderboard", *args])
    return result.exit_code, result.output


def test_every_format_agrees_on_the_ranks(ladder_db: Path, tmp_path: Path) -> None:
    with Store(ladder_db) as store:
        lb = build_leaderboard(store)
    names = [r.name for r in lb.bots]
    assert sorted(names) == ["defensive", "greedy", "random1", "random2"]
    assert [r.mu for r in lb.bots] == sorted((r.mu for r in lb.bots), reverse=True)  # ranked by μ, as README says
    assert {names[0], names[1]} == {"defensive", "greedy"}  # the randoms trail
    assert lb.matches == lb.scheduled == 48 and len(lb.pairs) == 6 and len(lb.duplicates) == 3

    code, out = leaderboard_cli("--db", str(ladder_db), "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert [b["name"] for b in data["bots"]] == names
    assert all(b["matches"] == 48 for b in data["bots"])  # every bot is in every pairings match
    assert data["history"][-1]["matches"] == 48

    code, out = leaderboard_cli("--db", str(ladder_db), "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["name"] for r in rows if r["kind"] == "bot"] == names
    assert len([r for r in rows if r["kind"] == "pair"]) == 6

    code, out = leaderboard_cli("--db", str(ladder_db), "--format", "md")
    bot_lines = [line for line in out.splitlines() if re.match(r"\| \d+ \| [a-z0-9]+ \|", line)]
    assert [line.split("|")[2].strip() for line in bot_lines] == names

    code, out = leaderboard_cli("--db", str(ladder_db))
    assert code == 0 and "Partnership pairings" in out and names[0] in out

    target = tmp_path / "site" / "lb.html"
    code, out = leaderboard_cli("--db", str(ladder_db), "--format", "html", "--out", str(target))
    assert code == 0 and target.read_text().startswith("<!DOCTYPE html>")


def test_leaderboard_errors_are_actionable(tmp_path: Path) -> None:
    code, out = leaderboard_cli("--db", str(tmp_path / "missing.db"))
    assert code != 0 and "does not exist" in out
    Store(tmp_path / "empty.db").close()
    code, out = leaderboard_cli("--db", str(tmp_path / "empty.db"))
    assert code != 0 and "holds no events yet" in out


def test_league_and_event_selection(tmp_path: Path) -> None:
    db = tmp_path / "league.db"
    play_in_process(config_of(bots("a", "b", "c", "d"), deals=1, name="one"), db).close()
    play_in_process(config_of(bots("a", "b", "c"), ruleset="fives", players=3, format="seatings",
                              deals=1, name="fives"), db).close()
    code, out = leaderboard_cli("--db", str(db))
    assert code != 0 and "--event" in out and "one" in out and "fives" in out
    code, out = leaderboard_cli("--db", str(db), "--event", "fives", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["ruleset"] == "fives" and data["pairs"] == [] and data["matrix_kind"] == "bots"
    code, out = leaderboard_cli("--db", str(db), "--event", "nope")
    assert code != 0 and "no event 'nope'" in out


# ---------------------------------------------------------------------- the browser

CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--enable-logging=stderr", "--v=0",
]
#: Hosts the browser itself may contact on start (update and account checks), never the page.
BROWSER_OWN_HOSTS = re.compile(r"^https?://([a-z0-9-]+\.)*(google\.com|googleapis\.com|gstatic\.com)(/|:|$)")


@pytest.mark.browser
def test_html_page_in_headless_chromium(ladder_db: Path, tmp_path: Path) -> None:
    with Store(ladder_db) as store:
        lb = build_leaderboard(store)
    page = [p for p in write_all(lb, tmp_path / "out") if p.suffix == ".html"][0]
    html = page.read_text()
    # Self-contained: nothing to fetch (the SVG namespace is an identifier, not a request).
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "url(" not in html and "@import" not in html

    netlog = tmp_path / "net.json"
    r = subprocess.run(
        [chromium_path(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", f"--log-net-log={netlog}",
         "--virtual-time-budget=3000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    console = [line for line in r.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console
    dom = r.stdout
    assert 'data-ready="1"' in dom, "the page's script did not run"
    assert f'data-leader="{lb.bots[0].name}"' in dom
    # The bots table shows the ranks in order, as the database says.
    shown = re.findall(r'<tr data-name="([^"]+)" data-rank="(\d+)">', dom.split('id="pairs"')[0])
    assert shown == [(r.name, str(r.rank)) for r in lb.bots]
    assert [n for n, _ in re.findall(r'<tr data-name="([^"]+)" data-rank="(\d+)">', dom.split('id="pairs"')[1])][:6] == [
        r.name for r in lb.pairs]
    assert dom.count('class="series"') == 4 and 'id="matrix"' in dom
    # The script shaded the matrix (it ran without errors to the end).
    assert re.search(r'data-shade="[0-9.]+" style="background: rgba', dom)
    assert netlog.exists(), "chromium wrote no net log"
    urls = set(re.findall(r'"url":"([^"]+)"', netlog.read_text(errors="replace")))
    page_requests = {u for u in urls if not u.startswith("file:") and not BROWSER_OWN_HOSTS.match(u)}
    assert page_requests == set()
    # The control: the same browser and flags log a page's request (an empty log would prove nothing).
    class NoContent(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), NoContent) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        probe = f"http://127.0.0.1:{server.server_address[1]}/probe.png"
        control = tmp_path / "control.html"
        control.write_text(f'<!doctype html><body><script>fetch("{probe}").catch(() => 0)</script></body>')
        control_log = tmp_path / "control-net.json"
        r = subprocess.run(
            [chromium_path(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile2'}",
             f"--log-net-log={control_log}", "--virtual-time-budget=3000", "--dump-dom", control.as_uri()],
            capture_output=True, text=True, timeout=300)
        server.shutdown()
    assert r.returncode == 0, r.stderr[-2000:]
    assert probe in set(re.findall(r'"url":"([^"]+)"', control_log.read_text(errors="replace")))


# ---------------------------------------------------------------------- the verdict, honestly

@pytest.fixture
def tied_db(tmp_path: Path) -> Path:
    """A real adaptive event with a tie margin and a top 2: defensive, greedy and two randoms."""
    cfg = parse_config({
        "event": {"name": "tie", "format": "pairings", "head_to_head": True, "seed": 4},
        "schedule": {"mode": "adaptive", "budget": 96, "round_deals": 16, "tie_within": "60%", "top_k": 2},
        "entrants": [{"name": "defensive", "bot": "defensive"}, {"name": "greedy", "bot": "greedy"},
                     {"name": "random1", "bot": "random"}, {"name": "random2", "bot": "random"}]}, "<test>")
    db = tmp_path / "tie.db"
    play_in_process(cfg, db).close()
    return db


def test_every_file_shows_the_three_way_verdict_its_delta_top_k_and_matches(tied_db: Path, tmp_path: Path) -> None:
    with Store(tied_db) as store:
        lb = build_leaderboard(store)
        stored = store.matches([e.event_id for e in store.events()])
    delta = margin_of_win_rate(0.60)
    assert lb.tie_within == pytest.approx(delta) and lb.tie_win_rate == pytest.approx(0.60) and lb.top_k == 2
    # Each verdict is what its interval says at the event's δ (the last row has none).
    for row in lb.bots[:-1]:
        expected = ("ahead" if row.gap_low > 0 else "tied" if -delta < row.gap_low and row.gap_high < delta
                    else "open")
        assert row.verdict == expected and row.settled == (expected == "ahead"), row
    assert lb.bots[-1].verdict is None
    assert lb.decided == all(r.verdict in ("ahead", "tied") for r in lb.bots[:2])
    played = {n: sum(n in m.seats for m in stored) for n in ("defensive", "greedy", "random1", "random2")}
    assert {r.name: r.matches for r in lb.bots} == played

    files = {p.suffix: p.read_text() for p in write_all(lb, tmp_path / "out")}
    data = json.loads(files[".json"])
    assert data["tie_within"] == pytest.approx(delta, abs=1e-4) and data["tie_win_rate"] == pytest.approx(0.6)
    assert data["top_k"] == 2 and data["decided"] == lb.decided
    assert [(b["verdict"], b["matches"]) for b in data["bots"]] == [(r.verdict, r.matches) for r in lb.bots]
    rows = [r for r in csv.DictReader(io.StringIO(files[".csv"])) if r["kind"] == "bot"]
    assert [r["verdict"] for r in rows] == [r.verdict or "" for r in lb.bots]
    words = {"ahead": "ahead", "tied": "tied within δ", "open": "open"}
    for text in (" ".join(files[k].split()) for k in (".md", ".txt", ".html")):  # the terminal wraps the line
        assert f"δ = {delta:.2f} rating points (60.0% head to head)" in text and "the top 2 places" in text
    # Places 1|2 and 2|3 are judged; the pair below the prize places is marked as such.
    md_rows = {line.split("|")[2].strip(): line for line in files[".md"].splitlines()
               if re.match(r"\| \d+ \| [a-z0-9]+ \|", line)}
    for row in lb.bots[:-1]:
        cell = words[row.verdict or ""] + ("" if row.rank <= 2 else " (past top 2)")
        assert f"| {cell} |" in md_rows[row.name], (cell, md_rows[row.name])


def test_without_a_margin_the_files_say_no_tie_is_ever_claimed(ladder_db: Path) -> None:
    with Store(ladder_db) as store:
        lb = build_leaderboard(store)
    assert lb.tie_within == 0 and lb.top_k is None and all(r.verdict != "tied" for r in lb.bots)
    assert "no tie margin (δ = 0: a tie is never claimed)" in render(lb, "md")
    assert "every neighbour pair" in render(lb, "table")


@pytest.mark.browser
def test_the_verdict_in_headless_chromium(tied_db: Path, tmp_path: Path) -> None:
    with Store(tied_db) as store:
        lb = build_leaderboard(store)
    page = [p for p in write_all(lb, tmp_path / "out") if p.suffix == ".html"][0]
    r = subprocess.run(
        [chromium_path(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
         "--virtual-time-budget=3000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    assert 'data-ready="1"' in dom, "the page's script did not run"
    bots_table = dom.split('id="bots"')[1].split("</table>")[0]
    headers = re.findall(r"<th[^>]*>(.*?)</th>", bots_table)
    order_at = next(i for i, h in enumerate(headers) if h.replace("<wbr>", "") == "order")
    matches_at = next(i for i, h in enumerate(headers) if h.replace("<wbr>", "") == "matches")
    for row in lb.bots:
        tr = re.search(rf'<tr data-name="{row.name}"[^>]*>(.*?)</tr>', bots_table, re.S)
        assert tr, row.name
        cells = re.findall(r"<td[^>]*>(.*?)</td>", tr.group(1), re.S)
        shown = {"ahead": "ahead", "tied": "tied within δ", "open": "open", None: "–"}[row.verdict]
        assert cells[order_at].startswith(shown) and cells[matches_at] == str(row.matches), (row, cells)
    settled = re.search(r'<p id="settled"[^>]*>(.*?)</p>', dom, re.S)
    assert settled and "60.0% head to head" in settled.group(1) and "the top 2 places" in settled.group(1)
