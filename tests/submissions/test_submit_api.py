"""The submission API of a real league (``--web``): what it refuses, and what one author's token reaches.

The league runs in its default sandbox; no test here waits for a match, so the module
stays fast (test_league_submit.py plays the submitted bots).
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from . import bundles
from ..publish.conftest import LOCAL, open_page, screenshot
from .league_run import LeagueRun, api, page, submit


def test_the_quota_refuses_the_sixth_upload_of_a_day(league: tuple[LeagueRun, dict[str, str]], tmp_path: Path) -> None:
    run, tokens = league
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"not an archive")
    for _ in range(5):
        status, answer = api(f"{run.url}/api/submissions", tokens["dave"], junk.read_bytes())
        assert status == 202, answer
    done = submit(run.url, tokens["dave"], bundles.sdk_bot(tmp_path / "dave"))
    assert done.returncode == 2
    assert "refused (429): quota reached: dave has made 5 submissions in the last 24 hours" in done.stderr
    assert "submissions_per_day = 5" in done.stderr
    status, answer = api(f"{run.url}/api/submissions", tokens["dave"])
    assert len(answer["submissions"]) == 5
    run.wait_for("dave's junk rejected", lambda: all(
        s == "rejected" for (s,) in run.query("SELECT state FROM submissions WHERE author = 'dave'")))
    reasons = {r for (r,) in run.query("SELECT reason FROM submissions WHERE author = 'dave'")}
    assert all(str(r).startswith("unpack: not a readable tar or zip archive") for r in reasons), reasons


def test_uploads_need_a_token_and_stay_under_the_size_limit(league: tuple[LeagueRun, dict[str, str]]) -> None:
    run, tokens = league
    assert api(f"{run.url}/api/submissions", "", b"x")[0] == 401
    assert api(f"{run.url}/api/submissions", "sr_made-up", b"x")[0] == 401
    status, answer = api(f"{run.url}/api/submissions?name=carol", tokens["carol"], b"\0" * (17 * 2**20))
    assert status == 413 and "limit is 16 MiB" in answer["error"]
    status, answer = api(f"{run.url}/api/submissions?name=%3Cb%3Ex", tokens["carol"], b"x")
    assert status == 400 and "letters, digits" in answer["error"]
    status, answer = api(f"{run.url}/api/submissions?name=greedy", tokens["carol"], b"x")
    assert status == 409  # the organiser's entrant
    status, answer = api(f"{run.url}/api/submissions?name=alice", tokens["carol"], b"x")
    assert status == 409  # another author's name


def test_author_b_reaches_nothing_of_author_a(league: tuple[LeagueRun, dict[str, str]], tmp_path: Path) -> None:
    run, tokens = league
    done = submit(run.url, tokens["alice"], bundles.sdk_bot(tmp_path / "alice"))
    assert done.returncode == 0, done.stderr
    assert submit(run.url, tokens["bob"], bundles.bad_bot(tmp_path / "bad"), "--name", "bobbad").returncode == 1
    alice_ids = [sid for (sid,) in run.query("SELECT id FROM submissions WHERE author = 'alice'")]
    folders = [f for (f,) in run.query("SELECT folder FROM submissions WHERE author = 'alice'")]
    assert alice_ids and folders
    for sid in alice_ids:
        assert api(f"{run.url}/api/submissions/{sid}", tokens["bob"])[0] == 404
        assert api(f"{run.url}/api/submissions/{sid}", tokens["alice"])[0] == 200
    status, listing = api(f"{run.url}/api/submissions", tokens["bob"])
    assert status == 200 and {s["author"] for s in listing["submissions"]} == {"bob"}
    status, text = page(f"{run.url}/author/?token={tokens['bob']}")
    assert status == 200 and "<h1>bob</h1>" in text
    assert not any(str(f) in text for f in folders)  # no path, log or version of alice's code
    assert "Versions: none yet" in text  # bob's only submission was rejected
    status, text = page(f"{run.url}/author/?token={tokens['alice']}")
    assert status == 200 and "state-active" in text and "bobbad" not in text and "PASS: 11 phases" in text




@pytest.mark.browser
def test_the_author_page_shows_each_submission_with_its_state_in_chromium(
        league: tuple[LeagueRun, dict[str, str]], browser: Any, tmp_path: Path) -> None:
    run, tokens = league
    if not run.query("SELECT 1 FROM submissions WHERE author = 'alice' AND state = 'active'"):
        assert submit(run.url, tokens["alice"], bundles.sdk_bot(tmp_path / "alice")).returncode == 0
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"PK\x03\x04 not really a zip")
    assert api(f"{run.url}/api/submissions?name=alice", tokens["alice"], junk.read_bytes())[0] == 202
    run.wait_for("the junk rejected", lambda: ("rejected",) in run.query(
        "SELECT state FROM submissions WHERE author = 'alice'"))
    w = open_page(browser, allow=(run.url, *LOCAL))
    w.page.goto(f"{run.url}/author/?token={tokens['alice']}")
    rows = w.page.locator("#submissions tr[class^=state-]")
    states = [rows.nth(i).locator("td.state").inner_text() for i in range(rows.count())]
    assert states[0] == "rejected" and "active" in states, states
    assert "not a readable zip archive" in rows.nth(0).inner_text()
    log = w.page.locator("details", has_text="validation log").first
    assert not log.locator("pre").is_visible()
    log.locator("summary").click()
    assert "PASS: 11 phases" in log.locator("pre").inner_text()
    assert w.page.evaluate("getComputedStyle(document.body).fontFamily") != "Times New Roman"  # the site's CSS
    screenshot(w.page, "author-page-submissions")
    assert w.problems() == []
    w.page.close()


def author_tokens(run: LeagueRun) -> dict[str, str]:
    """The launched entrants' author tokens, as the league lists them for the organiser."""
    listing = (run.folder / "out" / "author-tokens.txt").read_text()
    return dict(line.split() for line in listing.splitlines())


@pytest.mark.browser
def test_the_author_page_links_each_match_to_its_replay_and_downloads_one_archive_in_chromium(
        league: tuple[LeagueRun, dict[str, str]], browser: Any, tmp_path: Path) -> None:
    import io
    import re
    import zipfile

    run, tokens = league
    token = author_tokens(run)["greedy"]
    url = f"{run.url}/author/?token={token}"
    run.wait_for("a finished match of greedy's", lambda: "class=replay" in page(url)[1], timeout=180)
    w = open_page(browser, allow=(run.url, *LOCAL))
    w.page.goto(url)
    links = w.page.locator("a.replay")
    listed = {links.nth(i).inner_text() for i in range(links.count())}
    first = links.first.inner_text()
    links.first.click()
    w.page.wait_for_url(re.compile(r"replay="))
    assert w.page.locator("h1").inner_text() == f"Match {first}"
    w.page.locator("#viewer *").first.wait_for()  # the site's replay script drew the match
    assert w.page.evaluate("getComputedStyle(document.body).fontFamily") != "Times New Roman"
    screenshot(w.page, "author-page-replay")
    w.page.go_back()
    with w.page.expect_download() as download:
        w.page.locator("#archive").click()
    body = Path(download.value.path()).read_bytes()
    assert w.problems() == []
    w.page.close()
    with zipfile.ZipFile(io.BytesIO(body)) as z:
        names = z.namelist()
        records = {n[len("records/"):-len(".jsonl")] for n in names if n.startswith("records/")}
        assert listed <= records  # the page's matches (the archive, fetched later, may hold newer ones)
        rows = z.read("matches.tsv").decode().splitlines()[1:]
        assert {r.split("\t")[0] for r in rows} == records
        assert all("greedy" in r.split("\t")[3].split() for r in rows)
        assert {n for n in names if n.startswith("logs/")} <= {"logs/greedy.log"}
        stored = dict(run.query(f"SELECT match_id, lines FROM records WHERE match_id IN "
                                f"({','.join('?' * len(records))})", *records))
        assert all(z.read(f"records/{mid}.jsonl").decode() == stored[mid] for mid in records)
    # Another author's token: nothing of greedy's, whatever the URL.
    status, text = page(f"{run.url}/author/?replay={first}&token={tokens['bob']}")
    assert status == 404
    req = urllib.request.Request(f"{run.url}/author/archive.zip", headers={"Authorization": f"Bearer {tokens['bob']}"})
    with urllib.request.urlopen(req, timeout=60) as r:
        with zipfile.ZipFile(io.BytesIO(r.read())) as z:
            assert not [n for n in z.namelist() if n.startswith(("records/", "logs/"))]
    assert api(f"{run.url}/author/archive.zip", "sr_made-up")[0] == 401


def test_an_entrant_added_while_the_league_runs_gets_its_author_token_at_once(
        league: tuple[LeagueRun, dict[str, str]]) -> None:
    run, _ = league
    listing = run.folder / "out" / "author-tokens.txt"
    assert "latecomer" not in listing.read_text()
    with run.config.open("a") as f:
        f.write('\n[[entrants]]\nname = "latecomer"\nbot = "greedy"\n')
    run.wait_for("latecomer's author token", lambda: "latecomer " in listing.read_text(), timeout=60)
    token = next(line.split()[1] for line in listing.read_text().splitlines() if line.startswith("latecomer "))
    status, text = page(f"{run.url}/author/?token={token}")
    assert status == 200 and "<h1>latecomer</h1>" in text
    assert not any(line.split()[0] in ("alice", "bob") for line in listing.read_text().splitlines())


def test_disqualifying_a_version_marks_its_row_and_keeps_it_out(league: tuple[LeagueRun, dict[str, str]]) -> None:
    run, tokens = league
    out = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "league", "disqualify", "random",
                          "--db", str(run.db), "--reason", "tested"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "random disqualified (1 version(s): random)" in out.stderr
    time.sleep(3 * 1.0 + 1)  # the league notices within a second and re-reads its field
    assert run.query("SELECT retired_at IS NOT NULL, withdrawn_reason FROM entrants WHERE name = 'random'") == [
        (1, "disqualified by the organiser: tested")]
    assert "random rejoined the field" not in run.output()
    out = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", "league", "disqualify", "dave",
                          "--db", str(run.db), "--reason", "flooding"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    status, answer = api(f"{run.url}/api/submissions", tokens["dave"], b"x")
    assert status == 403 and answer["error"] == "dave is disqualified from this league (flooding)"


def test_the_commands_explain_themselves() -> None:
    from click.testing import CliRunner

    from sevenrocks.server.cli import cli

    text = CliRunner().invoke(cli, ["submit", "--help"]).output
    assert "sevenrocks submit ./mybot --to http://" in text and "sevenrocks-bot.toml" in text
    text = CliRunner().invoke(cli, ["league", "--help"]).output
    assert "sevenrocks league authors add NAME --db league.db" in text and "CONFIG" in text
    assert "prints their token once" in text


def test_one_upload_at_a_time_per_author(league: tuple[LeagueRun, dict[str, str]]) -> None:
    """Parallel uploads of one author cannot outrun the quota (or fill the disk before it is counted)."""
    import socket
    from urllib.parse import urlsplit

    run, tokens = league
    where = urlsplit(run.url)
    slow = socket.create_connection((where.hostname, where.port))
    slow.sendall(f"POST /api/submissions?name=bob HTTP/1.1\r\nHost: {where.netloc}\r\n"
                 f"Authorization: Bearer {tokens['bob']}\r\nContent-Length: 1000000\r\n\r\n".encode() + b"x" * 1000)
    time.sleep(1.0)
    status, answer = api(f"{run.url}/api/submissions?name=bob", tokens["bob"], b"x")
    assert status == 409 and "still arriving; send one at a time" in answer["error"]
    slow.close()
    time.sleep(0.5)
    assert api(f"{run.url}/api/submissions?name=bob", tokens["bob"], b"not an archive")[0] == 202


SNOOP = '''\
import os, sys
print("cwd listing:", sorted(os.listdir(".")), file=sys.stderr, flush=True)
from sevenrocks.sdk.client import run
from sevenrocks.sdk.bot import Bot


class Snoop(Bot):
    def choose_move(self, view):
        return view.legal_moves()[0]


run(Snoop())
'''


def test_a_submitted_bot_in_the_league_sees_only_its_own_bundle(league: tuple[LeagueRun, dict[str, str]],
                                                                tmp_path: Path) -> None:
    """Every author's uploads and snapshots lie beside the league's database; a submitted bot starts in
    its own snapshot and sees none of them, nor the league's folder."""
    run, tokens = league
    folder = bundles.sdk_bot(tmp_path / "snoop")
    (folder / "bot.py").write_text(SNOOP)
    done = submit(run.url, tokens["carol"], folder, "--name", "snoop")  # carol: no entrant in play yet
    assert done.returncode == 0, done.stderr
    log = run.folder / "out" / "logs" / "snoop.log"
    run.wait_for("snoop's listing", lambda: log.is_file() and "cwd listing:" in log.read_text(), timeout=90)
    listing = next(line for line in log.read_text().splitlines() if line.startswith("cwd listing:"))
    assert "'bot.py'" in listing and "'sevenrocks-bot.toml'" in listing  # its own bundle, where it starts
    assert "league" not in listing  # no league.toml, league.db, league.submissions/, league.snapshots/
