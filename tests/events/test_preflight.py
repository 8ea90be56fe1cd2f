"""``preflight = true``: entrants pass ``sevenrocks check`` before their first match, or the event does not start."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from sevenrocks.server.events.config import ConfigError, EventConfig, parse_config
from sevenrocks.server.events.executor import LocalExecutor
from sevenrocks.server.check.preflight import PreflightFailed, preflight_settings
from sevenrocks.server.events.store import Store
from sevenrocks.server.events.tournament import run_event

FAULT_BOT = str(Path(__file__).resolve().parents[1] / "referee" / "bots" / "fault_bot.py")
CLIENT = [sys.executable, "-m", "sevenrocks.sdk.client", "--bot"]


def config(second: list[str], preflight: bool = True) -> EventConfig:
    return parse_config({
        "event": {"name": "pf", "format": "self", "deals": 1, "target": 25, "preflight": preflight},
        "time": {"per_move_ms": 5000, "connect_timeout_s": 30},
        "entrants": [{"name": "good", "command": [*CLIENT, "greedy"]}, {"name": "other", "command": second}],
    }, "<test>")


def run(cfg: EventConfig, tmp_path: Path) -> Store:
    store = Store(tmp_path / "pf.db")
    with store:
        asyncio.run(run_event(cfg, store, LocalExecutor(cfg, tmp_path / "logs", 1), preflight_logs=tmp_path / "logs"))
    return store


def test_a_failing_entrant_stops_the_event_before_any_match(tmp_path: Path) -> None:
    cfg = config([sys.executable, FAULT_BOT, "illegal"])
    with pytest.raises(PreflightFailed) as info:
        run(cfg, tmp_path)
    text = str(info.value)
    assert "1 entrant(s) failed the preflight check" in text
    assert "== other ==" in text and "== good ==" not in text
    assert "illegal: round 1:" in text and "FAIL:" in text
    assert f"hint: check the bot on its own with: sevenrocks check -- {sys.executable} {FAULT_BOT} illegal" in text
    assert set(info.value.reports) == {"other"}
    with Store(tmp_path / "pf.db") as store:
        assert store.done_ids("pf") == set()  # nothing was played
    assert (tmp_path / "logs" / "preflight" / "other" / "bot-0.log").exists()


def test_entrants_that_pass_play_the_event(tmp_path: Path) -> None:
    cfg = config([*CLIENT, "random"])
    run(cfg, tmp_path)
    with Store(tmp_path / "pf.db") as store:
        assert len(store.done_ids("pf")) == 2  # self format, one deal, duplicated


def test_the_key_is_checked_and_documented() -> None:
    assert config([*CLIENT, "random"], preflight=False).preflight is False
    with pytest.raises(ConfigError, match=r"preflight"):
        parse_config({"event": {"preflight": "yes"}, "entrants": [{"name": "a", "bot": "greedy"}]}, "<test>")
    example = (Path(__file__).resolve().parents[2] / "examples" / "event.toml").read_text()
    assert "preflight = false" in example
    s = preflight_settings(config([*CLIENT, "random"]))
    assert s.per_move_ms == 5000 and "tight-clock" not in s.phases
