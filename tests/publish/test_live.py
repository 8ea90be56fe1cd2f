"""The live site during a real event over gRPC on loopback, watched by headless chromium.

The event runs in a thread with its own asyncio loop (referee, launched bot processes
and the live server share it, as in ``sevenrocks tournament --web``). A watcher task
in that loop notes when each event first appears in the referee's spectator feed; the
page notes when it drew each step. Every WebSocket frame the page receives is captured.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from click.testing import CliRunner

from sevenrocks.sdk.rules import Draw, Play, RoundEnd, RoundStart
from sevenrocks.server.cli import cli
from sevenrocks.server.events.config import parse_config
from sevenrocks.server.events.executor import LocalExecutor
from sevenrocks.server.events.schedule import build_schedule
from sevenrocks.server.events.store import Store
from sevenrocks.server.events.tournament import run_event
from sevenrocks.server.referee.dealguard import DealGuard
from sevenrocks.server.web.server import LiveSite, is_loopback, parse_hostport, viewer_token

from .conftest import event_config, open_page, screenshot


class EventThread(threading.Thread):
    """A real event with a live site, started when the test says go."""

    def __init__(self, tmp_path: Path, config: Any, token: str | None = None) -> None:
        super().__init__(daemon=True)
        self.tmp_path, self.config, self.token = tmp_path, config, token
        self.port: int | None = None
        self.ready = threading.Event()
        self.go = threading.Event()
        #: Set when every match is played; the site stays up until the test sets ``release``.
        self.played = threading.Event()
        self.release = threading.Event()
        self.seen: dict[tuple[str, int], float] = {}
        self.events: dict[str, list[Any]] = {}
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            asyncio.run(self.main())
        except BaseException as e:  # noqa: BLE001 (reported to the test)
            self.error = e
            self.ready.set()

    async def main(self) -> None:
        cfg = self.config
        store = Store(self.tmp_path / "live.db")
        referees: list[Any] = []
        guard = DealGuard(cfg.duplicate)
        executor = LocalExecutor(cfg, self.tmp_path / "logs", cfg.concurrency, on_referee=referees.append,
                                 guard=guard)
        tasks = build_schedule(cfg)
        site = LiveSite(lambda: referees[0].feed if referees else None, store, cfg.name, guard, self.token,
                        total=lambda: len(tasks))
        self.port = await site.start("127.0.0.1", 0)
        self.ready.set()
        while not self.go.is_set():
            await asyncio.sleep(0.01)

        async def note(entry: Any) -> None:
            # Woken by the referee's publish, as the live server is: the time a move was played.
            i = -1  # the first message is the seat assignment, not an event
            async for _ in entry.watch():
                if i >= 0:
                    self.seen.setdefault((entry.match_id, i), time.time())
                i += 1

        async def watch_feed() -> None:
            noted: dict[str, asyncio.Task[None]] = {}
            while True:
                if referees:
                    for entry in list(referees[0].feed.running.values()):
                        self.events[entry.match_id] = entry.events
                        if entry.match_id not in noted:
                            noted[entry.match_id] = asyncio.create_task(note(entry))
                await asyncio.sleep(0.001)

        watcher = asyncio.create_task(watch_feed())
        try:
            await run_event(cfg, store, executor, guard=guard)
            self.played.set()
            # The site stays up until the test has seen the page draw the last moves (a generous
            # deadline, not a fixed pause: on a loaded machine the browser may lag far behind).
            deadline = time.monotonic() + LIVE_DEADLINE_S
            while not self.release.is_set() and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
        finally:
            watcher.cancel()
            await site.stop("The event has ended.")  # as `tournament --web` stops it
            store.close()


#: How long the event, and then the page, may take on a loaded machine before the test gives up:
#: a deadline for polling what happened, never a measure of speed.
LIVE_DEADLINE_S = 900


def poll_page(page: Any, check: str, what: str, deadline_s: float = LIVE_DEADLINE_S) -> None:
    """Evaluate the expression ``check`` in ``page`` every 50 ms until it is true; fail naming
    ``what`` (and the page's progress) at the deadline."""
    deadline = time.monotonic() + deadline_s
    while not page.evaluate(check):
        if time.monotonic() > deadline:
            state = page.evaluate("[document.body.dataset.done, SR.received.length, "
                                  "SR.received.filter(function (r) { return r.t === null; }).length]")
            raise AssertionError(f"after {deadline_s:g} s the page still had not {what} "
                                 f"(done, steps received, steps not drawn: {state})")
        page.wait_for_timeout(50)  # lets Playwright deliver the page's events to this thread meanwhile


PACED = [sys.executable, str(Path(__file__).parent / "bots" / "paced_bot.py")]


def live_config(**event: Any) -> Any:
    """Two three-player fives matches (draws from the boneyard: hidden tiles) of bots that think 15 ms a move."""
    return parse_config({
        "event": {"name": "live", "ruleset": "fives", "players": 3, "deals": 1, "seed": 3, "target": 100,
                  "concurrency": 1, **event},
        "time": {"per_move_ms": 10000, "connect_timeout_s": 60},
        "entrants": [{"name": n, "command": PACED, "env": {"PACE_MS": "15"}} for n in ("ann", "bea", "cat")],
    }, "<live test>")


def check_public(frame: dict[str, Any], events: dict[str, list[Any]]) -> None:
    """A frame holds no tile that was hidden when the referee sent it."""
    kind = frame.get("type")
    assert kind in ("matches", "standings", "meta", "step", "error", "ended"), frame
    if kind == "matches":
        for m in frame["running"]:
            assert set(m) == {"match_id", "names", "round", "scores", "status"}
    if kind != "step":
        assert "hands" not in json.dumps(frame) and "tile" not in json.dumps(frame)
        return
    ev = events[frame["match_id"]][frame["i"]]
    step = frame["step"]
    if isinstance(ev, RoundStart):
        assert step["k"] == "round" and "hands" not in step and step["sizes"] == [len(h) for h in ev.hands]
    elif isinstance(ev, Draw):
        assert step["k"] == "draw" and "tile" not in step
    elif isinstance(ev, Play):
        assert step["k"] == "play" and tuple(step["tile"]) == ev.tile and sorted(step["at"]["pips"]) == list(ev.tile)
    elif isinstance(ev, RoundEnd):
        assert step["k"] == "round_end" and step["hands"] == [[list(t) for t in h] for h in ev.hands]
    else:
        assert step["k"] in ("pass", "match_end") and "hands" not in step and "tile" not in step


@pytest.mark.browser
def test_the_live_page_shows_each_move_within_a_second_and_no_hidden_tile(browser: Any, tmp_path: Path) -> None:
    ev = EventThread(tmp_path, live_config(duplicate=False))
    ev.start()
    assert ev.ready.wait(LIVE_DEADLINE_S) and ev.error is None, ev.error
    w = open_page(browser, allow=("http://127.0.0.1", "ws://127.0.0.1", "data:", "about:"))
    frames: list[str] = []
    w.page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(payload)))
    w.page.goto(f"http://127.0.0.1:{ev.port}/live.html")
    poll_page(w.page, "document.body.dataset.ready === '1'", "opened its WebSocket")
    ev.go.set()
    total = len(build_schedule(live_config(duplicate=False)))
    deadline = time.monotonic() + LIVE_DEADLINE_S
    while not ev.played.wait(0.05) and ev.is_alive():
        assert time.monotonic() < deadline, f"the event did not finish in {LIVE_DEADLINE_S} s"
        w.page.wait_for_timeout(1)  # let Playwright deliver the WebSocket frames to this thread
    assert ev.error is None, ev.error
    # Every match counted on the page, and every step it received drawn (however late).
    poll_page(w.page, f"document.body.dataset.done === '{total}' && SR.received.length > 0 && "
                      "SR.received.every(function (r) { return r.t !== null; })",
              f"shown {total} matches played and drawn every step it received")
    screenshot(w.page, "live-page")
    received = w.page.evaluate("SR.received")
    started = w.page.evaluate("SR.watchStarted")
    ev.release.set()
    # The site's stop tells the open page that the event ended.
    poll_page(w.page, "document.body.dataset.ended === '1'", "been told the event ended")
    ev.join(LIVE_DEADLINE_S)
    assert not ev.is_alive() and ev.error is None, ev.error
    # Moves played while the page watched the match (a match joined late first sends what it missed).
    plays = [r for r in received if r["k"] == "play" and ev.seen[(r["match"], r["i"])] > started[r["match"]] / 1000]
    assert len(plays) >= 20, f"the page drew only {len(plays)} moves live"
    assert all(r["t"] is not None for r in plays), "a move arrived but was never drawn"
    lags = sorted(r["t"] / 1000 - ev.seen[(r["match"], r["i"])] for r in plays)
    server = sorted(r["sent"] - ev.seen[(r["match"], r["i"])] for r in plays)
    # How fast is printed, not asserted: on a loaded machine the scheduler decides it.
    load = os.getloadavg()[0] / (os.cpu_count() or 1)
    p95 = lags[int(0.95 * (len(lags) - 1))]
    print(f"live lag over {len(lags)} moves: median {lags[len(lags) // 2]:.3f}s, p95 {p95:.3f}s, "
          f"max {lags[-1]:.3f}s; server max {server[-1]:.4f}s; load {load:.1f} per core")
    # What must hold at any speed: a move leaves the server after the referee played it and is
    # drawn after it left (the clocks are the same machine's; 50 ms for rounding to the millisecond).
    assert server[0] > -0.05 and lags[0] > -0.05, (server[:5], lags[:5])
    assert all(r["t"] / 1000 >= r["sent"] - 0.05 for r in plays)
    assert frames, "no WebSocket frame was captured"
    for raw in frames:
        check_public(json.loads(raw), ev.events)
    assert w.problems() == []


def test_a_duplicate_deal_is_shown_only_once_its_twin_is_stored() -> None:
    cfg = event_config()  # seven-rocks pairings with duplicates: a deal and its seat exchange
    guard = DealGuard(cfg.duplicate)
    tasks = list(guard.planned(iter(build_schedule(cfg))))
    groups: dict[str, list[str]] = {}
    for t in tasks:
        groups.setdefault(t.group, []).append(t.match_id)
    first, twin = next(ms for ms in groups.values() if len(ms) == 2)
    assert not guard.shown(first) and not guard.shown(twin)
    guard.stored([first])
    assert guard.shown(twin)  # the last match of a group may be watched
    assert not guard.shown(first)  # the stored one waits for its twin
    guard.stored([twin])
    assert guard.shown(first)
    assert not guard.shown("never-planned")  # a match nobody registered is not shown
    assert DealGuard(duplicate=False).shown("never-planned")  # without duplicates every deal is its own


def test_planned_registers_each_deal_whole_before_its_first_match() -> None:
    cfg = event_config()
    guard = DealGuard(cfg.duplicate)
    seen = []
    for t in guard.planned(iter(build_schedule(cfg))):
        # Storing the first match of a group before its twin has come out of the generator:
        # the twin must already be known, so the stored one stays hidden.
        guard.stored([t.match_id])
        seen.append(t)
        twins = [x for x in build_schedule(cfg) if x.group == t.group and x.match_id != t.match_id]
        if twins and twins[0].match_id not in {x.match_id for x in seen}:
            assert not guard.shown(t.match_id)


def test_an_adaptive_duplicate_event_serves_no_record_before_its_twin_is_stored(tmp_path: Path) -> None:
    """``sevenrocks tournament --web``, adaptive rounds with duplicate deals: every record the site
    serves must have its whole duplicate group in the database by the time the response is read."""
    import re
    import sqlite3
    import subprocess
    import urllib.error
    import urllib.request

    from sevenrocks.server.publish.site import safe_name

    config = tmp_path / "adaptive.toml"
    config.write_text("""[event]
name = "adap"
format = "pairings"
duplicate = true
target = 30
concurrency = 2
[schedule]
mode = "adaptive"
budget = 40
round_deals = 4
[time]
per_move_ms = 10000
""" + "".join(f'[[entrants]]\nname = "{n}"\nbot = "{b}"\n'
              for n, b in [("g1", "greedy"), ("g2", "greedy"), ("r1", "random"), ("r2", "random")]))
    db = tmp_path / "adap.db"
    proc = subprocess.Popen([sys.executable, "-m", "sevenrocks.server.cli", "tournament", str(config), "--db", str(db),
                             "--out", str(tmp_path / "out"), "--quiet", "--web", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    url = None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        found = re.search(r"live pages at (http://\S+)/live\.html", line)
        if found:
            url = found.group(1)
            break
    assert url, "".join(lines)

    def stored() -> dict[str, str]:
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as c:
                return dict(c.execute("SELECT match_id, grp FROM matches").fetchall())
        except sqlite3.OperationalError:
            return {}

    served: dict[str, int] = {}  # match id -> matches of its group stored right after it was served
    while proc.poll() is None:
        for match_id, group in stored().items():
            if match_id in served:
                continue
            try:
                with urllib.request.urlopen(f"{url}/records/{safe_name(match_id)}.jsonl", timeout=10) as r:
                    assert r.status == 200 and match_id in r.read().decode()
            except urllib.error.HTTPError as e:
                assert e.code == 404
                continue
            except (urllib.error.URLError, ConnectionError):
                break  # the event ended and took the site with it
            served[match_id] = sum(1 for g in stored().values() if g == group)
        time.sleep(0.05)
    rest = proc.stdout.read()
    assert proc.returncode == 0, "".join(lines) + rest
    final = stored()
    assert len(final) == 40
    size = {g: sum(1 for x in final.values() if x == g) for g in final.values()}
    assert set(size.values()) == {2}  # every group is a deal and its seat exchange
    assert len(served) >= 10, f"only {len(served)} records were ever served"
    early = [m for m, n in served.items() if n < size[final[m]]]
    assert early == [], f"{len(early)} record(s) served while their twin was unplayed: {early}"


def test_a_viewer_token_is_needed_when_one_is_set(tmp_path: Path) -> None:
    assert viewer_token("127.0.0.1", None) is None and viewer_token("::1", None) is None
    assert viewer_token("0.0.0.0", None) and viewer_token("192.0.2.7", None)  # beyond loopback: always a token
    assert is_loopback("localhost") and not is_loopback("0.0.0.0")
    with pytest.raises(ValueError, match="HOST:PORT"):
        parse_hostport("8080")

    async def go() -> None:
        site = LiveSite(lambda: None, token="s3cret")
        port = await site.start("127.0.0.1", 0)
        base = f"http://127.0.0.1:{port}"
        try:
            async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:  # unsafe: an IP host
                async with http.get(f"{base}/live.html") as r:
                    assert r.status == 401 and "token" in await r.text()
                async with http.get(f"{base}/live/ws") as r:
                    assert r.status == 401
                async with http.get(f"{base}/live.html?token=wrong") as r:
                    assert r.status == 401
                async with http.get(f"{base}/live.html?token=s3cret") as r:
                    assert r.status == 200
                async with http.get(f"{base}/live.html") as r:  # the cookie now carries the token
                    assert r.status == 200
                async with http.get(f"{base}/static/../../etc/passwd") as r:
                    assert r.status == 404
            async with aiohttp.ClientSession() as other:
                async with other.get(f"{base}/live.html", headers={"Authorization": "Bearer s3cret"}) as r:
                    assert r.status == 200
                async with other.get(f"{base}/live.html") as r:
                    assert r.status == 401
                # The stylesheet is public (the author page, opened with an author's token, uses it too).
                async with other.get(f"{base}/static/site.css") as r:
                    assert r.status == 200
        finally:
            await site.stop()

    in_thread(go)


def test_the_live_feed_answers_its_own_pages_only_and_never_http_0_9() -> None:
    async def go() -> None:
        site = LiveSite(lambda: None)  # loopback, no token: anyone on this machine may watch
        port = await site.start("127.0.0.1", 0)
        base = f"http://127.0.0.1:{port}"
        try:
            async with aiohttp.ClientSession() as http:
                for origin in (base, f"http://127.0.0.1:{port}/", None):  # this site, or no browser at all
                    headers = {"Origin": origin} if origin else {}
                    async with http.ws_connect(f"{base}/live/ws", headers=headers) as ws:
                        assert (await ws.receive_json(timeout=120))["type"] in ("matches", "standings")
                for origin in ("http://evil.example", f"http://localhost:{port}", f"http://127.0.0.1:{port + 1}",
                               "null", f"https://127.0.0.1:{port}", f"{base}/live.html"):
                    with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                        await http.ws_connect(f"{base}/live/ws", headers={"Origin": origin})
                    assert refused.value.status == 403, origin
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /live.html\r\n\r\n")  # HTTP/0.9: no version, no headers
            await writer.drain()
            answer = await asyncio.wait_for(reader.read(), 120)
            writer.close()
            assert answer == b"", answer[:200]
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET /live.html HTTP/1.0\r\n\r\n")
            await writer.drain()
            answer = await asyncio.wait_for(reader.read(), 120)
            writer.close()
            assert answer.startswith(b"HTTP/1.0 200"), answer[:200]
        finally:
            await site.stop()

    in_thread(go)


def in_thread(coro: Any) -> None:
    """asyncio.run in a thread of its own: the module's browser holds this thread's loop."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        pool.submit(lambda: asyncio.run(coro())).result()


def test_serve_names_the_entrants_keeps_a_database_and_publishes(tmp_path: Path) -> None:
    import os
    import re
    import subprocess
    import sys

    db = tmp_path / "served.db"
    tokens = {"alice": "alice-token-0123456789", "bob": "bob-token-0123456789ab"}
    serve = subprocess.Popen(
        [sys.executable, "-m", "sevenrocks.server.cli", "serve", "--listen", "127.0.0.1:0",
         "--ruleset", "fives", "--players", "2", "--matches", "3", "--db", str(db), "--web", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=dict(os.environ, SEVENROCKS_ENTRANTS=f"alice={tokens['alice']},bob={tokens['bob']}"))
    bots: list[subprocess.Popen[bytes]] = []
    try:
        assert serve.stdout is not None
        first = serve.stdout.readline()
        port = re.search(r"listening on 127\.0\.0\.1:(\d+)", first)
        assert port, first
        for token in tokens.values():
            env = dict(os.environ, SEVENROCKS_REFEREE=f"127.0.0.1:{port.group(1)}", SEVENROCKS_TOKEN=token)
            bots.append(subprocess.Popen([sys.executable, "-m", "sevenrocks.bots.random"], env=env))
        out, _ = serve.communicate(timeout=600)
        assert serve.returncode == 0, out
    finally:
        for p in (serve, *bots):
            if p.poll() is None:
                p.kill()
    assert re.search(r"live pages at http://127\.0\.0\.1:\d+/live\.html\n", out), out
    results = [line for line in out.splitlines() if line.startswith("serve-1-")]
    assert len(results) == 3 and all(re.search(r"(alice|bob) won|draw", line) for line in results), out
    assert all("alice" in line and "bob" in line for line in results)
    assert "standings" in out and re.search(r"1\. (alice|bob): \d+-\d+-\d+", out), out
    with Store(db) as store:
        assert len(store.match_ids()) == 3
    result = CliRunner().invoke(cli, ["publish", "--db", str(db), "--out", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    assert len(list((tmp_path / "site" / "m").glob("*.html"))) == 3
