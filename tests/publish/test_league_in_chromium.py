"""In a real browser: the example league as an organiser, a viewer and an author meet it.

``examples/league.toml``, as shipped, runs with ``--web`` on an address beyond loopback (so the site
needs its viewer token). Chromium (Debian's, driven by Playwright) sees a running match on the live
page; the league is stopped and started again, and the same viewer URL opens; an author registered
with ``league authors add`` submits the stdio Python kit with its README's line, then a fix (``ada@2``),
and their page shows a place, a rating and matches won or lost; ``--final`` closes entries, and the
published site leads with the final standings (places as printed, ``ada`` marked retired); the
finished league run again prints its standings without starting a referee. Slow: minutes of play.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ..submissions.league_run import page
from .conftest import browser  # noqa: F401  (one headless chromium for the module)

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Organiser:
    """``sevenrocks league league.toml --db --out --web 0.0.0.0:PORT`` in the default sandbox."""

    def __init__(self, folder: Path, port: int) -> None:
        self.folder, self.port = folder, port
        self.proc: subprocess.Popen[str] | None = None
        self.lines: list[str] = []
        self.env = {k: v for k, v in os.environ.items() if k != "SEVENROCKS_SANDBOX"}

    def cli(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", *args], cwd=self.folder,
                              env=self.env, capture_output=True, text=True, timeout=timeout)

    def start(self) -> str:
        """Start the league; returns the viewer URL it printed."""
        self.lines = []
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sevenrocks.server.cli", "league", "league.toml", "--db", "league.db",
             "--out", "out", "--web", f"0.0.0.0:{self.port}"], cwd=self.folder, env=self.env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        threading.Thread(target=self._read, daemon=True).start()
        return self.wait_line(r"live pages at (http://\S+?);", 180).group(1)

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def wait_line(self, pattern: str, timeout: float) -> re.Match[str]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                found = re.search(pattern, line)
                if found:
                    return found
            assert self.proc is not None and self.proc.poll() is None, "".join(self.lines)[-4000:]
            time.sleep(0.2)
        raise AssertionError(f"no line {pattern!r} in {timeout} s:\n" + "".join(self.lines)[-4000:])

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)


def wait_for(what: str, check: Any, timeout: float, org: Organiser) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        assert org.proc is None or org.proc.poll() is None, "".join(org.lines)[-4000:]
        time.sleep(1.0)
    raise AssertionError(f"timed out waiting for {what}:\n" + "".join(org.lines)[-4000:])


def submit_kit(org: Organiser, author_dir: Path, token: str, fix: bool = False) -> str:
    """The stdio Python kit submitted with its README's line (address and token put in)."""
    kit = ROOT / "examples" / "bots" / "stdio-python"
    text = (kit / "README.md").read_text(encoding="utf-8")
    line, = [ln.strip() for b in re.findall(r"```sh\n(.*?)```", text, flags=re.S) for ln in b.splitlines()
             if "sevenrocks submit" in ln]
    if not author_dir.exists():
        shutil.copytree(kit, author_dir)
    if fix:
        (author_dir / "bot.py").write_text((author_dir / "bot.py").read_text() + "\n# a fix\n")
    argv = line.replace("http://league.example.org:8080", f"http://127.0.0.1:{org.port}") \
               .replace("sr_...", token).split()
    done = subprocess.run([sys.executable, "-m", "sevenrocks.server.cli", *argv[1:]], cwd=author_dir,
                          env=org.env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.slow
def test_the_example_league_in_chromium_live_restart_author_final_and_a_quick_rerun(
        tmp_path: Path, browser: Any) -> None:
    if not os.path.exists("/usr/bin/bwrap"):
        pytest.skip("bubblewrap is not installed")
    shutil.copy(ROOT / "examples" / "league.toml", tmp_path / "league.toml")  # as shipped
    org = Organiser(tmp_path, free_port())
    context = browser.new_context()
    tab = context.new_page()
    try:
        viewer = org.start()
        assert "token=" in viewer  # beyond loopback: the site needs its viewer token
        viewer = viewer.replace("0.0.0.0", "127.0.0.1")

        # A running match on the live page (a duplicate league: a board whose twin is stored).
        tab.goto(viewer)
        tab.wait_for_function(
            "() => [...document.querySelectorAll('#running li')].some(li => !li.classList.contains('muted'))",
            timeout=600_000)
        running = tab.inner_text("#running")
        assert "none right now" not in running

        # An author registers; the printed line names the league's own address.
        added = org.cli("league", "authors", "add", "ada", "--db", "league.db")
        assert added.returncode == 0, added.stderr
        token = added.stdout.strip()
        assert "--to http://" in added.stderr and f":{org.port} --token {token}" in added.stderr
        first = submit_kit(org, tmp_path / "ada", token)
        assert "validated (+" in first and "active: ada plays in the league" in first, first

        # Restarted: the link shared before still opens the live page.
        org.stop()
        again = org.start().replace("0.0.0.0", "127.0.0.1")
        assert again == viewer
        fresh = context.browser.new_context()  # a viewer who only has the link (no cookie)
        other = fresh.new_page()
        response = other.goto(viewer)
        assert response is not None and response.status == 200
        other.wait_for_selector("#running li")
        fresh.close()

        # The author's page: place, rating and matches won or lost from ada's side.
        author_url = f"http://127.0.0.1:{org.port}/author/?token={token}"
        wait_for("ada's place and a shown match", lambda: "class=place" in page(author_url)[1]
                 and "class='result " in page(author_url)[1], 1500, org)
        tab.goto(author_url)
        place = tab.inner_text("#standing td.place")
        assert re.fullmatch(r"=?\d+([–-]\d+)?", place.strip()), place
        assert re.fullmatch(r"-?\d+\.\d", tab.inner_text("#standing td.rating").strip())
        assert "…" in tab.inner_text("#standing td.interval")
        results = tab.locator("table.own-matches td.result").all_inner_texts()
        assert results and set(results) <= {"won", "lost", "drawn"}
        tab.click("#leaderboard")
        tab.wait_for_selector("table#bots")
        assert tab.url.startswith(f"http://127.0.0.1:{org.port}/")

        # A fix: ada@2 replaces ada (whose first version is then retired).
        second = submit_kit(org, tmp_path / "ada", token, fix=True)
        assert "active: ada@2 plays in the league" in second, second
        wait_for("ada@2 in the field", lambda: any("ada@2" in ln and "replaces" in ln for ln in org.lines), 900, org)
        org.stop()

        # The final: entries close, one more match each, the final published on the site.
        final = org.cli("league", "league.toml", "--db", "league.db", "--out", "out", "--final", "1", "--quiet",
                        timeout=1800)
        assert final.returncode == 0, final.stderr
        standings = json.loads((tmp_path / "out" / "final.json").read_text())
        tab.goto((tmp_path / "out" / "site" / "index.html").as_uri())
        assert tab.inner_text("#final-title") == "Final standings"
        rows = tab.locator("#final tbody tr")
        shown = [(rows.nth(i).get_attribute("data-name"), rows.nth(i).locator("td.place").inner_text())
                 for i in range(rows.count())]
        assert shown == [(r["name"], r["place"]) for r in standings["standings"]]
        assert "ada" not in dict(shown) and "ada@2" in dict(shown)
        assert "(retired)" in tab.locator("#bots tr[data-name='ada']").inner_text()
        assert "(retired)" not in tab.locator("#bots tr[data-name='ada@2']").inner_text()

        # Run again: the stored standings, at once, with no referee and no site.
        started = time.monotonic()
        rerun = org.cli("league", "league.toml", "--db", "league.db", "--out", "out", "--web",
                        f"0.0.0.0:{org.port}", timeout=300)
        took = time.monotonic() - started
        assert rerun.returncode == 0, rerun.stderr
        assert rerun.stdout == (tmp_path / "out" / "final.txt").read_text()
        assert "referee listening" not in rerun.stderr and "live pages" not in rerun.stderr
        print(f"the finished league run again: {took:.1f} s (load {os.getloadavg()[0]:.1f})")
    finally:
        org.stop()
        context.close()
