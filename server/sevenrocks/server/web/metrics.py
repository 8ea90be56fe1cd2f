"""``GET /metrics``: the event's numbers in Prometheus' text format, for an operator's dashboards.

Why: on a cluster an operator watches several machines at once; a scrape target
that any Prometheus (or a plain ``curl``) reads says whether matches are being
stored, how many are in flight, which faults happen on which worker, and how long
bots take to decide, without opening the site.

Exposed (all read from the event database, except what is in flight):

* ``sevenrocks_matches_stored_total{event}``: finished matches stored;
* ``sevenrocks_matches_in_flight``: matches the live referee is playing now;
* ``sevenrocks_faults_total{cause}``: stored matches ended by a bot's fault, by cause;
* ``sevenrocks_worker_matches_total{worker,sandbox}`` and ``sevenrocks_worker_faults_total{worker}``:
  where matches ran (the cluster worker, or this host) and the faults there;
* ``sevenrocks_decision_seconds``: a histogram of the decision times the referee measured.

The text format is simple and stable (``# TYPE`` lines, ``name{labels} value``), so
it is written here rather than adding a client library. The database is read
incrementally: each scrape reads only the matches stored since the last one, so a
scrape costs the same at a million matches as at ten.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Callable
from typing import Any

from aiohttp import web

#: Upper bounds (seconds) of the decision-time histogram's buckets.
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    """Running totals over a store's matches, brought up to date on each scrape."""

    def __init__(self, store: Callable[[], Any], in_flight: Callable[[], int]) -> None:
        #: The database to read, on the thread that scrapes (a read-only connection of that thread's own).
        self.store = store
        self.in_flight = in_flight
        self._last = 0  # rowid of the last match counted
        self.stored: Counter[str] = Counter()
        self.faults: Counter[str] = Counter()
        self.where: Counter[tuple[str, str]] = Counter()
        self.worker_faults: Counter[str] = Counter()
        self.buckets = [0] * len(BUCKETS)
        self.count = 0
        self.total_s = 0.0

    def update(self) -> None:
        db: sqlite3.Connection = self.store().db
        have = {row[1] for row in db.execute("PRAGMA table_info(matches)")}
        where = "worker, sandbox" if "worker" in have else "NULL, NULL"
        rows = db.execute(f"SELECT rowid, event_id, fault_cause, decisions, {where} FROM matches "
                          "WHERE rowid > ? ORDER BY rowid", (self._last,)).fetchall()
        for rowid, event, cause, decisions, worker, sandbox in rows:
            self._last = rowid
            self.stored[event] += 1
            at = worker or "unknown"
            self.where[(at, sandbox or "unknown")] += 1
            if cause:
                self.faults[cause] += 1
                self.worker_faults[at] += 1
            for times in json.loads(decisions).values():
                for ms in times:
                    s = ms / 1000.0
                    self.count += 1
                    self.total_s += s
                    for i, bound in enumerate(BUCKETS):
                        if s <= bound:
                            self.buckets[i] += 1

    def render(self) -> str:
        self.update()
        out: list[str] = []

        def family(name: str, kind: str, help_: str, samples: list[tuple[dict[str, str], float]]) -> None:
            out.append(f"# HELP {name} {help_}")
            out.append(f"# TYPE {name} {kind}")
            for labels, value in samples:
                text = ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items())
                out.append(f"{name}{{{text}}} {value:g}" if text else f"{name} {value:g}")

        family("sevenrocks_matches_stored_total", "counter", "Finished matches stored, by event.",
               [({"event": e}, n) for e, n in sorted(self.stored.items())])
        family("sevenrocks_matches_in_flight", "gauge", "Matches the live referee is playing now.",
               [({}, self.in_flight())])
        family("sevenrocks_faults_total", "counter", "Stored matches ended by a bot's fault, by cause.",
               [({"cause": c}, n) for c, n in sorted(self.faults.items())])
        family("sevenrocks_worker_matches_total", "counter", "Stored matches by the worker and sandbox mode they ran in.",
               [({"worker": w, "sandbox": s}, n) for (w, s), n in sorted(self.where.items())])
        family("sevenrocks_worker_faults_total", "counter", "Stored matches ended by a bot's fault, by worker.",
               [({"worker": w}, n) for w, n in sorted(self.worker_faults.items())])
        out.append("# HELP sevenrocks_decision_seconds Decision times as the referee measured them.")
        out.append("# TYPE sevenrocks_decision_seconds histogram")
        for bound, n in zip(BUCKETS, self.buckets):
            out.append(f'sevenrocks_decision_seconds_bucket{{le="{bound:g}"}} {n}')
        out.append(f'sevenrocks_decision_seconds_bucket{{le="+Inf"}} {self.count}')
        out.append(f"sevenrocks_decision_seconds_sum {self.total_s:.6f}")
        out.append(f"sevenrocks_decision_seconds_count {self.count}")
        return "\n".join(out) + "\n"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def handler(store: Callable[[], Any] | None, in_flight: Callable[[], int]) -> Callable[[web.Request], Any]:
    """The ``/metrics`` route of a site whose database ``store()`` opens on the serving thread (an empty page
    without one)."""
    metrics = Metrics(store, in_flight) if store is not None else None

    async def metrics_page(request: web.Request) -> web.Response:
        text = metrics.render() if metrics is not None else ""
        return web.Response(text=text, content_type="text/plain", charset="utf-8",
                            headers={"X-Content-Type-Options": "nosniff"})

    return metrics_page
