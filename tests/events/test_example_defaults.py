"""``examples/event.toml`` shows every key with the value a config gets when it leaves the key out."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from sevenrocks.server.events.config import default_config, load_config, parse_config

EXAMPLE = Path(__file__).parent.parent.parent / "examples" / "event.toml"


def test_every_key_of_the_example_shows_its_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SEVENROCKS_SANDBOX", raising=False)  # the suite's own default (tests/conftest.py)
    shown = tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))
    minimal = parse_config({"entrants": shown["entrants"]}, str(EXAMPLE))
    defaults: dict[str, Any] = minimal.to_json()
    for table in ("event", "time", "faults", "ratings"):
        for key, value in shown[table].items():
            if table == "event":
                assert defaults[key] == value, f"[event].{key} = {value!r}, but the default is {defaults[key]!r}"
            elif table == "faults":
                got = defaults["faults"]["kind" if key == "policy" else key]
                assert got == value, f"[faults].{key} = {value!r}, but the default is {got!r}"
            else:
                assert defaults[table][key] == value, f"[{table}].{key} = {value!r}, but the default is {defaults[table][key]!r}"
    assert load_config(EXAMPLE).to_json() == defaults  # the file as a whole changes nothing either


def test_the_embedded_event_differs_only_where_the_example_says() -> None:
    embedded = default_config()
    text = EXAMPLE.read_text(encoding="utf-8")
    s = embedded.schedule
    assert (s.mode, s.budget, s.round_deals, s.until_settled) == ("adaptive", 100, 8, True)
    assert 'mode = "adaptive", budget = 100, round_deals = 8,\n# until_settled = true' in text
    assert embedded.format == "self" and 'head to head (format = "self")' in text
    assert [e.name for e in embedded.entrants] == ["random", "greedy", "defensive"]
    assert "random, greedy and defensive" in text
    assert embedded.time.per_move_ms == 3000 and "per_move_ms = 3000" in text
