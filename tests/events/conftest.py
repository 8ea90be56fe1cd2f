"""Shared helpers for the tournament tests: configs as dicts, events played in process."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from sevenrocks.server.events.config import EventConfig, parse_config
from sevenrocks.server.events.executor import InProcessExecutor
from sevenrocks.server.events.store import Store
from sevenrocks.server.events.tournament import run_event


def config_of(entrants: list[dict[str, Any]], **event: Any) -> EventConfig:
    return parse_config({"event": {"name": "t", **event}, "entrants": entrants}, "<test>")


def bots(*names: str, bot: str = "greedy") -> list[dict[str, Any]]:
    return [{"name": n, "bot": bot} for n in names]


def play_in_process(config: EventConfig, db: Path) -> Store:
    """Play ``config`` with registered bots in this process into ``db`` (no gRPC: fast)."""
    store = Store(db)
    asyncio.run(run_event(config, store, InProcessExecutor(config)))
    return store


@pytest.fixture
def ladder_db(tmp_path: Path) -> Path:
    """A finished 4-bot pairings event (greedy, defensive, two randoms) in a database file."""
    cfg = config_of(
        [{"name": "defensive", "bot": "defensive"}, {"name": "greedy", "bot": "greedy"},
         {"name": "random1", "bot": "random"}, {"name": "random2", "bot": "random"}],
        deals=4, seed=11,
    )
    db = tmp_path / "ladder.db"
    play_in_process(cfg, db).close()
    return db
