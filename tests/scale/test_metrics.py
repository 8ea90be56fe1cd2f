"""``/metrics`` on the web server: the stored event's numbers in Prometheus' text format."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import sqlite3
from pathlib import Path

import aiohttp

from sevenrocks.server.events.store import Store
from sevenrocks.server.web.server import LiveSite


def _scrape(db: Path, token: str | None = None) -> tuple[int, str, str]:
    async def main() -> tuple[int, str, str]:
        with Store(db) as store:
            site = LiveSite(lambda: None, store, "scale", token=token)
            port = await site.start("127.0.0.1", 0)
            try:
                async with aiohttp.ClientSession() as http:
                    headers = {"Authorization": f"Bearer {token}"} if token else {}
                    async with http.get(f"http://127.0.0.1:{port}/metrics") as denied:
                        status = denied.status
                    async with http.get(f"http://127.0.0.1:{port}/metrics", headers=headers) as r:
                        first = await r.text()
                    async with http.get(f"http://127.0.0.1:{port}/metrics", headers=headers) as r:
                        again = await r.text()  # counted once: the second scrape reads no match twice
                return status, first, again
            finally:
                await site.stop()

    return asyncio.run(main())


def _value(text: str, sample: str) -> float:
    m = re.search(rf"^{re.escape(sample)} (\S+)$", text, re.M)
    assert m, f"{sample} missing:\n{text}"
    return float(m.group(1))


def test_metrics_count_what_the_database_holds(local_run: Path, tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    shutil.copy(local_run, db)
    con = sqlite3.connect(db)
    stored = con.execute("SELECT COUNT(*) FROM matches").fetchone()[0]
    decisions = [ms for (d,) in con.execute("SELECT decisions FROM matches") for v in json.loads(d).values() for ms in v]
    con.close()
    status, text, again = _scrape(db, token="secret")
    assert status == 401  # behind the viewer's token like every page
    assert text == again
    assert _value(text, 'sevenrocks_matches_stored_total{event="scale"}') == stored > 0
    assert _value(text, "sevenrocks_matches_in_flight") == 0
    assert _value(text, "sevenrocks_decision_seconds_count") == len(decisions)
    assert abs(_value(text, "sevenrocks_decision_seconds_sum") - sum(decisions) / 1000) < 1e-3
    assert _value(text, 'sevenrocks_decision_seconds_bucket{le="+Inf"}') == len(decisions)
    assert _value(text, 'sevenrocks_decision_seconds_bucket{le="0.1"}') == sum(ms <= 100 for ms in decisions)
    host_rows = re.findall(r'^sevenrocks_worker_matches_total\{worker="([^"]+)",sandbox="off"\} (\d+)$', text, re.M)
    assert sum(int(n) for _w, n in host_rows) == stored
