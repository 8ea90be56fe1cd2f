"""The live site as an operator gets it: ``sevenrocks tournament --web`` in its own process.

The test reads the address the command prints, fetches the live page and the
standings from the running command, follows the WebSocket's list of running matches
and one match's moves, and checks the deal guard there: in a duplicate event a
running match is listed only once the other match of its deal is stored.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import aiohttp

from sevenrocks.server.events.config import load_config
from sevenrocks.server.events.schedule import build_schedule

from ..fresh_env import fresh_env

PACED = Path(__file__).parent / "bots" / "paced_bot.py"


def write_event(path: Path) -> Path:
    lines = ['[event]', 'name = "livecli"', 'format = "pairings"', 'deals = 1', 'duplicate = true', 'target = 60',
             'seed = 3', 'concurrency = 2', '[time]', 'per_move_ms = 20000', 'connect_timeout_s = 120']
    for name in ("north", "east", "south", "west"):
        lines += ['[[entrants]]', f'name = "{name}"', f'command = {json.dumps([sys.executable, str(PACED)])}',
                  'env = { PACE_MS = "60" }']
    path.write_text("\n".join(lines) + "\n")
    return path


def stored(db: Path) -> set[str]:
    con = sqlite3.connect(db)
    try:
        return {r[0] for r in con.execute("SELECT match_id FROM matches")}
    except sqlite3.OperationalError:  # not created yet
        return set()
    finally:
        con.close()


async def watch(base: str, db: Path, twins: dict[str, set[str]]) -> dict[str, Any]:
    """Fetch the pages, then follow the live list until a match has been watched move by move."""
    seen: dict[str, Any] = {"listed": [], "early": [], "plays": 0}
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{base}/live.html") as r:
            seen["live_status"], seen["live_html"] = r.status, await r.text()
        async with http.get(f"{base}/static/live.js") as r:
            seen["js_status"] = r.status
        async with http.ws_connect(f"{base}/live/ws") as ws:
            deadline = time.monotonic() + 600
            watching: str | None = None
            while time.monotonic() < deadline and seen["plays"] < 5:
                msg = await ws.receive(timeout=600)
                if msg.type != aiohttp.WSMsgType.TEXT:
                    break
                item = json.loads(msg.data)
                if item.get("type") == "matches":
                    done = stored(db)
                    for m in item["running"]:
                        seen["listed"].append(m["match_id"])
                        if not twins[m["match_id"]] <= done:
                            seen["early"].append(m["match_id"])
                    if watching is None and item["running"]:
                        watching = item["running"][0]["match_id"]
                        await ws.send_str(json.dumps({"watch": watching}))
                elif item.get("type") == "step" and item.get("match_id") == watching:
                    seen["plays"] += item["step"].get("k") == "play"
    return seen


def test_tournament_web_serves_the_live_page_and_its_matches(tmp_path: Path) -> None:
    config = write_event(tmp_path / "event.toml")
    tasks = build_schedule(load_config(config))
    groups: dict[str, set[str]] = {}
    for t in tasks:
        groups.setdefault(t.group, set()).add(t.match_id)
    twins = {t.match_id: groups[t.group] - {t.match_id} for t in tasks}
    assert all(len(v) == 1 for v in twins.values())  # duplicates: every deal is played twice
    db, out = tmp_path / "live.db", tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "sevenrocks.server.cli", "tournament", str(config), "--db", str(db), "--out", str(out),
         "--quiet", "--web", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=fresh_env())
    lines: list[str] = []
    url: list[str] = []
    found = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            m = re.search(r"live pages at (http://127\.0\.0\.1:\d+)/live\.html", line)
            if m:
                url.append(m.group(1))
                found.set()
        found.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert found.wait(300) and url, "".join(lines)
        seen = asyncio.run(watch(url[0], db, twins))
        assert proc.wait(600) == 0, "".join(lines)
    finally:
        if proc.poll() is None:
            proc.kill()
        reader.join(10)
    assert seen["live_status"] == 200 and "<title>Live" in seen["live_html"] and seen["js_status"] == 200
    # Matches were listed while they ran, and one of them was watched move by move.
    assert seen["listed"] and seen["plays"] >= 5, seen
    # The deal guard: no match was listed while the other match of its deal was still unstored.
    assert seen["early"] == [], seen
    assert {m for m in seen["listed"]} <= set(twins)
    assert len(stored(db)) == len(tasks)
