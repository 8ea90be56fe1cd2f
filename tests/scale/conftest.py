"""Shared helpers for the scale tests: a small deterministic event and its stored results."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import psutil
import pytest

from sevenrocks.sdk.rules.replay import verify_lines
from sevenrocks.server.events.config import EventConfig, parse_config
from sevenrocks.server.events.executor import Executor, LocalExecutor, OnResult
from sevenrocks.server.events.store import Store
from sevenrocks.server.events.tournament import run_event


def small_event(deals: int = 3) -> EventConfig:
    """Three deterministic bots (greedy and defensive choose without randomness), head to head.

    Deterministic bots make a match a pure function of its task, so any executor
    must store the same results.
    """
    entrants = [{"name": "greedy", "bot": "greedy"}, {"name": "defensive", "bot": "defensive"},
                {"name": "greedy-b", "bot": "greedy"}]
    return parse_config({"event": {"name": "scale", "format": "self", "deals": deals, "seed": 7,
                                   "target": 100, "concurrency": 2},
                         "time": {"per_move_ms": 5000, "connect_timeout_s": 30},
                         # One process per bot: these bots keep no memory, and recycling them between
                         # duplicate phases is tested by the tournament command on a local cluster.
                         "bots": {"fresh_process": "never"},
                         "entrants": entrants}, "<scale test>")


def play(config: EventConfig, db: Path, executor: Executor) -> None:
    with Store(db) as store:
        asyncio.run(run_event(config, store, executor))


def results(db: Path) -> dict[str, tuple[Any, ...]]:
    """Each stored match's result, without timings (those differ from run to run)."""
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT match_id, idx, seats, reason, winner, scores, ranks, rounds, fault_cause "
                           "FROM matches ORDER BY idx").fetchall()
    finally:
        con.close()
    return {r[0]: tuple(r[1:]) for r in rows}


def ratings(db: Path) -> dict[tuple[str, str], tuple[float, float]]:
    with Store(db) as store:
        return {k: (round(mu, 9), round(sigma, 9)) for k, (mu, sigma) in store.stored_ratings("scale").items()}


def bad_records(db: Path) -> list[str]:
    """Ids of stored matches whose record does not replay clean through the engine."""
    with Store(db) as store:
        bad = []
        for mid in store.match_ids():
            text = store.record(mid)
            if text is None or verify_lines(text.splitlines()):
                bad.append(mid)
        return bad


@pytest.fixture(scope="session")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small event played on one machine (embedded referee): the reference results."""
    out = tmp_path_factory.mktemp("local")
    config = small_event()
    play(config, out / "local.db", LocalExecutor(config, out / "logs", config.concurrency))
    return out / "local.db"


def is_launched_bot(p: psutil.Process) -> bool:
    """A bot the harness launched: it has an entrant token in its environment.

    Not "sevenrocks in its command line": in a checkout folder named sevenrocks
    every Python process (a Dask worker, multiprocessing's resource tracker) has
    that in its interpreter's path, and would be counted as a leaked bot.
    """
    try:
        return "SEVENROCKS_TOKEN" in p.environ()
    except psutil.Error:  # gone meanwhile, or not ours to read
        return False


__all__ = ["OnResult", "is_launched_bot", "bad_records", "play", "ratings", "results", "small_event"]
