"""The published site's files and the leaderboard defects fixed (no browser needed here)."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from click.testing import CliRunner

from sevenrocks.sdk.rules.replay import verify_lines
from sevenrocks.server.cli import cli
from sevenrocks.server.events.store import Store
from sevenrocks.server.publish.leaderboard import build_leaderboard
from sevenrocks.server.publish.render import COLUMN_HELP, COLUMNS, nice_ticks, render_csv, render_html, render_json, render_md
from sevenrocks.server.publish.site import decision_histogram


def test_publish_writes_a_page_and_a_record_per_match(site_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    result = CliRunner().invoke(cli, ["publish", "--db", str(site_db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    with Store(site_db) as store:
        ids = store.match_ids()
        matches = store.matches()
    assert len(ids) == 12
    records = sorted(out.glob("records/*.jsonl"))
    replays = sorted(out.glob("m/*.html"))
    assert len(records) == len(replays) == 12
    for r in records:
        assert verify_lines(r.read_text().splitlines()) == []  # the downloadable record is the whole record
    # Every page links the one shared stylesheet; nothing points off the site.
    pages = [out / "index.html", out / "matches.html", out / "bots.html", *out.glob("bots/*.html"), *replays]
    for page in pages:
        html = page.read_text()
        assert "static/site.css" in html, page
        assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html), page
    # The match list's data name every match and its replay file.
    rows = []
    for chunk in sorted(out.glob("data/matches-*.js")):
        text = chunk.read_text()
        rows += json.loads(text[text.index(",") + 1:text.rindex(")")])
    assert sorted(r["id"] for r in rows) == sorted(ids)
    assert all((out / "m" / f"{r['file']}.html").exists() for r in rows)
    # Bot pages: results by opponent and partner add up to the matches played.
    greedy = (out / "bots" / "greedy.html").read_text()
    assert 'id="by-opponent"' in greedy and 'id="by-partner"' in greedy
    played = sum(1 for m in matches if "greedy" in m.seats)
    partner_counts = [int(n) for n in re.findall(r'<td class="name"><a href="../bots/[^"]+">[^<]+</a></td><td>(\d+)</td>',
                                                 greedy.split('id="by-partner"')[1])]
    assert sum(partner_counts) == played
    # The matrix links its cells to the matching list of matches.
    index = (out / "index.html").read_text()
    assert re.search(r'<a href="matches.html#pair=[^"]+&amp;vs=[^"]+">\d+%</a>', index)


def test_leaderboard_files_carry_version_time_and_zero_forfeits(site_db: Path) -> None:
    with Store(site_db) as store:
        lb = build_leaderboard(store)
    data = json.loads(render_json(lb))
    assert data["tool"]["name"] == "sevenrocks" and re.match(r"\d+\.\d+", data["tool"]["version"])
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", data["generated_at"])
    rows = list(csv.DictReader(io.StringIO(render_csv(lb))))
    assert rows and all(r["forfeits"] == "0" for r in rows)  # the table shows 0, so does the CSV
    assert all(r.forfeits == {} for r in lb.bots)


def test_chart_ticks_are_round_and_cover_every_line(site_db: Path) -> None:
    assert nice_ticks(-6.2, 24.3) == [-10, 0, 10, 20, 30]  # not the old odd ticks 24, 19, 14, ..., -6
    assert nice_ticks(0.2, 1.7) == [0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75]
    assert nice_ticks(0, 7, 5) == [0, 2, 4, 6, 8]
    with Store(site_db) as store:
        lb = build_leaderboard(store)
    html = render_html(lb)
    ticks = [float(v) for v in re.findall(r'class="ytick-label"[^>]*>([^<]+)<', html)]
    step = ticks[1] - ticks[0]
    assert all(abs((b - a) - step) < 1e-9 for a, b in zip(ticks, ticks[1:]))
    assert step in (1, 2, 2.5, 5, 10, 20, 25, 50)
    values = [v for _, h in lb.history for v in h.values()]
    assert ticks[0] <= min(values) and max(values) <= ticks[-1]  # no line above the top tick
    labels = re.findall(r'class="axis-label"[^>]*>([^<]+)<', html)
    assert labels == ["matches played, in play order", "live TrueSkill μ − 3σ"]


def test_every_column_is_explained_in_plain_words(site_db: Path) -> None:
    with Store(site_db) as store:
        lb = build_leaderboard(store)
    html = render_html(lb)
    glossary = html.split('id="columns"')[1]
    for header, _ in COLUMNS:
        assert COLUMN_HELP.get(header), f"column {header!r} has no explanation"
        assert f"<dt>{header}</dt><dd>{COLUMN_HELP[header]}</dd>" in glossary.replace("&#39;", "'")


def test_empty_matrix_cells_say_why(site_db: Path) -> None:
    with Store(site_db) as store:
        lb = build_leaderboard(store)
    html = render_html(lb)
    matrix = html.split('id="matrix"')[1].split("</table>")[0]
    reasons = re.findall(r'data-why="([^"]+)"', matrix)
    # 6 pairings: 6 diagonal cells, and every pairing shares a bot with 4 of the other 5.
    assert reasons.count("itself") == 6 and reasons.count("shares a bot") == 24
    assert "share a bot, and a bot cannot sit on both sides of a table" in html
    cells = re.findall(r"<td [^>]*>(.*?)</td>", matrix)
    assert len(cells) == 36 and all(c for c in cells if "data-why" not in c)


def test_duplicate_interval_explains_a_constant_margin(site_db: Path) -> None:
    import dataclasses

    with Store(site_db) as store:
        lb = build_leaderboard(store)
    assert lb.duplicates
    # Every deal with the same margin (as when every match is forfeited): no "0.0 … 0.0".
    same = dataclasses.replace(lb.duplicates[0], margin_per_deal=0.0, margin_low=0.0, margin_high=0.0)
    one = dataclasses.replace(lb.duplicates[0], margin_low=float("nan"), margin_high=float("nan"))
    lb.duplicates = [same, one]
    for text in (render_html(lb), render_md(lb)):
        assert "0.0 … 0.0" not in text
        assert "every deal had the same margin" in text and "needs 2 deals" in text


def test_decision_histogram_counts_every_decision() -> None:
    values = [0.05, 0.3, 1.0, 2.5, 12.0, 150.0, 150.0, 9000.0, 20000.0]
    h = decision_histogram(values)
    assert sum(b["count"] for b in h["bars"]) == len(values) == h["n"]
    assert h["top"] == max(b["count"] for b in h["bars"])


def test_publish_errors_are_actionable(tmp_path: Path) -> None:
    Store(tmp_path / "empty.db").close()
    result = CliRunner().invoke(cli, ["publish", "--db", str(tmp_path / "empty.db"), "--out", str(tmp_path / "s")])
    assert result.exit_code == 2 and "holds no events yet" in result.output
    result = CliRunner().invoke(cli, ["publish", "--db", str(tmp_path / "nope.db"), "--out", str(tmp_path / "s")])
    assert result.exit_code == 2 and "does not exist" in result.output


def test_tournament_serves_live_pages_and_ends_by_writing_the_site(tmp_path: Path) -> None:
    import subprocess
    import sys

    config = tmp_path / "event.toml"
    config.write_text('[event]\nname = "tiny"\nruleset = "fives"\nplayers = 2\ndeals = 1\ntarget = 60\n'
                      '[time]\nper_move_ms = 10000\nconnect_timeout_s = 60\n'
                      '[[entrants]]\nname = "greedy"\nbot = "greedy"\n[[entrants]]\nname = "random"\nbot = "random"\n')
    out = tmp_path / "out"
    r = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "tournament", str(config), "--db",
                        str(tmp_path / "t.db"), "--out", str(out), "--quiet", "--web", "127.0.0.1:0"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert re.search(r"live pages at http://127\.0\.0\.1:\d+/live\.html\n", r.stderr), r.stderr
    assert (out / "site" / "index.html").exists() and "event site" in r.stderr
    with Store(tmp_path / "t.db") as store:
        n = len(store.match_ids())
    assert n and len(list((out / "site" / "m").glob("*.html"))) == n
    bad = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "tournament", "--web", "8080"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "HOST:PORT" in bad.stderr


def test_a_forfeit_shows_on_the_bot_page_with_its_log_excerpt(tmp_path: Path) -> None:
    from sevenrocks.sdk.rules import FaultCause, GameState, Offender, make_ruleset
    from sevenrocks.sdk.rules.records import header_for, record_lines
    from sevenrocks.server.events.config import Entrant, EventConfig
    from sevenrocks.server.events.outcome import MatchOutcome
    from sevenrocks.server.events.schedule import MatchTask, RulesetSpec, fingerprint
    from sevenrocks.server.publish.site import publish_site

    rs = make_ruleset("fives", 2)
    names = ("steady", "flaky")
    g = GameState(rs, seed=9)
    events = list(g.start())
    for _ in range(3):
        events += g.play(g.legal_moves()[0])
    offender = Offender(g.turn, FaultCause.TIMEOUT, "no move within 1000 ms")
    events += g.forfeit(offender.seat, offender.cause, offender.detail)
    lines = record_lines(header_for("f-0", rs, 9, list(names)), events)
    assert verify_lines(lines) == []
    end = events[-1]
    task = MatchTask("f", "f-0", RulesetSpec(rs.name, 2, rs.target, rs.round_cap), 9, names, 0, 0, "f-0")
    outcome = MatchOutcome(task, "forfeit", end.winner, tuple(end.scores), tuple(g.final_ranks()), end.rounds,
                           offender, {}, tuple(lines))
    with Store(tmp_path / "f.db") as store:
        store.open_event(EventConfig("f", tuple(Entrant(n) for n in names), ruleset="fives", players=2),
                         fingerprint([task]), 1)
        store.record_matches([outcome])
        logs = tmp_path / "logs"
        logs.mkdir()
        culprit = names[offender.seat]
        (logs / f"{culprit}.log").write_text("starting\nthinking about f-0 ... stuck in a loop\nbye\n")
        publish_site(store, tmp_path / "site", log_dir=logs)
    page = (tmp_path / "site" / "bots" / f"{culprit}.html").read_text()
    assert "timeout" in page and "no move within 1000 ms" in page
    assert '<pre class="excerpt">thinking about f-0 ... stuck in a loop</pre>' in page
    assert 'href="../m/f-0.html"' in page
    other = (tmp_path / "site" / "bots" / f"{names[1 - offender.seat]}.html").read_text()
    assert "never forfeited" in other
    assert '<option>timeout</option>' in (tmp_path / "site" / "matches.html").read_text()


def test_the_bots_page_lists_bots_in_leaderboard_order(site_db: Path, tmp_path: Path) -> None:
    """As the page says ("in leaderboard order"); it listed them by name. The leaderboard is turned
    upside down here so that its order cannot be the alphabetical one by chance."""
    from sevenrocks.server.publish.site import publish_site

    with Store(site_db) as store:
        lb = build_leaderboard(store)
        lb.bots = list(reversed(lb.bots))
        publish_site(store, tmp_path / "site", None, tmp_path / "logs", lb=lb)
    page = (tmp_path / "site" / "bots.html").read_text()
    listed = list(dict.fromkeys(re.findall(r'href="bots/([^"]+)\.html"', page)))
    assert "in leaderboard order" in page and listed == [r.name for r in lb.bots] != sorted(listed), listed
