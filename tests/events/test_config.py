"""Event configs: the examples load, the defaults work, and every mistake says what to fix."""

from __future__ import annotations

import runpy
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

from sevenrocks.sdk import client
from sevenrocks.sdk.registry import bot_names
from sevenrocks.server.events.config import ConfigError, default_config, load_config, parse_config

from .conftest import bots

EXAMPLES = Path(__file__).parents[2] / "examples"


def error(data: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as e:
        parse_config(data, "event.toml")
    return str(e.value)


def test_examples_load() -> None:
    ev = load_config(EXAMPLES / "event.toml")
    assert ev.ruleset == "seven-rocks" and ev.format == "pairings" and len(ev.entrants) == 4
    fives = load_config(EXAMPLES / "fives.toml")
    assert fives.ruleset == "fives" and fives.players == 3 and fives.target == 150


def test_defaults_are_the_registered_bots() -> None:
    cfg = default_config()
    assert {e.name for e in cfg.entrants} <= set(bot_names()) and {"greedy", "random"} <= {e.name for e in cfg.entrants}
    # Each default entrant runs the module its entry point names (``python -m sevenrocks.bots.greedy``).
    registered = {ep.name: ep.value.partition(":")[0] for ep in entry_points(group="sevenrocks.bots")}
    for e in cfg.entrants:
        assert e.command is not None and e.command[1:] == ("-m", registered[e.name]), (e.name, e.command)
    assert cfg.format == ("pairings" if len(cfg.entrants) >= 4 else "self")


@pytest.mark.parametrize("name, deals", [("search", 40), ("ismcts", 40), ("alphabeta", 10)])
def test_the_reference_search_entrants_think_a_fixed_number_of_deals(monkeypatch: pytest.MonkeyPatch, name: str,
                                                                      deals: int) -> None:
    """docs/tournament.md: examples/reference-bots.toml's search entrants run at a fixed number of deals per move."""
    search = load_config(EXAMPLES / "reference-bots.toml").entrant(name)
    assert dict(search.env) == {"SEVENROCKS_SEARCH_ITERATIONS": str(deals)}
    # And the module, started with that environment, builds exactly that bot.
    started: list[Any] = []
    monkeypatch.setattr(client, "run", lambda bot, *a, **k: started.append(bot))
    for key, value in dict(search.env).items():
        monkeypatch.setenv(key, value)
    runpy.run_module(f"sevenrocks.bots.{name}", run_name="__main__")
    assert len(started) == 1 and started[0].iterations == deals and started[0].time_ms is None


def test_bot_shorthand_runs_the_entry_point_module() -> None:
    cfg = parse_config({"event": {"format": "self"}, "entrants": bots("a", "b")}, "x.toml")
    assert cfg.entrant("a").command is not None
    assert cfg.entrant("a").command[-2:] == ("-m", "sevenrocks.bots.greedy")


def test_unknown_keys_are_named_with_the_valid_ones() -> None:
    msg = error({"event": {"dealz": 3}, "entrants": bots("a", "b")})
    assert "'dealz'" in msg and "deals" in msg and "[event]" in msg
    msg = error({"evnt": {}, "entrants": bots("a", "b")})
    assert "'evnt'" in msg and "event" in msg
    msg = error({"entrants": [{"name": "a", "bot": "greedy", "comand": "x"}, {"name": "b", "bot": "greedy"}]})
    assert "'comand'" in msg and "entrants[0]" in msg and "command" in msg
    msg = error({"time": {"per_move": 5}, "entrants": bots("a", "b")})
    assert "'per_move'" in msg and "per_move_ms" in msg


def test_duplicate_names() -> None:
    msg = error({"event": {"format": "self"}, "entrants": bots("a", "a")})
    assert "duplicate entrant name 'a'" in msg


def test_missing_or_ambiguous_commands() -> None:
    assert "exactly one of command" in error({"entrants": [{"name": "a"}, {"name": "b", "bot": "greedy"}]})
    assert "exactly one of command" in error({"entrants": [{"name": "a", "bot": "greedy", "command": "x"}]})
    assert "command is empty" in error({"entrants": [{"name": "a", "command": ""}, {"name": "b", "bot": "greedy"}]})
    msg = error({"entrants": [{"name": "a", "command": "no-such-bot-binary --fast"}, {"name": "b", "bot": "greedy"}]})
    assert "'no-such-bot-binary' is not an executable file or a program on PATH" in msg and "entrants[0] (a)" in msg
    msg = error({"entrants": [{"name": "a", "bot": "no-such-bot"}, {"name": "b", "bot": "greedy"}]})
    assert "no-such-bot" in msg and "greedy" in msg
    assert "needs token" in error({"entrants": [{"name": "a", "remote": True}, {"name": "b", "bot": "greedy"}]})
    assert "no entrants" in error({"event": {}})


def test_values_are_checked() -> None:
    assert "expected an integer" in error({"event": {"deals": "2"}, "entrants": bots("a", "b")})
    assert "expected an integer" in error({"event": {"deals": True}, "entrants": bots("a", "b")})
    assert "deals: 0 is out of range; valid: an integer from 1 to" in error({"event": {"deals": 0}, "entrants": bots("a", "b")})
    assert "unknown ruleset" in error({"event": {"ruleset": "chess"}, "entrants": bots("a", "b")})
    assert "not a format for fives" in error({"event": {"ruleset": "fives", "format": "pairings"},
                                              "entrants": bots("a", "b")})
    assert "needs at least 4 entrants" in error({"event": {"format": "pairings"}, "entrants": bots("a", "b")})
    assert "not a valid entrant name" in error({"entrants": bots("a.b", "c")})
    assert "fives is for 2 to 4 players" in error({"event": {"ruleset": "fives", "players": 5},
                                                   "entrants": bots("a", "b")})


def test_teams_format() -> None:
    ok = parse_config({"event": {"format": "teams", "teams": [["a", "b"], ["c", "d"]]},
                       "entrants": bots("a", "b", "c", "d")}, "x.toml")
    assert ok.teams == (("a", "b"), ("c", "d"))
    assert "'z' is not an entrant" in error({"event": {"format": "teams", "teams": [["a", "z"], ["c", "d"]]},
                                             "entrants": bots("a", "b", "c", "d")})
    assert "more than one team" in error({"event": {"format": "teams", "teams": [["a", "b"], ["a", "d"]]},
                                          "entrants": bots("a", "b", "c", "d")})


def test_bad_toml_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[event\nname = 1\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(tmp_path / "missing.toml")


@pytest.mark.parametrize(("section", "key", "value", "says"), [
    ("time", "bank_ms", -1000, "[time].bank_ms: -1000 is out of range; valid: an integer from 0 to 86400000"),
    ("time", "per_move_ms", 2**63 - 1, "[time].per_move_ms: 9223372036854775807 is out of range; valid: an integer from 1"),
    ("time", "connect_timeout_s", float("nan"), "[time].connect_timeout_s: nan is out of range"),
    ("time", "connect_timeout_s", float("inf"), "[time].connect_timeout_s: inf is out of range"),
    ("ratings", "tau", float("nan"), "[ratings].tau: nan is out of range; valid: a finite number >= 0"),
    ("ratings", "tau", float("inf"), "[ratings].tau: inf is out of range"),
    ("ratings", "draw_probability", 1.5, "[ratings].draw_probability: 1.5 is out of range"),
    ("event", "deals", 10**13, "[event].deals: 10000000000000 is out of range; valid: an integer from 1 to"),
    ("bots", "fresh_process", "sometimes", "[bots].fresh_process: 'sometimes'; choose duplicates, always or never"),
    ("bots", "max_crashes_in_row", 0, "[bots].max_crashes_in_row: 0 is out of range"),
])
def test_out_of_range_values_name_the_key_and_what_is_valid(section: str, key: str, value: object, says: str) -> None:
    msg = error({section: {key: value}, "event": {"format": "self"} if section != "event" else {"format": "self", key: value},
                 "entrants": bots("a", "b")})
    assert says in msg and "\n" not in msg


def test_a_config_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    from sevenrocks.server.events.config import load_config

    path = tmp_path / "latin1.toml"
    path.write_bytes('[event]\nname = "caf\u00e9"\n'.encode("latin-1"))
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert str(e.value) == f"{path}: not UTF-8 text (byte 19 is b'\\xe9'); a config is a TOML file saved as UTF-8"
