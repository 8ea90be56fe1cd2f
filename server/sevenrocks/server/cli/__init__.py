"""The ``sevenrocks`` command: a click group whose subcommands load on demand.

Each subcommand lives in its own module (``server/sevenrocks/server/cli/*.py``) so
that ``sevenrocks verify`` does not import gRPC and every command starts fast.
"""

from __future__ import annotations

import importlib
import os
import importlib.util
from typing import Any

import click

# gRPC core logs each failed TLS handshake (a plaintext bot at a TLS port: one per retry) at
# INFO with no peer address; the referee logs its own refusals, one line per peer. ERROR is
# gRPC's documented default; it must be set before grpc loads. GRPC_VERBOSITY=INFO shows them.
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")

#: Subcommand name -> (module, attribute, one-line help). Add a line to add a command.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "simulate": ("sevenrocks.server.cli.simulate", "simulate", "Play matches in process between built-in policies."),
    "verify": ("sevenrocks.server.cli.verify", "verify", "Replay match records through the engine and report discrepancies."),
    "serve": ("sevenrocks.server.cli.serve", "serve", "Run a gRPC referee that remote bots connect to."),
    "tls": ("sevenrocks.server.cli.tls", "tls", "Make a CA and a referee certificate naming the hosts bots dial."),
    "match": ("sevenrocks.server.cli.match", "match", "Play one match over gRPC between bot commands."),
    "tournament": ("sevenrocks.server.cli.tournament", "tournament", "Run (or resume) a round-robin event and publish its leaderboard."),
    "league": ("sevenrocks.server.cli.league", "league", "Play a league until stopped; entrants join, change and leave while it runs."),
    "submit": ("sevenrocks.server.cli.submit", "submit", "Send a bot to a running league (an author's token) and follow its build and check."),
    "duel": ("sevenrocks.server.cli.duel", "duel", "Play two bots head to head until an SPRT decides which is better."),
    "leaderboard": ("sevenrocks.server.cli.publish", "leaderboard", "Print or write the leaderboard of an event database."),
    "check": ("sevenrocks.server.cli.check", "check", "Check a bot command before an event: rulesets, awkward positions, clocks, reconnect."),
    "replay": ("sevenrocks.server.cli.replay", "replay", "Write a self-contained HTML replay page for one match record."),
    "publish": ("sevenrocks.server.cli.publish", "publish", "Write the static event site (leaderboard, matches, replays, bots) from a database."),
    "loadtest": ("sevenrocks.server.cli.loadtest", "loadtest", "Hold many concurrent matches on one referee; check and measure."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name, (mod, _, _) in COMMANDS.items() if importlib.util.find_spec(mod))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[cmd_name]
        try:
            cmd = getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as e:
            if e.name == module:
                return None
            raise
        assert isinstance(cmd, click.Command)
        return cmd

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sevenrocks")
def cli() -> None:
    """Seven Rocks dominoes: referee, bots, tournaments and leaderboards.

    \b
    Examples:
      sevenrocks tournament                      # the reference bots, embedded defaults
      sevenrocks simulate --matches 100 --seed 1 --policies greedy,random
      sevenrocks verify records/
    """


def main(argv: list[str] | None = None) -> Any:
    return cli.main(args=argv, prog_name="sevenrocks")

