"""``--target`` beyond what a record and the wire carry (1,000,000) is refused by the option itself.

Before, ``match``, ``check``, ``simulate`` and ``loadtest`` took any target of at
least 1 and met a ValueError deep in sdk/convert.py once the first match started
(``serve`` and the event config already refused it). Now each says, in one
usage line, what ``--target`` accepts, exit 2, before anything runs.
"""

from __future__ import annotations

import sys

import pytest
from click.testing import CliRunner

from sevenrocks.sdk.convert import MAX_TARGET
from sevenrocks.server.cli import cli

COMMANDS = {
    "match": ["match", "--seat", "greedy", "--seat", "random", "--seat", "greedy", "--seat", "random"],
    "check": ["check", "--target", "{}", "--", sys.executable, "-m", "sevenrocks.bots.greedy"],
    "simulate": ["simulate", "greedy", "random", "--matches", "1"],
    "loadtest": ["loadtest", "--matches", "1"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("target", [str(MAX_TARGET + 1), "99999999999999999999", "0"])
def test_a_target_out_of_range_is_one_usage_line(command: str, target: str) -> None:
    args = [a.format(target) for a in COMMANDS[command]]
    if "--target" not in args:
        args += ["--target", target]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2, r.output
    assert "Invalid value for '--target'" in r.output and f"1<=x<={MAX_TARGET}" in r.output, r.output
    assert "Traceback" not in r.output and not isinstance(r.exception, ValueError)


def test_the_largest_target_is_accepted_by_the_option() -> None:
    """The bound is the wire's, not lower: simulate plays a match to it (a round cap ends it early)."""
    r = CliRunner().invoke(cli, ["simulate", "greedy", "random", "--matches", "1", "--target", str(MAX_TARGET)])
    assert "Invalid value for '--target'" not in r.output, r.output
