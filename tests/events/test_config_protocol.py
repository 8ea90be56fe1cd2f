"""``protocol = "stdio"`` on an entrant: the harness launches the stdio adapter with the program as its child."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from sevenrocks.sdk.stdio import stdio_program
from sevenrocks.server.events.config import ConfigError, parse_config


def config(**entrant: Any) -> dict[str, Any]:
    return {"event": {"format": "self"}, "entrants": [{"name": "mine", **entrant}, {"name": "greedy", "bot": "greedy"}]}


def test_a_stdio_entrant_runs_through_the_adapter() -> None:
    cfg = parse_config(config(command=["node", "bot.js"], protocol="stdio"))
    command = cfg.entrants[0].command
    assert command is not None and command[0] == sys.executable
    assert stdio_program(command) == ["node", "bot.js"]


def test_grpc_is_the_default_and_can_be_named() -> None:
    plain = parse_config(config(command=["node", "bot.js"])).entrants[0].command
    named = parse_config(config(command=["node", "bot.js"], protocol="grpc")).entrants[0].command
    assert plain == named == ("node", "bot.js")


@pytest.mark.parametrize(("entrant", "message"), [
    ({"command": ["node", "bot.js"], "protocol": "json"}, "'json' is not a protocol; choose grpc"),
    ({"bot": "greedy", "protocol": "stdio"}, '"stdio" goes with command = [...]'),
    ({"remote": True, "token": "t", "protocol": "stdio"}, "python -m sevenrocks.sdk.stdio -- PROGRAM"),
    ({"command": ["no-such-program-here", "x"], "protocol": "stdio"}, "is not an executable file"),
])
def test_a_wrong_protocol_is_a_one_line_error(entrant: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(config(**entrant))
    assert message in str(info.value) and "\n" not in str(info.value)
